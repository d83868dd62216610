// Fetch Engine rules: slice geometry, packet alignment, casts, adapter stages and fetch_size.
#include "dsl/fetch_engine.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "dsl/engine_errors.h"
#include "dsl/left_padding.h"
#include "dsl/normal_form.h"
#include "dsl/status_macros.h"
#include "dsl/scalar_convert.h"

namespace visa {
namespace {

constexpr int64_t kFetchAlignBytes = 8;
constexpr int64_t kMaxFetchOutputBytes = 32;

absl::Status CheckGeometry(const StreamShape& begin) {
  if (begin.cluster.size() != kClustersPerChip) {
    return EngineError("Fetch", "Cluster size must be 2, got ", begin.cluster.size(), " (`",
                       begin.cluster.ToString(), "`; pad a single cluster with `1 # 2`)");
  }
  if (begin.slice.size() != kSlicesPerCluster) {
    return EngineError("Fetch", "Slice size must be 256, got ", begin.slice.size(), " (`",
                       begin.slice.ToString(), "`; pad with `# 256`)");
  }
  return absl::OkStatus();
}

absl::Status CheckAdapter(ContextKind context, DType in, DType out, const FetchAdapter& adapter,
                          const Mapping* interleave) {
  if (!adapter.table.empty()) {
    if (context != ContextKind::kMain) {
      return EngineError("Fetch", "table lookup is a main-context adapter stage (Fetch Adapter)");
    }
    if (static_cast<int64_t>(adapter.table.size()) != (int64_t{1} << Bits(in))) {
      return EngineError("Fetch", "a lookup table for ", Name(in), " needs ", int64_t{1} << Bits(in),
                         " entries, got ", adapter.table.size());
    }
  }
  if (!adapter.zero_points.empty()) {
    size_t expected = interleave != nullptr ? 2 : 1;
    if (adapter.zero_points.size() != expected) {
      return EngineError("Fetch", "zero-point subtraction needs ", expected,
                         " zero point(s) (one per interleaved tensor), got ", adapter.zero_points.size());
    }
    for (int32_t zp : adapter.zero_points) {
      absl::StatusOr<int32_t> checked = ZeroPointSubtract(in, 0, zp);
      if (!checked.ok()) return EngineError("Fetch", "Zero-Point Subtraction: ", checked.status().message());
    }
    if (out != DType::kI32 && out != DType::kI5 && out != DType::kI9) {
      return EngineError("Fetch", "zero-point subtraction produces i5, i9 or i32, not ", Name(out));
    }
    return absl::OkStatus();
  }
  if (in != out) {
    absl::Status cast = CheckConversion(ConversionStage::kFetchCast, in, out);
    if (!cast.ok()) return EngineError("Fetch", "Type Casting: ", cast.message());
  }
  return absl::OkStatus();
}

// fetch_size after the cast limit: one fetch may produce at most 32 bytes of output.
absl::StatusOr<AccessPlan> PlanAccess(const SequencerConfig& config, DType in, DType out,
                                      ContextKind context) {
  ASSIGN_OR_RETURN(AccessPlan plan, PlanFetch(config, ElementBits{Bits(in)}, context));
  int64_t growth_num = WireBits(out), growth_den = WireBits(in);
  if (context == ContextKind::kSub && in == DType::kI4 && out == DType::kI32) plan.access_bytes = 4;
  while (plan.access_bytes * growth_num / growth_den > kMaxFetchOutputBytes) {
    if (context == ContextKind::kSub || plan.access_bytes == 1) {
      return EngineError("Fetch", "Type Casting: a fetch of ", plan.access_bytes, " bytes of ",
                         Name(in), " produces ", plan.access_bytes * growth_num / growth_den,
                         " bytes of ", Name(out), ", over the 32-byte limit");
    }
    plan.access_bytes /= 2;
  }
  plan.accesses_per_packet = (plan.packet_bytes + plan.access_bytes - 1) / plan.access_bytes;
  plan.cycles = config.time_size() * plan.accesses_per_packet;
  return plan;
}

// The entry index whose label is `label` (the sequencer labels entries by their stream digit).
int EntryOf(const SequencerConfig& config, const std::string& label) {
  for (size_t i = 0; i < config.entries.size(); ++i) {
    if (config.entries[i].label == label) return static_cast<int>(i);
  }
  return -1;
}

// The masking of a left-padded stream: the stream over its stand-in axis, whose left pad must be
// the packet's innermost axis and shorter than the packet's run of it (lpad masks index 0 only).
absl::StatusOr<MaskConfig> PlanMask(const Mapping& time, const Mapping& packet,
                                    const SequencerConfig& config);

absl::StatusOr<MaskConfig> PlanLeftPaddedMask(const Mapping& element, const Mapping& time,
                                              const Mapping& packet, const SequencerConfig& config) {
  ASSIGN_OR_RETURN(ShiftedStream shifted, ShiftLeftPadding(element, time, packet));
  const std::vector<Factor>& packet_digits = shifted.packet.normal_form().factors();
  const ShiftedAxis& shift = shifted.axes.front();
  const bool innermost = shifted.axes.size() == 1 && !packet_digits.empty() &&
                         packet_digits[0].kind == Factor::Kind::kDigit && packet_digits[0].axis == shift.stand_in &&
                         packet_digits[0].coef == 1;
  if (!innermost) {
    return EngineError("Fetch", "Masking Configuration: only the innermost axis of the Packet can be ",
                       "left-padded (Time `", time.ToString(), "`, Packet `", packet.ToString(), "`)");
  }
  if (shift.left >= packet_digits[0].count) {
    return EngineError("Fetch", "Masking Configuration: a left pad of ", shift.left, " covers the whole first ",
                       "packet of `", packet.ToString(), "` (", packet_digits[0].count,
                       " elements of ", shift.axis, "); left_pad masks within the first packet only");
  }
  ASSIGN_OR_RETURN(MaskConfig mask, PlanMask(shifted.time, shifted.packet, config));
  if (mask.case_number == 0) {  // only the left side is masked: the last index is whole
    mask.case_number = 1;
    mask.last_dim = static_cast<int>(config.entries.size()) - config.packet_entries - 1;
    mask.rightmost_valid = {packet_digits[0].count};
  }
  mask.lpad = shift.left;
  return mask;
}

absl::StatusOr<MaskConfig> PlanMask(const Mapping& time, const Mapping& packet,
                                    const SequencerConfig& config) {
  MaskConfig mask;
  const std::vector<Factor>& packet_digits = packet.normal_form().factors();
  if (packet_digits.empty() || packet_digits[0].kind != Factor::Kind::kDigit ||
      packet_digits[0].axis.empty()) {
    return mask;
  }
  const Factor& inner = packet_digits[0];
  int64_t chunk = inner.count;
  // The axis's outer part, when Time carries it right above the packet's digit.
  std::optional<Factor> outer;
  for (const Factor& f : time.normal_form().factors()) {
    if (f.kind == Factor::Kind::kDigit && f.axis == inner.axis && f.coef == inner.coef * inner.count) outer = f;
  }
  int64_t indices = outer ? outer->count : 1;
  int64_t valid_total = (inner.axis_size + inner.coef - 1) / inner.coef;  // digit values in range
  if (chunk * indices <= valid_total && inner.live == inner.count) return mask;
  for (int64_t i = 0; i < indices; ++i) {
    int64_t valid = std::clamp<int64_t>(valid_total - i * chunk, 0, chunk);
    if (!outer) valid = std::min(valid, inner.live);
    mask.rightmost_valid.push_back(valid);
  }
  bool spans_more_than_last = indices >= 2 && mask.rightmost_valid[indices - 2] < chunk;
  std::string outer_label = outer ? NormalForm({*outer}).ToString() : NormalForm({inner}).ToString();
  mask.last_dim = EntryOf(config, outer_label);
  if (spans_more_than_last) {
    if (indices > 8) {
      return EngineError("Fetch", "Masking Configuration: padding spans ", indices,
                         " indices of `", outer_label, "`; case 3 supports at most 8");
    }
    mask.case_number = 3;
    return mask;
  }
  int time_entries = static_cast<int>(config.entries.size()) - config.packet_entries;
  mask.case_number = (!outer || mask.last_dim == time_entries - 1) ? 1 : 2;
  mask.rightmost_valid = {mask.rightmost_valid.back()};
  return mask;
}

}  // namespace

std::string MaskConfig::Describe() const {
  return absl::StrCat("masking case ", case_number, ", last_dim ", last_dim, lpad != 0 ? absl::StrCat(", lpad ", lpad) : "",
                      ", last_dim_rightmost_valid_count [", absl::StrJoin(rightmost_valid, ", "), "]");
}

std::string FetchStage::Describe() const {
  std::string text = absl::StrCat("fetch ", Name(in_dtype), " -> ", Name(out.dtype), " time [",
                                  out.time.ToString(), "] packet [", out.packet.ToString(), "]");
  absl::StrAppend(&text, "\n    sequencer ", indirect ? indirect->loop.sequencer : sequencer.ToLabeledString());
  if (indirect) absl::StrAppend(&text, "\n    indirect ", indirect->Describe());
  absl::StrAppend(&text, "\n    contiguous ", access.contiguous_bytes, " B, fetch_size ",
                  access.access_bytes, " B, fetches_per_packet ", access.accesses_per_packet,
                  ", cycles ", access.cycles);
  if (!adapter.zero_points.empty()) {
    absl::StrAppend(&text, "\n    zero points ", absl::StrJoin(adapter.zero_points, ", "));
  }
  if (!adapter.table.empty()) absl::StrAppend(&text, "\n    table lookup (", adapter.table.size(), " entries)");
  if (mask.case_number != 0) {
    absl::StrAppend(&text, "\n    ", mask.Describe(), ", pad value ", adapter.pad_value.value_or(0));
  }
  return text;
}

absl::StatusOr<FetchStage> PlanFetchStage(const StreamShape& begin, const Mapping* interleave,
                                          ContextKind context, DType out_dtype,
                                          const Mapping& time, const Mapping& packet,
                                          FetchAdapter adapter) {
  RETURN_IF_ERROR(time.status());
  RETURN_IF_ERROR(packet.status());
  RETURN_IF_ERROR(CheckGeometry(begin));
  RETURN_IF_ERROR(CheckAdapter(context, begin.dtype, out_dtype, adapter, interleave));
  int64_t packet_bits = packet.size() * WireBits(out_dtype);
  if (packet_bits % (kFetchAlignBytes * 8) != 0) {
    return EngineError("Fetch", "Fetch output packet must be 8-byte aligned, got ", packet_bits / 8.0,
                       " bytes (packet `", packet.ToString(), "` of ", Name(out_dtype),
                       "; pad it, e.g. `", packet.ToString(), " # ",
                       (packet_bits / 64 + 1) * 64 / WireBits(out_dtype), "`)");
  }
  // The sequencer walks one tensor's Element; an interleave axis alternates tensors, not addresses.
  Mapping seq_time = time;
  if (interleave != nullptr) {
    std::vector<Mapping> kept;
    // Remove the interleave axis from the time terms: it selects the tensor.
    Mapping rest = time;
    while (rest.kind() == Mapping::Kind::kPair) {
      if (!(rest.major() == *interleave)) kept.push_back(rest.major());
      rest = rest.minor();
    }
    if (!(rest == *interleave)) kept.push_back(rest);
    if (static_cast<int64_t>(kept.size()) == 0) kept.push_back(Mapping());
    seq_time = Pair(kept);
    if (seq_time.size() * interleave->size() != time.size()) {
      return EngineError("Fetch", "begin_interleaved: the interleave axis `", interleave->ToString(),
                         "` must be one term of Time `", time.ToString(), "`");
    }
  }
  absl::StatusOr<SequencerConfig> sequencer =
      DeriveSequencer(begin.packet, seq_time, packet, SequencerMode::kRead);
  if (!sequencer.ok()) {
    return EngineError("Fetch", "cannot read Time `", time.ToString(), "`, Packet `", packet.ToString(),
                       "` from the DM Element `", begin.packet.ToString(), "`: ",
                       sequencer.status().message());
  }
  FetchStage stage;
  stage.in_dtype = begin.dtype;
  stage.out = StreamShape{out_dtype, begin.chip, begin.cluster, begin.slice, time, packet, std::nullopt};
  stage.adapter = std::move(adapter);
  stage.sequencer = *std::move(sequencer);
  ASSIGN_OR_RETURN(stage.access, PlanAccess(stage.sequencer, begin.dtype, out_dtype, context));
  if (HasLeftPadding(seq_time) || HasLeftPadding(packet)) {
    ASSIGN_OR_RETURN(stage.mask, PlanLeftPaddedMask(begin.packet, seq_time, packet, stage.sequencer));
  } else {
    ASSIGN_OR_RETURN(stage.mask, PlanMask(time, packet, stage.sequencer));
  }
  return stage;
}

}  // namespace visa
