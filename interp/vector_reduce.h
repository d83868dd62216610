// The Vector Engine's reductions, evaluated: the reduce operations on 32-bit lanes, the
// Intra-Slice Reduce of one slice and the Inter-Slice Reduce of one cluster. Both backends call
// these on plain arrays of raw 32-bit lanes (i32 or f32 bits) in stream order, so they agree.
//
// Order of combination (design.md, "Numeric semantics"):
//  - Intra-slice, per slice: time steps in increasing order; a 4-way flit whose valid count is 0,
//    or whose time position is padding, contributes nothing. With R in Packet, lanes at or past
//    the valid count are replaced by the identity and the flit is reduced by the tree
//    op(op(l0, l1), op(l2, l3)); with Packet preserved every lane accumulates on its own. The first
//    contribution to a slot is stored as is, later ones are combined as acc = op(acc, x).
//    Output positions no contribution reached, and lanes 1..3 of a collapsed [1 # 4] Packet, hold
//    the identity.
//  - Inter-slice, per cluster: each output (slice, time) position combines its input positions in
//    increasing input slice order, the first stored as is; lanes combine independently; padding
//    outputs hold the identity.
// f32 Add / Mul are IEEE (never fused); Max / Min ignore NaN (fmax / fmin); i32 Add wraps, AddSat
// saturates to [-2^31, 2^31 - 1].
#pragma once

#include <cstdint>
#include <vector>

#include "absl/types/span.h"
#include "dsl/inter_slice_reduce.h"
#include "dsl/vector_reduce.h"

namespace visa::interp {

uint32_t ReduceIdentity(VeReduceOp op, DType dtype);
uint32_t ReduceCombine(VeReduceOp op, DType dtype, uint32_t a, uint32_t b);

// The Way4 valid counts of `slice` (its position in the stream's Slice), one per input time step:
// the VCG's counts halved by the narrowing, or 4 everywhere with identity padding.
std::vector<int> IntraSliceValidCounts(const IntraSliceReduceStage& stage, int64_t slice);

// One slice: `in` holds in.time.size() x 4 lanes (time-major), `valid` one count per time step,
// `out` receives out.time.size() x 4 lanes.
void IntraSliceReduce(const IntraSliceReduceStage& stage, absl::Span<const uint32_t> in,
                      absl::Span<const int> valid, absl::Span<uint32_t> out);

// The same from the 8-way stream the narrowing consumed: `way8` holds one slice's
// way8-time x 8 lanes; split_way4 makes each flit's low half, then its high half, a 4-way time
// step ((t, p) -> (2t + p / 4, p % 4)), trim_way4 keeps the low half. Valid counts come from
// `IntraSliceValidCounts(stage, slice)`.
void IntraSliceReduceFromWay8(const IntraSliceReduceStage& stage, int64_t slice, absl::Span<const uint32_t> way8,
                              absl::Span<uint32_t> out);

// One cluster: `in` holds slice.size() x time.size() x 8 lanes (slice-major, then time), `out`
// receives out slice.size() x out time.size() x 8 lanes.
void InterSliceReduce(const InterSliceReduceStage& stage, absl::Span<const uint32_t> in, absl::Span<uint32_t> out);

}  // namespace visa::interp
