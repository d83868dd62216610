// Chip views: one chip's (or one cluster's) part of a device tensor as a tensor of its own, so an
// op can run over that unit alone (an asymmetric slice copies a different slice on each chip; a
// chip shuffle moves chip p[t]'s part into chip t's).
//
// The view relabels the tensor's bytes on that unit (DeviceTensor::Relabel): its Chip level
// becomes `# c + Chip + # (chips - 1 - c)` with `Chip` an axis of one value (`Cluster` likewise
// for a cluster), so the views of one tensor on different units hold the same indices and a move
// or a pipeline between them copies one unit's bytes to the other's. The level the view selects
// must be a single axis as large as the level (`A` for 4 chips): position c holds that axis's
// value c, and nothing else of the tensor lives there.
#pragma once

#include <cstdint>

#include "absl/status/statusor.h"
#include "dsl/mapping.h"
#include "runtime/tensor.h"

namespace visa {

// Chip `chip` of `tensor` (HBM or DM), its Element optionally replaced by `element` starting
// `offset_bytes` into each unit's bytes (by default the tensor's whole Element).
absl::StatusOr<DeviceTensor> ChipView(const DeviceTensor& tensor, int64_t chip);
absl::StatusOr<DeviceTensor> ChipView(const DeviceTensor& tensor, int64_t chip, const Mapping& element,
                                      int64_t offset_bytes);
// Cluster `cluster` of a DM tensor, on every chip it occupies (the Chip level kept).
absl::StatusOr<DeviceTensor> ClusterView(const DeviceTensor& tensor, int64_t cluster, const Mapping& element,
                                         int64_t offset_bytes);

}  // namespace visa
