// The Vector Engine's two-group mode (manual, "Two-Group Mode"): vector_intra_slice_unzip, the
// per-group operands (slots guarded by GroupId, bit 3 of the execution id) and the _zip ops that
// merge the pair, with the mode's rules (stash and trim / pad unavailable, the pair's ALUs shared).
#include <array>
#include <tuple>
#include <utility>

#include "absl/strings/str_cat.h"
#include "dsl/status_macros.h"
#include "dsl/vector_engine.h"

namespace visa {

absl::Status VectorChain::NotPaired(const char* call) const {
  if (!paired_ && !zipped_) return absl::OkStatus();
  return absl::FailedPreconditionError(absl::StrCat(
      "Two-Group Mode: `", call, "` is unavailable ", paired_ ? "while the two groups are paired (before a _zip op)"
                                                              : "after a _zip op merged the pair",
      " (\"stash() and filter() are unavailable while paired and after _zip\"; trim / pad are not group-wise)"));
}

absl::Status VectorChain::Unzip(const std::string& axis, const Mapping& split_time) {
  if (entered_ || inter_done_) {
    return absl::FailedPreconditionError(
        "Vector Engine stage order: `vector_intra_slice_unzip` is only available directly from vector_init()");
  }
  RETURN_IF_ERROR(split_time.status());
  if (shape_.packet.size() != 8) {
    return absl::InvalidArgumentError(absl::StrCat(
        "Two-Group Mode: `vector_intra_slice_unzip` needs Way8 packets of 8 elements (one flit), the packet [",
        shape_.packet.ToString(), "] has ", shape_.packet.size()));
  }
  std::vector<std::string> time_axes = shape_.time.axis_names();
  if (std::find(time_axes.begin(), time_axes.end(), axis) == time_axes.end()) {
    return absl::InvalidArgumentError(absl::StrCat("Two-Group Mode: the group axis `", axis,
                                                   "` must be a Time axis of the stream, Time is [",
                                                   shape_.time.ToString(), "]"));
  }
  time_axes.erase(std::find(time_axes.begin(), time_axes.end(), axis));
  if (split_time.size() * 2 != shape_.time.size() || split_time.axis_names() != time_axes) {
    return absl::InvalidArgumentError(absl::StrCat(
        "Two-Group Mode: each group's Time is the stream's Time [", shape_.time.ToString(), "] without the group axis `",
        axis, "` (of size 2), not [", split_time.ToString(), "]"));
  }
  entered_ = true;
  paired_ = true;
  group_time_ = split_time;
  config_.unzip_axis = axis;
  config_.branch = BranchMode::AxisToggle(axis);
  return absl::OkStatus();
}

VeBranched VectorChain::Groups(const std::optional<VeOperand>& g0, const std::optional<VeOperand>& g1,
                               std::optional<float> o1_g0, std::optional<float> o1_g1) const {
  VeBranched slots;
  if (!paired_) {
    slots.status = absl::FailedPreconditionError(
        "Two-Group Mode: per-group operands need the pair vector_intra_slice_unzip() makes");
    return slots;
  }
  // Immediates fill reg0..reg2 before the rf slot, which must come last; the two groups' guards
  // are disjoint, so taking group 1's constant before group 0's VRF tensor changes no element.
  auto constants_first = [](const std::optional<VeOperand>& a, const std::optional<VeOperand>& b) {
    return a && b && a->kind != VeOperand::Kind::kConstant && b->kind == VeOperand::Kind::kConstant;
  };
  std::array<std::tuple<std::optional<VeOperand>, GroupId, std::optional<float>>, 2> groups{
      std::tuple{g0, GroupId::kZero, o1_g0}, std::tuple{g1, GroupId::kOne, o1_g1}};
  if (constants_first(g0, g1)) std::swap(groups[0], groups[1]);
  for (const auto& [operand, group, o1] : groups) {
    if (!operand) continue;
    if (operand->kind == VeOperand::Kind::kStash) {
      slots.status = absl::FailedPreconditionError("Two-Group Mode: a group operand is a constant or a VRF tensor, not "
                                                   "the stash (the stash is unavailable while paired)");
      return slots;
    }
    if (operand->kind == VeOperand::Kind::kConstant) slots.imm(TagGuard::Group(group), *operand, o1);
    else slots.rf(TagGuard::Group(group), *operand, o1);
  }
  return slots;
}

absl::Status VectorChain::Zip(const char* call, const char* op, VeStage stage, VeFn fn, VeAlu alu, DType type,
                              const VeArgs& args) {
  if (!paired_) {
    return absl::FailedPreconditionError(absl::StrCat("Two-Group Mode: `", call,
                                                      "` merges the two groups of vector_intra_slice_unzip(); this "
                                                      "stream is not paired"));
  }
  RETURN_IF_ERROR(Enter(call, stage));
  RETURN_IF_ERROR(RequireType(call, type));
  RETURN_IF_ERROR(Claim(call, op, alu));
  paired_ = false;
  zipped_ = true;
  shape_.time = group_time_;
  VeStep step;
  step.kind = VeStep::Kind::kZip;
  step.stage = stage;
  step.call = call;
  step.fn = fn;
  step.alu = alu;
  step.args = args;
  step.out = shape_;
  config_.steps.push_back(std::move(step));
  return absl::OkStatus();
}

absl::Status VectorChain::LogicZip(LogicBinaryOpI32 op, const VeArgs& args) {
  static constexpr VeFn kFns[] = {VeFn::kBitAnd, VeFn::kBitOr, VeFn::kBitXor, VeFn::kLeftShift, VeFn::kLogicRightShift,
                                  VeFn::kArithRightShift};
  static constexpr VeAlu kAlus[] = {VeAlu::kLogicAnd, VeAlu::kLogicOr, VeAlu::kLogicXor, VeAlu::kLogicLshift,
                                    VeAlu::kLogicRshift, VeAlu::kLogicRshift};
  const int i = static_cast<int>(op);
  return Zip("vector_logic_zip", Info(kFns[i]).name, VeStage::kLogic, kFns[i], kAlus[i], DType::kI32, args);
}

absl::Status VectorChain::LogicZip(LogicBinaryOpF32 op, const VeArgs& args) {
  static constexpr VeFn kFns[] = {VeFn::kBitAnd, VeFn::kBitOr, VeFn::kBitXor};
  static constexpr VeAlu kAlus[] = {VeAlu::kLogicAnd, VeAlu::kLogicOr, VeAlu::kLogicXor};
  const int i = static_cast<int>(op);
  return Zip("vector_logic_zip", Info(kFns[i]).name, VeStage::kLogic, kFns[i], kAlus[i], DType::kF32, args);
}

absl::Status VectorChain::FxpZip(FxpBinaryOp op, const VeArgs& args) {
  static constexpr VeFn kFns[] = {VeFn::kAddFxp,    VeFn::kAddFxpSat,        VeFn::kSubFxp, VeFn::kSubFxpSat,
                                  VeFn::kLeftShift, VeFn::kFxpLeftShiftSat,  VeFn::kMulFxp, VeFn::kMulInt,
                                  VeFn::kLogicRightShift, VeFn::kArithRightShift, VeFn::kArithRightShiftRound};
  static constexpr VeAlu kAlus[] = {VeAlu::kFxpAdd,    VeAlu::kFxpAdd, VeAlu::kFxpAdd, VeAlu::kFxpAdd,
                                    VeAlu::kFxpLshift, VeAlu::kFxpLshift, VeAlu::kFxpMul, VeAlu::kFxpMul,
                                    VeAlu::kFxpRshift, VeAlu::kFxpRshift, VeAlu::kFxpRshift};
  const int i = static_cast<int>(op);
  return Zip("vector_fxp_zip", Info(kFns[i]).name, VeStage::kFxp, kFns[i], kAlus[i], DType::kI32, args);
}

absl::Status VectorChain::FpZip(FpBinaryOp op, const VeArgs& args) {
  VeFn fn = VeFn::kAddF;
  VeAlu alu = VeAlu::kFpFma;
  switch (op.kind) {
    case FpBinaryOp::Kind::kAddF: break;
    case FpBinaryOp::Kind::kSubF: fn = VeFn::kSubF; break;
    case FpBinaryOp::Kind::kDivF: fn = VeFn::kDivF, alu = VeAlu::kFpFpu; break;
    case FpBinaryOp::Kind::kMulF:
      fn = VeFn::kMulF;
      alu = op.mul == FpMulAlu::kMul0 ? VeAlu::kFpMul0 : op.mul == FpMulAlu::kMul1 ? VeAlu::kFpMul1 : VeAlu::kFpFma;
      break;
    case FpBinaryOp::Kind::kMaskMulF:
      if (op.mul == FpMulAlu::kFma) return FpBinary(op, args, {});  // refused there, naming the rule
      fn = VeFn::kMaskMulF;
      alu = op.mul == FpMulAlu::kMul0 ? VeAlu::kFpMul0 : VeAlu::kFpMul1;
      break;
  }
  return Zip("vector_fp_zip", Info(fn).name, VeStage::kFloat, fn, alu, DType::kF32, args);
}

absl::Status VectorChain::ClipZip(ClipBinaryOpI32 op, const VeArgs& args) {
  static constexpr VeFn kFns[] = {VeFn::kMinI32, VeFn::kMaxI32, VeFn::kAbsMinI32, VeFn::kAbsMaxI32, VeFn::kAddFxp,
                                  VeFn::kAddFxpSat};
  static constexpr VeAlu kAlus[] = {VeAlu::kClipMin, VeAlu::kClipMax, VeAlu::kClipMin, VeAlu::kClipMax,
                                    VeAlu::kClipAdd, VeAlu::kClipAdd};
  const int i = static_cast<int>(op);
  return Zip("vector_clip_zip", Info(kFns[i]).name, VeStage::kClip, kFns[i], kAlus[i], DType::kI32, args);
}

absl::Status VectorChain::ClipZip(ClipBinaryOpF32 op, const VeArgs& args) {
  static constexpr VeFn kFns[] = {VeFn::kMinF32, VeFn::kMaxF32, VeFn::kAbsMinF32, VeFn::kAbsMaxF32, VeFn::kAddF32Clip};
  static constexpr VeAlu kAlus[] = {VeAlu::kClipMin, VeAlu::kClipMax, VeAlu::kClipMin, VeAlu::kClipMax,
                                    VeAlu::kClipAdd};
  const int i = static_cast<int>(op);
  return Zip("vector_clip_zip", Info(kFns[i]).name, VeStage::kClip, kFns[i], kAlus[i], DType::kF32, args);
}

}  // namespace visa
