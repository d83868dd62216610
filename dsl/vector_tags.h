// Tables the Vector Engine derives from a stream's layout alone, which both backends use.
//
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

// Two-group mode's zip as positions: for every position of `out` (the merged stream, without
// `axis`), the positions of `paired` (the stream with it) holding the same index with axis = 0
// and axis = 1, two per position; -1, -1 for a padding position of `out`.
absl::StatusOr<std::vector<int64_t>> ZipPositions(const Mapping& paired, const Mapping& out, const std::string& axis);

}  // namespace visa
