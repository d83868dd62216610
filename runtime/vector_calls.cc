// The Vector Engine's builder calls on a Stream: each plans one step of the open VectorChain
// (dsl/vector_engine.h); vector_final() records the chain as one VectorStage of the pipeline.
#include <bit>

#include "absl/strings/str_cat.h"
#include "dsl/status_macros.h"
#include "runtime/tensor_unit.h"

namespace visa {

VeRhs::VeRhs(float value) : operand_{VeOperand::Kind::kConstant, DType::kF32, std::bit_cast<uint32_t>(value)} {}

VeRhs VeRhs::vrf(const VrfTensor& tensor) {
  VeRhs rhs(0);
  rhs.operand_ = VeOperand{VeOperand::Kind::kVrf};
  rhs.tensor_ = tensor;
  return rhs;
}

void VeBranchOperand::add(TagGuard guard, VeRhs operand, std::optional<float> operand1) {
  const bool rf = operand.operand().kind != VeOperand::Kind::kConstant;
  slots_.push_back(Slot{guard, std::move(operand), operand1, rf});
}

VeBranchOperand VeBranchOperand::group(VeRhs operand, GroupId group) {
  VeBranchOperand out;
  out.add(TagGuard::Group(group), std::move(operand), std::nullopt);
  return out;
}

VeBranchOperand& VeBranchOperand::imm(TagGuard guard, VeRhs operand, std::optional<float> operand1) {
  slots_.push_back(Slot{guard, std::move(operand), operand1, false});
  return *this;
}

VeBranchOperand& VeBranchOperand::rf(TagGuard guard, VeRhs operand, std::optional<float> operand1) {
  slots_.push_back(Slot{guard, std::move(operand), operand1, true});
  return *this;
}

Stream Stream::vector_init() && {
  if (!status_.ok()) return std::move(*this);
  if (vector_) {
    return std::move(*this).Fail(absl::FailedPreconditionError(
        "Vector Engine stage order: `vector_init` enters the Vector Engine once per pipeline"));
  }
  absl::StatusOr<VectorChain> chain = VectorChain::Init(shape_, position_);
  if (!chain.ok()) return std::move(*this).Fail(chain.status());
  vector_ = *std::move(chain);
  return std::move(*this);
}

Stream Stream::Vector(const char* call, const std::function<absl::Status(VectorChain&)>& plan) && {
  if (!status_.ok()) return std::move(*this);
  if (!vector_) {
    return std::move(*this).Fail(absl::FailedPreconditionError(absl::StrCat(
        "Vector Engine stage order: `", call, "` needs vector_init() first (after collect or accumulate), at ",
        StreamPositionName(position_))));
  }
  absl::Status planned = plan(*vector_);
  if (!planned.ok()) return std::move(*this).Fail(planned);
  return std::move(*this);
}

absl::StatusOr<int> Stream::AddVrfOperand(const VrfTensor& tensor) {
  RETURN_IF_ERROR(tensor.CheckReadable());
  if (&tensor.device() != &ctx_->device()) {
    return absl::InvalidArgumentError("VRF Input: the VRF operand is on another device");
  }
  ASSIGN_OR_RETURN(int index, vector_->AddVrf(VrfOperandInfo{tensor.dtype(), tensor.chip(), tensor.cluster(),
                                                             tensor.slice(), tensor.element(), tensor.ToString()}));
  vrf_operands_.push_back(tensor);
  op_.vrf_operands.push_back(TensorRef{tensor.ToString(), tensor.id(), tensor});
  return index;
}

absl::StatusOr<VeBranched> Stream::Slots(const VeBranchOperand& operand) {
  VeBranched branched;
  for (const VeBranchOperand::Slot& slot : operand.slots()) {
    VeOperand o = slot.operand.operand();
    if (o.kind == VeOperand::Kind::kVrf) {
      ASSIGN_OR_RETURN(o.vrf, AddVrfOperand(*slot.operand.tensor()));
    }
    if (slot.rf) branched.rf(slot.guard, o, slot.operand1);
    else branched.imm(slot.guard, o, slot.operand1);
  }
  return branched;
}

#define VISA_VECTOR_CALL(CALL, BODY)                                          \
  return std::move(*this).Vector(CALL, [&](VectorChain& chain) -> absl::Status { BODY; })
#define VISA_SLOTS ASSIGN_OR_RETURN(VeBranched slots, Slots(operand))

Stream Stream::vector_intra_slice_branch(const BranchMode& mode) && {
  VISA_VECTOR_CALL("vector_intra_slice_branch", return chain.Branch(mode));
}
Stream Stream::vector_logic(LogicBinaryOpI32 op, const VeBranchOperand& operand) && {
  return std::move(*this).vector_logic_with_mode(op, BinaryArgMode::kMode01, operand);
}
Stream Stream::vector_logic(LogicBinaryOpF32 op, const VeBranchOperand& operand) && {
  return std::move(*this).vector_logic_with_mode(op, BinaryArgMode::kMode01, operand);
}
Stream Stream::vector_logic_with_mode(LogicBinaryOpI32 op, BinaryArgMode mode, const VeBranchOperand& operand) && {
  VISA_VECTOR_CALL("vector_logic", VISA_SLOTS; return chain.Logic(op, ArgsOf(mode), slots));
}
Stream Stream::vector_logic_with_mode(LogicBinaryOpF32 op, BinaryArgMode mode, const VeBranchOperand& operand) && {
  VISA_VECTOR_CALL("vector_logic", VISA_SLOTS; return chain.Logic(op, ArgsOf(mode), slots));
}
Stream Stream::vector_fxp(FxpBinaryOp op, const VeBranchOperand& operand) && {
  return std::move(*this).vector_fxp_with_mode(op, BinaryArgMode::kMode01, operand);
}
Stream Stream::vector_fxp_with_mode(FxpBinaryOp op, BinaryArgMode mode, const VeBranchOperand& operand) && {
  VISA_VECTOR_CALL("vector_fxp", VISA_SLOTS; return chain.Fxp(op, ArgsOf(mode), slots));
}
Stream Stream::vector_fxp_to_fp(int int_width) && {
  VISA_VECTOR_CALL("vector_fxp_to_fp", return chain.FxpToFp(int_width));
}
Stream Stream::vector_split(const Mapping& time, const Mapping& packet) && {
  VISA_VECTOR_CALL("vector_split", return chain.Split(time, packet));
}
Stream Stream::vector_trim_way4(const Mapping& packet) && {
  VISA_VECTOR_CALL("vector_trim_way4", return chain.TrimWay4(packet));
}
Stream Stream::vector_fp_unary(FpUnaryOp op) && {
  VISA_VECTOR_CALL("vector_fp_unary", return chain.FpUnary(op, ArgsOf(UnaryArgMode::kMode0), std::nullopt, {}));
}
Stream Stream::vector_fp_unary(TagGuard guard, FpUnaryOp op) && {
  VISA_VECTOR_CALL("vector_fp_unary", return chain.FpUnary(op, ArgsOf(UnaryArgMode::kMode0), guard, {}));
}
Stream Stream::vector_fp_unary_with_mode(FpUnaryOp op, UnaryArgMode mode, const VeBranchOperand& operand) && {
  VISA_VECTOR_CALL("vector_fp_unary", VISA_SLOTS; return chain.FpUnary(op, ArgsOf(mode), std::nullopt, slots));
}
Stream Stream::vector_fp_binary(FpBinaryOp op, const VeBranchOperand& operand) && {
  return std::move(*this).vector_fp_binary_with_mode(op, BinaryArgMode::kMode01, operand);
}
Stream Stream::vector_fp_binary_with_mode(FpBinaryOp op, BinaryArgMode mode, const VeBranchOperand& operand) && {
  VISA_VECTOR_CALL("vector_fp_binary", VISA_SLOTS; return chain.FpBinary(op, ArgsOf(mode), slots));
}
Stream Stream::vector_fp_ternary(FpTernaryOp op, const VeBranchOperand& operand) && {
  return std::move(*this).vector_fp_ternary_with_mode(op, TernaryArgMode::kMode012, operand);
}
Stream Stream::vector_fp_ternary_with_mode(FpTernaryOp op, TernaryArgMode mode, const VeBranchOperand& operand) && {
  VISA_VECTOR_CALL("vector_fp_ternary", VISA_SLOTS; return chain.FpTernary(op, ArgsOf(mode), slots));
}
Stream Stream::vector_fp_div(FpDivBinaryOp op, const VeBranchOperand& operand) && {
  return std::move(*this).vector_fp_div_with_mode(op, BinaryArgMode::kMode01, operand);
}
Stream Stream::vector_fp_div_with_mode(FpDivBinaryOp op, BinaryArgMode mode, const VeBranchOperand& operand) && {
  VISA_VECTOR_CALL("vector_fp_div", VISA_SLOTS; return chain.FpDiv(op, ArgsOf(mode), slots));
}
Stream Stream::vector_concat(const Mapping& time, const Mapping& packet) && {
  VISA_VECTOR_CALL("vector_concat", return chain.Concat(time, packet));
}
Stream Stream::vector_pad_way8(const Mapping& packet) && {
  VISA_VECTOR_CALL("vector_pad_way8", return chain.PadWay8(packet));
}
Stream Stream::vector_fp_to_fxp(int int_width) && {
  VISA_VECTOR_CALL("vector_fp_to_fxp", return chain.FpToFxp(int_width));
}
Stream Stream::vector_clip(ClipBinaryOpI32 op, const VeBranchOperand& operand) && {
  return std::move(*this).vector_clip_with_mode(op, BinaryArgMode::kMode01, operand);
}
Stream Stream::vector_clip(ClipBinaryOpF32 op, const VeBranchOperand& operand) && {
  return std::move(*this).vector_clip_with_mode(op, BinaryArgMode::kMode01, operand);
}
Stream Stream::vector_clip_with_mode(ClipBinaryOpI32 op, BinaryArgMode mode, const VeBranchOperand& operand) && {
  VISA_VECTOR_CALL("vector_clip", VISA_SLOTS; return chain.Clip(op, ArgsOf(mode), slots));
}
Stream Stream::vector_clip_with_mode(ClipBinaryOpF32 op, BinaryArgMode mode, const VeBranchOperand& operand) && {
  VISA_VECTOR_CALL("vector_clip", VISA_SLOTS; return chain.Clip(op, ArgsOf(mode), slots));
}
Stream Stream::vector_stash() && { VISA_VECTOR_CALL("vector_stash", return chain.Stash()); }
Stream Stream::vector_reinterpret(DType to) && { VISA_VECTOR_CALL("vector_reinterpret", return chain.Reinterpret(to)); }

absl::StatusOr<VeBranched> Stream::GroupSlots(const std::optional<VeRhs>& group0, const std::optional<VeRhs>& group1) {
  std::optional<VeOperand> operands[2];
  const std::optional<VeRhs>* groups[2] = {&group0, &group1};
  for (int g = 0; g < 2; ++g) {
    if (!*groups[g]) continue;
    VeBranchOperand single(**groups[g]);
    ASSIGN_OR_RETURN(VeBranched slots, Slots(single));
    operands[g] = slots.slots.front().o0;
  }
  return vector_->Groups(operands[0], operands[1]);
}

#define VISA_GROUPS ASSIGN_OR_RETURN(VeBranched slots, GroupSlots(group0, group1))

Stream Stream::vector_intra_slice_unzip(const std::string& axis, const Mapping& tile_time, const Mapping& split_time) && {
  VISA_VECTOR_CALL("vector_intra_slice_unzip", {
    RETURN_IF_ERROR(tile_time.status());
    if (tile_time.size() != 2) {
      return absl::InvalidArgumentError(absl::StrCat(
          "Two-Group Mode: TileTime is the group axis as a tile of its two groups ([1 # 2]), got [",
          tile_time.ToString(), "]"));
    }
    return chain.Unzip(axis, split_time);
  });
}
Stream Stream::vector_logic(LogicBinaryOpI32 op, std::optional<VeRhs> group0, std::optional<VeRhs> group1) && {
  if (!group0 && !group1) return std::move(*this);  // no group runs it: no ALU, nothing recorded
  VISA_VECTOR_CALL("vector_logic", VISA_GROUPS; return chain.Logic(op, ArgsOf(BinaryArgMode::kMode01), slots));
}
Stream Stream::vector_fxp(FxpBinaryOp op, std::optional<VeRhs> group0, std::optional<VeRhs> group1) && {
  if (!group0 && !group1) return std::move(*this);
  VISA_VECTOR_CALL("vector_fxp", VISA_GROUPS; return chain.Fxp(op, ArgsOf(BinaryArgMode::kMode01), slots));
}
Stream Stream::vector_fp_unary(FpUnaryOp op, bool group0, bool group1) && {
  if (!group0 && !group1) return std::move(*this);
  VISA_VECTOR_CALL("vector_fp_unary", {
    if (!chain.paired()) {
      return absl::FailedPreconditionError(
          "Two-Group Mode: per-group flags need the pair vector_intra_slice_unzip() makes");
    }
    std::optional<TagGuard> guard;
    if (!(group0 && group1)) guard = TagGuard::Group(group0 ? GroupId::kZero : GroupId::kOne);
    return chain.FpUnary(op, ArgsOf(UnaryArgMode::kMode0), guard, {});
  });
}
Stream Stream::vector_fp_binary(FpBinaryOp op, std::optional<VeRhs> group0, std::optional<VeRhs> group1) && {
  if (!group0 && !group1) return std::move(*this);
  VISA_VECTOR_CALL("vector_fp_binary", VISA_GROUPS; return chain.FpBinary(op, ArgsOf(BinaryArgMode::kMode01), slots));
}
Stream Stream::vector_clip(ClipBinaryOpI32 op, std::optional<VeRhs> group0, std::optional<VeRhs> group1) && {
  if (!group0 && !group1) return std::move(*this);
  VISA_VECTOR_CALL("vector_clip", VISA_GROUPS; return chain.Clip(op, ArgsOf(BinaryArgMode::kMode01), slots));
}
Stream Stream::vector_clip(ClipBinaryOpF32 op, std::optional<VeRhs> group0, std::optional<VeRhs> group1) && {
  if (!group0 && !group1) return std::move(*this);
  VISA_VECTOR_CALL("vector_clip", VISA_GROUPS; return chain.Clip(op, ArgsOf(BinaryArgMode::kMode01), slots));
}
Stream Stream::vector_logic_zip(LogicBinaryOpI32 op, BinaryArgMode mode) && {
  VISA_VECTOR_CALL("vector_logic_zip", return chain.LogicZip(op, ArgsOf(mode)));
}
Stream Stream::vector_fxp_zip(FxpBinaryOp op, BinaryArgMode mode) && {
  VISA_VECTOR_CALL("vector_fxp_zip", return chain.FxpZip(op, ArgsOf(mode)));
}
Stream Stream::vector_fp_zip(FpBinaryOp op, BinaryArgMode mode) && {
  VISA_VECTOR_CALL("vector_fp_zip", return chain.FpZip(op, ArgsOf(mode)));
}
Stream Stream::vector_clip_zip(ClipBinaryOpI32 op, BinaryArgMode mode) && {
  VISA_VECTOR_CALL("vector_clip_zip", return chain.ClipZip(op, ArgsOf(mode)));
}
Stream Stream::vector_clip_zip(ClipBinaryOpF32 op, BinaryArgMode mode) && {
  VISA_VECTOR_CALL("vector_clip_zip", return chain.ClipZip(op, ArgsOf(mode)));
}

#undef VISA_GROUPS
#undef VISA_VECTOR_CALL
#undef VISA_SLOTS

Stream Stream::vector_final() && {
  if (!status_.ok()) return std::move(*this);
  if (!vector_) {
    return std::move(*this).Fail(absl::FailedPreconditionError(
        absl::StrCat("Vector Engine stage order: `vector_final` closes a chain that vector_init() opened; none is "
                     "open at ", StreamPositionName(position_))));
  }
  absl::StatusOr<VectorStage> stage = vector_->Final();
  if (!stage.ok()) return std::move(*this).Fail(stage.status());
  vector_.reset();
  shape_ = stage->out;
  position_ = StreamPosition::kReduce;
  op_.stages.push_back(*std::move(stage));
  return std::move(*this);
}

}  // namespace visa
