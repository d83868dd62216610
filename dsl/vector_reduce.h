// The Vector Engine's Intra-Slice Reduce stage: its rules and configuration.
//
// `vector_intra_slice_reduce::<R, OTime, OPacket>(op)` (manual, "Intra-Slice Reduce") takes the
// 4-way stream after narrowing (trim_way4 / split_way4) and eliminates every factor of the reduce
// axis R from Time and Packet: R in Packet is reduced by a 2-level tree op(op(a, b), op(c, d))
// and the Packet collapses to [1 # 4]; R in Time is accumulated across time steps in one of 8
// accumulator slots per retained position inside the outermost R factor. Chip, Cluster and Slice
// pass through. Padding of R is left out through the Valid Count Generator (dsl/valid_count.h),
// derived from the 8-way stream the narrowing consumed, or, where the VCG cannot express the
// placement, by identity-element padding (the fetch wrote the op's identity into pad positions).
// The semantics (the exact order of combination) is interp/vector_reduce.h.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "dsl/stream.h"
#include "dsl/valid_count.h"

namespace visa {

inline constexpr int64_t kIntraReduceSlots = 8;

// The reduce operations of both reduce blocks. Which ones a block takes for i32 / f32:
// intra-slice i32 AddSat / Max / Min, f32 Add / Max / Min; inter-slice i32 Add (wrapping) /
// AddSat / Max / Min, f32 Add / Max / Min / Mul.
enum class VeReduceOp { kAdd, kAddSat, kMax, kMin, kMul };
const char* VeReduceOpName(VeReduceOp op);  // "Add", "AddSat", "Max", "Min", "Mul"

// The manual's op enums of the two blocks, as kernels name them; each converts to its VeReduceOp.
enum class IntraSliceReduceOpI32 { kAddSat, kMax, kMin };
enum class IntraSliceReduceOpF32 { kAdd, kMax, kMin };
enum class InterSliceReduceOpI32 { kAdd, kAddSat, kMax, kMin };
enum class InterSliceReduceOpF32 { kAdd, kMax, kMin, kMul };
VeReduceOp ReduceOpOf(IntraSliceReduceOpI32 op);
VeReduceOp ReduceOpOf(IntraSliceReduceOpF32 op);
VeReduceOp ReduceOpOf(InterSliceReduceOpI32 op);
VeReduceOp ReduceOpOf(InterSliceReduceOpF32 op);

// How padding of the reduce axis is kept out of the result ("Padding Strategy"): the VCG; the
// op's identity in every pad position (written by the fetch's pad_value); or, for a left-padded
// axis (`# n + R + # m`), the identity in the left pad and the VCG for the right one.
enum class ReducePadding { kValidCount, kIdentity, kLeftIdentity };
// "valid count", "identity padding", "identity left pad + valid count"
const char* ReducePaddingName(ReducePadding padding);

struct IntraSliceReduceStage {
  StreamShape in;   // the 4-way stream (Packet of 4)
  StreamShape out;  // Time = OTime, Packet = OPacket
  std::string axis;
  VeReduceOp op = VeReduceOp::kAdd;
  Narrowing narrowing = Narrowing::kTrim;
  ReducePadding padding = ReducePadding::kValidCount;
  std::optional<ValidCountConfig> vcg;  // with kValidCount
  bool packet_reduced = false;          // R in Packet: tree reduce, OPacket = [1 # 4]
  bool time_reduced = false;            // R in Time: temporal accumulation
  int64_t slots = 1;                    // accumulator slots in use (<= 8)
  // Per input (Way4) time step: the output time position it accumulates into, -1 for padding.
  std::vector<int64_t> out_time_of;
  // "intra_slice_reduce R AddSat i32: time [...] -> [...], packet [...] -> [...], ..."
  std::string Describe() const;
};

// Plans the reduce of `axis` on the 4-way stream `in`, which `narrowing` made from the 8-way
// stream `way8` (the VCG tags `way8`). Every rule of "Intra-Slice Reduce" is checked; an error
// names the rule and the offending mapping.
absl::StatusOr<IntraSliceReduceStage> PlanIntraSliceReduce(const StreamShape& way8, Narrowing narrowing,
                                                           const StreamShape& in, const std::string& axis,
                                                           const Mapping& out_time, const Mapping& out_packet,
                                                           VeReduceOp op,
                                                           ReducePadding padding = ReducePadding::kValidCount);

}  // namespace visa
