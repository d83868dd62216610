// The Vector Engine's intra-slice rules: stage transitions, Way, types, ALUs, operands, stash.
#include "dsl/vector_engine.h"

#include <bit>
#include <tuple>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "dsl/equivalence.h"
#include "dsl/status_macros.h"
#include "dsl/vector_branch_ids.h"

namespace visa {
namespace {

constexpr const char* kStageNames[] = {"Branch",  "Logic", "Fxp",     "FxpToFp", "Narrow", "Float", "IntraSliceReduce",
                                       "FpDiv",   "Widen", "FpToFxp", "Clip",    "Filter", "Output"};

// Clusters with several ALUs take several ops in a row (manual, Stages: "each ALU can only be used
// once per pass", so a cluster holds at most one op per ALU).
bool Repeatable(VeStage stage) {
  return stage == VeStage::kLogic || stage == VeStage::kFxp || stage == VeStage::kFloat || stage == VeStage::kClip;
}

// The Way a stage computes in (Stage table, Mode column); nullopt for stages that change it.
std::optional<VeWay> WayOf(VeStage stage) {
  switch (stage) {
    case VeStage::kFloat:
    case VeStage::kIntraSliceReduce:
    case VeStage::kFpDiv: return VeWay::kWay4;
    case VeStage::kNarrow:
    case VeStage::kWiden: return std::nullopt;
    default: return VeWay::kWay8;
  }
}

// Stages at which vector_stash() may snapshot the stream (Stash: "Stashable stages").
bool Stashable(VeStage stage) {
  switch (stage) {
    case VeStage::kBranch:
    case VeStage::kLogic:
    case VeStage::kFxp:
    case VeStage::kNarrow:
    case VeStage::kFloat:
    case VeStage::kFpDiv:
    case VeStage::kClip: return true;
    default: return false;
  }
}

uint32_t FloatBits(float v) { return std::bit_cast<uint32_t>(v); }
std::string DTypeName(DType t) { return std::string(Name(t)); }

std::string BitsText(DType dtype, uint32_t bits) {
  if (dtype == DType::kF32) return absl::StrFormat("%.9g", std::bit_cast<float>(bits));
  return absl::StrCat(static_cast<int32_t>(bits));
}

}  // namespace

const char* VeStageName(VeStage stage) { return kStageNames[static_cast<int>(stage)]; }

// ---- Branch --------------------------------------------------------------------------------------

InputCmp InputCmp::Equal(float v) { return {Kind::kEqual, DType::kF32, FloatBits(v)}; }
InputCmp InputCmp::Less(float v) { return {Kind::kLess, DType::kF32, FloatBits(v)}; }
InputCmp InputCmp::Greater(float v) { return {Kind::kGreater, DType::kF32, FloatBits(v)}; }
InputCmp InputCmp::LessUnsigned(float v) { return {Kind::kLessUnsigned, DType::kF32, FloatBits(v)}; }
InputCmp InputCmp::GreaterUnsigned(float v) { return {Kind::kGreaterUnsigned, DType::kF32, FloatBits(v)}; }

bool InputCmp::Holds(uint32_t x) const {
  const bool f = dtype == DType::kF32;
  const float fx = std::bit_cast<float>(x), fv = std::bit_cast<float>(value);
  const int32_t ix = static_cast<int32_t>(x), iv = static_cast<int32_t>(value);
  switch (kind) {
    case Kind::kTrue: return true;
    case Kind::kFalse: return false;
    case Kind::kEqual: return f ? fx == fv : ix == iv;
    case Kind::kLess: return f ? fx < fv : ix < iv;
    case Kind::kGreater: return f ? fx > fv : ix > iv;
    case Kind::kLessUnsigned: return x < value;
    case Kind::kGreaterUnsigned: return x > value;
  }
  return false;
}

std::string InputCmp::ToString() const {
  static constexpr const char* kNames[] = {"True", "False", "Equal", "Less", "Greater", "LessUnsigned",
                                           "GreaterUnsigned"};
  const char* name = kNames[static_cast<int>(kind)];
  if (kind == Kind::kTrue || kind == Kind::kFalse) return name;
  return absl::StrCat(name, "(", BitsText(dtype, value), ")");
}

std::string BranchMode::ToString() const {
  switch (kind) {
    case Kind::kUnconditional: return "Unconditional";
    case Kind::kAxisToggle: return absl::StrCat("AxisToggle { axis: ", axis, " }");
    case Kind::kValidCount: return absl::StrCat("ValidCount(", axis, ")");
    case Kind::kVrf: return absl::StrCat("Vrf(vrf#", vrf, ")");
    case Kind::kComparison: {
      std::vector<std::string> parts;
      for (const InputCmp& c : cmp) parts.push_back(c.ToString());
      return absl::StrCat("Comparison([", absl::StrJoin(parts, ", "), "])");
    }
  }
  return "?";
}

TagGuard TagGuard::Group(GroupId group) {
  TagGuard guard;
  guard.bits[3] = group == GroupId::kOne ? BitReq::kOne : BitReq::kZero;
  return guard;
}

bool TagGuard::Admits(uint8_t id) const {
  bool match = true;
  for (int i = 0; i < 4; ++i) {
    const bool bit = (id >> i) & 1;
    if (bits[i] == BitReq::kOne && !bit) match = false;
    if (bits[i] == BitReq::kZero && bit) match = false;
  }
  return match != negate;
}

bool TagGuard::unconditional() const {
  for (uint8_t id = 0; id < 16; ++id) {
    if (!Admits(id)) return false;
  }
  return true;
}

bool TagGuard::dead() const {
  for (uint8_t id = 0; id < 16; ++id) {
    if (Admits(id)) return false;
  }
  return true;
}

std::string TagGuard::ToString() const {
  if (unconditional()) return "all";
  std::string pattern;
  for (int i = 0; i < 4; ++i) pattern += bits[i] == BitReq::kOne ? '1' : bits[i] == BitReq::kZero ? '0' : '_';
  return absl::StrCat(negate ? "not " : "", "bits[0..3]=", pattern);
}

// ---- Operands ------------------------------------------------------------------------------------

std::string VeOperand::ToString() const {
  switch (kind) {
    case Kind::kConstant: return BitsText(dtype, bits);
    case Kind::kVrf: return absl::StrCat("vrf#", vrf);
    case Kind::kStash: return "Stash";
  }
  return "?";
}

namespace {
// "ModeXYZ": argument i comes from digit i (0 the stream, 1 operand0, 2 operand1).
VeArgs ArgsNamed(const char* name) {
  VeArgs args{{0, 1, 2}, name};
  for (int i = 0; name[4 + i] != '\0'; ++i) args.from[i] = static_cast<int8_t>(name[4 + i] - '0');
  return args;
}
}  // namespace

VeArgs ArgsOf(UnaryArgMode mode) { return ArgsNamed(mode == UnaryArgMode::kMode0 ? "Mode0" : "Mode1"); }
VeArgs ArgsOf(BinaryArgMode mode) {
  static constexpr const char* kNames[] = {"Mode00", "Mode01", "Mode10", "Mode11"};
  return ArgsNamed(kNames[static_cast<int>(mode)]);
}
VeArgs ArgsOf(TernaryArgMode mode) {
  static constexpr const char* kNames[] = {"Mode012", "Mode002", "Mode102", "Mode112", "Mode020", "Mode021", "Mode120"};
  return ArgsNamed(kNames[static_cast<int>(mode)]);
}

VeBranched& VeBranched::imm(TagGuard guard, VeOperand operand, std::optional<float> o1) {
  if (!status.ok()) return *this;
  int immediates = 0;
  for (const VeSlot& s : slots) {
    if (s.o0.kind == VeOperand::Kind::kConstant) ++immediates;
  }
  if (!slots.empty() && slots.back().o0.kind != VeOperand::Kind::kConstant) {
    status = absl::InvalidArgumentError("Operands: the rf slot is filled, and it is the last slot: no slot may follow it");
  } else if (immediates == 3) {
    status = absl::InvalidArgumentError(
        "Operands: this pass has no immediate register left: it has three, and they are all spoken for");
  } else if (operand.kind != VeOperand::Kind::kConstant) {
    status = absl::InvalidArgumentError(absl::StrCat(
        "Operands: an immediate slot holds a constant, not ", operand.ToString(), " (use rf(...) for it)"));
  }
  if (status.ok()) slots.push_back(VeSlot{guard, operand, o1 ? std::optional(FloatBits(*o1)) : std::nullopt});
  return *this;
}

VeBranched& VeBranched::rf(TagGuard guard, VeOperand operand, std::optional<float> o1) {
  if (!status.ok()) return *this;
  if (!slots.empty() && slots.back().o0.kind != VeOperand::Kind::kConstant) {
    status = absl::InvalidArgumentError("Operands: slot rf is already filled, and filling it again would drop what it holds");
  } else if (operand.kind == VeOperand::Kind::kConstant) {
    status = absl::InvalidArgumentError(absl::StrCat(
        "Operands: the rf slot reads a VRF tensor or the stash, not the constant ", operand.ToString()));
  }
  if (status.ok()) slots.push_back(VeSlot{guard, operand, o1 ? std::optional(FloatBits(*o1)) : std::nullopt});
  return *this;
}

// ---- Description -------------------------------------------------------------------------------

std::string VeStep::Describe() const {
  switch (kind) {
    case Kind::kSplit:
    case Kind::kConcat:
      return absl::StrCat(call, " time [", out.time.ToString(), "] packet [", out.packet.ToString(), "]");
    case Kind::kTrim:
    case Kind::kPad: return absl::StrCat(call, " packet [", out.packet.ToString(), "]");
    case Kind::kStash: return "vector_stash";
    case Kind::kZip:
      return absl::StrCat(call, " ", Info(fn).name, " ", args.name, " on ", VeAluName(*alu), " time [",
                          out.time.ToString(), "]");
    case Kind::kReinterpret: return absl::StrCat("vector_reinterpret ", DTypeName(out.dtype));
    case Kind::kIntraReduce: {
      // The ALU ends the first line; the VCG's lines follow it.
      std::string text = intra_reduce->Describe();
      const size_t line_end = std::min(text.find('\n'), text.size());
      text.insert(line_end, absl::StrCat(" on ", VeAluName(*alu)));
      return text;
    }
    case Kind::kInterReduce: return inter_reduce->Describe();
    case Kind::kOp: break;
  }
  std::string text = absl::StrCat(call, " ", Info(fn).name);
  if (fn == VeFn::kFxpToFp || fn == VeFn::kFpToFxp) absl::StrAppend(&text, "(int_width ", param, ")");
  const int arity = Info(fn).arity;
  if (arity > 1 || args.name == "Mode1") absl::StrAppend(&text, " ", args.name);
  if (guard) absl::StrAppend(&text, " guard ", guard->ToString());
  if (!slots.empty()) {
    std::vector<std::string> parts;
    for (const VeSlot& s : slots) {
      std::string part = s.o0.ToString();
      if (s.o1) part = absl::StrCat("(", part, ", ", BitsText(DType::kF32, *s.o1), ")");
      if (!s.guard.unconditional() || slots.size() > 1) part = absl::StrCat(s.guard.ToString(), ": ", part);
      parts.push_back(part);
    }
    absl::StrAppend(&text, " [", absl::StrJoin(parts, "; "), "]");
  }
  if (alu) absl::StrAppend(&text, " on ", VeAluName(*alu));
  return text;
}

std::string VectorStage::Describe() const {
  std::string text = absl::StrCat("vector ", DTypeName(in.dtype), " branch ", branch.ToString());
  if (!unzip_axis.empty()) absl::StrAppend(&text, " (two groups along ", unzip_axis, ")");
  for (const VeStep& step : steps) {
    const char* stage_name = step.kind == VeStep::Kind::kInterReduce ? "InterSliceReduce" : VeStageName(step.stage);
    absl::StrAppend(&text, "\n      ", stage_name, ": ", step.Describe());
  }
  for (size_t i = 0; i < vrfs.size(); ++i) absl::StrAppend(&text, "\n      vrf#", i, " ", vrfs[i].text);
  absl::StrAppend(&text, "\n      final ", out.ToString(), ", ALUs ", alus_used(), has_way4() ? ", Way4 region" : "");
  return text;
}

bool VectorStage::has_way4() const {
  for (const VeStep& step : steps) {
    if (step.kind == VeStep::Kind::kSplit || step.kind == VeStep::Kind::kTrim) return true;
  }
  return false;
}

int VectorStage::alus_used() const {
  int n = 0;
  for (const VeStep& step : steps) n += step.alu.has_value();
  return n;
}

// ---- Planning ------------------------------------------------------------------------------------

absl::StatusOr<VectorChain> VectorChain::Init(const StreamShape& in, StreamPosition position) {
  if (position != StreamPosition::kCollect && position != StreamPosition::kContraction) {
    return absl::FailedPreconditionError(absl::StrCat(
        "Vector Engine: `vector_init` follows the Collect Engine or the Contraction Engine's accumulate, not ",
        StreamPositionName(position)));
  }
  if (in.dtype != DType::kI32 && in.dtype != DType::kF32) {
    return absl::InvalidArgumentError(absl::StrCat(
        "Vector Engine: `vector_init` takes i32 or f32 data (\"The Vector Engine operates exclusively on i32 and "
        "f32\"), the stream is ",
        DTypeName(in.dtype), " [", in.packet.ToString(), "]; fetch or accumulate into a 32-bit type"));
  }
  VectorChain chain;
  chain.shape_ = in;
  chain.config_.in = in;
  return chain;
}

absl::Status VectorChain::Enter(const char* call, VeStage target) {
  if (!entered_) {
    return absl::FailedPreconditionError(absl::StrCat(
        "Vector Engine stage order: `", call, "` needs the intra-slice block: call vector_intra_slice_branch(...) after "
        "vector_init() first"));
  }
  const bool later = static_cast<int>(target) > static_cast<int>(stage_);
  if (!later && !(target == stage_ && Repeatable(target))) {
    return absl::FailedPreconditionError(absl::StrCat(
        "Vector Engine stage order: `", call, "` is the ", VeStageName(target), " stage, which cannot follow the ",
        VeStageName(stage_), " stage (stages run in the order Branch, Logic, Fxp, FxpToFp, Narrow, Float, "
        "IntraSliceReduce, FpDiv, Widen, FpToFxp, Clip, Filter, Output; each is optional, only Logic, Fxp, Float and "
        "Clip repeat)"));
  }
  RETURN_IF_ERROR(AfterInterSlice(call, target));
  if (std::optional<VeWay> way = WayOf(target); way && *way != way_) {
    return RequireWay(call, *way);
  }
  stage_ = target;
  return absl::OkStatus();
}

absl::Status VectorChain::RequireWay(const char* call, VeWay way) const {
  if (way == way_) return absl::OkStatus();
  return absl::FailedPreconditionError(absl::StrCat(
      "Vector Engine Way: `", call, "` requires ", way == VeWay::kWay8 ? "Way8" : "Way4", " but the stream is in ",
      way_ == VeWay::kWay8 ? "Way8" : "Way4", " (packet [", shape_.packet.ToString(), "]); ",
      way == VeWay::kWay4 ? "narrow first with vector_split() or vector_trim_way4()"
                          : "widen first with vector_concat() or vector_pad_way8()"));
}

absl::Status VectorChain::RequireType(const char* call, DType type) const {
  if (shape_.dtype == type) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat("Vector Engine data type: `", call, "` takes ", DTypeName(type),
                                                 " but the stream is ", DTypeName(shape_.dtype)));
}

absl::Status VectorChain::Claim(const char* call, const char* op, VeAlu alu) {
  const int bit = static_cast<int>(alu);
  if (used_[bit]) {
    return absl::FailedPreconditionError(absl::StrCat(
        "ALU single-use: ", VeAluName(alu), " is already in use (`", call, "` ", op, " needs it; each ALU can be used "
        "once per pass: split the work over two Tensor Unit invocations)"));
  }
  used_[bit] = true;
  return absl::OkStatus();
}

absl::Status VectorChain::CheckOperands(const char* call, const char* op, DType type, int arity, const VeArgs& args,
                                        const VeBranched& operand) {
  RETURN_IF_ERROR(operand.status);
  if (operand.slots.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "Operands: `", call, "` ", op, ": this operand fills no slot, so the pass would spend an ALU and a pipeline "
        "stage driving nothing"));
  }
  bool reads_o1 = false;
  for (int i = 0; i < arity; ++i) reads_o1 |= args.from[i] == 2;
  for (size_t k = 0; k < operand.slots.size(); ++k) {
    const VeSlot& slot = operand.slots[k];
    const std::string name = k < operand.slots.size() - 1 || slot.o0.kind == VeOperand::Kind::kConstant
                                 ? absl::StrCat("reg", k)
                                 : "rf";
    if (slot.guard.dead()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "Operands: `", call, "` ", op, ": slot ", name, "'s guard is satisfied by no execution id at all, so it "
          "would never fire"));
    }
    if (k > 0 && operand.slots[k - 1].guard.unconditional()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "Operands: `", call, "` ", op, ": slot ", k - 1, " is unconditional, which claims every element the earlier "
          "guards left over, so no slot may follow it; slot ", name, " could never fire"));
    }
    const VeOperand& o = slot.o0;
    if (o.kind == VeOperand::Kind::kConstant && o.dtype != type) {
      return absl::InvalidArgumentError(absl::StrCat("Operands: `", call, "` ", op, " on ", DTypeName(type),
                                                     " takes a ", DTypeName(type), " constant, got ", DTypeName(o.dtype),
                                                     " ", o.ToString()));
    }
    if (o.kind == VeOperand::Kind::kVrf) {
      const VrfOperandInfo& vrf = config_.vrfs[o.vrf];
      if (vrf.dtype != type) {
        return absl::InvalidArgumentError(absl::StrCat("VRF Input: `", call, "` ", op, " on ", DTypeName(type),
                                                       " reads a ", DTypeName(vrf.dtype), " VRF tensor ", vrf.text));
      }
    }
    if (o.kind == VeOperand::Kind::kStash) {
      if (stash_ == StashState::kFresh) {
        return absl::FailedPreconditionError(absl::StrCat(
            "Stash: `", call, "` ", op, " reads the stash, but no vector_stash() wrote it in this pass"));
      }
      if (stash_ == StashState::kSpent) {
        return absl::FailedPreconditionError(absl::StrCat(
            "Stash: `", call, "` ", op, " reads the stash a second time; it is read once per pass (\"not available "
            "after a binary op consumes the stash\")"));
      }
      if (stash_dtype_ != type || stash_way_ != way_) {
        return absl::InvalidArgumentError(absl::StrCat(
            "Stash: `", call, "` ", op, " on ", DTypeName(type), " in ", way_ == VeWay::kWay8 ? "Way8" : "Way4",
            " cannot read the stash written as ", DTypeName(stash_dtype_), " in ",
            stash_way_ == VeWay::kWay8 ? "Way8" : "Way4", " (the stash is typed and read at the Way it was written)"));
      }
    }
    if (arity == 3 && reads_o1 && !slot.o1) {
      return absl::InvalidArgumentError(absl::StrCat("Operands: `", call, "` ", op, " in ", args.name,
                                                     " reads operand1, which slot ", name, " does not give"));
    }
  }
  // The stash is spent once a slot reads it.
  for (const VeSlot& slot : operand.slots) {
    if (slot.o0.kind == VeOperand::Kind::kStash) stash_ = StashState::kSpent;
  }
  return absl::OkStatus();
}

absl::Status VectorChain::AddOp(const char* call, const char* op, VeStage stage, VeFn fn, std::optional<VeAlu> alu,
                                DType type, int arity, const VeArgs& args, const VeBranched& operand, DType out_type,
                                int32_t param, std::optional<TagGuard> guard) {
  RETURN_IF_ERROR(Enter(call, stage));
  RETURN_IF_ERROR(RequireType(call, type));
  bool reads_operand = false;
  for (int i = 0; i < arity; ++i) reads_operand |= args.from[i] != 0;
  if (arity > 1 || reads_operand) {
    RETURN_IF_ERROR(CheckOperands(call, op, type, arity, args, operand));
  }
  if (guard && guard->dead()) {
    return absl::InvalidArgumentError(absl::StrCat("Operands: `", call, "` ", op,
                                                   ": this op's guard is satisfied by no execution id at all, so it "
                                                   "would never fire"));
  }
  if (alu) RETURN_IF_ERROR(Claim(call, op, *alu));
  VeStep step;
  step.kind = VeStep::Kind::kOp;
  step.stage = stage;
  step.call = call;
  step.fn = fn;
  step.alu = alu;
  step.args = args;
  step.param = param;
  if (arity > 1 || reads_operand) step.slots = operand.slots;
  step.guard = guard;
  shape_.dtype = out_type;
  step.out = shape_;
  config_.steps.push_back(std::move(step));
  return absl::OkStatus();
}

absl::Status VectorChain::Branch(const BranchMode& mode) {
  if (entered_) {
    return absl::FailedPreconditionError(
        "Vector Engine stage order: `vector_intra_slice_branch` enters the intra-slice block once, right after "
        "vector_init()");
  }
  if (shape_.packet.size() * 32 != kFlitBytes * 8) {
    return absl::InvalidArgumentError(absl::StrCat(
        "Vector Engine Way: `vector_intra_slice_branch` needs Way8 packets of 8 elements (one 32-byte flit), the "
        "packet [", shape_.packet.ToString(), "] has ", shape_.packet.size()));
  }
  if (order_ == Order::kInterFirst &&
      (mode.kind == BranchMode::Kind::kValidCount || mode.kind == BranchMode::Kind::kVrf)) {
    // Both take their ids on the stage's input stream; after an InterFirst reduce that stream is gone.
    return absl::UnimplementedError(
        "Branch: the ValidCount and Vrf branch modes are not supported after an InterFirst "
        "`vector_inter_slice_reduce` (their ids describe the stage's input stream); use AxisToggle or a "
        "comparison, or reduce intra first");
  }
  if (mode.kind == BranchMode::Kind::kValidCount) RETURN_IF_ERROR(ValidCountIds(shape_, mode.axis).status());
  if (mode.kind == BranchMode::Kind::kVrf) RETURN_IF_ERROR(CheckVrfIds(mode));
  if (mode.kind == BranchMode::Kind::kAxisToggle) {
    const std::vector<std::string> names = shape_.Full().axis_names();
    if (std::find(names.begin(), names.end(), mode.axis) == names.end()) {
      return absl::InvalidArgumentError(absl::StrCat("Branch: AxisToggle toggles on axis `", mode.axis,
                                                     "`, which the stream ", shape_.ToString(), " does not hold"));
    }
  }
  if (mode.kind == BranchMode::Kind::kComparison) {
    for (const InputCmp& c : mode.cmp) {
      if (c.kind != InputCmp::Kind::kTrue && c.kind != InputCmp::Kind::kFalse && c.dtype != shape_.dtype) {
        return absl::InvalidArgumentError(absl::StrCat("Branch: the comparison ", c.ToString(), " has a ",
                                                       DTypeName(c.dtype), " value, the stream is ",
                                                       DTypeName(shape_.dtype)));
      }
    }
  }
  entered_ = true;
  if (order_ == Order::kUnset) order_ = Order::kIntraFirst;
  config_.branch = mode;
  return absl::OkStatus();
}

namespace {
struct OpAlu {
  VeFn fn;
  VeAlu alu;
  const char* name;
};
}  // namespace

absl::Status VectorChain::Logic(LogicBinaryOpI32 op, const VeArgs& args, const VeBranched& operand) {
  static constexpr OpAlu kOps[] = {{VeFn::kBitAnd, VeAlu::kLogicAnd, "BitAnd"},
                                   {VeFn::kBitOr, VeAlu::kLogicOr, "BitOr"},
                                   {VeFn::kBitXor, VeAlu::kLogicXor, "BitXor"},
                                   {VeFn::kLeftShift, VeAlu::kLogicLshift, "LeftShift"},
                                   {VeFn::kLogicRightShift, VeAlu::kLogicRshift, "LogicRightShift"},
                                   {VeFn::kArithRightShift, VeAlu::kLogicRshift, "ArithRightShift"}};
  const OpAlu& o = kOps[static_cast<int>(op)];
  return AddOp("vector_logic", o.name, VeStage::kLogic, o.fn, o.alu, DType::kI32, 2, args, operand, DType::kI32);
}

absl::Status VectorChain::Logic(LogicBinaryOpF32 op, const VeArgs& args, const VeBranched& operand) {
  static constexpr OpAlu kOps[] = {{VeFn::kBitAnd, VeAlu::kLogicAnd, "BitAnd"},
                                   {VeFn::kBitOr, VeAlu::kLogicOr, "BitOr"},
                                   {VeFn::kBitXor, VeAlu::kLogicXor, "BitXor"}};
  const OpAlu& o = kOps[static_cast<int>(op)];
  return AddOp("vector_logic", o.name, VeStage::kLogic, o.fn, o.alu, DType::kF32, 2, args, operand, DType::kF32);
}

absl::Status VectorChain::Fxp(FxpBinaryOp op, const VeArgs& args, const VeBranched& operand) {
  static constexpr OpAlu kOps[] = {{VeFn::kAddFxp, VeAlu::kFxpAdd, "AddFxp"},
                                   {VeFn::kAddFxpSat, VeAlu::kFxpAdd, "AddFxpSat"},
                                   {VeFn::kSubFxp, VeAlu::kFxpAdd, "SubFxp"},
                                   {VeFn::kSubFxpSat, VeAlu::kFxpAdd, "SubFxpSat"},
                                   {VeFn::kLeftShift, VeAlu::kFxpLshift, "LeftShift"},
                                   {VeFn::kFxpLeftShiftSat, VeAlu::kFxpLshift, "LeftShiftSat"},
                                   {VeFn::kMulFxp, VeAlu::kFxpMul, "MulFxp"},
                                   {VeFn::kMulInt, VeAlu::kFxpMul, "MulInt"},
                                   {VeFn::kLogicRightShift, VeAlu::kFxpRshift, "LogicRightShift"},
                                   {VeFn::kArithRightShift, VeAlu::kFxpRshift, "ArithRightShift"},
                                   {VeFn::kArithRightShiftRound, VeAlu::kFxpRshift, "ArithRightShiftRound"}};
  const OpAlu& o = kOps[static_cast<int>(op)];
  return AddOp("vector_fxp", o.name, VeStage::kFxp, o.fn, o.alu, DType::kI32, 2, args, operand, DType::kI32);
}

absl::Status VectorChain::FxpToFp(int int_width) {
  if (int_width < 0 || int_width > 31) {
    return absl::InvalidArgumentError(absl::StrCat("FxpToFp: int_width is 0 to 31 (bits of the 32 before the binary "
                                                   "point), got ", int_width));
  }
  return AddOp("vector_fxp_to_fp", "FxpToFp", VeStage::kFxpToFp, VeFn::kFxpToFp, std::nullopt, DType::kI32, 1,
               ArgsOf(UnaryArgMode::kMode0), {}, DType::kF32, int_width);
}

absl::Status VectorChain::FpToFxp(int int_width) {
  if (int_width < 0 || int_width > 31) {
    return absl::InvalidArgumentError(absl::StrCat("FpToFxp: int_width is 0 to 31, got ", int_width));
  }
  return AddOp("vector_fp_to_fxp", "FpToFxp", VeStage::kFpToFxp, VeFn::kFpToFxp, std::nullopt, DType::kF32, 1,
               ArgsOf(UnaryArgMode::kMode0), {}, DType::kI32, int_width);
}

absl::Status VectorChain::Relayout(const char* call, VeStep::Kind kind, VeStage stage, VeWay from,
                                   const StreamShape& out) {
  RETURN_IF_ERROR(RequireWay(call, from));
  RETURN_IF_ERROR(Enter(call, stage));
  way_ = from == VeWay::kWay8 ? VeWay::kWay4 : VeWay::kWay8;
  shape_ = out;
  VeStep step;
  step.kind = kind;
  step.stage = stage;
  step.call = call;
  step.out = out;
  config_.steps.push_back(std::move(step));
  return absl::OkStatus();
}

namespace {
absl::Status Expect(const char* call, const char* what, const Mapping& got, const Mapping& want) {
  ASSIGN_OR_RETURN(bool same, Equivalent(got, want));
  if (same) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat("Narrow / Widen: `", call, "` ", what, " must be [", want.ToString(),
                                                 "], got [", got.ToString(), "]"));
}
absl::Status ExpectSize(const char* call, const char* what, const Mapping& m, int64_t size) {
  if (m.size() == size) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat("Narrow / Widen: `", call, "` ", what, " [", m.ToString(),
                                                 "] must have ", size, " elements, it has ", m.size()));
}
}  // namespace

absl::Status VectorChain::Split(const Mapping& time, const Mapping& packet) {
  RETURN_IF_ERROR(ExpectSize("vector_split", "output Packet", packet, 4));
  RETURN_IF_ERROR(Expect("vector_split", "Packet (the front half of each flit)", packet, shape_.packet % 4));
  RETURN_IF_ERROR(Expect("vector_split", "Time ([Time, Packet / 4])", time, Pair({shape_.time, shape_.packet / 4})));
  StreamShape out = shape_;
  out.time = time;
  out.packet = packet;
  const Mapping group_time = paired_ ? Pair({group_time_, shape_.packet / 4}) : group_time_;
  RETURN_IF_ERROR(Relayout("vector_split", VeStep::Kind::kSplit, VeStage::kNarrow, VeWay::kWay8, out));
  group_time_ = group_time;
  return absl::OkStatus();
}

absl::Status VectorChain::TrimWay4(const Mapping& packet) {
  RETURN_IF_ERROR(NotPaired("vector_trim_way4"));
  RETURN_IF_ERROR(ExpectSize("vector_trim_way4", "output Packet", packet, 4));
  ASSIGN_OR_RETURN(bool back_padding, Equivalent(shape_.packet, shape_.packet.resize(4).pad(8)));
  if (!back_padding) {
    return absl::InvalidArgumentError(absl::StrCat(
        "Narrow / Widen: `vector_trim_way4` keeps the front 4 lanes, but the back 4 lanes of [",
        shape_.packet.ToString(), "] hold data; use vector_split() instead"));
  }
  RETURN_IF_ERROR(Expect("vector_trim_way4", "Packet (the front 4 lanes)", packet.pad(8), shape_.packet));
  StreamShape out = shape_;
  out.packet = packet;
  return Relayout("vector_trim_way4", VeStep::Kind::kTrim, VeStage::kNarrow, VeWay::kWay8, out);
}

absl::Status VectorChain::Concat(const Mapping& time, const Mapping& packet) {
  RETURN_IF_ERROR(ExpectSize("vector_concat", "output Packet", packet, 8));
  RETURN_IF_ERROR(Expect("vector_concat", "Time (Time / 2)", time, shape_.time / 2));
  RETURN_IF_ERROR(Expect("vector_concat", "Packet ([Time % 2, Packet])", packet, Pair({shape_.time % 2, shape_.packet})));
  StreamShape out = shape_;
  out.time = time;
  out.packet = packet;
  const Mapping group_time = paired_ ? group_time_ / 2 : group_time_;
  RETURN_IF_ERROR(Relayout("vector_concat", VeStep::Kind::kConcat, VeStage::kWiden, VeWay::kWay4, out));
  group_time_ = group_time;
  return absl::OkStatus();
}

absl::Status VectorChain::PadWay8(const Mapping& packet) {
  RETURN_IF_ERROR(NotPaired("vector_pad_way8"));
  RETURN_IF_ERROR(ExpectSize("vector_pad_way8", "output Packet", packet, 8));
  RETURN_IF_ERROR(Expect("vector_pad_way8", "Packet (the Way4 packet padded to 8)", packet, shape_.packet.pad(8)));
  StreamShape out = shape_;
  out.packet = packet;
  return Relayout("vector_pad_way8", VeStep::Kind::kPad, VeStage::kWiden, VeWay::kWay4, out);
}

absl::Status VectorChain::FpUnary(FpUnaryOp op, const VeArgs& args, std::optional<TagGuard> guard,
                                  const VeBranched& operand) {
  static constexpr OpAlu kOps[] = {
      {VeFn::kExp, VeAlu::kFpExp, "Exp"},     {VeFn::kNegExp, VeAlu::kFpExp, "NegExp"},
      {VeFn::kSqrt, VeAlu::kFpFpu, "Sqrt"},   {VeFn::kTanh, VeAlu::kFpFpu, "Tanh"},
      {VeFn::kSigmoid, VeAlu::kFpFpu, "Sigmoid"}, {VeFn::kErf, VeAlu::kFpFpu, "Erf"},
      {VeFn::kLog, VeAlu::kFpFpu, "Log"},     {VeFn::kSin, VeAlu::kFpFpu, "Sin"},
      {VeFn::kCos, VeAlu::kFpFpu, "Cos"}};
  const OpAlu& o = kOps[static_cast<int>(op)];
  return AddOp("vector_fp_unary", o.name, VeStage::kFloat, o.fn, o.alu, DType::kF32, 1, args, operand, DType::kF32, 0,
               guard);
}

namespace {
// The manual's Float table lists MaskMulF on the two multiplier lanes only (Mul0, Mul1), not on
// FpFma as MulF may run.
absl::Status MaskMulAlu(const char* call, FpBinaryOp op) {
  if (op.mul != FpMulAlu::kFma) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat(
      "Float Cluster: MaskMulF runs on FpMul0 or FpMul1 (the manual's table lists MaskMulF(FpMulAlu::Mul0) and "
      "MaskMulF(FpMulAlu::Mul1)), not FpMulAlu::Fma, at `", call,
      "`; use MulF(FpMulAlu::Fma) or MaskFmaF with operand1 0.0 for a masked product on FpFma"));
}
}  // namespace

absl::Status VectorChain::FpBinary(FpBinaryOp op, const VeArgs& args, const VeBranched& operand) {
  VeFn fn = VeFn::kAddF;
  VeAlu alu = VeAlu::kFpFma;
  const char* name = "AddF";
  switch (op.kind) {
    case FpBinaryOp::Kind::kAddF: break;
    case FpBinaryOp::Kind::kSubF: fn = VeFn::kSubF, name = "SubF"; break;
    case FpBinaryOp::Kind::kDivF: fn = VeFn::kDivF, alu = VeAlu::kFpFpu, name = "DivF"; break;
    case FpBinaryOp::Kind::kMulF:
      fn = VeFn::kMulF;
      alu = op.mul == FpMulAlu::kMul0 ? VeAlu::kFpMul0 : op.mul == FpMulAlu::kMul1 ? VeAlu::kFpMul1 : VeAlu::kFpFma;
      name = op.mul == FpMulAlu::kMul0 ? "MulF(Mul0)" : op.mul == FpMulAlu::kMul1 ? "MulF(Mul1)" : "MulF(Fma)";
      break;
    case FpBinaryOp::Kind::kMaskMulF:
      RETURN_IF_ERROR(MaskMulAlu("vector_fp_binary", op));
      fn = VeFn::kMaskMulF;
      alu = op.mul == FpMulAlu::kMul0 ? VeAlu::kFpMul0 : VeAlu::kFpMul1;
      name = op.mul == FpMulAlu::kMul0 ? "MaskMulF(Mul0)" : "MaskMulF(Mul1)";
      break;
  }
  return AddOp("vector_fp_binary", name, VeStage::kFloat, fn, alu, DType::kF32, 2, args, operand, DType::kF32);
}

absl::Status VectorChain::FpTernary(FpTernaryOp op, const VeArgs& args, const VeBranched& operand) {
  const bool masked = op == FpTernaryOp::kMaskFmaF;
  return AddOp("vector_fp_ternary", masked ? "MaskFmaF" : "FmaF", VeStage::kFloat,
               masked ? VeFn::kMaskFmaF : VeFn::kFmaF, VeAlu::kFpFma, DType::kF32, 3, args, operand, DType::kF32);
}

absl::Status VectorChain::FpDiv(FpDivBinaryOp, const VeArgs& args, const VeBranched& operand) {
  return AddOp("vector_fp_div", "DivF", VeStage::kFpDiv, VeFn::kDivF, VeAlu::kReduceFpDiv, DType::kF32, 2, args,
               operand, DType::kF32);
}

absl::Status VectorChain::Clip(ClipBinaryOpI32 op, const VeArgs& args, const VeBranched& operand) {
  static constexpr OpAlu kOps[] = {{VeFn::kMinI32, VeAlu::kClipMin, "Min"},
                                   {VeFn::kMaxI32, VeAlu::kClipMax, "Max"},
                                   {VeFn::kAbsMinI32, VeAlu::kClipMin, "AbsMin"},
                                   {VeFn::kAbsMaxI32, VeAlu::kClipMax, "AbsMax"},
                                   {VeFn::kAddFxp, VeAlu::kClipAdd, "AddFxp"},
                                   {VeFn::kAddFxpSat, VeAlu::kClipAdd, "AddFxpSat"}};
  const OpAlu& o = kOps[static_cast<int>(op)];
  return AddOp("vector_clip", o.name, VeStage::kClip, o.fn, o.alu, DType::kI32, 2, args, operand, DType::kI32);
}

absl::Status VectorChain::Clip(ClipBinaryOpF32 op, const VeArgs& args, const VeBranched& operand) {
  static constexpr OpAlu kOps[] = {{VeFn::kMinF32, VeAlu::kClipMin, "Min"},
                                   {VeFn::kMaxF32, VeAlu::kClipMax, "Max"},
                                   {VeFn::kAbsMinF32, VeAlu::kClipMin, "AbsMin"},
                                   {VeFn::kAbsMaxF32, VeAlu::kClipMax, "AbsMax"},
                                   {VeFn::kAddF32Clip, VeAlu::kClipAdd, "Add"}};
  const OpAlu& o = kOps[static_cast<int>(op)];
  return AddOp("vector_clip", o.name, VeStage::kClip, o.fn, o.alu, DType::kF32, 2, args, operand, DType::kF32);
}

absl::Status VectorChain::Stash() {
  if (!entered_) return Enter("vector_stash", stage_);
  RETURN_IF_ERROR(NotPaired("vector_stash"));
  if (!Stashable(stage_) || (inter_done_ && order_ == Order::kIntraFirst)) {
    return absl::FailedPreconditionError(absl::StrCat(
        "Stash: `vector_stash` is available only at the Stashable stages Branch, Logic, Fxp, Narrow, Float, FpDiv and "
        "Clip, not after the ", inter_done_ ? "InterSliceReduce" : VeStageName(stage_), " stage"));
  }
  if (stash_ != StashState::kFresh) {
    return absl::FailedPreconditionError(
        "Stash: the stash is a single slot per pass and this pass already wrote it (only one vector_stash() snapshot "
        "can be live in a pass)");
  }
  stash_ = StashState::kOccupied;
  stash_dtype_ = shape_.dtype;
  stash_way_ = way_;
  VeStep step;
  step.kind = VeStep::Kind::kStash;
  step.stage = stage_;
  step.call = "vector_stash";
  step.out = shape_;
  config_.steps.push_back(std::move(step));
  return absl::OkStatus();
}

absl::Status VectorChain::Reinterpret(DType to) {
  if (!entered_) return Enter("vector_reinterpret", stage_);
  if (to != DType::kI32 && to != DType::kF32) {
    return absl::InvalidArgumentError(absl::StrCat("Vector Engine data type: `vector_reinterpret` re-reads the 32 "
                                                   "bits as i32 or f32, not ", DTypeName(to)));
  }
  shape_.dtype = to;
  VeStep step;
  step.kind = VeStep::Kind::kReinterpret;
  step.stage = stage_;
  step.call = "vector_reinterpret";
  step.out = shape_;
  config_.steps.push_back(std::move(step));
  return absl::OkStatus();
}

absl::StatusOr<int> VectorChain::AddVrf(VrfOperandInfo vrf) {
  struct Level {
    const char* name;
    const Mapping& stream;
    const Mapping& vrf;
  };
  for (const Level& level : {Level{"Chip", shape_.chip, vrf.chip}, Level{"Cluster", shape_.cluster, vrf.cluster},
                             Level{"Slice", shape_.slice, vrf.slice}}) {
    ASSIGN_OR_RETURN(bool same, Equivalent(level.stream, level.vrf));
    if (!same) {
      return absl::InvalidArgumentError(absl::StrCat(
          "VRF Input: each slice reads its own VRF, so the VRF tensor's ", level.name, " must equal the stream's: "
          "stream [", level.stream.ToString(), "], VRF [", level.vrf.ToString(), "] (", vrf.text, ")"));
    }
  }
  const std::vector<std::string> stream_axes = shape_.Full().axis_names();
  for (const std::string& axis : vrf.element.axis_names()) {
    if (std::find(stream_axes.begin(), stream_axes.end(), axis) == stream_axes.end()) {
      return absl::InvalidArgumentError(absl::StrCat("VRF Input: the VRF tensor ", vrf.text, " holds axis `", axis,
                                                     "`, which the stream ", shape_.ToString(), " does not"));
    }
  }
  config_.vrfs.push_back(std::move(vrf));
  return static_cast<int>(config_.vrfs.size()) - 1;
}

absl::StatusOr<VectorStage> VectorChain::Final() {
  if (!entered_ && !inter_done_) return Enter("vector_final", VeStage::kOutput);
  if (paired_) {
    return absl::FailedPreconditionError(
        "Two-Group Mode: merge the two groups with a _zip op (vector_clip_zip, vector_fxp_zip, ...) before "
        "vector_final()");
  }
  RETURN_IF_ERROR(RequireWay("vector_final", VeWay::kWay8));
  stage_ = VeStage::kOutput;
  config_.out = shape_;
  return config_;
}

}  // namespace visa
