// The Vector Engine's Inter-Slice Block: reduction across the 256 slices of a cluster.
//
// `vector_inter_slice_reduce::<SliceOut, TimeOut>(op)` (manual, "Inter-Slice Block") keeps Chip,
// Cluster and Packet and rewrites [Slice, Time] to [SliceOut, TimeOut]. The reduced part of Slice
// is its innermost factors (the slices one result combines, r of them); in SliceOut their
// positions are filled by a dummy `1 # n` (the result at position 0), a new axis the result is
// broadcast over, or a factor promoted from Time, freely mixed ("Output Mapping Rule"); TimeOut is
// Time without the promoted factors, in order. The semantics is interp/vector_reduce.h.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "dsl/stream.h"
#include "dsl/vector_reduce.h"

namespace visa {

struct InterSliceReduceStage {
  StreamShape in;
  StreamShape out;  // Slice = SliceOut, Time = TimeOut
  VeReduceOp op = VeReduceOp::kAdd;
  int64_t ratio = 1;                      // r: slices combined into one result
  Mapping reduced;                        // the innermost Slice part that is reduced away
  std::vector<std::string> fills;         // how SliceOut fills it: "dummy [1 # 4]", "broadcast [X]", ...
  // Per output position (out slice x out time + out time): the input positions
  // (slice x time + time) it combines, in increasing slice order; empty for padding.
  std::vector<std::vector<int64_t>> sources;
  // "inter_slice_reduce AddSat i32: slice [A / 8, R] -> [A / 8, 1 # 4], ..."
  std::string Describe() const;
};

absl::StatusOr<InterSliceReduceStage> PlanInterSliceReduce(const StreamShape& in, const Mapping& out_slice,
                                                           const Mapping& out_time, VeReduceOp op);

}  // namespace visa
