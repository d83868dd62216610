// Execution ids of the branch modes ValidCount and Vrf (manual, "Branch (vector_intra_slice_branch)":
// "ValidCount: Via Valid Count Generator", "Vrf: Load ExecutionIds from VRF (pre-written by Branch
// Logger in prior TuExec)"), which both backends take from here.
//
// The manual names the two modes and their sources but not the ids they give; decided here:
//   - ValidCount(axis): the Valid Count Generator configured for the padded axis `axis`
//     (dsl/valid_count.h, with its rules on which placements it can express) tags each flit with
//     a count vc; a lane below vc (real data of the axis) gets id 1 (bit 0 set), a lane at or
//     above it (the axis's padding) id 0. Positions that are padding of the stream get 0, as with
//     AxisToggle.
//   - Vrf: the ids are an i32 VRF tensor loaded with to_vrf, placed by index in the stream's
//     layout as VRF operands are (missing axes broadcast, padding 0); each value must be an
//     ExecutionId, 0 to 15 ("ExecutionId range: 4-bit (0-15)"), else the op fails naming it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "dsl/stream.h"

namespace visa {

// Ids of BranchMode::ValidCount(axis) for every position of in.Full(); fails with the Valid
// Count Generator's rule when it cannot express the axis's placement.
absl::StatusOr<std::vector<uint8_t>> ValidCountIds(const StreamShape& in, const std::string& axis);

// Ids of BranchMode::Vrf from the VRF tensor's values placed in `layout` (one per position).
absl::StatusOr<std::vector<uint8_t>> VrfIds(absl::Span<const uint32_t> values, const Mapping& layout,
                                            const std::string& vrf_text);

}  // namespace visa
