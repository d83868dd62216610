// The interpreter's one data movement: rebuilding a tensor image under another mapping by index.
//
// For every live position of the destination mapping, the tensor index it holds is looked up in
// the source (restricted to the axes the source names, so destination-only axes broadcast) and
// the element copied. It is written to be obviously right: one `map`, one `inverse` per element.
#pragma once

#include "absl/status/statusor.h"
#include "dsl/mapping.h"
#include "runtime/host_tensor.h"

namespace visa::interp {

struct MovePolicy {
  // Source indices the destination does not hold may be dropped (commit truncation, slicing).
  bool allow_drop = false;
  // Written into destination padding positions (fetch masking); zero otherwise.
  uint32_t pad_bits = 0;
};

absl::StatusOr<HostTensor> MoveByIndex(const HostTensor& src, const Mapping& dst, MovePolicy policy = {});

// The index `index` restricted to the axes in `names` (sorted).
Index Restrict(const Index& index, const std::vector<std::string>& names);

}  // namespace visa::interp
