// The interpreter's one data movement: rebuilding a tensor image under another mapping by index.
//
// For every live position of the destination mapping, the tensor index it holds is matched
// against the source by the engine rule (dsl/index_matching.h: MatchByDigit, destination axes and
// digits the source lacks broadcast) and the element copied. `MoveByIndexReference` is the
// definition, written to be obviously right: one `map`, one `inverse` per element. `MoveByIndex`
// computes the same result (bytes and errors) from the layout algebra (dsl/layout.h): the move's
// loop nest when it has one, else its run list; it falls back to the reference for layouts the
// algebra does not model (composite destinations, sources without a digit inverse).
#pragma once

#include "absl/status/statusor.h"
#include "dsl/index_matching.h"
#include "dsl/mapping.h"
#include "runtime/host_tensor.h"

namespace visa::interp {

// Thresholds of the compiled path. Results never depend on them; tests shrink them so that small
// moves take every branch (several threads with uneven chunks).
struct MoveLimits {
  int64_t min_parallel = int64_t{1} << 16;  // smaller moves stay on the calling thread
  int threads = 0;                          // 0: one per core, at most 8
};

struct MovePolicy {
  // Source indices the destination does not hold may be dropped (commit truncation, slicing).
  bool allow_drop = false;
  // Written into destination padding positions (fetch masking); zero otherwise.
  uint32_t pad_bits = 0;
  MoveLimits limits = {};
};

// The fast move: bit-identical to MoveByIndexReference in every case, errors included.
absl::StatusOr<HostTensor> MoveByIndex(const HostTensor& src, const Mapping& dst, MovePolicy policy = {});

// The oracle: one `map` and one `inverse` per destination position.
absl::StatusOr<HostTensor> MoveByIndexReference(const HostTensor& src, const Mapping& dst,
                                                MovePolicy policy = {});

// Whether MoveByIndex takes its compiled path for this move (false: it runs the reference). For
// tests and benchmarks; the result never depends on it.
bool MoveByIndexIsCompiled(const HostTensor& src, const Mapping& dst, MovePolicy policy = {});

// The index `index` restricted to the axes in `names` (sorted).
Index Restrict(const Index& index, const std::vector<std::string>& names);

}  // namespace visa::interp
