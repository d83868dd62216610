// Contraction Engine rules: Stream Adapter (collect_flits, Row / Time broadcast, shift-reuse), TRF
// Sequencer (reg_read_size, entries, alignment), spatial tree depth and the accumulator buffer.
#include "dsl/contraction_engine.h"

#include <algorithm>
#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "dsl/collect_engine.h"
#include "dsl/engine_errors.h"
#include "dsl/equivalence.h"
#include "dsl/status_macros.h"

namespace visa {
namespace {

constexpr const char* kAdapter = "Stream Adapter (align)";
constexpr const char* kTrfSequencer = "TRF Sequencer (align)";
constexpr const char* kContract = "Reducer (contract)";
constexpr const char* kAccumulate = "Reducer (accumulate)";

std::string Bracket(const Mapping& m) { return absl::StrCat("[", m.ToString(), "]"); }

// The axes a mapping really uses: digits of extent 1 (e.g. `(A % 32) / 32`) name no axis.
std::set<std::string> UsedAxes(const Mapping& mapping) {
  std::set<std::string> axes;
  for (const Factor& f : mapping.normal_form().factors()) {
    if (f.kind == Factor::Kind::kComposite) {
      for (const std::string& a : f.composite->axis_names()) axes.insert(a);
    } else if (f.kind == Factor::Kind::kDigit && !f.axis.empty() && f.live > 1) {
      axes.insert(f.axis);
    }
  }
  return axes;
}

bool Disjoint(const std::set<std::string>& a, const std::set<std::string>& b) {
  return std::none_of(a.begin(), a.end(), [&](const std::string& x) { return b.count(x) > 0; });
}

// True when some digit of `a` and some digit of `b` cover the same coordinates of one axis (so
// `[J % 8]` and `[J / 8 % 4]` share no data, but `[K % 32 / 16]` and `[K]` do).
bool ShareDigits(const Mapping& a, const Mapping& b) {
  const std::vector<Factor>& fa = a.normal_form().factors();
  const std::vector<Factor>& fb = b.normal_form().factors();
  auto axes_of = [](const Mapping& m) { return UsedAxes(m); };
  for (const Factor& f : fa) {
    if (f.kind == Factor::Kind::kComposite) return !Disjoint(axes_of(a), axes_of(b));
  }
  for (const Factor& g : fb) {
    if (g.kind == Factor::Kind::kComposite) return !Disjoint(axes_of(a), axes_of(b));
  }
  for (const Factor& f : fa) {
    if (f.kind != Factor::Kind::kDigit || f.axis.empty() || f.live <= 1) continue;
    for (const Factor& g : fb) {
      if (g.kind != Factor::Kind::kDigit || g.axis != f.axis || g.live <= 1) continue;
      if (f.coef < g.coef * g.live && g.coef < f.coef * f.live) return true;
    }
  }
  return false;
}

// True when positions [half, 2 * half) of `mapping` are all padding.
bool UpperHalfIsPadding(const Mapping& mapping, int64_t half) {
  for (int64_t p = half; p < 2 * half; ++p) {
    if (mapping.map(p).live()) return false;
  }
  return true;
}

// The canonical form of `mapping` with every padding position removed (a digit keeps its live
// values, pure padding digits and block pads disappear): "equal up to padding".
NormalForm WithoutPadding(const Mapping& mapping) {
  std::vector<Factor> kept;
  for (Factor f : mapping.normal_form().factors()) {
    if (f.kind == Factor::Kind::kBlockPad) continue;
    if (f.kind == Factor::Kind::kDigit && f.live < f.count) {
      if (f.live <= 1) continue;
      f.count = f.live;
    }
    kept.push_back(f);
  }
  return NormalForm(kept).ToMapping().normal_form();
}

absl::Status CheckDTypes(DType stream, DType weights) {
  auto family = [](DType d) -> int {
    switch (d) {
      case DType::kI4: case DType::kI5: return 1;
      case DType::kI8: case DType::kI9: return 2;
      case DType::kF8E4M3: return 3;
      case DType::kF8E5M2: return 4;
      case DType::kBF16: return 5;
      default: return 0;
    }
  };
  if (family(stream) == 0) {
    return EngineError(kAdapter, "Data types: the Contraction Engine takes i4, i8, f8 or bf16 input, got ",
                       std::string(Name(stream)),
                       " (f32 / i32 data is processed by the Vector Engine; cast first)");
  }
  if (family(stream) != family(weights)) {
    return EngineError(kAdapter, "Data types: the stream (", std::string(Name(stream)),
                       ") and the TRF weights (", std::string(Name(weights)),
                       ") must be the same type (i4 / i5, i8 / i9 pair with each other)");
  }
  return absl::OkStatus();
}

absl::Status CheckSameLevels(const StreamShape& in, const TrfOperand& trf) {
  struct Level { const char* name; const Mapping& stream; const Mapping& weights; };
  for (const Level& level : {Level{"Chip", in.chip, trf.chip}, Level{"Cluster", in.cluster, trf.cluster},
                             Level{"Slice", in.slice, trf.slice}}) {
    ASSIGN_OR_RETURN(bool same, Equivalent(level.stream, level.weights));
    if (!same) {
      return EngineError(kAdapter, "Chip, Cluster and Slice pass through unchanged, so the TRF tensor's ",
                         level.name, " must equal the stream's: stream ", Bracket(level.stream), ", TRF ",
                         Bracket(level.weights), " (", trf.text, ")");
    }
  }
  return absl::OkStatus();
}

// Shift-reuse (collect_flits = 3): the innermost `feed` time cells and the packet form one input
// row R; each position of the shift axis S reads the 64-byte window of R starting `j * stride`.
absl::Status DeriveShiftReuse(const StreamShape& in, const Mapping& shift, const Mapping& out_packet,
                              int feed, AlignStage& stage) {
  Mapping row = Pair({in.time % feed, in.packet});
  RETURN_IF_ERROR(row.status());
  const std::vector<std::string> row_axes = row.axis_names();
  Mapping windows = Pair({shift, out_packet});
  std::vector<int64_t> starts;
  for (int64_t j = 0; j < shift.size(); ++j) {
    std::optional<int64_t> start;
    for (int64_t p = 0; p < out_packet.size(); ++p) {
      Cell cell = windows.map(j * out_packet.size() + p);
      if (!cell.live()) continue;
      Index wanted;
      for (const auto& [axis, value] : cell.index.coords()) {
        if (std::find(row_axes.begin(), row_axes.end(), axis) != row_axes.end()) wanted.Set(axis, value);
      }
      std::optional<int64_t> r = row.inverse(wanted);
      if (!r) {
        return EngineError(kAdapter, "shift-reuse: window ", j, " needs ", cell.index.ToString(),
                           ", which the buffered input row ", Bracket(row), " does not hold");
      }
      if (!start) start = *r - p;
      if (*r - p != *start) {
        return EngineError(kAdapter, "shift-reuse: window ", j, " of OutPacket ", Bracket(out_packet),
                           " is not a contiguous window of the input row ", Bracket(row));
      }
    }
    if (!start) return EngineError(kAdapter, "shift-reuse: window ", j, " holds no data");
    starts.push_back(*start);
  }
  const int64_t stride = starts.size() > 1 ? starts[1] - starts[0] : 1;
  for (size_t j = 0; j < starts.size(); ++j) {
    if (starts[0] != 0 || stride < 1 || starts[j] != static_cast<int64_t>(j) * stride) {
      return EngineError(kAdapter, "shift-reuse: windows must start at 0, s, 2s, ... of the input row; ",
                         "they start at ", absl::StrJoin(starts, ", "));
    }
  }
  stage.collect_flits = 3;
  stage.feed_flits = feed;
  stage.shifts = static_cast<int64_t>(starts.size()) - 1;
  stage.shift_stride = stride;
  return absl::OkStatus();
}

// Which flits form the OutPacket, and what remains of Time (`t_outer`).
absl::StatusOr<Mapping> DeriveFlitCollection(const StreamShape& in, const Mapping& out_time,
                                             const Mapping& out_packet, AlignStage& stage) {
  const int64_t flit = FlitElements(in.dtype);
  ASSIGN_OR_RETURN(bool one, Equivalent(out_packet, in.packet.pad(2 * flit)));
  if (one) {
    stage.collect_flits = 1;
    return in.time;
  }
  if (in.time.size() % 2 == 0) {
    ASSIGN_OR_RETURN(bool two, Equivalent(out_packet, Pair({in.time % 2, in.packet})));
    if (two) {
      stage.collect_flits = 2;
      return in.time / 2;
    }
  }
  std::string shift_error;
  for (int feed : {2, 3}) {
    if (in.time.size() % feed != 0 || feed * kFlitBytes > kFlitBufferBytes) continue;
    Mapping t_outer = in.time / feed;
    if (out_time.size() % t_outer.size() != 0) continue;
    const int64_t n = out_time.size() / t_outer.size();
    ASSIGN_OR_RETURN(bool outer_ok, Equivalent(out_time / n, t_outer));
    if (!outer_ok || n < 2) continue;
    absl::Status shift = DeriveShiftReuse(in, out_time % n, out_packet, feed, stage);
    if (shift.ok()) return t_outer;
    shift_error = std::string(shift.message());
  }
  return EngineError(
      kAdapter, "OutPacket ", Bracket(out_packet), " is none of the Stream Adapter's packets: ",
      "collect_flits = 1 needs the input packet zero-padded to 64 bytes ", Bracket(in.packet.pad(2 * flit)),
      "; collect_flits = 2 needs [innermost 2 cells of Time, Packet] ",
      in.time.size() % 2 == 0 ? Bracket(Pair({in.time % 2, in.packet})) : std::string("(Time is odd)"),
      "; collect_flits = 3 (shift-reuse) needs windows of the buffered input row",
      shift_error.empty() ? "" : absl::StrCat(" (", shift_error, ")"));
}

absl::Status CheckOutTime(const StreamShape& in, const Mapping& t_outer, const Mapping& out_time,
                          AlignStage& stage) {
  if (stage.collect_flits == 3) return absl::OkStatus();  // the shift axis is checked with it
  if (out_time.size() % t_outer.size() != 0) {
    return EngineError(kAdapter, "Time does not divide OutTime: OutTime ", Bracket(out_time), " has ",
                       out_time.size(), " positions, the collected Time ", Bracket(t_outer), " has ",
                       t_outer.size());
  }
  const int64_t tile = out_time.size() / t_outer.size();
  ASSIGN_OR_RETURN(bool outer_ok, Equivalent(out_time / tile, t_outer));
  if (!outer_ok) {
    return EngineError(kAdapter, "OutTime must be the outer Time with broadcast (tiling) axes innermost: ",
                       "expected [", t_outer.ToString(), tile > 1 ? ", <tiling axes>" : "", "], got ",
                       Bracket(out_time));
  }
  if (ShareDigits(out_time % tile, in.Full())) {
    return EngineError(kAdapter, "Time broadcast: the tiling axes ", Bracket(out_time % tile),
                       " must be axes the stream does not hold (they repeat each packet)");
  }
  stage.time_broadcast = tile;
  return absl::OkStatus();
}

// Entries of a sequencer's packet part read `elements` contiguous positions (or one, repeated).
bool ReadsContiguously(const SequencerConfig& config, int64_t elements) {
  if (elements == 1) return true;
  int64_t expected = 1;
  for (int i = static_cast<int>(config.entries.size()) - 1;
       i >= static_cast<int>(config.entries.size()) - config.packet_entries; --i) {
    const SequencerEntry& e = config.entries[i];
    if (e.size == 1) continue;
    if (e.stride != expected) return false;
    expected = e.size * e.stride;
  }
  return true;
}

absl::Status DeriveTrfSequencer(const TrfOperand& trf, const Mapping& out_time, const Mapping& out_packet,
                                AlignStage& stage) {
  const std::set<std::string> computation = UsedAxes(Pair({out_time, out_packet}));
  for (const std::string& axis : UsedAxes(trf.element)) {
    if (computation.count(axis) == 0) {
      return EngineError(kTrfSequencer, "the two computation mappings must match: the TRF Element ",
                         Bracket(trf.element), " holds axis ", axis, ", which the computation mapping [",
                         out_time.ToString(), " | ", out_packet.ToString(), "] does not use");
    }
  }
  const int bits = WireBits(trf.dtype);
  std::string last_error = "no candidate";
  for (int64_t r = out_packet.size(); r >= 1 && r * bits >= 8; r /= 2) {
    if (out_packet.size() % r != 0) continue;
    if (ShareDigits(out_packet / r, trf.element)) continue;  // the outer part must be a broadcast
    if (r > 1 && UpperHalfIsPadding(out_packet % r, r / 2)) continue;  // read data, not padding
    absl::StatusOr<SequencerConfig> config =
        DeriveSequencer(trf.element, out_time, out_packet % r, SequencerMode::kRead);
    if (!config.ok()) {
      last_error = std::string(config.status().message());
      continue;
    }
    if (!ReadsContiguously(*config, r)) continue;
    stage.reg_read_size = r * bits / 8;
    stage.packet_broadcast = kMacWidthBytes / stage.reg_read_size;
    const int time_entries = static_cast<int>(config->entries.size()) - config->packet_entries;
    for (int i = time_entries - 1; i >= 0; --i) {
      SequencerEntry e = config->entries[i];
      e.stride = e.stride * bits / 8;
      stage.trf_entries.push_back(e);
    }
    break;
  }
  if (stage.reg_read_size == 0) {
    return EngineError(kTrfSequencer, "no contiguous TRF read of 1 to 64 bytes, broadcast to 64 bytes, ",
                       "produces OutPacket ", Bracket(out_packet), " from the TRF Element ",
                       Bracket(trf.element), " (", last_error, ")");
  }
  if (stage.reg_read_size == kMacWidthBytes) {
    if (trf.base_bytes % kMacWidthBytes != 0) {
      return EngineError(kTrfSequencer, "64-byte alignment rule: with reg_read_size = 64 bytes the base ",
                         "address must be 64-byte aligned, got ", trf.base_bytes);
    }
    for (size_t i = 0; i < stage.trf_entries.size(); ++i) {
      if (stage.trf_entries[i].stride % kMacWidthBytes != 0) {
        return EngineError(kTrfSequencer, "64-byte alignment rule: with reg_read_size = 64 bytes every ",
                           "sequencer stride must be 64-byte aligned; Entry ", i, " (",
                           stage.trf_entries[i].label, ") has stride ", stage.trf_entries[i].stride,
                           " bytes. Hint: make the read cover fewer bytes or lay the TRF Element out so ",
                           "that the Time axes step by multiples of 64 bytes");
      }
    }
  }
  return absl::OkStatus();
}

std::string EntriesText(const std::vector<SequencerEntry>& entries) {
  std::vector<std::string> parts;
  for (size_t i = 0; i < entries.size(); ++i) {
    parts.push_back(absl::StrCat("Entry ", i, ": { size: ", entries[i].size, ", stride: ", entries[i].stride,
                                 " }", entries[i].label.empty() ? "" : absl::StrCat(" ", entries[i].label)));
  }
  return parts.empty() ? "no entries" : absl::StrJoin(parts, "; ");
}

int64_t AlignUp(int64_t value, int64_t to) { return (value + to - 1) / to * to; }

// Splits T's digits at the coefficients where T' digits of the same axis start or end, so that
// every retained digit can be a whole factor of T.
std::vector<Factor> RefineFactors(const std::vector<Factor>& time, const std::vector<Factor>& kept) {
  std::vector<Factor> out;
  for (const Factor& f : time) {
    if (f.kind != Factor::Kind::kDigit || f.axis.empty() || f.live != f.count) {
      out.push_back(f);
      continue;
    }
    std::set<int64_t> cuts;
    for (const Factor& g : kept) {
      if (g.kind != Factor::Kind::kDigit || g.axis != f.axis) continue;
      for (int64_t b : {g.coef, g.coef * g.count}) {
        if (b > f.coef && b < f.coef * f.count && b % f.coef == 0 && (f.coef * f.count) % b == 0) cuts.insert(b);
      }
    }
    int64_t coef = f.coef;
    for (int64_t cut : cuts) {
      Factor piece = f;
      piece.coef = coef;
      piece.count = piece.live = cut / coef;
      out.push_back(piece);
      coef = cut;
    }
    Factor last = f;
    last.coef = coef;
    last.count = last.live = f.coef * f.count / coef;
    out.push_back(last);
  }
  return out;
}

absl::Status SplitReducedTime(const Mapping& time, const Mapping& retained, AccumulateStage& stage) {
  const std::vector<Factor>& retained_factors = retained.normal_form().factors();
  std::vector<Factor> factors = RefineFactors(time.normal_form().factors(), retained_factors);
  for (const Factor& f : factors) {
    if (f.kind != Factor::Kind::kDigit) {
      return EngineError(kAccumulate, "temporal reduction needs Time made of axis digits; Time ",
                         Bracket(time), " has a part that is not one (", time.normal_form().ToString(), ")");
    }
  }
  if (factors.size() > 16) {
    return EngineError(kAccumulate, "Time ", Bracket(time), " has too many digits to search for the reduced ones");
  }
  const NormalForm want = retained.normal_form();
  for (uint32_t mask = 0; mask < (1u << factors.size()); ++mask) {
    std::vector<Factor> kept;
    for (size_t i = 0; i < factors.size(); ++i) {
      if ((mask & (1u << i)) == 0) kept.push_back(factors[i]);
    }
    if (!(NormalForm(kept).ToMapping().normal_form() == want)) continue;
    stage.time_factors = factors;
    stage.reduced.assign(factors.size(), false);
    int outermost = -1;
    for (size_t i = 0; i < factors.size(); ++i) {
      if (mask & (1u << i)) {
        stage.reduced[i] = true;
        outermost = static_cast<int>(i);
      }
    }
    stage.inner_time = 1;
    for (int i = 0; i < outermost; ++i) {
      if (!stage.reduced[i]) stage.inner_time *= factors[i].count;
    }
    return absl::OkStatus();
  }
  return EngineError(kAccumulate, "OutTime must keep the contraction's Time axes in their order with the ",
                     "reduced axes removed: Time ", Bracket(time), " cannot become ", Bracket(retained),
                     " by removing axes");
}

}  // namespace

const char* AccumulationKindName(AccumulationKind kind) {
  return kind == AccumulationKind::kInterleaved ? "Interleaved" : "Sequential";
}

const char* ReduceOpName(ReduceOp op) { return op == ReduceOp::kAdd ? "Add" : "Max"; }

DType AccumulatorType(DType dtype) { return IsFloat(dtype) ? DType::kF32 : DType::kI32; }

int TreeDepth(DType dtype) {
  switch (WireBits(dtype)) {
    case 4: return 7;
    case 8: return 6;
    default: return 5;
  }
}

std::string AlignStage::Describe() const {
  std::string adapter = absl::StrCat("collect_flits ", collect_flits, ", rows ", rows);
  if (time_broadcast > 1) absl::StrAppend(&adapter, ", time broadcast ", time_broadcast);
  if (collect_flits == 3) {
    absl::StrAppend(&adapter, ", feed_flits ", feed_flits, ", shifts ", shifts, ", shift_stride ", shift_stride);
  }
  return absl::StrCat("align row [", out.row->ToString(), "] time [", out.time.ToString(), "] packet [",
                      out.packet.ToString(), "] with ", trf.text, "\n      stream adapter: ", adapter,
                      "\n      trf sequencer: reg_read_size ", reg_read_size, " B (broadcast x", packet_broadcast,
                      "), base ", trf.base_bytes, ", ", EntriesText(trf_entries));
}

std::string ContractStage::Describe() const {
  return absl::StrCat("contract packet [", out.packet.ToString(), "] -> ", std::string(Name(out.dtype)),
                      ", reduce_op ", ReduceOpName(op), ", tree depth ", depth, " of ", max_depth);
}

std::string AccumulateStage::Describe() const {
  return absl::StrCat("accumulate ", AccumulationKindName(kind), " time [", out.time.ToString(), "] packet [",
                      out.packet.ToString(), "], retained time [", retained_time.normal_form().ToString(),
                      "], inner time ", inner_time, ", buffer ", buffer_cells, " of ", kAccumulatorSlots,
                      " slots");
}

absl::StatusOr<AlignStage> PlanAlign(const StreamShape& in, StreamPosition position, const TrfOperand& trf,
                                     const Mapping& out_time, const Mapping& out_packet) {
  RETURN_IF_ERROR(out_time.status());
  RETURN_IF_ERROR(out_packet.status());
  RETURN_IF_ERROR(in.Full().status());
  RETURN_IF_ERROR(Pair({trf.chip, trf.cluster, trf.slice, trf.row, trf.element}).status());
  if (position != StreamPosition::kCollect) {
    return EngineError(kAdapter, "align takes the Collect Engine's stream, not a stream after ",
                       StreamPositionName(position));
  }
  RETURN_IF_ERROR(CheckDTypes(in.dtype, trf.dtype));
  RETURN_IF_ERROR(CheckSameLevels(in, trf));
  AlignStage stage;
  stage.in = in;
  stage.trf = trf;
  stage.rows = trf.row.size();
  if (stage.rows != 1 && stage.rows != 2 && stage.rows != 4 && stage.rows != 8) {
    return EngineError(kAdapter, "Row count: Row must have 1, 2, 4 or 8 positions, the TRF Row ",
                       Bracket(trf.row), " has ", stage.rows);
  }
  if (ShareDigits(trf.row, in.Full())) {
    return EngineError(kAdapter, "Rows broadcast: every Row receives the same stream packet, so the Row ",
                       Bracket(trf.row), " must not hold axes of the stream ", in.ToString());
  }
  const int64_t mac_elements = kMacWidthBytes * 8 / WireBits(in.dtype);
  if (out_packet.size() != mac_elements) {
    return EngineError(kAdapter, "OutPacket is always 64 bytes (mac_width): ", Bracket(out_packet), " has ",
                       out_packet.size(), " elements of ", std::string(Name(in.dtype)), ", 64 bytes hold ",
                       mac_elements, " (pad it, e.g. [", in.packet.ToString(), " # ", mac_elements, "])");
  }
  ASSIGN_OR_RETURN(Mapping t_outer, DeriveFlitCollection(in, out_time, out_packet, stage));
  RETURN_IF_ERROR(CheckOutTime(in, t_outer, out_time, stage));
  RETURN_IF_ERROR(DeriveTrfSequencer(trf, out_time, out_packet, stage));
  stage.out = in;
  stage.out.row = trf.row;
  stage.out.time = out_time;
  stage.out.packet = out_packet;
  return stage;
}

absl::StatusOr<ContractStage> PlanContract(const AlignStage& aligned, const Mapping& out_packet, ReduceOp op) {
  RETURN_IF_ERROR(out_packet.status());
  const Mapping& packet = aligned.out.packet;
  const int64_t n = out_packet.size();
  if (n > kAccumulatorColumns) {
    return EngineError(kContract, "OutPacket::SIZE must be at most 32, got ", n, " (", Bracket(out_packet), ")");
  }
  if ((n & (n - 1)) != 0) {
    return EngineError(kContract, "OutPacket::SIZE must be a power of two, got ", n, " (", Bracket(out_packet), ")");
  }
  if (op == ReduceOp::kMax && aligned.rows != 1) {
    return EngineError(kContract, "Reduce-max: only supports a single Row (Row 0); Row [",
                       aligned.out.row->ToString(), "] has ", aligned.rows);
  }
  const int max_depth = TreeDepth(aligned.out.dtype);
  const NormalForm want = WithoutPadding(out_packet);
  for (int depth = 0; depth <= max_depth; ++depth) {
    const int64_t group = int64_t{1} << depth;
    if (packet.size() % group != 0) break;
    if (!(WithoutPadding(packet / group) == want)) continue;
    if (packet.size() / group > kAccumulatorColumns) {
      return EngineError(kContract, "Spatial output limit: tree depth ", depth, " leaves ", packet.size() / group,
                         " elements per Row; the Reducer outputs at most 32");
    }
    ContractStage stage;
    stage.depth = depth;
    stage.max_depth = max_depth;
    stage.op = op;
    stage.out = aligned.out;
    stage.out.dtype = AccumulatorType(aligned.out.dtype);
    stage.out.packet = out_packet;
    return stage;
  }
  return EngineError(kContract, "OutPacket ", Bracket(out_packet), " is not a valid contraction of Packet ",
                     Bracket(packet), ": the tree sums the innermost 2^depth elements (depth 0..", max_depth,
                     ") and leaves the outer part [Packet / 2^depth], padding removed");
}

absl::StatusOr<AccumulateStage> PlanAccumulate(const ContractStage& contracted, const Mapping& out_time,
                                               const Mapping& out_packet, AccumulationKind kind) {
  RETURN_IF_ERROR(out_time.status());
  RETURN_IF_ERROR(out_packet.status());
  const StreamShape& in = contracted.out;
  const Mapping& row = *in.row;
  const Mapping& packet = in.packet;
  const std::string mode = AccumulationKindName(kind);
  Mapping expected_packet;
  Mapping time_tail;  // what OutTime appends after the retained Time
  if (kind == AccumulationKind::kInterleaved) {
    expected_packet = row.size() == kReducerRows ? row : row.pad(kReducerRows);
    time_tail = packet;
  } else {
    Mapping padded = packet.size() % 8 == 0 ? packet : packet.pad(AlignUp(packet.size(), 8));
    expected_packet = padded % 8;
    time_tail = Pair({row, padded / 8});
  }
  ASSIGN_OR_RETURN(bool packet_ok, Equivalent(out_packet, expected_packet));
  if (!packet_ok) {
    return EngineError(kAccumulate, mode, ": OutPacket mismatch. Expected: ", Bracket(expected_packet),
                       ", got: ", Bracket(out_packet));
  }
  const int64_t tail = time_tail.size();
  bool tail_ok = out_time.size() % tail == 0;
  if (tail_ok) {
    ASSIGN_OR_RETURN(tail_ok, Equivalent(out_time % tail, time_tail));
  }
  if (!tail_ok) {
    return EngineError(kAccumulate, mode, ": OutTime mismatch. OutTime must end with ", Bracket(time_tail),
                       kind == AccumulationKind::kInterleaved ? " (the contracted Packet)" : " ([Row, Packet outer])",
                       ", got ", Bracket(out_time));
  }
  AccumulateStage stage;
  stage.in = in;
  stage.kind = kind;
  stage.op = contracted.op;
  stage.retained_time = out_time / tail;
  RETURN_IF_ERROR(SplitReducedTime(in.time, stage.retained_time, stage));
  if (kind == AccumulationKind::kInterleaved) {
    stage.buffer_cells = kReducerRows * stage.inner_time * packet.size();
    if (stage.inner_time * packet.size() > kAccumulatorSlots / kReducerRows) {
      return EngineError(kAccumulate, "Interleaved buffer constraint: the OutTime axes inner to the outermost ",
                         "reduced axis hold ", stage.inner_time * packet.size(), " positions; at most 128 ",
                         "(align_up(Row, 8) * inner = ", stage.buffer_cells, " > 1024 slots)");
    }
  } else {
    stage.buffer_cells = row.size() * stage.inner_time * AlignUp(packet.size(), kAccumulatorColumns);
    if (stage.buffer_cells > kAccumulatorSlots) {
      return EngineError(kAccumulate, "Sequential buffer constraint: Row ", row.size(), " * inner time ",
                         stage.inner_time, " * align_up(packet, 32) ", AlignUp(packet.size(), kAccumulatorColumns),
                         " = ", stage.buffer_cells, " exceeds the 1024 accumulator slots (the OutTime axes inner ",
                         "to the outermost reduced axis may hold at most 32 positions)");
    }
  }
  stage.out = in;
  stage.out.row.reset();
  stage.out.time = out_time;
  stage.out.packet = out_packet;
  return stage;
}

int64_t RetainedTimePosition(const AccumulateStage& stage, int64_t t) {
  int64_t rest = t, position = 0, weight = 1;
  for (size_t i = 0; i < stage.time_factors.size(); ++i) {
    const Factor& f = stage.time_factors[i];
    const int64_t digit = rest % f.count;
    rest /= f.count;
    if (digit >= f.live) return -1;
    if (stage.reduced[i]) continue;
    position += digit * weight;
    weight *= f.count;
  }
  return position;
}

std::vector<int64_t> RetainedTimeTable(const AccumulateStage& stage, const Mapping& time) {
  std::vector<int64_t> table(time.size());
  for (int64_t t = 0; t < time.size(); ++t) table[t] = time.map(t).live() ? RetainedTimePosition(stage, t) : -1;
  return table;
}

std::vector<int64_t> TreeGroupTargets(const Mapping& packet, const ContractStage& contract) {
  const Mapping groups = packet / (int64_t{1} << contract.depth);
  const Mapping& out_packet = contract.out.packet;
  const std::vector<std::string> axes = out_packet.axis_names();
  std::vector<int64_t> target(groups.size(), -1);
  for (int64_t g = 0; g < groups.size(); ++g) {
    Cell cell = groups.map(g);
    if (!cell.live()) continue;
    Index wanted;
    for (const auto& [axis, value] : cell.index.coords()) {
      if (std::binary_search(axes.begin(), axes.end(), axis)) wanted.Set(axis, value);
    }
    if (std::optional<int64_t> q = out_packet.inverse(wanted)) target[g] = *q;
  }
  return target;
}

}  // namespace visa
