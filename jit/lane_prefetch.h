// LanePrefetch: which cache lines of a slice's device memory the lane kernel packs, so that while
// one slice computes its steps the next slice's operand and weights are already on their way.
// Packing reads every operand and weight byte once, from DM and TRF images far larger than the
// caches, and without a prefetch it waited on memory longer than the steps computed.
#pragma once

#include <cstdint>
#include <vector>

#include "jit/lane_contraction_kernel.h"

namespace visa::jit {

inline constexpr int64_t kCacheLine = 64;
// Lines listed per slice at most (a longer list is cut: prefetching is only a hint).
inline constexpr int64_t kMaxPrefetchLines = 1 << 14;

// Byte offsets (multiples of kCacheLine, ascending) from the slice's operand base of the lines its
// live lanes read, and from a Row's weight base of the lines each Row reads.
std::vector<int64_t> OperandLines(const LaneContractionSpec& spec);
std::vector<int64_t> WeightLines(const LaneContractionSpec& spec);

}  // namespace visa::jit
