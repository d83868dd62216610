// Execution ids a branch mode assigns from a stream's layout alone: AxisToggle's
// `(coordinate along the axis % 2) << 3` per position (padding positions get 0). Both backends
// take the ids of this mode from here; Comparison ids depend on values and each backend computes
// them with InputCmp's rule.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "dsl/mapping.h"

namespace visa {

absl::StatusOr<std::vector<uint8_t>> AxisToggleTags(const Mapping& layout, const std::string& axis);

}  // namespace visa
