// Intra-Slice Reduce rules: data types and ops, the 4-way input, Packet preserved or collapsed to
// [1 # 4], OTime = Time without R, the 8-slot accumulator limit, and the padding strategy.
#include "dsl/vector_reduce.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "dsl/engine_errors.h"
#include "dsl/equivalence.h"
#include "dsl/normal_form.h"
#include "dsl/status_macros.h"

namespace visa {
namespace {

constexpr const char* kIntra = "Intra-Slice Reduce";

std::string Bracket(const Mapping& m) { return absl::StrCat("[", m.ToString(), "]"); }

bool Names(const Mapping& mapping, const std::string& axis) {
  std::vector<std::string> names = mapping.axis_names();
  return std::find(names.begin(), names.end(), axis) != names.end();
}

absl::Status CheckOp(DType dtype, VeReduceOp op) {
  if (dtype == DType::kI32) {
    if (op == VeReduceOp::kAddSat || op == VeReduceOp::kMax || op == VeReduceOp::kMin) return absl::OkStatus();
    return EngineError(kIntra, "IntraSliceReduceOpI32 is AddSat, Max or Min (there is no wrapping Add), got ",
                       VeReduceOpName(op));
  }
  if (dtype == DType::kF32) {
    if (op == VeReduceOp::kAdd || op == VeReduceOp::kMax || op == VeReduceOp::kMin) return absl::OkStatus();
    return EngineError(kIntra, "IntraSliceReduceOpF32 is Add, Max or Min, got ", VeReduceOpName(op));
  }
  return EngineError(kIntra, "data types: the Vector Engine reduces i32 or f32, got ", std::string(Name(dtype)));
}

// The digits of `axis` in `mapping` (innermost first) with their weights; `kept` receives the
// other factors. A part of the axis that is not a digit cannot be eliminated factor by factor.
absl::Status SplitAxis(const Mapping& mapping, const char* level, const std::string& axis,
                       std::vector<std::pair<int64_t, Factor>>& parts, std::vector<Factor>& kept) {
  int64_t weight = 1;
  for (const Factor& f : mapping.normal_form().factors()) {
    if (f.kind == Factor::Kind::kComposite && Names(*f.composite, axis)) {
      return EngineError(kIntra, level, " ", Bracket(mapping), " holds the reduce axis ", axis,
                         " in a part that is not a digit (", f.composite->ToString(), ")");
    }
    if (f.kind == Factor::Kind::kDigit && f.axis == axis) {
      parts.emplace_back(weight, f);
    } else {
      kept.push_back(f);
    }
    weight = f.kind == Factor::Kind::kBlockPad ? f.block : weight * f.count;
  }
  return absl::OkStatus();
}

Index WithoutAxis(const Index& index, const std::string& axis) {
  Index kept;
  for (const auto& [name, value] : index.coords()) {
    if (name != axis) kept.Set(name, value);
  }
  return kept;
}

absl::Status CheckShapes(const StreamShape& way8, Narrowing narrowing, const StreamShape& in) {
  if (in.packet.size() != kVeHalfLanes) {
    return EngineError(kIntra, "the reduce works on the 4-way path: Packet ", Bracket(in.packet), " has ",
                       in.packet.size(), " lanes, not 4 (narrow with trim_way4 or split_way4 first)");
  }
  const int64_t steps = narrowing == Narrowing::kSplit ? 2 * way8.time.size() : way8.time.size();
  if (way8.packet.size() != kVeLanes || in.time.size() != steps) {
    return EngineError(kIntra, "the 4-way stream (time [", in.time.ToString(), "] packet [", in.packet.ToString(),
                       "]) is not what ", NarrowingName(narrowing), " makes of the 8-way stream (time [",
                       way8.time.ToString(), "] packet [", way8.packet.ToString(), "])");
  }
  ASSIGN_OR_RETURN(bool same_slice, Equivalent(in.slice, way8.slice));
  if (!same_slice) {
    return EngineError(kIntra, "narrowing keeps Slice, but the 4-way stream's Slice ", Bracket(in.slice),
                       " differs from the 8-way stream's ", Bracket(way8.slice));
  }
  return absl::OkStatus();
}

}  // namespace

const char* VeReduceOpName(VeReduceOp op) {
  switch (op) {
    case VeReduceOp::kAdd: return "Add";
    case VeReduceOp::kAddSat: return "AddSat";
    case VeReduceOp::kMax: return "Max";
    case VeReduceOp::kMin: return "Min";
    default: return "Mul";
  }
}

VeReduceOp ReduceOpOf(IntraSliceReduceOpI32 op) {
  static constexpr VeReduceOp kOps[] = {VeReduceOp::kAddSat, VeReduceOp::kMax, VeReduceOp::kMin};
  return kOps[static_cast<int>(op)];
}
VeReduceOp ReduceOpOf(IntraSliceReduceOpF32 op) {
  static constexpr VeReduceOp kOps[] = {VeReduceOp::kAdd, VeReduceOp::kMax, VeReduceOp::kMin};
  return kOps[static_cast<int>(op)];
}
VeReduceOp ReduceOpOf(InterSliceReduceOpI32 op) {
  static constexpr VeReduceOp kOps[] = {VeReduceOp::kAdd, VeReduceOp::kAddSat, VeReduceOp::kMax, VeReduceOp::kMin};
  return kOps[static_cast<int>(op)];
}
VeReduceOp ReduceOpOf(InterSliceReduceOpF32 op) {
  static constexpr VeReduceOp kOps[] = {VeReduceOp::kAdd, VeReduceOp::kMax, VeReduceOp::kMin, VeReduceOp::kMul};
  return kOps[static_cast<int>(op)];
}

const char* ReducePaddingName(ReducePadding padding) {
  switch (padding) {
    case ReducePadding::kValidCount: return "valid count";
    case ReducePadding::kIdentity: return "identity padding";
    default: return "identity left pad + valid count";
  }
}

absl::StatusOr<IntraSliceReduceStage> PlanIntraSliceReduce(const StreamShape& way8, Narrowing narrowing,
                                                           const StreamShape& in, const std::string& axis,
                                                           const Mapping& out_time, const Mapping& out_packet,
                                                           VeReduceOp op, ReducePadding padding) {
  for (const Mapping* m : {&in.chip, &in.cluster, &in.slice, &in.time, &in.packet, &way8.slice, &way8.time,
                           &way8.packet, &out_time, &out_packet}) {
    RETURN_IF_ERROR(m->status());
  }
  RETURN_IF_ERROR(CheckOp(in.dtype, op));
  RETURN_IF_ERROR(CheckShapes(way8, narrowing, in));

  IntraSliceReduceStage stage;
  stage.in = in;
  stage.axis = axis;
  stage.op = op;
  stage.narrowing = narrowing;
  stage.padding = padding;

  // A left-padded axis (`# n + R + # m`) is eliminated as its stand-in R' = `# n + R`.
  ASSIGN_OR_RETURN(std::optional<LeftPaddedAxis> left, FindLeftPaddedAxis(in, axis));
  if (padding == ReducePadding::kLeftIdentity && !left) {
    return EngineError(kIntra, "ReducePadding::kLeftIdentity is for a left-padded reduce axis (# n + ", axis,
                       " + # m), but Time ", Bracket(in.time), " and Packet ", Bracket(in.packet), " do not left-pad ",
                       axis, " (use kValidCount or kIdentity)");
  }
  const StreamShape& view = left ? left->shifted : in;
  const std::string& label = left ? left->stand_in : axis;
  std::vector<std::pair<int64_t, Factor>> time_parts, packet_parts;
  std::vector<Factor> kept_time, kept_packet;
  RETURN_IF_ERROR(SplitAxis(view.time, "Time", label, time_parts, kept_time));
  RETURN_IF_ERROR(SplitAxis(view.packet, "Packet", label, packet_parts, kept_packet));
  if (time_parts.empty() && packet_parts.empty()) {
    return EngineError(kIntra, "the reduce axis ", axis, " is in neither Time [", in.time.ToString(),
                       "] nor Packet [", in.packet.ToString(), "] (a Slice axis is reduced by the Inter-Slice Block)");
  }
  stage.time_reduced = !time_parts.empty();
  stage.packet_reduced = !packet_parts.empty();

  // Packet: preserved, or (R in Packet) collapsed to [1 # 4].
  const Mapping collapsed = Mapping().pad(kVeHalfLanes);
  if (stage.packet_reduced) {
    for (const Factor& f : kept_packet) {
      if ((f.kind == Factor::Kind::kDigit && !f.axis.empty()) || f.kind == Factor::Kind::kComposite) {
        return EngineError(kIntra, "Packet should be either preserved or reduced to [1 # 4] (for partial ",
                           "reduction), but Packet ", Bracket(in.packet), " mixes ", axis,
                           " with other axes (split_way4 can move them to Time)");
      }
    }
  }
  const Mapping& want_packet = stage.packet_reduced ? collapsed : in.packet;
  ASSIGN_OR_RETURN(bool packet_ok, Equivalent(out_packet, want_packet));
  if (!packet_ok) {
    return EngineError(kIntra, "Packet should be either preserved or reduced to [1 # 4] (for partial reduction), ",
                       "got Packet ", Bracket(in.packet), " -> OPacket ", Bracket(out_packet), " (expected ",
                       Bracket(want_packet), ")");
  }

  // Time: OTime is Time with every factor of R removed.
  if (Names(out_time, axis)) {
    return EngineError(kIntra, "all the reduce axes must be fully reduced, but ", axis,
                       " is still present in OTime ", Bracket(out_time), " (Time ", Bracket(in.time), ")");
  }
  const Mapping want_time = NormalForm(kept_time).ToMapping();
  ASSIGN_OR_RETURN(bool time_ok, Equivalent(out_time, want_time));
  if (!time_ok) {
    return EngineError(kIntra, "OTime must be exactly Time with every ", axis, " factor removed: Time ",
                       Bracket(in.time), " -> expected OTime ", Bracket(want_time), ", got ", Bracket(out_time));
  }

  // Accumulator slots: every retained Time position inside the outermost R factor needs its own.
  if (stage.time_reduced) {
    const auto& outermost = *std::max_element(time_parts.begin(), time_parts.end(),
                                              [](const auto& a, const auto& b) { return a.first < b.first; });
    int64_t inner_reduce = 1;
    for (const auto& [weight, f] : time_parts) {
      if (weight < outermost.first) inner_reduce *= f.count;
    }
    stage.slots = outermost.first / inner_reduce;
    if (stage.slots > kIntraReduceSlots) {
      return EngineError(kIntra, "Accumulator Slot Limit: the non-reduce positions inside the outermost ", axis,
                         " factor of Time ", Bracket(in.time), " need ", stage.slots, " accumulator slots, but only ",
                         kIntraReduceSlots, " are available (restructure the mapping: move non-reduce axes "
                         "outside the reduce axis)");
    }
  }

  if (padding != ReducePadding::kIdentity) {
    absl::StatusOr<ValidCountConfig> vcg = PlanValidCount(way8, axis, padding == ReducePadding::kLeftIdentity);
    if (vcg.ok() && narrowing == Narrowing::kTrim) vcg = CheckTrim(*vcg).ok() ? vcg : CheckTrim(*vcg);
    if (!vcg.ok()) {
      return EngineError(kIntra, vcg.status().message(), " (or pad ", axis,
                         " with the op's identity at fetch and reduce with identity padding)");
    }
    stage.vcg = *std::move(vcg);
  }

  stage.out = in;
  stage.out.time = out_time;
  stage.out.packet = out_packet;
  stage.out_time_of.assign(in.time.size(), -1);
  for (int64_t t = 0; t < in.time.size(); ++t) {
    const Cell cell = view.time.map(t);
    if (!cell.live()) continue;
    std::optional<int64_t> target = out_time.inverse(WithoutAxis(cell.index, label));
    if (target) stage.out_time_of[t] = *target;
  }
  return stage;
}

std::string IntraSliceReduceStage::Describe() const {
  std::string what;
  if (packet_reduced) what = "packet tree (2 levels)";
  if (time_reduced) absl::StrAppend(&what, packet_reduced ? " + " : "", "temporal accumulation");
  std::string text = absl::StrCat(
      "intra_slice_reduce ", axis, " ", VeReduceOpName(op), " ", std::string(Name(in.dtype)), ": time [",
      in.time.ToString(), "] -> [", out.time.ToString(), "], packet [", in.packet.ToString(), "] -> [",
      out.packet.ToString(), "], ", what, ", slots ", slots, " of ", kIntraReduceSlots, ", after ",
      NarrowingName(narrowing), ", padding by ", ReducePaddingName(padding));
  if (vcg) absl::StrAppend(&text, "\n      ", vcg->Describe());
  return text;
}

}  // namespace visa
