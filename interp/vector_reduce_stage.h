// The Vector Engine's reduction steps on a whole stream: the stream's 32-bit lanes laid out by the
// step's input StreamShape::Full() become those of its output, block by block (a slice for the
// intra-slice reduce, a cluster for the inter-slice reduce) through interp/vector_reduce.h.
// Both backends run these (the JIT over block ranges in parallel), so they agree bit for bit.
#pragma once

#include <cstdint>
#include <vector>

#include "absl/types/span.h"
#include "dsl/inter_slice_reduce.h"
#include "dsl/vector_reduce.h"

namespace visa::interp {

// Blocks of the intra-slice reduce: one per (chip, cluster, slice) position.
int64_t IntraSliceBlocks(const IntraSliceReduceStage& stage);
// Reduces blocks [begin, end): `in` is the whole input stream, `out` the whole output stream.
void IntraSliceReduceBlocks(const IntraSliceReduceStage& stage, absl::Span<const uint32_t> in,
                            absl::Span<uint32_t> out, int64_t begin, int64_t end);

// Blocks of the inter-slice reduce: one per (chip, cluster) position.
int64_t InterSliceBlocks(const InterSliceReduceStage& stage);
void InterSliceReduceBlocks(const InterSliceReduceStage& stage, absl::Span<const uint32_t> in,
                            absl::Span<uint32_t> out, int64_t begin, int64_t end);

// The whole stream at once (the interpreter).
std::vector<uint32_t> IntraSliceReduceStream(const IntraSliceReduceStage& stage, absl::Span<const uint32_t> in);
std::vector<uint32_t> InterSliceReduceStream(const InterSliceReduceStage& stage, absl::Span<const uint32_t> in);

}  // namespace visa::interp
