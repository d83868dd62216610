// Valid Count Generator: the placement rules of "Valid Count Generator's Interface", the
// configuration of "... Implementation" (counters, packet dim, gate dims) and its formula.
#include "dsl/valid_count.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "dsl/engine_errors.h"
#include "dsl/left_padding.h"
#include "dsl/normal_form.h"
#include "dsl/status_macros.h"

namespace visa {
namespace {

constexpr const char* kVcg = "Valid Count Generator";

enum class Level { kSlice, kTime, kPacket };
const char* LevelName(Level level) {
  switch (level) {
    case Level::kSlice: return "Slice";
    case Level::kTime: return "Time";
    default: return "Packet";
  }
}

// One part of the reduce axis: a digit of Slice, Time or Packet's normal form.
struct AxisPart {
  Level level = Level::kTime;
  int64_t weight = 1;  // positions of its level per digit value
  Factor digit;
  int64_t extent() const { return level == Level::kPacket ? digit.live : digit.count; }
};

std::string Bracket(const Mapping& m) { return absl::StrCat("[", m.ToString(), "]"); }

std::string PartText(const AxisPart& part) {
  std::vector<Factor> alone = {part.digit};
  return NormalForm(alone).ToString();
}

bool IsPowerOfTwo(int64_t v) { return v > 0 && (v & (v - 1)) == 0; }
int Log2(int64_t v) {
  int bits = 0;
  while ((int64_t{1} << bits) < v) ++bits;
  return bits;
}

// The digits of `axis` in `mapping`, with their position weights; a part that is not a digit
// (a linear combination, a skew) cannot be tracked.
absl::Status CollectParts(const Mapping& mapping, Level level, const std::string& axis,
                          std::vector<AxisPart>& parts) {
  int64_t weight = 1;
  for (const Factor& f : mapping.normal_form().factors()) {
    if (f.kind == Factor::Kind::kComposite) {
      std::vector<std::string> names = f.composite->axis_names();
      if (std::find(names.begin(), names.end(), axis) != names.end()) {
        return EngineError(kVcg, "the reduce axis ", axis, " must be split into digits (R # p / k, R # p % k); ",
                           LevelName(level), " ", Bracket(mapping), " holds it in a part that is not one (",
                           f.composite->ToString(), ")");
      }
    } else if (f.kind == Factor::Kind::kDigit && f.axis == axis) {
      parts.push_back(AxisPart{level, weight, f});
    }
    weight = f.kind == Factor::Kind::kBlockPad ? f.block : weight * f.count;
  }
  return absl::OkStatus();
}

bool Names(const Mapping& mapping, const std::string& axis) {
  std::vector<std::string> names = mapping.axis_names();
  return std::find(names.begin(), names.end(), axis) != names.end();
}

// R # p split into contiguous parts: sorted by coefficient, each part starts where the inner one
// ends (coef_{i+1} = coef_i x extent_i) and only the outermost one is padded.
absl::Status CheckContiguous(const std::vector<AxisPart>& parts, const std::string& axis) {
  if (parts.front().digit.coef != 1) {
    return EngineError(kVcg, "R's parts must split R # p into outer and inner parts: the innermost part of ", axis,
                       " in Slice / Time / Packet is ", PartText(parts.front()), " (coefficient ",
                       parts.front().digit.coef, ", not 1)");
  }
  for (size_t i = 0; i + 1 < parts.size(); ++i) {
    const AxisPart& inner = parts[i];
    if (inner.level != Level::kPacket && inner.digit.live != inner.digit.count) {
      return EngineError(kVcg, "only the outermost part of R may be padded: ", LevelName(inner.level), " part ",
                         PartText(inner), " of ", axis, " is padded inside (pad R as a whole, R # p, then split it)");
    }
    if (parts[i + 1].digit.coef != inner.digit.coef * inner.extent()) {
      return EngineError(kVcg, "R's parts must split R # p into contiguous outer and inner parts: ",
                         LevelName(inner.level), " part ", PartText(inner), " ends at ",
                         inner.digit.coef * inner.extent(), " but the next part ", PartText(parts[i + 1]), " (",
                         LevelName(parts[i + 1].level), ") starts at ", parts[i + 1].digit.coef);
    }
  }
  return absl::OkStatus();
}

// The Time sequencer: a counter per part of the axis in Time (assigned to `dim`, stride
// coef / unit), unassigned counters for the Time positions between and around them.
absl::StatusOr<std::vector<VcgCounter>> TimeCounters(const Mapping& time, const std::vector<AxisPart>& time_parts,
                                                    VcgDim dim, int64_t unit) {
  std::vector<VcgCounter> counters;
  int64_t reached = 1;  // Time positions covered by the counters so far
  auto unassigned = [&](int64_t upto, const std::string& where) -> absl::Status {
    if (upto % reached != 0) {
      return EngineError(kVcg, "sequencer: Time ", Bracket(time), " has a padding block that is not a whole ",
                         "counter ", where, " (pad whole axes of Time, e.g. [A # 4])");
    }
    if (upto / reached > 1) counters.push_back(VcgCounter{upto / reached, 0, VcgDim::kUnassigned, ""});
    reached = upto;
    return absl::OkStatus();
  };
  for (const AxisPart& part : time_parts) {
    RETURN_IF_ERROR(unassigned(part.weight, absl::StrCat("inside ", PartText(part))));
    counters.push_back(VcgCounter{part.digit.count, part.digit.coef / unit, dim, PartText(part)});
    reached *= part.digit.count;
  }
  RETURN_IF_ERROR(unassigned(time.size(), "outside the reduce axis"));
  if (counters.size() > static_cast<size_t>(kVcgCounters)) {
    return EngineError(kVcg, "sequencer: at most ", kVcgCounters, " counters, Time ", Bracket(time), " needs ",
                       counters.size());
  }
  return counters;
}

// The gate's view of the slice id: the bits of the axis's Slice parts, innermost part lowest.
struct SliceField {
  uint32_t mask = 0;
  std::vector<const AxisPart*> parts;  // ascending coefficient
  // masked_id of the slice holding the value v of R's Slice portion (in units of its innermost
  // part); a v past the last slice lands past every masked id.
  int64_t Encode(int64_t v) const {
    int64_t masked = 0;
    for (size_t i = 0; i < parts.size(); ++i) {
      // Past the last slice every value compares alike: keep the product small.
      int64_t d = i + 1 < parts.size() ? v % parts[i]->digit.count : std::min<int64_t>(v, kSlicesPerCluster);
      masked += d * parts[i]->weight;
      if (i + 1 < parts.size()) v /= parts[i]->digit.count;
    }
    return masked;
  }
};

absl::StatusOr<SliceField> MakeSliceField(const Mapping& slice, const std::vector<AxisPart>& slice_parts,
                                          const std::string& axis) {
  if (slice.size() > kSlicesPerCluster) {
    return EngineError(kVcg, "gate dims read an 8-bit slice id, but Slice ", Bracket(slice), " has ", slice.size(),
                       " positions");
  }
  SliceField field;
  for (const AxisPart& part : slice_parts) field.parts.push_back(&part);
  for (size_t i = 0; i + 1 < field.parts.size(); ++i) {
    if (field.parts[i]->weight > field.parts[i + 1]->weight) {
      return EngineError(kVcg, "Non-outer/inner ordering: when ", axis, " appears several times in Slice ",
                         Bracket(slice), " its parts' strides must increase from inner to outer, but ",
                         PartText(*field.parts[i + 1]), " sits inside ", PartText(*field.parts[i]),
                         " (slice validity would not be monotonic; reorder them)");
    }
  }
  for (const AxisPart* part : field.parts) {
    const bool outermost = part->weight * part->digit.count >= slice.size();
    if (!IsPowerOfTwo(part->weight) || (!outermost && !IsPowerOfTwo(part->digit.count))) {
      return EngineError(kVcg, "a gate dim masks slice-id bits, so ", axis, "'s Slice part ", PartText(*part),
                         " must sit on whole bits of Slice ", Bracket(slice), " (stride ", part->weight, ", size ",
                         part->digit.count, ")");
    }
    const int low = Log2(part->weight);
    const int high = IsPowerOfTwo(part->digit.count) ? low + Log2(part->digit.count) : 8;
    for (int b = low; b < high; ++b) field.mask |= (1u << b);
  }
  return field;
}

int64_t Product(const std::vector<AxisPart>& parts) {
  int64_t p = 1;
  for (const AxisPart& part : parts) p *= part.extent();
  return p;
}

absl::Status PlanPacketReduce(ValidCountConfig& config, const std::vector<AxisPart>& slice_parts,
                              const std::vector<AxisPart>& time_parts, const std::vector<AxisPart>& packet_parts) {
  const std::string& axis = config.axis;
  const Mapping& packet = config.in.packet;
  if (packet_parts.size() > 1) {
    return EngineError(kVcg, "Packet Reduce: ", axis, " may appear at most once in Packet, Packet ", Bracket(packet),
                       " holds it ", packet_parts.size(), " times");
  }
  const AxisPart& part = packet_parts.front();
  if (part.digit.coef != 1) {
    return EngineError(kVcg, "Time + Packet (Packet not innermost): ", axis,
                       "'s part in Packet must be its innermost part (R # p % k), Packet ", Bracket(packet),
                       " holds ", PartText(part), " (fix: put the inner part in Packet and the outer part in Time)");
  }
  for (const Factor& f : packet.normal_form().factors()) {
    const bool other_axis = (f.kind == Factor::Kind::kDigit && !f.axis.empty() && f.axis != axis) ||
                            f.kind == Factor::Kind::kComposite;
    if (other_axis || part.weight != 1) {
      return EngineError(kVcg, "Time + Packet (mixed Packet axes): ", axis,
                         " must be the sole occupant of the Packet prefix, padded to 8 (the prefix count would "
                         "mark other data as padding); Packet ", Bracket(packet),
                         " (fix: move the other axis out of Packet, or pad R to fill all 8 lanes)");
    }
  }
  if (!slice_parts.empty()) {
    // R over Slice, Time and Packet: the manual's two passages disagree; its formula, its "Key
    // property" and its Quick Reference (Slice + Packet: No) agree with each other, so they decide.
    const std::string contradiction =
        time_parts.empty()
            ? ""
            : "; the manual's Intra-Slice Reduce example \"Reduce Axis Spanning Slice, Time, and Packet\" says "
              "\"The VCG handles per-slice valid count variation for boundary slices\", but its Valid Count "
              "Generator's Implementation computes packet_vc(t) = min(stride_p, max(0, V_p - idx_p(t))) with no "
              "slice term (\"Key property: packet_vc depends only on the sequencer state t, not on the slice s\") "
              "and gate dims that can only zero a whole flit, so no configuration gives the boundary slice its "
              "own partial count; the formula is the reading taken";
    return EngineError(kVcg, "Slice + Packet: packet_vc(t) is the same for every slice, but ", axis,
                       " in Slice ", Bracket(config.in.slice), " and Packet ", Bracket(packet),
                       " needs a different partial count in its boundary slice", contradiction,
                       " (fix: put R's Slice part with Time, Slice + Time, or avoid padding R)");
  }
  config.mode = VcgMode::kPacketReduce;
  config.placement = time_parts.empty() ? VcgPlacement::kPacket : VcgPlacement::kTimePacket;
  config.packet = VcgPacketDim{true, config.axis_size, part.digit.live};
  ASSIGN_OR_RETURN(config.counters, TimeCounters(config.in.time, time_parts, VcgDim::kPacket, 1));
  return absl::OkStatus();
}

absl::Status PlanTimeReduce(ValidCountConfig& config, const std::vector<AxisPart>& slice_parts,
                            const std::vector<AxisPart>& time_parts) {
  const std::string& axis = config.axis;
  config.mode = VcgMode::kTimeReduce;
  VcgGate& gate = config.gates[0];
  gate.enabled = true;
  if (slice_parts.empty()) {  // Time only: every slice is the boundary, valid while idx < |R|.
    config.placement = VcgPlacement::kTime;
    gate.mask = 0;
    gate.match = 0;
    gate.valid = config.axis_size;
    ASSIGN_OR_RETURN(config.counters, TimeCounters(config.in.time, time_parts, VcgDim::kGate0, 1));
    return absl::OkStatus();
  }
  const int64_t slice_low = slice_parts.front().digit.coef;
  const int64_t slice_high = slice_parts.back().digit.coef;
  const bool time_inner = std::all_of(time_parts.begin(), time_parts.end(),
                                      [&](const AxisPart& p) { return p.digit.coef < slice_low; });
  const bool time_outer = std::all_of(time_parts.begin(), time_parts.end(),
                                      [&](const AxisPart& p) { return p.digit.coef > slice_high; });
  ASSIGN_OR_RETURN(SliceField field, MakeSliceField(config.in.slice, slice_parts, axis));
  gate.mask = field.mask;
  if (time_inner) {  // standard: slice outer; boundary slice floor(|R| / c_s), V = |R| mod c_s
    config.placement = time_parts.empty() ? VcgPlacement::kSlice : VcgPlacement::kSliceTime;
    gate.match = static_cast<uint32_t>(field.Encode(config.axis_size / slice_low));
    gate.valid = config.axis_size % slice_low;
    ASSIGN_OR_RETURN(config.counters, TimeCounters(config.in.time, time_parts, VcgDim::kGate0, 1));
    return absl::OkStatus();
  }
  if (time_outer) {  // transposed: slice inner; boundary |R| mod slice_size, V = floor(|R| / slice_size)
    const int64_t slice_size = Product(slice_parts);
    const int64_t time_size = Product(time_parts);
    const int64_t needed = (config.axis_size + slice_size - 1) / slice_size;
    if (time_size != needed) {
      return EngineError(kVcg, "Slice + Time (transposed): time_size must equal ceil(|R| / slice_size) = ceil(",
                         config.axis_size, " / ", slice_size, ") = ", needed, ", but ", axis, "'s Time part has ",
                         time_size, " steps (the \"below\" slices would count ", time_size,
                         " valid steps); Slice ", Bracket(config.in.slice), ", Time ", Bracket(config.in.time),
                         " (fix: pad ", axis, " to ", needed * slice_size, ")");
    }
    config.placement = VcgPlacement::kSliceTimeTransposed;
    gate.transposed = true;
    gate.match = static_cast<uint32_t>(field.Encode(config.axis_size % slice_size));
    gate.valid = config.axis_size / slice_size;
    ASSIGN_OR_RETURN(config.counters, TimeCounters(config.in.time, time_parts, VcgDim::kGate0, slice_size));
    return absl::OkStatus();
  }
  return EngineError(kVcg, "Time-Slice-Time interleave: ", axis, "'s Slice part must be wholly outer or wholly ",
                     "inner to its Time part, but Slice ", Bracket(config.in.slice), " and Time ",
                     Bracket(config.in.time), " interleave them (different slices would need different valid ",
                     "step counts; the VCG has a single threshold)");
}

std::string CounterText(const VcgCounter& c) {
  const char* dim = c.dim == VcgDim::kPacket ? "packet dim" : c.dim == VcgDim::kGate0 ? "gate 0" : "unassigned";
  if (c.dim == VcgDim::kUnassigned) return absl::StrCat("{ limit: ", c.limit, ", ", dim, " }");
  return absl::StrCat("{ limit: ", c.limit, ", stride: ", c.stride, ", ", dim, " } ", c.label);
}

}  // namespace

// The VCG for an axis without a left pad (a stand-in R' counts from the start of its pad).
static absl::StatusOr<ValidCountConfig> PlanUnshifted(const StreamShape& in, const std::string& axis);

const char* VcgModeName(VcgMode mode) {
  switch (mode) {
    case VcgMode::kUnneeded: return "Unneeded";
    case VcgMode::kPacketReduce: return "Packet Reduce";
    default: return "Time Reduce";
  }
}

const char* VcgPlacementName(VcgPlacement placement) {
  switch (placement) {
    case VcgPlacement::kNone: return "no padding";
    case VcgPlacement::kPacket: return "Packet only";
    case VcgPlacement::kTimePacket: return "Time + Packet";
    case VcgPlacement::kTime: return "Time only";
    case VcgPlacement::kSlice: return "Slice only";
    case VcgPlacement::kSliceTime: return "Slice + Time";
    default: return "Slice + Time (transposed)";
  }
}

const char* NarrowingName(Narrowing narrowing) {
  return narrowing == Narrowing::kSplit ? "split_way4" : "trim_way4";
}

absl::StatusOr<std::optional<LeftPaddedAxis>> FindLeftPaddedAxis(const StreamShape& in, const std::string& axis) {
  if (!HasLeftPadding(in.time) && !HasLeftPadding(in.packet)) return std::nullopt;
  ASSIGN_OR_RETURN(ShiftedStream shifted, ShiftLeftPadding(Mapping(), in.time, in.packet));
  std::optional<LeftPaddedAxis> found;
  for (const ShiftedAxis& shift : shifted.axes) {
    if (shift.axis != axis) {
      return absl::InvalidArgumentError(absl::StrCat(
          "Left padding: the reduce's stream left-pads ", shift.axis, ", which is not the reduce axis ", axis,
          " (Time [", in.time.ToString(), "], Packet [", in.packet.ToString(),
          "]); only the reduce axis may be left-padded here"));
    }
    found = LeftPaddedAxis{axis, shift.stand_in, shift.left, in};
    found->shifted.time = shifted.time;
    found->shifted.packet = shifted.packet;
  }
  return found;
}

absl::StatusOr<ValidCountConfig> PlanValidCount(const StreamShape& in, const std::string& axis,
                                                bool left_pad_is_identity) {
  ASSIGN_OR_RETURN(std::optional<LeftPaddedAxis> left, FindLeftPaddedAxis(in, axis));
  if (!left) return PlanUnshifted(in, axis);
  if (!left_pad_is_identity) {
    return EngineError(kVcg, "left padding: a valid count keeps a prefix of the flit (lanes [0, vc)) and a gate ",
                       "a prefix of the steps (idx < V), so the ", left->left, " pad positions in front of ", axis,
                       " (Time ", Bracket(in.time), ", Packet ", Bracket(in.packet),
                       ") cannot be left out; way out (Padding Strategy): fetch with the op's identity as pad_value "
                       "(fetch_masked) and reduce with ReducePadding::kLeftIdentity, so the VCG leaves out the right "
                       "pad only");
  }
  ASSIGN_OR_RETURN(ValidCountConfig config, PlanUnshifted(left->shifted, left->stand_in));
  config.in = in;
  config.axis = axis;
  config.left_pad = left->left;
  config.stand_in = left->stand_in;
  return config;
}

static absl::StatusOr<ValidCountConfig> PlanUnshifted(const StreamShape& in, const std::string& axis) {
  for (const Mapping* m : {&in.chip, &in.cluster, &in.slice, &in.time, &in.packet}) RETURN_IF_ERROR(m->status());
  if (in.packet.size() != kVeLanes) {
    return EngineError(kVcg, "the VCG tags 8-way flits: Packet ", Bracket(in.packet), " has ", in.packet.size(),
                       " lanes, not 8 (pad it, e.g. [", in.packet.ToString(), " # 8])");
  }
  if (Names(in.chip, axis) || Names(in.cluster, axis)) {
    return EngineError(kVcg, "the reduce axis ", axis, " must lie in Slice, Time and Packet, not in Chip [",
                       in.chip.ToString(), "] or Cluster [", in.cluster.ToString(), "]");
  }
  std::vector<AxisPart> slice_parts, time_parts, packet_parts;
  RETURN_IF_ERROR(CollectParts(in.slice, Level::kSlice, axis, slice_parts));
  RETURN_IF_ERROR(CollectParts(in.time, Level::kTime, axis, time_parts));
  RETURN_IF_ERROR(CollectParts(in.packet, Level::kPacket, axis, packet_parts));
  std::vector<AxisPart> parts = slice_parts;
  parts.insert(parts.end(), time_parts.begin(), time_parts.end());
  parts.insert(parts.end(), packet_parts.begin(), packet_parts.end());
  if (parts.empty()) {
    return EngineError(kVcg, "the reduce axis ", axis, " appears in none of Slice, Time and Packet of ", in.ToString());
  }
  std::sort(parts.begin(), parts.end(),
            [](const AxisPart& a, const AxisPart& b) { return a.digit.coef < b.digit.coef; });
  RETURN_IF_ERROR(CheckContiguous(parts, axis));

  ValidCountConfig config;
  config.in = in;
  config.axis = axis;
  config.axis_size = parts.front().digit.axis_size;
  config.padded_size = parts.back().digit.coef * parts.back().digit.count;
  const bool lane_padding = !packet_parts.empty() && packet_parts.front().digit.live < kVeLanes;
  if (config.padded_size == config.axis_size && !lane_padding) {
    config.counters = {VcgCounter{in.time.size(), 0, VcgDim::kUnassigned, ""}};
    return config;  // "Perfectly aligned": every flit is full, the VCG is not needed.
  }
  // Each part's Time steps count in ascending weight order (the sequencer's order).
  std::sort(time_parts.begin(), time_parts.end(),
            [](const AxisPart& a, const AxisPart& b) { return a.weight < b.weight; });
  std::sort(slice_parts.begin(), slice_parts.end(),
            [](const AxisPart& a, const AxisPart& b) { return a.digit.coef < b.digit.coef; });
  if (!packet_parts.empty()) {
    RETURN_IF_ERROR(PlanPacketReduce(config, slice_parts, time_parts, packet_parts));
  } else {
    RETURN_IF_ERROR(PlanTimeReduce(config, slice_parts, time_parts));
  }
  return config;
}

std::vector<int64_t> CounterValues(const ValidCountConfig& config, int64_t t) {
  std::vector<int64_t> values;
  for (const VcgCounter& c : config.counters) {
    values.push_back(t % c.limit);
    t /= c.limit;
  }
  return values;
}

int ValidCount(const ValidCountConfig& config, int64_t slice, int64_t t) {
  if (config.mode == VcgMode::kUnneeded) return kVeLanes;
  const std::vector<int64_t> c = CounterValues(config, t);
  int64_t idx_p = 0, idx_g = 0;
  for (size_t i = 0; i < c.size(); ++i) {
    const VcgCounter& counter = config.counters[i];
    if (counter.dim == VcgDim::kPacket) idx_p += c[i] * counter.stride;
    if (counter.dim == VcgDim::kGate0) idx_g += c[i] * counter.stride;
  }
  int64_t vc = kVeLanes;
  if (config.packet.enabled) {
    vc = std::min(config.packet.stride_p, std::max<int64_t>(0, config.packet.valid - idx_p));
  }
  for (int d = 0; d < kVcgGateDims; ++d) {
    const VcgGate& gate = config.gates[d];
    if (!gate.enabled) continue;
    const int64_t idx = d == 0 ? idx_g : 0;
    const uint32_t masked = static_cast<uint32_t>(slice) & gate.mask;
    bool open;
    if (masked < gate.match) {
      open = true;
    } else if (masked == gate.match || gate.transposed) {
      open = idx < gate.valid;
    } else {
      open = false;
    }
    if (!open) vc = 0;
  }
  return static_cast<int>(vc);
}

int HalfValidCount(int vc, Narrowing narrowing, int half) {
  if (narrowing == Narrowing::kTrim) return std::min(vc, kVeHalfLanes);
  return half == 0 ? std::min(vc, kVeHalfLanes) : std::max(vc - kVeHalfLanes, 0);
}

absl::Status CheckTrim(const ValidCountConfig& config) {
  if (config.mode == VcgMode::kPacketReduce && config.packet.stride_p > kVeHalfLanes) {
    return EngineError(kVcg, "trim_way4 keeps lanes 0..3, so the valid count must be at most 4, but ", config.axis,
                       " fills ", config.packet.stride_p, " lanes of Packet [", config.in.packet.ToString(),
                       "] (use split_way4)");
  }
  return absl::OkStatus();
}

std::vector<int> Way4ValidCounts(const ValidCountConfig& config, int64_t slice, Narrowing narrowing) {
  std::vector<int> counts;
  for (int64_t t = 0; t < config.in.time.size(); ++t) {
    const int vc = ValidCount(config, slice, t);
    counts.push_back(HalfValidCount(vc, narrowing, 0));
    if (narrowing == Narrowing::kSplit) counts.push_back(HalfValidCount(vc, narrowing, 1));
  }
  return counts;
}

std::string ValidCountConfig::Describe() const {
  std::string text = absl::StrCat("valid count generator: ", VcgModeName(mode), " (", VcgPlacementName(placement),
                                  "), ", axis, " = ", axis_size, " padded to ", padded_size);
  if (left_pad > 0) {
    text = absl::StrCat("valid count generator: ", VcgModeName(mode), " (", VcgPlacementName(placement), "), ", axis,
                        " = ", axis_size - left_pad, " left-padded by ", left_pad, ": counts ", stand_in, " = # ",
                        left_pad, " + ", axis, " = ", axis_size, " values (the fetch filled the left pad with the "
                        "op's identity), padded to ", padded_size);
  }
  if (mode == VcgMode::kUnneeded) return absl::StrCat(text, ", every flit full (vc 8)");
  std::vector<std::string> counter_text;
  for (const VcgCounter& c : counters) counter_text.push_back(CounterText(c));
  absl::StrAppend(&text, "\n      counters: ", counter_text.empty() ? "none" : absl::StrJoin(counter_text, "; "));
  if (packet.enabled) {
    absl::StrAppend(&text, "\n      packet dim: V_p ", packet.valid, ", stride_p ", packet.stride_p);
  } else {
    absl::StrAppend(&text, "\n      packet dim: off (8 or 0)");
  }
  for (int d = 0; d < kVcgGateDims; ++d) {
    const VcgGate& g = gates[d];
    if (!g.enabled) continue;
    absl::StrAppend(&text, "\n      gate ", d, ": mask ", absl::StrFormat("0x%02x", g.mask), ", match ", g.match,
                    ", V ", g.valid, g.transposed ? ", transposed" : ", standard");
  }
  return text;
}

}  // namespace visa
