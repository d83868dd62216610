// The interpreter's one data movement: rebuilding a tensor image under another mapping by index.
//
// For every live position of the destination mapping, the tensor index it holds is looked up in
// the source (restricted to the axes the source names, so destination-only axes broadcast) and
// the element copied. `MoveByIndexReference` is the definition, written to be obviously right: one
// `map`, one `inverse` per element. `MoveByIndex` computes the same result (bytes and errors) from
// integer tables compiled once per move, and falls back to the reference for any structure it does
// not model exactly.
#pragma once

#include "absl/status/statusor.h"
#include "dsl/index_projection.h"
#include "dsl/mapping.h"
#include "runtime/host_tensor.h"

namespace visa::interp {

struct MovePolicy {
  // Source indices the destination does not hold may be dropped (commit truncation, slicing).
  bool allow_drop = false;
  // Written into destination padding positions (fetch masking); zero otherwise.
  uint32_t pad_bits = 0;
};

// The fast move: bit-identical to MoveByIndexReference in every case, errors included.
absl::StatusOr<HostTensor> MoveByIndex(const HostTensor& src, const Mapping& dst, MovePolicy policy = {});

// The oracle: one `map` and one `inverse` per destination position.
absl::StatusOr<HostTensor> MoveByIndexReference(const HostTensor& src, const Mapping& dst,
                                                MovePolicy policy = {});

// Whether MoveByIndex takes its compiled path for this move (false: it runs the reference). For
// tests and benchmarks; the result never depends on it.
bool MoveByIndexIsCompiled(const HostTensor& src, const Mapping& dst, MovePolicy policy = {});

// Size thresholds of the compiled path. Results never depend on them; tests shrink them so that
// small moves exercise every branch (closed-form rows, per-element decomposition, threads).
struct MoveLimits {
  int64_t max_tabulated = int64_t{1} << 16;      // largest part tabulated with map_raw
  int64_t max_row = int64_t{1} << 15;            // largest merged row table
  int64_t max_inverse_table = int64_t{1} << 20;  // per-axis inverse tables cover coordinates below
  int64_t min_parallel = int64_t{1} << 16;       // smaller walks stay on the calling thread
  int threads = 0;                               // 0: one per core, at most 8
};
// Replaces the thresholds (not thread-safe: call before any move runs); returns the previous ones.
MoveLimits SetMoveLimits(const MoveLimits& limits);


// The index `index` restricted to the axes in `names` (sorted).
Index Restrict(const Index& index, const std::vector<std::string>& names);

}  // namespace visa::interp
