// LayoutTables: the tables the staged walk of a Vector Engine stage (vector_stage.h) derives from
// its layouts alone (AxisToggle ids, ValidCount ids, two-group zip positions), kept by the layouts'
// content for the process. (in_place_reduce.cc keeps its id images by the op's stages itself,
// with the ids it moves through relayouts.)
//
// The op memo (op_memo.h) keeps a stage's plan by the recorded op, but an eager run records its
// ops anew each time (`visa run`, a run on a fresh device), so every such run derived these tables
// again by evaluating the layout at every position: over a padded stream of 512 units, most of a
// small two-group op's time on a fresh device (`vector_pair_scale_add`: 8.5 ms of its 15 ms). The
// same layouts give the same tables, so they are kept by MappingKey (which names the axes' sizes).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "dsl/mapping.h"
#include "dsl/stream.h"

namespace visa::jit {

// dsl/vector_tags.h's AxisToggleTags, ZipPositions and dsl/vector_branch_ids.h's ValidCountIds,
// each computed once per distinct argument (the kept tables are dropped past a byte budget).
absl::StatusOr<std::shared_ptr<const std::vector<uint8_t>>> KeptAxisToggleTags(const Mapping& layout,
                                                                                const std::string& axis);
absl::StatusOr<std::shared_ptr<const std::vector<int64_t>>> KeptZipPositions(const Mapping& paired,
                                                                             const Mapping& out,
                                                                             const std::string& axis);
absl::StatusOr<std::shared_ptr<const std::vector<uint8_t>>> KeptValidCountIds(const StreamShape& in,
                                                                               const std::string& axis);

}  // namespace visa::jit
