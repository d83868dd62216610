// Vector Engine samples that use the execution ids (manual, "Branch (vector_intra_slice_branch)",
// "Filter (vector_filter)"; the ids are decided in dsl/vector_branch_ids.h):
//   - vector_validcount_exp_row_sum: the sum of exp over rows of R = 13 f32 values in `R # 16`
//     (Time + Packet), reduced with identity padding (the masked fetch's pad value 0).
//     BranchMode::ValidCount(R) gives real lanes id 1 and padding id 0, so after the exp the
//     padding gets its own op (a multiply by 0 under id 0) that puts the sum's identity back; the
//     reduce adds every lane, so a pad left at exp(0) = 1 would show in every row.
//   - vector_vrf_column_ops: a [B, T, C] i32 tensor, ids per column from an i32 VRF tensor over
//     [B, C] (broadcast over Time), loaded on the sub context; each id selects a different op
//     (pass, BitXor, AddFxp, MulInt), each guarded by its id.
//   - vector_filter_relu: f32 ids from a comparison (x > 0), Clip Min 0.5, then vector_filter
//     keeps the positive elements and gives the others 0 bits: min(relu(x), 0.5).
// The references are host loops over the input, written from the definitions above.
#include "samples/vector_branch_samples.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>

#include "dsl/status_macros.h"
#include "runtime/transfer.h"

namespace visa::samples {
namespace {

constexpr BitReq kOne = BitReq::kOne, kZero = BitReq::kZero, kAny = BitReq::kIgnore;

int32_t WrapI32(int64_t value) { return static_cast<int32_t>(static_cast<uint32_t>(static_cast<uint64_t>(value))); }

double Input(const HostTensor& x, std::initializer_list<std::pair<const char*, int64_t>> coords) {
  Index index;
  for (const auto& [axis, value] : coords) index.Set(axis, value);
  return *x.Get(index);
}

// ---- ValidCount: the padding's own op --------------------------------------------------------------

constexpr int64_t kRow = 13;

// The row's exp at position p of `R # 16`, 0 in the pads (where the branch op put it).
float ExpOrZero(const HostTensor& x, int64_t a, int64_t p) {
  return p < kRow ? std::exp(static_cast<float>(Input(x, {{"A", a}, {"R", p}}))) : 0.0f;
}

// The Intra-Slice Reduce's order over the 4 Way4 steps of a row: each step's tree
// (l0 + l1) + (l2 + l3), then the steps in order, the first stored as is.
double ExpRowSum(const HostTensor& x, int64_t a) {
  float acc = 0;
  for (int64_t k = 0; k < 4; ++k) {
    const float tree = (ExpOrZero(x, a, 4 * k) + ExpOrZero(x, a, 4 * k + 1)) +
                       (ExpOrZero(x, a, 4 * k + 2) + ExpOrZero(x, a, 4 * k + 3));
    acc = k == 0 ? tree : acc + tree;
  }
  return acc;
}

// The manual's Padding Strategy warns that identity padding fails under a preceding non-invertible
// transformation: exp of the pad value 0 is 1, not the sum's identity. The ValidCount ids tell the
// padding apart after the exp, and a multiply by 0 guarded by id 0 puts the identity back.
Sample ValidCountExpRowSum() {
  Sample s;
  s.name = "vector_validcount_exp_row_sum";
  s.description =
      "Vector Engine BranchMode::ValidCount(R): sum of exp over rows R = 13 in `R # 16`, identity padding (pad value "
      "0); the pads' exp(0) = 1 is multiplied by 0 under id 0 (padding) before the reduce";
  s.axes = "A = 64, R = 13";
  s.dtype = DType::kF32;
  s.slice = "A / 4 # 256";
  s.element = "A % 4, R # 16";
  s.kernel = [](Context& ctx, const DmTensor& in, const MappingScope& m) -> absl::StatusOr<DeviceTensor> {
    const Mapping time = m.m("A % 4, R # 16 / 8"), packet = m.m("R # 16 % 8");
    const TagGuard padding = TagGuard::Matches({kZero, kAny, kAny, kAny});
    return ctx.main.begin(in.view())
        .fetch_masked(DType::kF32, 0.0, time, packet)
        .collect(time, packet)
        .vector_init()
        .vector_intra_slice_branch(BranchMode::ValidCount("R"))
        .vector_split(m.m("A % 4, R # 16 / 8, R # 16 % 8 / 4"), m.m("R # 16 % 4"))
        .vector_fp_unary(FpUnaryOp::kExp)
        .vector_fp_binary(FpBinaryOp::MulF(FpMulAlu::kMul0), VeBranchOperand().imm(padding, 0.0f))
        .vector_intra_slice_reduce("R", m.m("A % 4"), m.m("1 # 4"), IntraSliceReduceOpF32::kAdd,
                                   ReducePadding::kIdentity)
        .vector_pad_way8(m.m("1 # 8"))
        .vector_final()
        .commit(m.m("A % 4, 1 # 2"), 1 << 14);
  };
  s.readback = "A";
  s.reference = [](const Index& at, const HostTensor& x) { return ExpRowSum(x, at["A"]); };
  return s;
}

// ---- Vrf ids: an op per column ---------------------------------------------------------------------

// Column c's execution id, and what each id does (0 passes the element unchanged).
constexpr std::array<int32_t, 8> kColumnIds = {0, 1, 2, 3, 3, 2, 1, 0};
constexpr int32_t kXorMask = 0x5555;
constexpr int32_t kAddend = 1000;
constexpr int32_t kFactor = -3;
constexpr int64_t kIdsAt = 1 << 13, kColumnOpsOut = 1 << 14;

int32_t ColumnOp(int32_t id, int32_t x) {
  switch (id) {
    case 1: return x ^ kXorMask;
    case 2: return WrapI32(int64_t{x} + kAddend);
    case 3: return WrapI32(int64_t{x} * kFactor);
    default: return x;
  }
}

Sample VrfColumnOps() {
  Sample s;
  s.name = "vector_vrf_column_ops";
  s.description =
      "Vector Engine BranchMode::Vrf: ids per column from an i32 VRF tensor [B, C] loaded on the sub context; id 1 "
      "BitXor 0x5555, id 2 AddFxp 1000, id 3 MulInt -3, id 0 unchanged";
  s.axes = "B = 256, T = 16, C = 8";
  s.dtype = DType::kI32;
  s.slice = "B";
  s.element = "T, C";
  s.kernel = [](Context& ctx, const DmTensor& in, const MappingScope& m) -> absl::StatusOr<DeviceTensor> {
    // The ids tensor, written by the host as a kernel's constant table would be.
    const Mapping ids_host = m.m("B, C");
    std::vector<double> ids;
    for (int64_t p = 0; p < ids_host.size(); ++p) ids.push_back(kColumnIds[static_cast<size_t>(p % 8)]);
    ASSIGN_OR_RETURN(HostTensor ids_tensor, HostTensor::FromValues(DType::kI32, ids_host, ids));
    ASSIGN_OR_RETURN(Placement ids_place,
                     Place(ctx.device(), DType::kI32, Tier::kDm, {m.m("1"), m.m("1 # 2"), m.m("B"), m.m("C")}, kIdsAt));
    ASSIGN_OR_RETURN(DeviceTensor ids_dm, WriteAs(ids_tensor, ctx.device(), ids_place));
    ASSIGN_OR_RETURN(VrfTensor ids_vrf, ctx.sub.begin(DmTensor(ids_dm).view())
                                            .fetch(DType::kI32, m.m("1"), m.m("C"))
                                            .collect(m.m("1"), m.m("C"))
                                            .to_vrf(m.m("C"), 0));
    auto only = [](int32_t id) {
      return TagGuard::Matches({(id & 1) ? kOne : kZero, (id & 2) ? kOne : kZero, kZero, kZero});
    };
    ASSIGN_OR_RETURN(DmTensor out, ctx.main.begin(in.view())
                                       .fetch(DType::kI32, m.m("T"), m.m("C"))
                                       .collect(m.m("T"), m.m("C"))
                                       .vector_init()
                                       .vector_intra_slice_branch(ids_vrf)
                                       .vector_logic(LogicBinaryOpI32::kBitXor, VeBranchOperand().imm(only(1), kXorMask))
                                       .vector_fxp(FxpBinaryOp::kAddFxp, VeBranchOperand().imm(only(2), kAddend))
                                       .vector_fxp(FxpBinaryOp::kMulInt, VeBranchOperand().imm(only(3), kFactor))
                                       .vector_final()
                                       .commit(m.m("T, C"), kColumnOpsOut));
    return out;
  };
  s.readback = "B, T, C";
  s.reference = [](const Index& at, const HostTensor& x) {
    const int64_t c = at["C"];
    const int32_t value = static_cast<int32_t>(Input(x, {{"B", at["B"]}, {"T", at["T"]}, {"C", c}}));
    return static_cast<double>(ColumnOp(kColumnIds[static_cast<size_t>(c)], value));
  };
  return s;
}

// ---- Filter: ReLU clipped at 0.5 --------------------------------------------------------------------

constexpr float kCeiling = 0.5f;

Sample FilterRelu() {
  Sample s;
  s.name = "vector_filter_relu";
  s.description =
      "Vector Engine vector_filter: ids from the comparison x > 0, Clip Min 0.5, the filter keeps id 1 and gives the "
      "rest 0 bits: min(relu(x), 0.5) on f32";
  s.axes = "A = 4096";
  s.dtype = DType::kF32;
  s.slice = "A / 16 # 256";
  s.element = "A % 16";
  s.kernel = [](Context& ctx, const DmTensor& in, const MappingScope& m) -> absl::StatusOr<DeviceTensor> {
    const Mapping time = m.m("A % 16 / 8"), packet = m.m("A % 8");
    ASSIGN_OR_RETURN(DmTensor out, ctx.main.begin(in.view())
                                       .fetch(DType::kF32, time, packet)
                                       .collect(time, packet)
                                       .vector_init()
                                       .vector_intra_slice_branch(BranchMode::Comparison(
                                           {InputCmp::Greater(0.0f), InputCmp::False(), InputCmp::False(),
                                            InputCmp::False()}))
                                       .vector_clip(ClipBinaryOpF32::kMin, kCeiling)
                                       .vector_filter(TagGuard::Matches({kOne, kAny, kAny, kAny}))
                                       .vector_final()
                                       .commit(m.m("A % 16"), 1 << 14));
    return out;
  };
  s.readback = "A";
  s.reference = [](const Index& at, const HostTensor& x) {
    const float v = static_cast<float>(Input(x, {{"A", at["A"]}}));
    return v > 0.0f ? static_cast<double>(std::min(v, kCeiling)) : 0.0;
  };
  return s;
}

}  // namespace

std::vector<Sample> VectorBranchSamples() { return {ValidCountExpRowSum(), VrfColumnOps(), FilterRelu()}; }

}  // namespace visa::samples
