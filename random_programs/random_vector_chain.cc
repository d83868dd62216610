// Random Vector Engine chains: drawing, printing, running and coverage.
#include "random_programs/random_vector_chain.h"

#include <algorithm>
#include <bit>
#include <cctype>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "dsl/status_macros.h"
#include "runtime/transfer.h"

namespace visa::samples {
namespace {

constexpr int64_t kVrfSourceAddress = 0x10000;  // DM sources of the VRF tensors (below the relayout)
constexpr int64_t kIdsSourceAddress = 0x14000;
constexpr int64_t kVrfIdsAddress = 4096;        // the ids VRF's address (the operand's is 0)
constexpr uint64_t kVrfSeed = 45, kIdsSeed = 46;

using Kind = VectorCallDraw::Kind;
using SlotKind = VectorSlotDraw::Kind;

std::string JoinTime(const std::vector<std::string>& terms) { return terms.empty() ? "1" : absl::StrJoin(terms, ", "); }
std::string Bracket(const std::string& text) {
  return text.find_first_of(",#=$ ") == std::string::npos ? text : absl::StrCat("[", text, "]");
}

// The ALU of each op a chain draws (manual, each cluster's op table).
VeAlu LogicAlu(int op) {
  static constexpr VeAlu kAlus[] = {VeAlu::kLogicAnd, VeAlu::kLogicOr, VeAlu::kLogicXor,
                                    VeAlu::kLogicLshift, VeAlu::kLogicRshift, VeAlu::kLogicRshift};
  return kAlus[op];
}
VeAlu FxpAlu(int op) {
  static constexpr VeAlu kAlus[] = {VeAlu::kFxpAdd, VeAlu::kFxpAdd, VeAlu::kFxpAdd, VeAlu::kFxpAdd,
                                    VeAlu::kFxpLshift, VeAlu::kFxpLshift, VeAlu::kFxpMul, VeAlu::kFxpMul,
                                    VeAlu::kFxpRshift, VeAlu::kFxpRshift, VeAlu::kFxpRshift};
  return kAlus[op];
}
VeAlu UnaryAlu(int op) { return op <= static_cast<int>(FpUnaryOp::kNegExp) ? VeAlu::kFpExp : VeAlu::kFpFpu; }
VeAlu BinaryAlu(int kind, FpMulAlu mul) {
  switch (static_cast<FpBinaryOp::Kind>(kind)) {
    case FpBinaryOp::Kind::kMulF:
    case FpBinaryOp::Kind::kMaskMulF:
      return mul == FpMulAlu::kMul0 ? VeAlu::kFpMul0 : mul == FpMulAlu::kMul1 ? VeAlu::kFpMul1 : VeAlu::kFpFma;
    case FpBinaryOp::Kind::kDivF: return VeAlu::kFpFpu;
    default: return VeAlu::kFpFma;
  }
}
VeAlu ClipAlu(int op, DType type) {
  static constexpr VeAlu kI32[] = {VeAlu::kClipMin, VeAlu::kClipMax, VeAlu::kClipMin,
                                   VeAlu::kClipMax, VeAlu::kClipAdd, VeAlu::kClipAdd};
  static constexpr VeAlu kF32[] = {VeAlu::kClipMin, VeAlu::kClipMax, VeAlu::kClipMin, VeAlu::kClipMax,
                                   VeAlu::kClipAdd};
  return type == DType::kI32 ? kI32[op] : kF32[op];
}
FpBinaryOp BinaryOp(int kind, FpMulAlu mul) {
  switch (static_cast<FpBinaryOp::Kind>(kind)) {
    case FpBinaryOp::Kind::kSubF: return FpBinaryOp::SubF();
    case FpBinaryOp::Kind::kMulF: return FpBinaryOp::MulF(mul);
    case FpBinaryOp::Kind::kDivF: return FpBinaryOp::DivF();
    case FpBinaryOp::Kind::kMaskMulF: return FpBinaryOp::MaskMulF(mul);
    default: return FpBinaryOp::AddF();
  }
}

// The ops drawn: every FxpBinaryOp (ArithRightShiftRound last) and FpBinaryOp kind (MaskMulF last).
constexpr int kFxpOps = static_cast<int>(FxpBinaryOp::kArithRightShiftRound) + 1;
constexpr int kMaskMul = static_cast<int>(FpBinaryOp::Kind::kMaskMulF);
constexpr int kBinaryKinds = kMaskMul + 1;
FpTernaryOp TernaryOp(int op) { return op == 1 ? FpTernaryOp::kMaskFmaF : FpTernaryOp::kFmaF; }

class VectorDrawer {
 public:
  VectorDrawer(std::mt19937_64& rng, const VectorEntry& entry) : rng_(rng), entry_(entry), type_(entry.type) {}

  VectorChainDraw Draw() {
    chain_.after = entry_.after;
    chain_.vrf_type = entry_.type;
    chain_.out_time = entry_.time;
    std::vector<std::string> element = entry_.time;
    element.push_back(entry_.packet);
    chain_.vrf_element = JoinTime(element);
    chain_.vrf_operand = entry_.vrf_possible && Coin(0.5);
    if (entry_.interleaved && Coin(0.6)) {
      DrawPair();
    } else {
      DrawSingle();
    }
    return chain_;
  }

 private:
  size_t Below(size_t n) { return static_cast<size_t>(rng_() % n); }
  bool Coin(double p) { return static_cast<double>(rng_() >> 11) * 0x1.0p-53 < p; }
  bool Free(VeAlu alu) const { return !used_.count(alu); }

  uint32_t Constant(bool shift) {
    if (type_ == DType::kF32) {
      static constexpr float kValues[] = {0.5f, 2.0f, -1.5f, 3.0f, 0.001f, 100.0f, -0.0f, 1.0f};
      return std::bit_cast<uint32_t>(kValues[Below(8)]);
    }
    if (shift) return static_cast<uint32_t>(Below(40));
    return Coin(0.5) ? static_cast<uint32_t>(static_cast<int32_t>(Below(201)) - 100) : static_cast<uint32_t>(rng_());
  }
  float O1() {
    static constexpr float kValues[] = {1.0f, -2.0f, 0.25f, 10.0f};
    return kValues[Below(4)];
  }
  TagGuard RandomGuard() {
    std::array<BitReq, 4> bits{BitReq::kIgnore, BitReq::kIgnore, BitReq::kIgnore, BitReq::kIgnore};
    bits[Below(4)] = Coin(0.5) ? BitReq::kOne : BitReq::kZero;
    if (Coin(0.3)) bits[Below(4)] = Coin(0.5) ? BitReq::kOne : BitReq::kZero;
    return Coin(0.2) ? TagGuard::NotMatches(bits) : TagGuard::Matches(bits);
  }

  // Whether the stash can be read here, at the current type and Way.
  bool StashReadable() const { return stash_ == 1 && stash_type_ == type_ && stash_way4_ == way4_; }
  bool VrfReadable() const { return chain_.vrf_operand && type_ == chain_.vrf_type && !zipped_ && !reduced_; }

  // An op's operand slots: sometimes guarded constants first, then one that takes the rest.
  std::vector<VectorSlotDraw> Slots(bool shift, bool ternary) {
    std::vector<VectorSlotDraw> slots;
    const bool guarded = chain_.branch.kind != BranchMode::Kind::kUnconditional && !zipped_ && Coin(0.5);
    const int immediates = guarded ? 1 + static_cast<int>(Below(2)) : 0;
    for (int i = 0; i < immediates; ++i) {
      VectorSlotDraw s;
      s.bits = Constant(shift);
      s.guard = RandomGuard();
      if (ternary) s.o1 = O1();
      slots.push_back(s);
    }
    VectorSlotDraw last;
    last.bits = Constant(shift);
    if (ternary) last.o1 = O1();
    if (StashReadable() && Coin(0.5)) {
      last.kind = SlotKind::kStash;
      last.rf = true;
      stash_ = 2;
    } else if (VrfReadable() && Coin(0.4)) {
      last.kind = SlotKind::kVrf;
      last.rf = true;
    }
    if (guarded && Coin(0.3)) last.guard = RandomGuard();
    slots.push_back(last);
    return slots;
  }

  // Per-group operands: a constant, the VRF operand (one rf port: group 1's, or group 0's alone),
  // or none; at least one group runs.
  std::array<std::optional<VectorSlotDraw>, 2> Groups(bool shift, bool ternary) {
    std::array<std::optional<VectorSlotDraw>, 2> groups;
    const int which = static_cast<int>(Below(3));  // 0: group 0, 1: group 1, 2: both
    for (int g = 0; g < 2; ++g) {
      if (which != 2 && which != g) continue;
      VectorSlotDraw s;
      s.bits = Constant(shift);
      if (ternary) s.o1 = O1();
      groups[g] = s;
    }
    const int vrf_group = groups[1] ? 1 : 0;
    if (VrfReadable() && Coin(0.4)) {
      groups[vrf_group]->kind = SlotKind::kVrf;
      groups[vrf_group]->rf = true;
    }
    return groups;
  }

  VectorCallDraw Call(Kind kind) {
    VectorCallDraw c;
    c.kind = kind;
    c.type = type_;
    c.pair = paired_;
    return c;
  }

  // ----- Branch.
  void DrawBranch() {
    std::vector<BranchMode::Kind> modes = {BranchMode::Kind::kUnconditional, BranchMode::Kind::kComparison,
                                           BranchMode::Kind::kAxisToggle};
    const bool bare = entry_.live.size() == 1 && std::isupper(static_cast<unsigned char>(entry_.live[0])) &&
                      entry_.live_size > 1;
    // ValidCount and Vrf ids describe the stage's input: neither after an InterFirst reduce.
    if (bare && !inter_reduced_) modes.push_back(BranchMode::Kind::kValidCount);
    if (entry_.vrf_possible && !inter_reduced_) modes.push_back(BranchMode::Kind::kVrf);
    switch (modes[Below(modes.size())]) {
      case BranchMode::Kind::kComparison: {
        std::array<InputCmp, 4> cmp;
        for (InputCmp& c : cmp) {
          const int kind = static_cast<int>(Below(7));
          const uint32_t v = Constant(false);
          const bool f = type_ == DType::kF32;
          const float fv = std::bit_cast<float>(v);
          const int32_t iv = static_cast<int32_t>(v);
          switch (kind) {
            case 0: c = InputCmp::True(); break;
            case 1: c = InputCmp::False(); break;
            case 2: c = f ? InputCmp::Equal(fv) : InputCmp::Equal(iv); break;
            case 3: c = f ? InputCmp::Less(fv) : InputCmp::Less(iv); break;
            case 4: c = f ? InputCmp::Greater(fv) : InputCmp::Greater(iv); break;
            case 5: c = f ? InputCmp::LessUnsigned(fv) : InputCmp::LessUnsigned(iv); break;
            default: c = f ? InputCmp::GreaterUnsigned(fv) : InputCmp::GreaterUnsigned(iv); break;
          }
        }
        chain_.branch = BranchMode::Comparison(cmp);
        break;
      }
      case BranchMode::Kind::kAxisToggle: {
        const std::vector<std::string>& letters = entry_.toggle_axes;
        chain_.branch = letters.empty() ? BranchMode::Unconditional() : BranchMode::AxisToggle(letters[Below(letters.size())]);
        break;
      }
      case BranchMode::Kind::kValidCount: chain_.branch = BranchMode::ValidCount(entry_.live); break;
      case BranchMode::Kind::kVrf:
        chain_.branch = BranchMode::Vrf();
        chain_.vrf_ids = true;
        break;
      default: chain_.branch = BranchMode::Unconditional(); break;
    }
  }

  void MaybeStash(double p) {
    if (stash_ != 0 || paired_ || zipped_ || !Coin(p)) return;
    chain_.calls.push_back(Call(Kind::kStash));
    stash_ = 1;
    stash_type_ = type_;
    stash_way4_ = way4_;
  }

  // ----- Ops of one cluster.
  void Logic() {
    const int count = type_ == DType::kI32 ? 6 : 3;
    const int op = static_cast<int>(Below(count));
    if (!Free(LogicAlu(op))) return;
    if (paired_ && type_ != DType::kI32) return;  // per-group Logic is i32
    used_.insert(LogicAlu(op));
    VectorCallDraw c = Call(Kind::kLogic);
    c.op = op;
    c.mode = static_cast<int>(Below(4));
    const bool shift = op >= 3;
    if (paired_) c.group = Groups(shift, false);
    else c.slots = Slots(shift, false);
    chain_.calls.push_back(c);
  }
  void Fxp() {
    const int op = static_cast<int>(Below(kFxpOps));
    if (!Free(FxpAlu(op))) return;
    used_.insert(FxpAlu(op));
    VectorCallDraw c = Call(Kind::kFxp);
    c.op = op;
    c.mode = static_cast<int>(Below(4));
    const bool shift = op == 4 || op == 5 || op >= 8;
    if (paired_) c.group = Groups(shift, false);
    else c.slots = Slots(shift, false);
    chain_.calls.push_back(c);
  }
  void Float() {
    const int form = static_cast<int>(Below(3));
    if (form == 0) {
      const int op = static_cast<int>(Below(9));
      if (!Free(UnaryAlu(op))) return;
      used_.insert(UnaryAlu(op));
      VectorCallDraw c = Call(Kind::kFpUnary);
      c.op = op;
      if (paired_) {
        const int which = static_cast<int>(Below(3));
        c.group_flags = {which != 1, which != 0};
      } else if (chain_.branch.kind != BranchMode::Kind::kUnconditional && Coin(0.4)) {
        c.guard = RandomGuard();
      }
      chain_.calls.push_back(c);
    } else if (form == 1) {
      const int kind = static_cast<int>(Below(kBinaryKinds));
      const FpMulAlu mul = static_cast<FpMulAlu>(Below(kind == kMaskMul ? 2 : 3));  // MaskMulF: Mul0 / Mul1
      if (!Free(BinaryAlu(kind, mul))) return;
      used_.insert(BinaryAlu(kind, mul));
      VectorCallDraw c = Call(Kind::kFpBinary);
      c.op = kind;
      c.mul = mul;
      c.mode = static_cast<int>(Below(4));
      if (paired_) c.group = Groups(false, false);
      else c.slots = Slots(false, false);
      chain_.calls.push_back(c);
    } else {
      if (!Free(VeAlu::kFpFma)) return;
      used_.insert(VeAlu::kFpFma);
      VectorCallDraw c = Call(Kind::kFpTernary);
      c.op = static_cast<int>(Below(2));  // FmaF, MaskFmaF
      c.mode = static_cast<int>(Below(7));
      if (paired_) c.group = Groups(false, true);
      else c.slots = Slots(false, true);
      chain_.calls.push_back(c);
    }
  }
  void FpDiv() {
    used_.insert(VeAlu::kReduceFpDiv);
    VectorCallDraw c = Call(Kind::kFpDiv);
    c.mode = static_cast<int>(Below(4));
    if (paired_) c.group = Groups(false, false);
    else c.slots = Slots(false, false);
    chain_.calls.push_back(c);
  }
  void Clip() {
    const int op = static_cast<int>(Below(type_ == DType::kI32 ? 6 : 5));
    if (!Free(ClipAlu(op, type_))) return;
    used_.insert(ClipAlu(op, type_));
    VectorCallDraw c = Call(Kind::kClip);
    c.op = op;
    c.mode = static_cast<int>(Below(4));
    if (paired_) c.group = Groups(false, false);
    else c.slots = Slots(false, false);
    chain_.calls.push_back(c);
  }
  void Conversion(Kind kind) {
    VectorCallDraw c = Call(kind);
    c.width = static_cast<int>(Below(32));
    chain_.calls.push_back(c);
    type_ = kind == Kind::kFxpToFp ? DType::kF32 : DType::kI32;
  }

  // ----- Narrow / Widen.
  std::string SplitTime(const std::vector<std::string>& time) const {
    std::vector<std::string> terms = time;
    terms.push_back(absl::StrCat(Bracket(entry_.packet), " / 4"));
    return JoinTime(terms);
  }
  bool Narrow(bool allow_trim) {
    const bool trim = allow_trim && entry_.live_size <= 4 && Coin(0.5);
    VectorCallDraw c = Call(trim ? Kind::kTrim : Kind::kSplit);
    if (trim) {
      c.packet = entry_.live_size == 4 ? entry_.live : absl::StrCat(Bracket(entry_.live), " # 4");
    } else {
      c.time = SplitTime(entry_.time);
      c.packet = absl::StrCat(Bracket(entry_.packet), " % 4");
    }
    chain_.calls.push_back(c);
    way4_ = true;
    way4_packet_ = c.packet;
    return trim;
  }
  void Widen(bool trimmed, const std::vector<std::string>& time) {
    VectorCallDraw c = Call(trimmed ? Kind::kPad : Kind::kConcat);
    c.time = JoinTime(time);
    c.packet = entry_.packet;
    chain_.calls.push_back(c);
    way4_ = false;
  }

  void FloatRegion() {
    const bool trimmed = Narrow(true);
    MaybeStash(0.2);
    const int ops = 1 + static_cast<int>(Below(3));
    for (int i = 0; i < ops; ++i) Float();
    const std::optional<std::string> term = ReducibleTerm();
    if (term && Coin(0.3)) IntraReduce(*term, trimmed, way4_packet_);
    if (Coin(0.3)) FpDiv();
    Widen(trimmed, chain_.out_time);
  }
  // An i32 stream's Way4 region: Narrow, the reduce, Widen.
  void IntegerReduceRegion() {
    const std::optional<std::string> term = ReducibleTerm();
    if (!term) return;
    const bool trimmed = Narrow(true);
    IntraReduce(*term, trimmed, way4_packet_);
    Widen(trimmed, chain_.out_time);
  }

  // InterFirst: the slices of S combined right after vector_init (Slice [S # 256] -> [[1 # n] # 256],
  // the result on each group's first slice). Operands laid out over the input's Slice no longer fit.
  void InterReduce() {
    VectorCallDraw c = Call(Kind::kInterReduce);
    const int64_t n = entry_.slice_axis;
    c.slice = n == 256 ? "1 # 256" : absl::StrCat("[1 # ", n, "] # 256");
    c.time = JoinTime(entry_.time);
    c.op = static_cast<int>(Below(4));
    chain_.calls.push_back(c);
    chain_.out_slice = c.slice;
    chain_.vrf_operand = false;
    inter_reduced_ = true;
  }

  // The innermost Time term when it is a whole axis that nothing else in the stream names: the
  // Valid Count Generator's reduce in Time, one accumulator slot per remaining inner position.
  std::optional<std::string> ReducibleTerm() const {
    if (entry_.time.empty()) return std::nullopt;
    const std::string& term = entry_.time.back();
    if (term.size() != 1 || !std::isupper(static_cast<unsigned char>(term[0])) || term == "I") return std::nullopt;
    if (std::find(entry_.toggle_axes.begin(), entry_.toggle_axes.end(), term) == entry_.toggle_axes.end()) {
      return std::nullopt;  // a term of one value
    }
    for (size_t k = 0; k + 1 < entry_.time.size(); ++k) {
      if (absl::StrContains(entry_.time[k], term)) return std::nullopt;
    }
    if (absl::StrContains(entry_.live, term) || absl::StrContains(entry_.slice, term)) return std::nullopt;
    return term;
  }

  // The intra-slice reduce over `term` on the Way4 stream (after Narrow), the packet kept.
  void IntraReduce(const std::string& term, bool trimmed, const std::string& way4_packet) {
    VectorCallDraw c = Call(Kind::kIntraReduce);
    std::vector<std::string> rest(entry_.time.begin(), entry_.time.end() - 1);
    c.axis = term;
    c.time = trimmed ? JoinTime(rest) : SplitTime(rest);
    c.packet = way4_packet;
    c.op = static_cast<int>(Below(3));
    chain_.calls.push_back(c);
    chain_.reduced_term = term;
    chain_.out_time = rest;
    if (stash_ == 1) stash_ = 2;  // the stash's layout is the input's
    reduced_ = true;
  }

  void DrawSingle() {
    if (entry_.slice_axis > 1 && Coin(0.15)) InterReduce();
    DrawBranch();
    MaybeStash(0.25);
    if (Coin(0.4)) Logic();
    const DType start = type_;
    if (type_ == DType::kI32) {
      const int fxp = static_cast<int>(Below(3));
      for (int i = 0; i < fxp; ++i) Fxp();
      if (Coin(0.5)) Conversion(Kind::kFxpToFp);
    }
    if (type_ == DType::kI32 && Coin(0.15)) IntegerReduceRegion();
    if (type_ == DType::kF32 && Coin(0.6)) FloatRegion();
    if (start == DType::kI32 && type_ == DType::kF32) Conversion(Kind::kFpToFxp);
    const int clips = static_cast<int>(Below(3));
    for (int i = 0; i < clips; ++i) Clip();
    if (Coin(0.2)) {
      VectorCallDraw c = Call(Kind::kFilter);
      c.guard = RandomGuard();
      chain_.calls.push_back(c);
    }
  }

  void Zip(Kind of) {
    VectorCallDraw c = Call(Kind::kZip);
    c.pair = false;
    c.zip_of = of;
    c.mode = static_cast<int>(Below(4));
    std::vector<int> ops;
    if (of == Kind::kFpBinary) {
      for (int kind = 0; kind < kBinaryKinds; ++kind) {
        for (int mul = 0; mul < (kind == kMaskMul ? 2 : 3); ++mul) {
          if (Free(BinaryAlu(kind, static_cast<FpMulAlu>(mul)))) ops.push_back(kind * 3 + mul);
        }
      }
    } else if (of == Kind::kClip) {
      for (int op = 0; op < (type_ == DType::kI32 ? 6 : 5); ++op) {
        if (Free(ClipAlu(op, type_))) ops.push_back(op);
      }
    } else {
      for (int op = 0; op < kFxpOps; ++op) {
        if (Free(FxpAlu(op))) ops.push_back(op);
      }
    }
    if (ops.empty()) return;
    const int pick = ops[Below(ops.size())];
    if (of == Kind::kFpBinary) {
      c.op = pick / 3;
      c.mul = static_cast<FpMulAlu>(pick % 3);
      used_.insert(BinaryAlu(c.op, c.mul));
    } else {
      c.op = pick;
      used_.insert(of == Kind::kClip ? ClipAlu(pick, type_) : FxpAlu(pick));
    }
    chain_.calls.push_back(c);
    paired_ = false;
    zipped_ = true;
    chain_.out_time.erase(chain_.out_time.begin());  // the interleave axis I is merged away
  }

  // Two-group mode: unzip over I, per-group ops, a zip, then ops on the merged stream.
  void DrawPair() {
    chain_.pair = true;
    chain_.branch = BranchMode::AxisToggle("I");
    std::vector<std::string> split(entry_.time.begin() + 1, entry_.time.end());
    chain_.split_time = JoinTime(split);
    paired_ = true;
    if (type_ == DType::kI32) {
      if (Coin(0.5)) Logic();
      if (Coin(0.7)) Fxp();
      if (Coin(0.3)) {
        Clip();
        Zip(Kind::kClip);
      } else {
        Zip(Coin(0.5) ? Kind::kFxp : Kind::kClip);
      }
    } else {
      Narrow(false);
      const int ops = 1 + static_cast<int>(Below(2));
      for (int i = 0; i < ops; ++i) Float();
      if (Coin(0.5)) {
        Zip(Kind::kFpBinary);
        if (paired_) {  // no FpFma / Mul ALU left for the zip: merge after widening instead
          Widen(false, entry_.time);
          Zip(Kind::kClip);
        } else {
          Widen(false, split);
        }
      } else {
        if (Coin(0.4)) FpDiv();
        Widen(false, entry_.time);
        Zip(Kind::kClip);
      }
    }
    // A zip always finds a free ALU: the groups' ops take at most two of a cluster's.
    if (Coin(0.4)) Clip();
  }

  std::mt19937_64& rng_;
  const VectorEntry& entry_;
  VectorChainDraw chain_;
  DType type_;
  std::set<VeAlu> used_;
  bool way4_ = false;
  int stash_ = 0;  // 0 fresh, 1 written, 2 read
  DType stash_type_ = DType::kI32;
  bool stash_way4_ = false;
  bool paired_ = false;
  bool zipped_ = false;
  bool reduced_ = false;        // an intra-slice reduce changed Time: operands over it no longer fit
  bool inter_reduced_ = false;  // the inter-slice reduce ran first
  std::string way4_packet_;
};

}  // namespace

VectorChainDraw DrawVectorChain(std::mt19937_64& rng, const VectorEntry& entry) {
  return VectorDrawer(rng, entry).Draw();
}

// ---------------------------------------------------------------------------------------------
// Printing.

namespace {

std::string BitsText(DType type, uint32_t bits) {
  return type == DType::kF32 ? absl::StrCat(std::bit_cast<float>(bits)) : absl::StrCat(static_cast<int32_t>(bits));
}

std::string SlotText(const VectorSlotDraw& s, DType type) {
  std::string text = s.kind == SlotKind::kStash ? "Stash" : s.kind == SlotKind::kVrf ? "vrf" : BitsText(type, s.bits);
  if (s.o1) text = absl::StrCat("(", text, ", ", *s.o1, ")");
  if (!s.guard.unconditional()) text = absl::StrCat(s.guard.ToString(), ": ", text);
  return text;
}

std::string OperandText(const VectorCallDraw& c) {
  std::vector<std::string> parts;
  if (c.pair) {
    for (const auto& g : c.group) parts.push_back(g ? SlotText(*g, c.type) : "()");
    return absl::StrCat("group0 ", parts[0], ", group1 ", parts[1]);
  }
  for (const VectorSlotDraw& s : c.slots) parts.push_back(SlotText(s, c.type));
  return absl::StrJoin(parts, "; ");
}

const char* CallName(Kind kind) {
  static constexpr const char* kNames[] = {
      "vector_logic", "vector_fxp", "vector_fxp_to_fp", "vector_split", "vector_trim_way4", "vector_fp_unary",
      "vector_fp_binary", "vector_fp_ternary", "vector_fp_div", "vector_concat", "vector_pad_way8",
      "vector_fp_to_fxp", "vector_clip", "vector_stash", "vector_filter", "zip", "vector_intra_slice_reduce",
      "vector_inter_slice_reduce"};
  return kNames[static_cast<int>(kind)];
}

std::string CallText(const VectorCallDraw& c) {
  switch (c.kind) {
    case Kind::kFxpToFp:
    case Kind::kFpToFxp: return absl::StrCat(CallName(c.kind), "(", c.width, ")");
    case Kind::kSplit:
    case Kind::kConcat: return absl::StrCat(CallName(c.kind), "([", c.time, "], [", c.packet, "])");
    case Kind::kTrim:
    case Kind::kPad: return absl::StrCat(CallName(c.kind), "([", c.packet, "])");
    case Kind::kStash: return "vector_stash()";
    case Kind::kIntraReduce:
      return absl::StrCat(CallName(c.kind), "(", c.axis, ", [", c.time, "], [", c.packet, "], ",
                          c.type == DType::kF32 ? "f32" : "i32", " op ", c.op, ")");
    case Kind::kInterReduce:
      return absl::StrCat(CallName(c.kind), "([", c.slice, "], [", c.time, "], ", c.type == DType::kF32 ? "f32" : "i32",
                          " op ", c.op, ")");
    case Kind::kFilter: return absl::StrCat("vector_filter(", c.guard->ToString(), ")");
    case Kind::kFpUnary:
      if (c.pair) return absl::StrCat("vector_fp_unary(op ", c.op, ", ", c.group_flags[0], ", ", c.group_flags[1], ")");
      return absl::StrCat("vector_fp_unary(", c.guard ? c.guard->ToString() + ", " : "", "op ", c.op, ")");
    case Kind::kZip: {
      const char* zip = c.zip_of == Kind::kFpBinary ? "vector_fp_zip" : c.zip_of == Kind::kClip ? "vector_clip_zip"
                                                                                              : "vector_fxp_zip";
      return absl::StrCat(zip, "(", c.type == DType::kF32 ? "f32" : "i32", " op ", c.op,
                          c.zip_of == Kind::kFpBinary ? absl::StrCat(" mul ", static_cast<int>(c.mul)) : "", ", mode ",
                          c.mode, ")");
    }
    default:
      return absl::StrCat(CallName(c.kind), "(", c.type == DType::kF32 ? "f32" : "i32", " op ", c.op,
                          c.kind == Kind::kFpBinary ? absl::StrCat(" mul ", static_cast<int>(c.mul)) : "",
                          c.pair ? "" : absl::StrCat(", mode ", c.mode), ", ", OperandText(c), ")");
  }
}

}  // namespace

std::string VectorChainText(const VectorChainDraw& chain, const std::string& indent) {
  std::string text = absl::StrCat(indent, ".vector_init()");
  if (chain.pair) {
    absl::StrAppend(&text, indent, ".vector_intra_slice_unzip(I, [1 # 2], [", chain.split_time, "])");
  } else {
    absl::StrAppend(&text, indent, ".vector_intra_slice_branch(",
                    chain.branch.kind == BranchMode::Kind::kVrf ? "vrf ids" : chain.branch.ToString(), ")");
  }
  for (const VectorCallDraw& c : chain.calls) absl::StrAppend(&text, indent, ".", CallText(c));
  absl::StrAppend(&text, indent, ".vector_final()");
  if (chain.vrf_operand) absl::StrAppend(&text, indent, "  (vrf: ", Name(chain.vrf_type), " [", chain.vrf_element, "])");
  if (chain.vrf_ids) absl::StrAppend(&text, indent, "  (vrf ids: i32 0..15 [", chain.vrf_element, "])");
  return text;
}

// ---------------------------------------------------------------------------------------------
// Running.

namespace {

// A random tensor in DM (ids: values 0..15), loaded into the VRF by the sub context.
absl::StatusOr<VrfTensor> LoadVrf(Context& ctx, const MappingScope& m, DType type, bool ids, const std::string& slice,
                                  const std::string& time, const std::string& packet, const std::string& element,
                                  int64_t dm_address, int64_t vrf_address) {
  ASSIGN_OR_RETURN(Placement placement, Place(ctx.device(), type, Tier::kDm,
                                              {m.m("1"), m.m("1 # 2"), m.m(slice), m.m(element)}, dm_address));
  ASSIGN_OR_RETURN(HostTensor host, HostTensor::Random(type, Pair(placement.levels), ids ? kIdsSeed : kVrfSeed));
  if (ids) {
    std::vector<uint32_t> bits = host.ToBits();
    for (uint32_t& b : bits) b &= 15;
    ASSIGN_OR_RETURN(host, HostTensor::FromBits(type, host.mapping(), bits));
  }
  ASSIGN_OR_RETURN(DeviceTensor source, WriteAs(host, ctx.device(), std::move(placement)));
  return ctx.sub.begin(DmTensor(source).view())
      .fetch(type, m.m(time), m.m(packet))
      .collect(m.m(time), m.m(packet))
      .to_vrf(m.m(element), vrf_address);
}

}  // namespace

absl::StatusOr<VectorVrfs> LoadVectorVrfs(Context& ctx, const MappingScope& m, const VectorChainDraw& chain,
                                          const std::string& slice, const std::string& time,
                                          const std::string& packet) {
  VectorVrfs vrfs;
  if (chain.vrf_operand) {
    ASSIGN_OR_RETURN(vrfs.operand, LoadVrf(ctx, m, chain.vrf_type, false, slice, time, packet, chain.vrf_element,
                                           kVrfSourceAddress, 0));
  }
  if (chain.vrf_ids) {
    ASSIGN_OR_RETURN(vrfs.ids, LoadVrf(ctx, m, DType::kI32, true, slice, time, packet, chain.vrf_element,
                                       kIdsSourceAddress, kVrfIdsAddress));
  }
  return vrfs;
}

namespace {

VeRhs Rhs(const VectorSlotDraw& s, DType type, const VectorVrfs& vrfs) {
  switch (s.kind) {
    case SlotKind::kStash: return VeRhs(Stash);
    case SlotKind::kVrf: return VeRhs::vrf(*vrfs.operand);
    case SlotKind::kConstant: break;
  }
  return type == DType::kF32 ? VeRhs(std::bit_cast<float>(s.bits)) : VeRhs(static_cast<int32_t>(s.bits));
}

VeBranchOperand Operand(const VectorCallDraw& c, const VectorVrfs& vrfs) {
  VeBranchOperand operand;
  for (const VectorSlotDraw& s : c.slots) {
    if (s.rf) operand.rf(s.guard, Rhs(s, c.type, vrfs), s.o1);
    else operand.imm(s.guard, Rhs(s, c.type, vrfs), s.o1);
  }
  return operand;
}

std::optional<VeRhs> Group(const VectorCallDraw& c, int g, const VectorVrfs& vrfs) {
  if (!c.group[g]) return std::nullopt;
  return Rhs(*c.group[g], c.type, vrfs);
}

std::optional<std::pair<VeRhs, float>> TernaryGroup(const VectorCallDraw& c, int g, const VectorVrfs& vrfs) {
  if (!c.group[g]) return std::nullopt;
  return std::pair{Rhs(*c.group[g], c.type, vrfs), *c.group[g]->o1};
}

Stream ApplyCall(Stream s, const MappingScope& m, const VectorCallDraw& c, const VectorVrfs& vrfs) {
  const bool f32 = c.type == DType::kF32;
  const BinaryArgMode mode = static_cast<BinaryArgMode>(c.mode);
  switch (c.kind) {
    case Kind::kLogic:
      if (c.pair) return std::move(s).vector_logic(static_cast<LogicBinaryOpI32>(c.op), Group(c, 0, vrfs), Group(c, 1, vrfs));
      if (f32) return std::move(s).vector_logic_with_mode(static_cast<LogicBinaryOpF32>(c.op), mode, Operand(c, vrfs));
      return std::move(s).vector_logic_with_mode(static_cast<LogicBinaryOpI32>(c.op), mode, Operand(c, vrfs));
    case Kind::kFxp:
      if (c.pair) return std::move(s).vector_fxp(static_cast<FxpBinaryOp>(c.op), Group(c, 0, vrfs), Group(c, 1, vrfs));
      return std::move(s).vector_fxp_with_mode(static_cast<FxpBinaryOp>(c.op), mode, Operand(c, vrfs));
    case Kind::kFxpToFp: return std::move(s).vector_fxp_to_fp(c.width);
    case Kind::kFpToFxp: return std::move(s).vector_fp_to_fxp(c.width);
    case Kind::kSplit: return std::move(s).vector_split(m.m(c.time), m.m(c.packet));
    case Kind::kTrim: return std::move(s).vector_trim_way4(m.m(c.packet));
    case Kind::kConcat: return std::move(s).vector_concat(m.m(c.time), m.m(c.packet));
    case Kind::kPad: return std::move(s).vector_pad_way8(m.m(c.packet));
    case Kind::kFpUnary: {
      const FpUnaryOp op = static_cast<FpUnaryOp>(c.op);
      if (c.pair) return std::move(s).vector_fp_unary(op, c.group_flags[0], c.group_flags[1]);
      if (c.guard) return std::move(s).vector_fp_unary(*c.guard, op);
      return std::move(s).vector_fp_unary(op);
    }
    case Kind::kFpBinary: {
      const FpBinaryOp op = BinaryOp(c.op, c.mul);
      if (c.pair) return std::move(s).vector_fp_binary(op, Group(c, 0, vrfs), Group(c, 1, vrfs));
      return std::move(s).vector_fp_binary_with_mode(op, mode, Operand(c, vrfs));
    }
    case Kind::kFpTernary:
      if (c.pair) {
        return std::move(s).vector_fp_ternary(TernaryOp(c.op), TernaryGroup(c, 0, vrfs), TernaryGroup(c, 1, vrfs));
      }
      return std::move(s).vector_fp_ternary_with_mode(TernaryOp(c.op), static_cast<TernaryArgMode>(c.mode),
                                                      Operand(c, vrfs));
    case Kind::kFpDiv:
      if (c.pair) return std::move(s).vector_fp_div(FpDivBinaryOp::kDivF, Group(c, 0, vrfs), Group(c, 1, vrfs));
      return std::move(s).vector_fp_div_with_mode(FpDivBinaryOp::kDivF, mode, Operand(c, vrfs));
    case Kind::kClip:
      if (c.pair && f32) {
        return std::move(s).vector_clip(static_cast<ClipBinaryOpF32>(c.op), Group(c, 0, vrfs), Group(c, 1, vrfs));
      }
      if (c.pair) return std::move(s).vector_clip(static_cast<ClipBinaryOpI32>(c.op), Group(c, 0, vrfs), Group(c, 1, vrfs));
      if (f32) return std::move(s).vector_clip_with_mode(static_cast<ClipBinaryOpF32>(c.op), mode, Operand(c, vrfs));
      return std::move(s).vector_clip_with_mode(static_cast<ClipBinaryOpI32>(c.op), mode, Operand(c, vrfs));
    case Kind::kStash: return std::move(s).vector_stash();
    case Kind::kIntraReduce:
      if (f32) {
        return std::move(s).vector_intra_slice_reduce(c.axis, m.m(c.time), m.m(c.packet),
                                                      static_cast<IntraSliceReduceOpF32>(c.op));
      }
      return std::move(s).vector_intra_slice_reduce(c.axis, m.m(c.time), m.m(c.packet),
                                                    static_cast<IntraSliceReduceOpI32>(c.op));
    case Kind::kInterReduce:
      if (f32) {
        return std::move(s).vector_inter_slice_reduce(m.m(c.slice), m.m(c.time), static_cast<InterSliceReduceOpF32>(c.op));
      }
      return std::move(s).vector_inter_slice_reduce(m.m(c.slice), m.m(c.time), static_cast<InterSliceReduceOpI32>(c.op));
    case Kind::kFilter: return std::move(s).vector_filter(*c.guard);
    case Kind::kZip:
      if (c.zip_of == Kind::kFpBinary) return std::move(s).vector_fp_zip(BinaryOp(c.op, c.mul), mode);
      if (c.zip_of == Kind::kFxp) return std::move(s).vector_fxp_zip(static_cast<FxpBinaryOp>(c.op), mode);
      if (f32) return std::move(s).vector_clip_zip(static_cast<ClipBinaryOpF32>(c.op), mode);
      return std::move(s).vector_clip_zip(static_cast<ClipBinaryOpI32>(c.op), mode);
  }
  return s;
}

}  // namespace

Stream ApplyVectorChain(Stream stream, const MappingScope& m, const VectorChainDraw& chain, const VectorVrfs& vrfs) {
  stream = std::move(stream).vector_init();
  // InterFirst: the inter-slice reduce comes before the branch configuration.
  const bool inter_first = !chain.calls.empty() && chain.calls.front().kind == Kind::kInterReduce;
  if (inter_first) stream = ApplyCall(std::move(stream), m, chain.calls.front(), vrfs);
  if (chain.pair) {
    stream = std::move(stream).vector_intra_slice_unzip("I", m.m("1 # 2"), m.m(chain.split_time));
  } else if (chain.branch.kind == BranchMode::Kind::kVrf) {
    stream = std::move(stream).vector_intra_slice_branch(*vrfs.ids);
  } else {
    stream = std::move(stream).vector_intra_slice_branch(chain.branch);
  }
  for (size_t k = inter_first ? 1 : 0; k < chain.calls.size(); ++k) stream = ApplyCall(std::move(stream), m, chain.calls[k], vrfs);
  return std::move(stream).vector_final();
}

// ---------------------------------------------------------------------------------------------
// Coverage.

namespace {

const char* BranchKind(BranchMode::Kind kind) {
  switch (kind) {
    case BranchMode::Kind::kUnconditional: return "branch:Unconditional";
    case BranchMode::Kind::kAxisToggle: return "branch:AxisToggle";
    case BranchMode::Kind::kValidCount: return "branch:ValidCount";
    case BranchMode::Kind::kComparison: return "branch:Comparison";
    case BranchMode::Kind::kVrf: return "branch:Vrf";
  }
  return "branch:?";
}

void Add(std::set<CoverageKey>& out, const std::string& kind) { out.insert({"vector", kind}); }

void SlotCoverage(const VectorSlotDraw& s, std::set<CoverageKey>& out) {
  Add(out, s.kind == SlotKind::kStash ? "operand:stash" : s.kind == SlotKind::kVrf ? "operand:vrf" : "operand:constant");
}

// The three ops the manual names without a formula (dsl/vector_ops.h), each a kind of its own.
void NewOpCoverage(VeFn fn, std::set<CoverageKey>& out) {
  if (fn == VeFn::kArithRightShiftRound) Add(out, "op:ArithRightShiftRound");
  if (fn == VeFn::kMaskMulF) Add(out, "op:MaskMulF");
  if (fn == VeFn::kMaskFmaF) Add(out, "op:MaskFmaF");
}

}  // namespace

void VectorChainCoverage(const VectorChainDraw& chain, std::set<CoverageKey>& out) {
  // The VRF tensors' loads: sub-context pipelines fetching their DM sources as they are stored.
  auto load = [&](DType type) {
    for (const char* stage : {"begin", "fetch", "collect", "to_vrf"}) out.insert({"stage", stage});
    out.insert({"context", "sub"});
    out.insert({"adapter", "plain"});
    out.insert({"load", "vrf"});
    out.insert({"fetch", ConversionKind(type, type)});
  };
  if (chain.vrf_operand) load(chain.vrf_type);
  if (chain.vrf_ids) load(DType::kI32);
  Add(out, absl::StrCat("after:", chain.after));
  Add(out, chain.pair ? "two-group" : BranchKind(chain.branch.kind));
  for (const VectorCallDraw& c : chain.calls) {
    switch (c.kind) {
      case Kind::kLogic: Add(out, "logic"); break;
      case Kind::kFxp:
        Add(out, "fxp");
        if (c.op == kFxpOps - 1) Add(out, "op:ArithRightShiftRound");
        break;
      case Kind::kFxpToFp: Add(out, "fxp_to_fp"); break;
      case Kind::kFpToFxp: Add(out, "fp_to_fxp"); break;
      case Kind::kSplit: Add(out, "narrow:split"); break;
      case Kind::kTrim: Add(out, "narrow:trim"); break;
      case Kind::kConcat: Add(out, "widen:concat"); break;
      case Kind::kPad: Add(out, "widen:pad"); break;
      case Kind::kFpUnary: Add(out, "unary"); break;
      case Kind::kFpBinary:
        Add(out, "binary");
        if (c.op == kMaskMul) Add(out, "op:MaskMulF");
        break;
      case Kind::kFpTernary:
        Add(out, "ternary");
        if (c.op == 1) Add(out, "op:MaskFmaF");
        break;
      case Kind::kFpDiv: Add(out, "fp_div"); break;
      case Kind::kClip: Add(out, "clip"); break;
      case Kind::kStash: Add(out, "stash"); break;
      case Kind::kFilter: Add(out, "filter"); break;
      case Kind::kIntraReduce: Add(out, "reduce:intra"); break;
      case Kind::kInterReduce: Add(out, "reduce:inter"); break;
      case Kind::kZip:
        Add(out, "zip");
        if (c.zip_of == Kind::kFxp && c.op == kFxpOps - 1) Add(out, "op:ArithRightShiftRound");
        if (c.zip_of == Kind::kFpBinary && c.op == kMaskMul) Add(out, "op:MaskMulF");
        break;
    }
    for (const VectorSlotDraw& s : c.slots) {
      SlotCoverage(s, out);
      if (!s.guard.unconditional()) Add(out, "guarded");
    }
    for (const auto& g : c.group) {
      if (g) SlotCoverage(*g, out);
    }
    if (c.kind == Kind::kFpUnary && c.guard) Add(out, "guarded");
  }
}

void VectorStageCoverage(const VectorStage& stage, const std::string& after, std::set<CoverageKey>& out) {
  Add(out, absl::StrCat("after:", after));
  Add(out, !stage.unzip_axis.empty() ? "two-group" : BranchKind(stage.branch.kind));
  for (const VeStep& step : stage.steps) {
    switch (step.kind) {
      case VeStep::Kind::kSplit: Add(out, "narrow:split"); continue;
      case VeStep::Kind::kTrim: Add(out, "narrow:trim"); continue;
      case VeStep::Kind::kConcat: Add(out, "widen:concat"); continue;
      case VeStep::Kind::kPad: Add(out, "widen:pad"); continue;
      case VeStep::Kind::kStash: Add(out, "stash"); continue;
      case VeStep::Kind::kZip: Add(out, "zip"); NewOpCoverage(step.fn, out); continue;
      case VeStep::Kind::kIntraReduce: Add(out, "reduce:intra"); continue;
      case VeStep::Kind::kInterReduce: Add(out, "reduce:inter"); continue;
      case VeStep::Kind::kOp: break;
      default: continue;
    }
    NewOpCoverage(step.fn, out);
    switch (step.stage) {
      case VeStage::kLogic: Add(out, "logic"); break;
      case VeStage::kFxp: Add(out, "fxp"); break;
      case VeStage::kFxpToFp: Add(out, "fxp_to_fp"); break;
      case VeStage::kFpToFxp: Add(out, "fp_to_fxp"); break;
      case VeStage::kFloat: {
        const int arity = Info(step.fn).arity;
        Add(out, arity == 1 ? "unary" : arity == 2 ? "binary" : "ternary");
        break;
      }
      case VeStage::kFpDiv: Add(out, "fp_div"); break;
      case VeStage::kClip: Add(out, "clip"); break;
      case VeStage::kFilter: Add(out, "filter"); continue;
      default: break;
    }
    for (const VeSlot& slot : step.slots) {
      Add(out, slot.o0.kind == VeOperand::Kind::kStash ? "operand:stash"
               : slot.o0.kind == VeOperand::Kind::kVrf ? "operand:vrf"
                                                       : "operand:constant");
      if (!slot.guard.unconditional() && stage.unzip_axis.empty()) Add(out, "guarded");
    }
    if (step.guard && stage.unzip_axis.empty()) Add(out, "guarded");
  }
}

std::vector<CoverageKey> VectorDrawnKinds() {
  std::set<CoverageKey> out;
  for (const char* kind :
       {"after:collect", "after:accumulate", "branch:Unconditional", "branch:Comparison", "branch:AxisToggle",
        "branch:ValidCount", "branch:Vrf", "two-group", "logic", "fxp", "fxp_to_fp", "fp_to_fxp", "narrow:split",
        "narrow:trim", "widen:concat", "widen:pad", "unary", "binary", "ternary", "fp_div", "clip", "stash", "filter",
        "zip", "operand:constant", "operand:vrf", "operand:stash", "guarded", "op:ArithRightShiftRound",
        "op:MaskMulF", "op:MaskFmaF", "reduce:intra", "reduce:inter"}) {
    Add(out, kind);
  }
  return std::vector<CoverageKey>(out.begin(), out.end());
}

}  // namespace visa::samples
