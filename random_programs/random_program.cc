// The random-program generator: a seed's choices become a list of engine calls with mapping
// texts (drawn, then printed as the reproducer), which a runner replays through the Context API.
#include "random_programs/random_program.h"

#include <algorithm>
#include <optional>
#include <random>
#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "dsl/status_macros.h"
#include "dsl/stream_order.h"
#include "dsl/transpose_engine.h"
#include "runtime/host_tensor.h"
#include "runtime/tensor_unit.h"
#include "runtime/tier.h"
#include "runtime/transfer.h"
#include "random_programs/random_indirect.h"
#include "random_programs/random_vector_chain.h"

namespace visa::samples {
namespace {

// DM and HBM addresses of the program's tensors (every slice has 512 KiB of DM).
constexpr int64_t kRelayoutAddress = 0x20000;  // the input moved to another Element
constexpr int64_t kSpmAddress = 0x1000;        // the output copied to SPM
constexpr int64_t kWeightsDmAddress = 0x30000;
constexpr int64_t kTwinAddress = 0x40000;  // the second tensor of an interleaved fetch
constexpr int64_t kCommitAddress = 0x60000;  // outputs up to 64 KiB, below the SPM
constexpr int64_t kLargeCommitAddress = 0x50000;  // larger ones (over the SPM, which they then leave alone)
constexpr int64_t kWeightsHbmAddress = int64_t{1} << 28;
constexpr int64_t kRelayoutHbmAddress = int64_t{1} << 29;
constexpr int64_t kOutputHbmAddress = int64_t{1} << 30;
constexpr uint64_t kInputSeed = 42, kWeightsSeed = 43, kBackgroundSeed = 44;
// The census of draws behind DrawnKinds under required features.
constexpr uint64_t kCensusFirstSeed = uint64_t{1} << 62;
constexpr uint64_t kCensusDraws = 4096;

// ---------------------------------------------------------------------------------------------
// Mapping text, built term by term with the number of positions each term spans.

struct Term {
  std::string text;
  int64_t size = 1;
};

// Brackets a compound term so that an operator applies to all of it.
std::string Group(const std::string& text) {
  return text.find_first_of(",#=$") == std::string::npos ? text : absl::StrCat("[", text, "]");
}

Term Div(const Term& t, int64_t n) { return n == 1 ? t : Term{absl::StrCat(Group(t.text), " / ", n), t.size / n}; }
Term Mod(const Term& t, int64_t n) { return n == t.size ? t : Term{absl::StrCat(Group(t.text), " % ", n), n}; }
Term Pad(const Term& t, int64_t n) { return n == t.size ? t : Term{absl::StrCat(Group(t.text), " # ", n), n}; }

std::string Join(const std::vector<Term>& terms) {
  if (terms.empty()) return "1";
  std::vector<std::string> texts;
  for (const Term& t : terms) texts.push_back(t.text);
  return absl::StrJoin(texts, ", ");
}

// A digit of the slice axis S = 256: the `size` values of S at `stride` (broadcast tiles are bare
// numbers, which need no axis of their own).
Term SliceDigit(int64_t stride, int64_t size) {
  Term s{"S", 256};
  return Mod(Div(s, stride), size);
}

// ---------------------------------------------------------------------------------------------
// The drawn program: every engine call with its mapping texts.

enum class FetchKind { kPlain, kMasked, kZeroPoint, kTable };
enum class Finish { kCommit, kToTrf, kToVrf };

struct FetchCall {
  FetchKind kind = FetchKind::kPlain;
  DType out = DType::kI8;
  int32_t zero_point = 0;       // kZeroPoint (the interleaved twin uses -zero_point)
  std::vector<uint32_t> table;  // kTable: output bits indexed by input bits
  std::string time, packet;
};

// One engine call between the fetch and the final call.
struct StageCall {
  StreamCall call = StreamCall::kCollect;  // kSwitch, kCollect, kAlign, kContract, kAccumulate, kCast, kTranspose
  std::string first, second;               // (time, packet); switch: (slice, time); contract: packet
  DType type = DType::kI8;                 // cast
  SwitchConfig config;                     // switch
  AccumulationKind kind = AccumulationKind::kInterleaved;
  ReduceOp op = ReduceOp::kAdd;  // contract
};

StageCall Call(StreamCall call, std::string first = "", std::string second = "") {
  StageCall c;
  c.call = call;
  c.first = std::move(first);
  c.second = std::move(second);
  return c;
}

struct PipelineCall {
  bool sub = false;
  bool interleave = false;  // begin_interleaved(I, x, a DM copy of x)
  FetchCall fetch;
  std::vector<StageCall> stages;
  Finish finish = Finish::kCommit;
  std::string row, element;         // to_trf's Row; the Element written
  TrfAddress trf_address = TrfAddress::kFull;
  std::optional<int> bitmap_slice;  // commit into slices {0, this, 3} only
  int64_t commit_address = kCommitAddress;
  // A Vector Engine chain after stages[vector_after] (collect or accumulate), on the stream
  // `vector_entry` describes (random_programs/random_vector_chain.h).
  std::optional<VectorChainDraw> vector;
  std::optional<VectorEntry> vector_entry;
  size_t vector_after = 0;
};

// A random host tensor placed in DM through HBM.
struct DmInput {
  DType dtype = DType::kI8;
  std::string slice, element;
  uint64_t seed = kInputSeed;
  int64_t hbm_address = 0, dm_address = 0;
};

struct ProgramCalls {
  std::string axes;
  DmInput input;
  std::optional<DmInput> weights;            // contraction: the TRF operand, loaded by weights_load
  std::optional<PipelineCall> weights_load;  // sub context, ends in to_trf
  std::optional<std::string> relayout;       // DMA before: the input moved to this DM Element
  std::optional<std::string> hbm_relayout;   // DMA before: the input's HBM copy moved to this Element
  PipelineCall main;
  std::optional<std::string> to_hbm;  // DMA after: the output moved to HBM with this Element
  std::optional<std::string> to_spm;  // DMA after: the output copied to SPM with this Element
};

// ---------------------------------------------------------------------------------------------
// The stream as the generator tracks it between calls: Time term by term, the packet's
// meaningful part and its padded size.

struct Layout {
  DType type = DType::kI8;
  std::string slice;
  bool slice_holds_s = true;  // no digit of S moved to Time (the output can name S in HBM)
  int64_t slice_axis = 0;     // Slice is [S] or [S # 256] with S of this size (no switch ran); else 0
  std::vector<Term> time;
  Term live;
  int64_t packet = 0;
  // Transpose input with several packets per column: time.back() and `live` split `columns`.
  std::optional<Term> columns;

  std::string Time() const { return Join(time); }
  std::string Packet() const { return Pad(live, packet).text; }
  std::string Element() const {
    std::vector<Term> terms = time;
    terms.push_back(Pad(live, packet));
    return Join(terms);
  }
};

// Positions of the Element a layout commits (Time and the padded packet).
int64_t ElementSize(const Layout& layout) {
  int64_t size = layout.packet;
  for (const Term& t : layout.time) size *= t.size;
  return size;
}

// The Transpose Engine's table row for `type`; nullopt for a type it does not take.
std::optional<TransposeLimits> TransposeRow(DType type) {
  absl::StatusOr<TransposeLimits> limits = TransposeLimitsFor(type);
  if (!limits.ok()) return std::nullopt;
  return *limits;
}

class Drawer {
 public:
  Drawer(uint64_t seed, const DrawOptions& options) : rng_(seed), options_(options) {}

  ProgramCalls Draw() { return Wants("contraction", 0.35) ? DrawContraction() : DrawMovement(); }

 private:
  // Draws use only the engine's raw output (std::mt19937_64 is the same everywhere; the standard
  // distributions are not), so a seed reproduces on every host and standard library.
  size_t Below(size_t n) { return static_cast<size_t>(rng_() % n); }
  template <typename T>
  T Pick(std::initializer_list<T> options) {
    return *(options.begin() + Below(options.size()));
  }
  template <typename T>
  T PickFrom(const std::vector<T>& options) {
    return options[Below(options.size())];
  }
  bool Coin(double p) { return static_cast<double>(rng_() >> 11) * 0x1.0p-53 < p; }
  bool Required(const std::string& feature) const {
    return std::find(options_.require.begin(), options_.require.end(), feature) != options_.require.end();
  }
  // A coin that a required feature always wins (the coin is still drawn, so the rest of the
  // program does not depend on which features were required).
  bool Wants(const std::string& feature, double p) { return Coin(p) || Required(feature); }

  // ----- Shared pieces.

  // A lookup table of `type` (the Fetch Adapter's table keeps the type). Float entries stay
  // finite so that the contraction's sums never meet NaN, whose payload backends may not keep.
  std::vector<uint32_t> Table(DType type) {
    std::vector<uint32_t> table(size_t{1} << Bits(type));
    const uint32_t mask = (uint32_t{1} << Bits(type)) - 1;
    for (uint32_t& v : table) {
      v = static_cast<uint32_t>(rng_()) & mask;
      if (type == DType::kF8E4M3 && (v & 0x7fu) == 0x7fu) v &= ~1u;  // S.1111.111 is NaN
      if (type == DType::kF8E5M2) v &= ~0x40u;                       // exponent below all-ones
    }
    return table;
  }

  // Slices: 1, 2 or 4 padded to the cluster, or all 256 (a switch needs all of them).
  int64_t DrawSlices(bool full) { return full ? 256 : Pick<int64_t>({1, 2, 4, 256}); }
  static std::string SliceText(int64_t slices) { return slices == 256 ? "S" : "S # 256"; }

  // The Switch Engine: a topology for Slice S (256) and the stream's Time, applied to `layout`.
  StageCall DrawSwitch(Layout& layout, bool permutation_only);
  StageCall SwitchTranspose(Layout& layout);
  StageCall SwitchBroadcast(Layout& layout);
  StageCall SwitchInterTranspose(Layout& layout);
  StageCall SwitchCustom(Layout& layout);

  StageCall Collect(Layout& layout);
  StageCall Cast(Layout& layout, DType to);
  std::optional<StageCall> Transpose(Layout& layout);
  DType CastTarget(DType from) {
    return from == DType::kI32 ? Pick({DType::kI8, DType::kI16, DType::kI4})
                               : Pick({DType::kBF16, DType::kF16, DType::kF8E4M3, DType::kF8E5M2});
  }
  // Sometimes a Vector Engine chain on the i32 / f32 stream just past collect or accumulate;
  // `same_slice`: the stream's Slice is the input's (a VRF tensor can then be loaded on it).
  void MaybeVector(PipelineCall& pipe, Layout& layout, const char* after, bool same_slice);
  // The optional cast and transpose, then the final call and the DMA after.
  void DrawTail(ProgramCalls& p, PipelineCall& pipe, Layout& layout, std::optional<DType> cast_to, bool transpose);

  ProgramCalls DrawMovement();
  ProgramCalls DrawContraction();

  std::mt19937_64 rng_;
  const DrawOptions& options_;
};

// ----- Switch topologies (manual, "Switch Engine"; the input Slice S reads as [slice2, slice1, slice0]).

StageCall Drawer::DrawSwitch(Layout& layout, bool permutation_only) {
  if (permutation_only) return SwitchTranspose(layout);
  switch (Pick({0, 1, 1, 2, 3})) {
    case 0: return SwitchTranspose(layout);
    case 1: return SwitchBroadcast(layout);
    case 2: return SwitchInterTranspose(layout);
    default: return SwitchCustom(layout);
  }
}

// A switch's call once its output Slice is drawn: the stream takes that Slice, and the call names
// it and the Time. `holds_s`: whether the Slice still holds the input's S digits (a column split
// over them survives only then).
StageCall FinishSwitch(StageCall c, Layout& layout, const std::vector<Term>& slice, bool holds_s) {
  layout.slice = Join(slice);
  layout.slice_holds_s = holds_s;
  layout.slice_axis = 0;
  if (!holds_s) layout.columns.reset();
  c.first = layout.slice;
  c.second = layout.Time();
  return c;
}

// Transpose{slice1, slice0}: Slice [slice2, slice0, slice1], Time unchanged.
StageCall Drawer::SwitchTranspose(Layout& layout) {
  const int64_t s1 = Pick<int64_t>({2, 4, 8, 16, 32}), s0 = Pick<int64_t>({2, 4, 8});
  StageCall c = Call(StreamCall::kSwitch);
  c.config = SwitchConfig::Transpose(s1, s0);
  std::vector<Term> slice;
  if (s1 * s0 < 256) slice.push_back(SliceDigit(s1 * s0, 256 / (s1 * s0)));
  slice.push_back(SliceDigit(1, s0));
  slice.push_back(SliceDigit(s0, s1));
  return FinishSwitch(c, layout, slice, layout.slice_holds_s);
}

// Broadcast1, Broadcast01 and TransposedBroadcast1: some slice digits move innermost into Time
// and broadcast tiles take their place (kept small: Time grows by the tile).
StageCall Drawer::SwitchBroadcast(Layout& layout) {
  const int64_t s1 = Pick<int64_t>({2, 4, 8}), s0 = Pick<int64_t>({1, 2, 4});
  const int64_t outer = 256 / (s1 * s0);
  StageCall c = Call(StreamCall::kSwitch);
  std::vector<Term> slice = {SliceDigit(s1 * s0, outer)};
  const Term d1 = SliceDigit(s0, s1), d0 = SliceDigit(1, s0);
  switch (Pick({0, 1, 2})) {
    case 0:  // Broadcast1: [slice2, tile, slice0] / [Time, slice1]
      c.config = SwitchConfig::Broadcast1(s1, s0);
      slice.push_back({absl::StrCat(s1), s1});
      if (s0 > 1) slice.push_back(d0);
      layout.time.push_back(d1);
      break;
    case 1: {  // Broadcast01: [slice2, tile] / [time1, slice1, time0, slice0]
      const Term inner = layout.time.back();
      std::vector<int64_t> splits = {1};
      for (int64_t t0 : {2, 4, 8}) {
        if (inner.size % t0 == 0 && t0 < inner.size) splits.push_back(t0);
      }
      const int64_t t0 = PickFrom(splits);
      c.config = SwitchConfig::Broadcast01(s1, s0, t0);
      slice.push_back({absl::StrCat(s1 * s0), s1 * s0});
      if (t0 > 1) {
        layout.time.back() = Div(inner, t0);
        layout.time.push_back(d1);
        layout.time.push_back(Mod(inner, t0));
      } else {
        layout.time.push_back(d1);
      }
      if (s0 > 1) layout.time.push_back(d0);
      break;
    }
    default:  // TransposedBroadcast1: [slice2, tile, slice1] / [Time, slice0]
      if (s0 == 1) return SwitchTranspose(layout);
      c.config = SwitchConfig::TransposedBroadcast1(s1, s0);
      slice.push_back({absl::StrCat(s0), s0});
      slice.push_back(d1);
      layout.time.push_back(d0);
      break;
  }
  return FinishSwitch(c, layout, slice, false);
}

// InterTranspose{slice1, slice0, time0}: Time [time2, time1, time0] and Slice [slice2, slice1,
// slice0] become Slice [slice2, time1, slice0] and Time [time2, time0, slice1].
StageCall Drawer::SwitchInterTranspose(Layout& layout) {
  const Term inner = layout.time.back();
  std::vector<std::pair<int64_t, int64_t>> splits;  // (slice1 = time1, time0)
  for (int64_t s1 : {2, 4, 8}) {
    for (int64_t t0 : {1, 2}) {
      if (inner.size % (s1 * t0) == 0) splits.push_back({s1, t0});
    }
  }
  if (splits.empty()) return SwitchTranspose(layout);
  const auto [s1, t0] = PickFrom(splits);
  const int64_t s0 = Pick<int64_t>({1, 2, 16});
  StageCall c = Call(StreamCall::kSwitch);
  c.config = SwitchConfig::InterTranspose(s1, s0, t0);
  const Term time1 = Mod(Div(inner, t0), s1);
  std::vector<Term> slice;
  if (s1 * s0 < 256) slice.push_back(SliceDigit(s1 * s0, 256 / (s1 * s0)));
  slice.push_back(time1);
  if (s0 > 1) slice.push_back(SliceDigit(1, s0));
  layout.time.pop_back();
  if (inner.size > s1 * t0) layout.time.push_back(Div(inner, s1 * t0));
  if (t0 > 1) layout.time.push_back(Mod(inner, t0));
  layout.time.push_back(SliceDigit(s0, s1));
  return FinishSwitch(c, layout, slice, false);
}

// CustomBroadcast: S split into digits, permuted, and some moved (in order) innermost into Time
// with broadcast tiles in their place. The ring is the group of slices below the outer digits
// that stay where they are.
StageCall Drawer::SwitchCustom(Layout& layout) {
  const std::vector<int64_t> sizes = Pick<std::vector<int64_t>>({{16, 16}, {4, 8, 8}, {2, 8, 4, 4}, {4, 4, 4, 4}});
  std::vector<Term> digits;  // outer first
  int64_t stride = 256;
  for (int64_t size : sizes) {
    stride /= size;
    digits.push_back(SliceDigit(stride, size));
  }
  std::vector<int> order(digits.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = static_cast<int>(i);
  for (size_t i = order.size() - 1; i > 0; --i) std::swap(order[i], order[Below(i + 1)]);  // Fisher-Yates
  std::vector<bool> moved(digits.size(), false);
  if (Coin(0.5)) moved[Below(digits.size())] = true;
  std::vector<Term> slice;
  int64_t kept_outer = 1;
  bool in_place = true;
  for (size_t i = 0; i < order.size(); ++i) {
    const int d = order[i];
    in_place = in_place && d == static_cast<int>(i) && !moved[d];
    if (in_place) kept_outer *= sizes[d];
    slice.push_back(moved[d] ? Term{absl::StrCat(sizes[d]), sizes[d]} : digits[d]);
  }
  for (size_t d = 0; d < digits.size(); ++d) {
    if (moved[d]) layout.time.push_back(digits[d]);
  }
  StageCall c = Call(StreamCall::kSwitch);
  c.config = SwitchConfig::CustomBroadcast(256 / kept_outer);
  return FinishSwitch(c, layout, slice, std::find(moved.begin(), moved.end(), true) == moved.end());
}

// ----- Collect, cast, transpose.

// Collect: one flit per step; a longer packet's outer flits join Time.
StageCall Drawer::Collect(Layout& layout) {
  const int64_t flit = FlitElements(layout.type);
  if (layout.packet > flit) {
    const int64_t whole = (layout.packet + flit - 1) / flit * flit;
    const Term packet = Pad(Pad(layout.live, layout.packet), whole);
    layout.time.push_back(Div(packet, flit));
    layout.live = Mod(packet, flit);
    layout.columns.reset();
  }
  layout.packet = flit;
  return Call(StreamCall::kCollect, layout.Time(), layout.Packet());
}

// Cast: the one-flit packet narrowed and padded back to a flit of `to`.
StageCall Drawer::Cast(Layout& layout, DType to) {
  layout.type = to;
  layout.packet = FlitElements(to);
  StageCall c = Call(StreamCall::kCast, "", layout.Packet());
  c.type = to;
  return c;
}

// Transpose: rows are the innermost Time term (or the one outside the column split), columns the
// packet's meaningful elements; nullopt when the stream does not have that form.
std::optional<StageCall> Drawer::Transpose(Layout& layout) {
  std::optional<TransposeLimits> shape = TransposeRow(layout.type);
  if (!shape) return std::nullopt;
  auto valid_cols = [&](int64_t cols) {
    return std::find(shape->valid_in_cols.begin(), shape->valid_in_cols.end(), cols) != shape->valid_in_cols.end();
  };
  Term rows;
  std::vector<Term> out_time = layout.time;
  if (layout.columns && layout.time.size() >= 2 && valid_cols(layout.time.back().size * shape->elements_per_packet)) {
    rows = layout.time[layout.time.size() - 2];
    out_time.resize(out_time.size() - 2);
    out_time.push_back(*layout.columns);
  } else if (!layout.time.empty() && layout.live.size <= shape->elements_per_packet) {
    rows = layout.time.back();
    out_time.pop_back();
    out_time.push_back(layout.live);
  } else {
    return std::nullopt;
  }
  if (rows.size > shape->max_in_rows) return std::nullopt;
  layout.time = out_time;
  layout.live = rows;
  layout.packet = shape->output_alignment;
  layout.columns.reset();
  return Call(StreamCall::kTranspose, layout.Time(), layout.Packet());
}

void Drawer::MaybeVector(PipelineCall& pipe, Layout& layout, const char* after, bool same_slice) {
  const bool wanted = Wants("vector", 0.5);
  if (!wanted || pipe.sub || (layout.type != DType::kI32 && layout.type != DType::kF32) || layout.packet != 8) return;
  VectorEntry entry;
  entry.type = layout.type;
  for (const Term& t : layout.time) entry.time.push_back(t.text);
  entry.packet = layout.Packet();
  entry.live = layout.live.text;
  entry.live_size = layout.live.size;
  entry.slice = layout.slice;
  entry.slice_axis = layout.slice_axis;
  std::set<std::string> axes;  // an axis of a term of one value names nothing the stream holds
  for (const Term& t : layout.time) {
    if (t.size == 1) continue;
    for (char ch : t.text) {
      if (std::isupper(static_cast<unsigned char>(ch))) axes.insert(std::string(1, ch));
    }
  }
  if (layout.live.size > 1) {
    for (char ch : layout.live.text) {
      if (std::isupper(static_cast<unsigned char>(ch))) axes.insert(std::string(1, ch));
    }
  }
  entry.toggle_axes.assign(axes.begin(), axes.end());
  entry.interleaved = pipe.interleave && !layout.time.empty() && layout.time.front().text == "I";
  // Two VRF tensors (the operand and the ids) of the stream's Time x Packet share the 8 KiB.
  entry.vrf_possible = same_slice && 4 * ElementSize(layout) <= kVrfBytesPerSlice / 2;
  entry.after = after;
  pipe.vector = DrawVectorChain(rng_, entry);
  pipe.vector_entry = entry;
  pipe.vector_after = pipe.stages.size() - 1;
  if (pipe.vector->pair) layout.time.erase(layout.time.begin());  // the zip merged the interleave axis I
  if (pipe.vector->reduced_term) layout.time.pop_back();          // the intra-slice reduce took it
  if (pipe.vector->out_slice) {                                   // the inter-slice reduce combined S
    layout.slice = *pipe.vector->out_slice;
    layout.slice_holds_s = false;
    layout.slice_axis = 0;
  }
}

void Drawer::DrawTail(ProgramCalls& p, PipelineCall& pipe, Layout& layout, std::optional<DType> cast_to,
                      bool transpose) {
  if (cast_to && (layout.type == DType::kI32 || layout.type == DType::kF32)) {
    pipe.stages.push_back(Cast(layout, *cast_to));
  }
  if (transpose) {
    // A transpose pads every row to the engine's output alignment: behind a switch that moved
    // slice digits into Time, that can outgrow the DM left above the output's address (seeds 5241,
    // 8150 of the 10,000-program run); such a stream is committed as it is.
    const Layout before = layout;
    std::optional<StageCall> t = Transpose(layout);
    if (t && StorageBytes(layout.type, ElementSize(layout)) <= kDmBytesPerSlice - kLargeCommitAddress) {
      pipe.stages.push_back(*t);
    } else {
      layout = before;
    }
  }
  pipe.element = layout.Element();
  // Behind a switch that moved slice digits into Time the output can outgrow the 64 KiB between
  // the commit address and the SPM (seed 5241 of the 10,000-program run): it goes lower then.
  const int64_t output_bytes = StorageBytes(layout.type, ElementSize(layout));
  if (output_bytes > kSpmOffsetInDm - kCommitAddress) pipe.commit_address = kLargeCommitAddress;
  if (pipe.sub) {
    pipe.finish = (layout.type == DType::kI32 || layout.type == DType::kF32) ? Finish::kToVrf : Finish::kToTrf;
    pipe.row = "1";
    return;
  }
  const bool bitmap = Wants("bitmap", 0.15);
  const int bitmap_slice = static_cast<int>(rng_() % 256);
  if (bitmap) pipe.bitmap_slice = bitmap_slice;
  if (Wants("dma", 0.3) && layout.slice_holds_s) {
    // SPM is 64 KiB a slice: larger outputs go to HBM.
    const bool fits_spm = output_bytes <= kSpmBytesPerSlice / 2 && pipe.commit_address == kCommitAddress;
    if (Coin(0.4) && fits_spm) {
      p.to_spm = pipe.element;
    } else {
      p.to_hbm = absl::StrCat("S, ", pipe.element);
    }
  }
}

// ----- The movement chain.

ProgramCalls Drawer::DrawMovement() {
  ProgramCalls p;
  const bool want_switch = Wants("switch", 0.35);
  const bool interleave = Wants("interleave", 0.2);
  const bool sub = Wants("sub", 0.15);
  const bool time_swap = Coin(0.3);
  const bool split_time = Coin(0.2);
  const bool dma_before = Wants("dma", 0.3);
  DType in = Pick({DType::kI8, DType::kI8, DType::kI4, DType::kI16, DType::kI32, DType::kBF16, DType::kF16,
                   DType::kF32, DType::kF8E4M3, DType::kF8E5M2});
  // A required adapter picks a type that offers it (zero points: the integers; tables: 8 bits
  // or less), so that a --features run draws what it asks for instead of filtering it out.
  if (Required("zero_point") && in != DType::kI8 && in != DType::kI4) in = Pick({DType::kI8, DType::kI4});
  if (Required("zero_point") && sub) in = DType::kI8;
  if (Required("table") && !Required("zero_point") && Bits(in) > 8) {
    in = Pick({DType::kI8, DType::kI4, DType::kF8E4M3, DType::kF8E5M2});
  }

  // The fetch: a conversion or an adapter stage the Fetch Adapter offers for `in` (its table
  // keeps the type and is main-context only; zero points widen to i32 here, the staging types
  // i5 / i9 being the contraction's).
  PipelineCall& pipe = p.main;
  pipe.sub = sub;
  pipe.interleave = interleave;
  FetchCall& fetch = pipe.fetch;
  fetch.out = in;
  std::vector<std::pair<FetchKind, DType>> options = {{FetchKind::kPlain, in}, {FetchKind::kMasked, in}};
  switch (in) {
    case DType::kI8:
    case DType::kI4:
      // (Not i4 to i32 in the sub context: 16 i4 elements, its 8-byte DM read, widen past a flit.)
      if (!(sub && in == DType::kI4)) {
        options.push_back({FetchKind::kPlain, DType::kI32});
        options.push_back({FetchKind::kZeroPoint, DType::kI32});
      }
      if (!sub) options.push_back({FetchKind::kTable, in});
      break;
    case DType::kI16: options.push_back({FetchKind::kPlain, DType::kI32}); break;
    case DType::kBF16:
    case DType::kF16: options.push_back({FetchKind::kPlain, DType::kF32}); break;
    case DType::kF8E4M3:
    case DType::kF8E5M2:
      options.push_back({FetchKind::kPlain, DType::kF32});
      if (!sub) options.push_back({FetchKind::kTable, in});
      break;
    case DType::kF32: options.push_back({FetchKind::kPlain, DType::kBF16}); break;
    default: break;
  }
  std::tie(fetch.kind, fetch.out) = PickFrom(options);
  for (const auto& [kind, out] : options) {  // a required adapter wins when `in` offers it
    if ((kind == FetchKind::kTable && Required("table")) || (kind == FetchKind::kMasked && Required("masked")) ||
        (kind == FetchKind::kZeroPoint && Required("zero_point"))) {
      fetch.kind = kind;
      fetch.out = out;
    }
  }
  if (fetch.kind == FetchKind::kTable) fetch.table = Table(in);
  if (fetch.kind == FetchKind::kZeroPoint) fetch.zero_point = 5;
  // The sub context has no Cast or Transpose Engine on its way to a register file or commit.
  const bool cast = (fetch.out == DType::kI32 || fetch.out == DType::kF32) && Wants("cast", 0.6) && !sub;
  const DType final_type = cast ? CastTarget(fetch.out) : fetch.out;
  const bool want_transpose = Wants("transpose", 0.5) && !sub;

  // Sizes. A transpose needs its rows (the innermost time axis) and columns (C) within the
  // engine's table, C either inside one packet or split over 2 or 4 packets per column.
  int64_t a = Pick<int64_t>({1, 2, 3, 4}), b = Pick<int64_t>({1, 2, 5, 8});
  int64_t c = Pick<int64_t>({2, 3, 4, 8, 16, 32, 64});
  if (sub) {
    // A register file holds 8 KiB a slice (VRF, TRF row): Time (up to 2 x 2 x 2, times 32 when a
    // switch moves slice digits into it) times one 32-byte flit stays within that.
    a = std::min<int64_t>(a, 2);
    b = std::min<int64_t>(b, 2);
    c = std::min<int64_t>(c, 8);
  }
  int64_t columns_split = 0;  // C / e packets per column, each packet C % e
  std::optional<TransposeLimits> shape = TransposeRow(final_type);
  if (want_transpose && shape) {
    const int64_t e = shape->elements_per_packet;
    a = std::min(a, shape->max_in_rows);
    b = std::min(b, shape->max_in_rows);
    if (e <= FlitElements(fetch.out) && Coin(0.4)) {
      columns_split = Pick<int64_t>({2, 4});
      if (e * columns_split > shape->valid_in_cols.back()) columns_split = 2;
      c = e * columns_split;
    } else {
      c = std::min(c, std::min(e, FlitElements(fetch.out)));
    }
  }
  const int64_t slices = DrawSlices(want_switch);
  p.axes = absl::StrCat("A = ", a, ", B = ", b, ", C = ", c, ", S = ", slices, ", I = 2");
  std::vector<Term> outer = {{"A", a}, {"B", b}};
  if (Coin(0.5)) std::swap(outer[0], outer[1]);
  // The column is padded to whole 8-byte units: the DMA moves that place the input write DM in
  // 8-byte packets (manual, "DMA Engine" > Alignment Constraints), and a relayout's packet is one
  // column.
  const int64_t unit = 64 / Bits(in);
  const int64_t cpad = (c + Pick<int64_t>({0, 0, 1, 3, 8}) + unit - 1) / unit * unit;
  const Term column{"C", c};
  p.input = {in, SliceText(slices), Join({outer[0], outer[1], Pad(column, cpad)}), kInputSeed, 0, 0};
  if (dma_before) {
    if (Coin(0.5)) {
      p.relayout = Join({outer[1], outer[0], Pad(column, cpad)});
    } else {  // the slice axis moved between the others in HBM; the packet stays C # cpad
      p.hbm_relayout = Join({outer[1], {"S", slices}, outer[0], Pad(column, cpad)});
    }
  }

  Layout layout;
  layout.type = fetch.out;
  layout.slice = SliceText(slices);
  layout.slice_axis = slices;
  if (interleave) layout.time.push_back({"I", 2});
  const Term first = time_swap ? outer[1] : outer[0], second = time_swap ? outer[0] : outer[1];
  if (split_time && second.size % 2 == 0 && second.size > 2) {
    // The inner axis wraps around the outer one: [B / 2, A, B % 2].
    layout.time.push_back(Div(second, 2));
    layout.time.push_back(first);
    layout.time.push_back(Mod(second, 2));
  } else {
    layout.time.push_back(first);
    layout.time.push_back(second);
  }
  if (columns_split > 0) {
    const int64_t e = c / columns_split;
    layout.time.push_back(Div(column, e));
    layout.live = Mod(column, e);
    layout.packet = e;
    layout.columns = column;
  } else {
    // The packet: C padded to whole 8-byte units of the fetched type, sometimes twice that when
    // it stays within a flit (a flit of nothing but padding cannot be committed). The sub
    // context reads DM 8 bytes at a time: there the packet is whole 8-byte units of the DM type
    // as well.
    const int64_t unit = sub ? std::max(64 / WireBits(fetch.out), 64 / WireBits(in)) : 64 / WireBits(fetch.out);
    layout.live = column;
    layout.packet = (c + unit - 1) / unit * unit;
    if (Coin(0.3) && 2 * layout.packet <= FlitElements(fetch.out)) layout.packet *= 2;
  }
  fetch.time = layout.Time();
  fetch.packet = layout.Packet();

  if (want_switch && slices == 256) pipe.stages.push_back(DrawSwitch(layout, false));
  pipe.stages.push_back(Collect(layout));
  MaybeVector(pipe, layout, "collect", !want_switch || slices != 256);
  DrawTail(p, pipe, layout, cast ? std::optional<DType>(final_type) : std::nullopt, want_transpose);
  return p;
}

// ----- The contraction chain (manual, "Contraction Engine", "Aligner", "Reducer").

ProgramCalls Drawer::DrawContraction() {
  ProgramCalls p;
  // The operand type: the DM type and the main fetch that produces the Contraction Engine's
  // input (zero points give the staging types i5 / i9, which pair with i4 / i8 weights; the
  // table is main-context only). The weights are fetched as they are stored.
  struct Operand {
    DType dm, engine;
    FetchKind kind;
  };
  const std::vector<Operand> operands = {
      {DType::kBF16, DType::kBF16, FetchKind::kPlain},     {DType::kF8E4M3, DType::kF8E4M3, FetchKind::kPlain},
      {DType::kF8E5M2, DType::kF8E5M2, FetchKind::kPlain}, {DType::kI8, DType::kI8, FetchKind::kPlain},
      {DType::kI4, DType::kI4, FetchKind::kPlain},         {DType::kF8E4M3, DType::kF8E4M3, FetchKind::kTable},
      {DType::kI8, DType::kI8, FetchKind::kTable}};
  // Zero-point contractions (i5 / i9 staging streams), one contraction in eight unless required.
  const std::vector<Operand> zero_point = {{DType::kI8, DType::kI9, FetchKind::kZeroPoint},
                                           {DType::kI4, DType::kI5, FetchKind::kZeroPoint}};
  Operand operand = PickFrom(operands);
  if (Wants("zero_point", 0.125)) operand = PickFrom(zero_point);
  if (Required("table") && operand.kind != FetchKind::kTable) operand = operands[5];
  const DType type = operand.engine;
  const int64_t flit = FlitElements(type), mac = 2 * flit;  // elements in 32 and 64 bytes

  const bool want_switch = Wants("switch", 0.2);
  const bool interleave = Wants("interleave", 0.15);
  const int64_t m = Pick<int64_t>({1, 2, 3, 4, 8});
  const int64_t n = Pick<int64_t>({1, 2, 4, 8, 8, 16, 24});
  // K in 64-byte steps; 0: one flit, zero-padded (not for i9, whose 32-element packet the
  // Fetch Engine sizes at 9 bits an element: 36 bytes, off the 8-byte grid).
  int64_t kt = Pick<int64_t>({0, 1, 1, 2, 3, 4});
  if (type == DType::kI9 && kt == 0) kt = 1;
  const int64_t k = kt == 0 ? flit : mac * kt;
  const bool outer_reduce = kt >= 2 && Coin(0.3);
  const int64_t slices = DrawSlices(want_switch);
  p.axes = absl::StrCat("M = ", m, ", N = ", n, ", K = ", k, ", S = ", slices, ", I = 2");
  const Term mt{"M", m}, nt{"N", n}, kterm{"K", k};
  const Term rows = n > 8 ? Mod(nt, 8) : nt;
  const std::optional<Term> tiles = n > 8 ? std::optional<Term>(Div(nt, 8)) : std::nullopt;

  Layout layout;
  layout.type = type;
  layout.slice = SliceText(slices);
  layout.slice_axis = slices;
  if (interleave) layout.time.push_back({"I", 2});
  if (outer_reduce) layout.time.push_back(Div(kterm, mac));
  layout.time.push_back(mt);
  layout.live = outer_reduce ? Mod(kterm, mac) : kterm;
  layout.packet = layout.live.size;
  PipelineCall& pipe = p.main;
  pipe.interleave = interleave;
  pipe.fetch = {operand.kind, type, 5, {}, layout.Time(), layout.Packet()};
  if (operand.kind == FetchKind::kTable) pipe.fetch.table = Table(type);
  if (want_switch && slices == 256) pipe.stages.push_back(DrawSwitch(layout, true));
  p.input = {operand.dm, SliceText(slices), "M, K", kInputSeed, 0, 0};

  // The weights [N, K] on the stream's slices, through the sub context into the TRF.
  p.weights = DmInput{operand.dm, layout.slice, "N, K", kWeightsSeed, kWeightsHbmAddress, kWeightsDmAddress};
  PipelineCall load;
  load.sub = true;
  std::vector<Term> load_time = {rows};
  if (tiles) load_time.push_back(*tiles);
  load.fetch = {FetchKind::kPlain, operand.dm, 0, {}, Join(load_time), "K"};
  if (k > flit) load_time.push_back(Div(kterm, flit));
  load.stages.push_back(Call(StreamCall::kCollect, Join(load_time), k > flit ? Mod(kterm, flit).text : "K"));
  load.finish = Finish::kToTrf;
  load.trf_address = Pick({TrfAddress::kFull, TrfAddress::kFull, TrfAddress::kFirstHalf, TrfAddress::kSecondHalf});
  load.row = rows.text;
  load.element = tiles ? Join({*tiles, kterm}) : "K";
  p.weights_load = load;

  pipe.stages.push_back(Collect(layout));
  // Align: Time keeps the 64-byte steps of K (when inner) and the N tiles innermost; the packet
  // is one 64-byte MAC row (a lone flit zero-padded to it).
  std::vector<Term> align_time = layout.time;
  if (k > flit) align_time.pop_back();  // the collect's flit split becomes 64-byte packets again
  if (!outer_reduce && kt >= 2) align_time.push_back(Div(kterm, mac));
  if (tiles) align_time.push_back(*tiles);
  const Term mac_packet = kt == 0 ? Pad(kterm, mac) : (outer_reduce || kt >= 2 ? Mod(kterm, mac) : kterm);
  pipe.stages.push_back(Call(StreamCall::kAlign, Join(align_time), mac_packet.text));

  // Contract: the whole packet, or (sometimes) a partial tree leaving `surviving` columns; a
  // single Row may reduce by max instead.
  int64_t surviving = 1;
  if (kt > 0 && Coin(0.3)) surviving = Pick<int64_t>({2, 4, 8, 16, 32});
  const bool max = n == 1 && Coin(0.4);
  AccumulationKind kind = Coin(0.6) ? AccumulationKind::kInterleaved : AccumulationKind::kSequential;
  // The accumulator buffer (manual, "Reducer"): 1024 slots hold the retained Time positions inner
  // to the outermost reduced axis (M and the N tiles when K's steps are outermost, the N tiles
  // when they sit inside M), times the contracted packet (Interleaved: at most 128 of them) or
  // times the Rows, 32 slots each (Sequential). A kind that does not fit gives way to the other;
  // when neither does, fewer columns survive the contraction.
  const int64_t inner = kt < 2 ? 1 : (outer_reduce ? m : 1) * (tiles ? tiles->size : 1);
  auto fits = [&](AccumulationKind k) {
    return k == AccumulationKind::kInterleaved ? inner * surviving <= 128 : rows.size * inner * 32 <= 1024;
  };
  if (!fits(kind)) kind = kind == AccumulationKind::kInterleaved ? AccumulationKind::kSequential : AccumulationKind::kInterleaved;
  if (!fits(kind)) {
    kind = AccumulationKind::kInterleaved;
    while (!fits(kind) && surviving > 1) surviving /= 2;
  }
  const Term survivors = surviving == 1 ? Term{"1", 1} : Div(mac_packet, mac / surviving);
  StageCall contract = Call(StreamCall::kContract, "", survivors.text);
  if (max) contract.op = ReduceOp::kMax;
  pipe.stages.push_back(contract);

  // Accumulate: the K steps in Time reduced; Interleaved appends the survivors to Time and emits
  // the Rows, Sequential appends the Rows and emits the survivors (8 per beat).
  std::vector<Term> kept;
  for (const Term& t : align_time) {
    if (t.text != Div(kterm, mac).text || kt < 2) kept.push_back(t);
  }
  StageCall acc = Call(StreamCall::kAccumulate);
  acc.kind = kind;
  layout.type = AccumulatorType(type);
  layout.time = kept;
  layout.columns.reset();
  if (acc.kind == AccumulationKind::kInterleaved) {
    if (surviving > 1) layout.time.push_back(survivors);
    layout.live = rows;
    layout.packet = 8;
  } else {
    layout.time.push_back(rows);
    if (surviving > 8) layout.time.push_back(Div(survivors, 8));
    layout.live = surviving > 8 ? Mod(survivors, 8) : survivors;
    layout.packet = 8;
  }
  acc.first = layout.Time();
  acc.second = layout.Packet();
  pipe.stages.push_back(acc);
  MaybeVector(pipe, layout, "accumulate", !want_switch || slices != 256);
  std::optional<DType> cast_to;
  if (Wants("cast", 0.5)) cast_to = CastTarget(layout.type);
  const bool transpose = Wants("transpose", 0.3);
  DrawTail(p, pipe, layout, cast_to, transpose);
  return p;
}

// ---------------------------------------------------------------------------------------------
// Printing the drawn program.

std::string FetchText(const FetchCall& f) {
  switch (f.kind) {
    case FetchKind::kPlain: return absl::StrFormat("fetch(%s, [%s], [%s])", Name(f.out), f.time, f.packet);
    case FetchKind::kMasked: return absl::StrFormat("fetch_masked(%s, 1.0, [%s], [%s])", Name(f.out), f.time, f.packet);
    case FetchKind::kZeroPoint:
      return absl::StrFormat("fetch_with_zero_point(%s, %d, [%s], [%s])", Name(f.out), f.zero_point, f.time, f.packet);
    case FetchKind::kTable:
      return absl::StrFormat("fetch_with_table(%s, <%d entries>, [%s], [%s])", Name(f.out), f.table.size(), f.time,
                             f.packet);
  }
  return "";
}

std::string StageText(const StageCall& s) {
  switch (s.call) {
    case StreamCall::kSwitch:
      return absl::StrFormat("switch_engine(%s, [%s], [%s])", s.config.ToString(), s.first, s.second);
    case StreamCall::kContract:
      return absl::StrFormat("contract([%s]%s)", s.second, s.op == ReduceOp::kMax ? ", Max" : "");
    case StreamCall::kAccumulate:
      return absl::StrFormat("accumulate([%s], [%s], %s)", s.first, s.second, AccumulationKindName(s.kind));
    case StreamCall::kCast: return absl::StrFormat("cast(%s, [%s])", Name(s.type), s.second);
    case StreamCall::kAlign: return absl::StrFormat("align([%s], [%s], weights)", s.first, s.second);
    default: return absl::StrFormat("%s([%s], [%s])", StreamCallName(s.call), s.first, s.second);
  }
}

std::string PipelineText(const PipelineCall& p, const std::string& input) {
  std::string text = absl::StrCat(p.sub ? "sub" : "main",
                                  p.interleave ? absl::StrCat(".begin_interleaved(I, ", input, ", twin)")
                                               : absl::StrCat(".begin(", input, ")"));
  absl::StrAppend(&text, "\n    .", FetchText(p.fetch));
  for (size_t i = 0; i < p.stages.size(); ++i) {
    absl::StrAppend(&text, "\n    .", StageText(p.stages[i]));
    if (p.vector && i == p.vector_after) absl::StrAppend(&text, VectorChainText(*p.vector, "\n    "));
  }
  switch (p.finish) {
    case Finish::kCommit:
      absl::StrAppendFormat(&text, "\n    .commit([%s], 0x%x%s)", p.element, p.commit_address,
                            p.bitmap_slice ? absl::StrFormat(", slices {0, %d, 3}", *p.bitmap_slice) : "");
      break;
    case Finish::kToTrf:
      absl::StrAppendFormat(&text, "\n    .to_trf([%s], [%s], %s)", p.row, p.element, TrfAddressName(p.trf_address));
      break;
    case Finish::kToVrf: absl::StrAppendFormat(&text, "\n    .to_vrf([%s], 0)", p.element); break;
  }
  return text;
}

std::string Describe(uint64_t seed, const ProgramCalls& p) {
  std::string text = absl::StrFormat("random program, seed %d\n  axes: %s\n  input: %s [%s] [%s]", seed, p.axes,
                                     Name(p.input.dtype), p.input.slice, p.input.element);
  if (p.weights) {
    absl::StrAppendFormat(&text, "\n  weights: %s [%s] [%s]\n  %s", Name(p.weights->dtype), p.weights->slice,
                          p.weights->element, PipelineText(*p.weights_load, "weights"));
  }
  if (p.hbm_relayout) {
    absl::StrAppendFormat(&text, "\n  (input placed through HBM as [%s], then to_dm)", *p.hbm_relayout);
  }
  if (p.relayout) absl::StrAppendFormat(&text, "\n  x = input.to_dm([%s] [%s])", p.input.slice, *p.relayout);
  absl::StrAppend(&text, "\n  ", PipelineText(p.main, p.relayout ? "x" : "input"));
  if (p.to_hbm) absl::StrAppendFormat(&text, "\n  output.to_hbm([%s])", *p.to_hbm);
  if (p.to_spm) absl::StrAppendFormat(&text, "\n  output.to_spm(0x%x, [%s])", kSpmAddress, *p.to_spm);
  return text;
}

// ---------------------------------------------------------------------------------------------
// What a draw calls for, named as ProgramCoverage names what ran.

const char* AdapterName(FetchKind kind, bool interleave) {
  switch (kind) {
    case FetchKind::kPlain: return "plain";
    case FetchKind::kMasked: return "masked";
    case FetchKind::kTable: return "table";
    case FetchKind::kZeroPoint: return interleave ? "zero_points" : "zero_point";
  }
  return "plain";
}

void PipelineCoverage(const PipelineCall& call, DType dm_type, const char* context, std::set<CoverageKey>& out) {
  out.insert({"context", context});
  out.insert({"stage", call.interleave ? "begin_interleaved" : "begin"});
  out.insert({"stage", "fetch"});
  out.insert({"fetch", ConversionKind(dm_type, call.fetch.out)});
  out.insert({"adapter", AdapterName(call.fetch.kind, call.interleave)});
  DType type = call.fetch.out;  // the stream's type as the stages change it
  for (const StageCall& s : call.stages) {
    out.insert({"stage", s.call == StreamCall::kSwitch ? "switch" : StreamCallName(s.call)});
    switch (s.call) {
      case StreamCall::kSwitch: out.insert({"switch", SwitchKindName(s.config.kind)}); break;
      case StreamCall::kAlign: out.insert({"contraction", Name(type)}); break;
      case StreamCall::kContract: out.insert({"reduce", ReduceOpName(s.op)}); break;
      case StreamCall::kAccumulate:
        out.insert({"accumulate", AccumulationKindName(s.kind)});
        type = AccumulatorType(type);
        break;
      case StreamCall::kCast:
        out.insert({"cast", ConversionKind(type, s.type)});
        type = s.type;
        break;
      case StreamCall::kTranspose: out.insert({"transpose", Name(type)}); break;
      default: break;
    }
  }
  if (call.vector) {
    out.insert({"stage", "vector"});
    VectorChainCoverage(*call.vector, out);
  }
  switch (call.finish) {
    case Finish::kCommit:
      out.insert({"stage", "commit"});
      out.insert({"commit", call.bitmap_slice ? "bitmap" : "all"});
      break;
    case Finish::kToTrf:
      out.insert({"stage", "to_trf"});
      out.insert({"load", absl::StrCat("trf:", TrfAddressName(call.trf_address))});
      break;
    case Finish::kToVrf:
      out.insert({"stage", "to_vrf"});
      out.insert({"load", "vrf"});
      break;
  }
}

std::vector<CoverageKey> DrawnCoverage(const ProgramCalls& p) {
  std::set<CoverageKey> out = {{"dma", "host->HBM"}, {"dma", "HBM->DM"}};  // the inputs placed
  if (p.hbm_relayout) out.insert({"dma", "HBM->HBM"});
  if (p.relayout || p.main.interleave) out.insert({"dma", "DM->DM"});  // an interleaved fetch's twin is a copy
  if (p.to_hbm) out.insert({"dma", "DM->HBM"});
  if (p.to_spm) out.insert({"dma", "DM->SPM"});
  if (p.weights && p.weights_load) PipelineCoverage(*p.weights_load, p.weights->dtype, "weights", out);
  PipelineCoverage(p.main, p.input.dtype, p.main.sub ? "sub" : "main", out);
  return std::vector<CoverageKey>(out.begin(), out.end());
}

// ---------------------------------------------------------------------------------------------
// Running the drawn program through the Context API.

// `hbm_relayout`: the HBM copy moves to that Element (an HBM -> HBM DMA) before going to DM.
absl::StatusOr<DmTensor> Place(Context& ctx, const MappingScope& m, const DmInput& in,
                               const std::optional<std::string>& hbm_relayout = std::nullopt) {
  const Mapping slice = m.m(in.slice), element = m.m(in.element);
  ASSIGN_OR_RETURN(HostTensor host, HostTensor::Random(in.dtype, Pair({slice, element}), in.seed));
  ASSIGN_OR_RETURN(HbmTensor hbm, host.to_hbm(ctx.pdma, in.hbm_address, m.m("1"), host.mapping()));
  if (hbm_relayout) {
    ASSIGN_OR_RETURN(hbm, hbm.to_hbm(ctx.tdma, kRelayoutHbmAddress, m.m(*hbm_relayout)));
  }
  return hbm.to_dm(ctx.tdma, in.dm_address, m.m("1 # 2"), slice, element);
}

absl::StatusOr<Stream> Begin(Context& ctx, const MappingScope& m, const PipelineCall& call, const DmTensor& source) {
  TensorUnit& unit = call.sub ? ctx.sub : ctx.main;
  if (!call.interleave) return unit.begin(source.view());
  ASSIGN_OR_RETURN(DmTensor twin, source.to_dm(ctx.tdma, kTwinAddress, source.cluster(), source.slice(),
                                               source.element()));
  return unit.begin_interleaved(m.m("I"), source.view(), twin.view());
}

Stream Fetch(Stream stream, const MappingScope& m, const FetchCall& f, bool interleave) {
  const Mapping time = m.m(f.time), packet = m.m(f.packet);
  switch (f.kind) {
    case FetchKind::kPlain: return std::move(stream).fetch(f.out, time, packet);
    case FetchKind::kMasked: return std::move(stream).fetch_masked(f.out, 1.0, time, packet);
    case FetchKind::kZeroPoint:
      return interleave ? std::move(stream).fetch_with_zero_points(f.out, f.zero_point, -f.zero_point, time, packet)
                        : std::move(stream).fetch_with_zero_point(f.out, f.zero_point, time, packet);
    case FetchKind::kTable: return std::move(stream).fetch_with_table(f.out, f.table, time, packet);
  }
  return stream;
}

// One stage; `weights` is present whenever the drawn pipeline aligns (RunPipeline checks).
Stream Apply(Stream stream, const MappingScope& m, const StageCall& s, const std::optional<TrfTensor>& weights) {
  switch (s.call) {
    case StreamCall::kSwitch: return std::move(stream).switch_engine(s.config, m.m(s.first), m.m(s.second));
    case StreamCall::kCollect: return std::move(stream).collect(m.m(s.first), m.m(s.second));
    case StreamCall::kAlign: return std::move(stream).align(m.m(s.first), m.m(s.second), *weights);
    case StreamCall::kContract: return std::move(stream).contract(m.m(s.second), s.op);
    case StreamCall::kAccumulate: return std::move(stream).accumulate(m.m(s.first), m.m(s.second), s.kind);
    case StreamCall::kCast: return std::move(stream).cast(s.type, m.m(s.second));
    case StreamCall::kTranspose: return std::move(stream).transpose(m.m(s.first), m.m(s.second));
    default: return stream;
  }
}

// A commit with a slice bitmap leaves the disabled slices' DM as it was, and the program reads the
// whole tensor back: those bytes get data first (a host write, as an earlier kernel would leave
// them), so no backend reads memory nothing wrote and the kept bytes are compared too.
absl::Status WriteBackground(Context& ctx, const StreamShape& shape, const Mapping& element, int64_t address) {
  if (!ctx.executes()) return absl::OkStatus();  // tracing moves no byte
  ASSIGN_OR_RETURN(Placement placement, visa::Place(ctx.device(), shape.dtype, Tier::kDm,
                                                    {shape.chip, shape.cluster, shape.slice, element}, address));
  ASSIGN_OR_RETURN(HostTensor host, HostTensor::Random(shape.dtype, Pair(placement.levels), kBackgroundSeed));
  return WriteAs(host, ctx.device(), std::move(placement)).status();
}

absl::StatusOr<DeviceTensor> RunPipeline(Context& ctx, const MappingScope& m, const PipelineCall& call,
                                         const DmTensor& source, const std::optional<TrfTensor>& weights) {
  VectorVrfs vrfs;
  if (call.vector) {
    const VectorEntry& entry = *call.vector_entry;
    std::vector<std::string> time = entry.time;
    ASSIGN_OR_RETURN(vrfs, LoadVectorVrfs(ctx, m, *call.vector, entry.slice, time.empty() ? "1" : absl::StrJoin(time, ", "),
                                          entry.packet));
  }
  ASSIGN_OR_RETURN(Stream stream, Begin(ctx, m, call, source));
  stream = Fetch(std::move(stream), m, call.fetch, call.interleave);
  for (size_t i = 0; i < call.stages.size(); ++i) {
    const StageCall& s = call.stages[i];
    if (s.call == StreamCall::kAlign && !weights) return absl::InternalError("random program: align without weights");
    stream = Apply(std::move(stream), m, s, weights);
    if (call.vector && i == call.vector_after) stream = ApplyVectorChain(std::move(stream), m, *call.vector, vrfs);
  }
  const Mapping element = m.m(call.element);
  switch (call.finish) {
    case Finish::kToTrf: {
      ASSIGN_OR_RETURN(TrfTensor t, std::move(stream).to_trf(m.m(call.row), element, call.trf_address));
      return DeviceTensor(t);
    }
    case Finish::kToVrf: {
      ASSIGN_OR_RETURN(VrfTensor v, std::move(stream).to_vrf(element, 0));
      return DeviceTensor(v);
    }
    case Finish::kCommit: break;
  }
  if (call.bitmap_slice) {
    RETURN_IF_ERROR(stream.status());
    RETURN_IF_ERROR(WriteBackground(ctx, stream.shape(), element, call.commit_address));
    ASSIGN_OR_RETURN(DmTensor out, std::move(stream).commit(element, call.commit_address,
                                                            SliceBitmap::Only({0, *call.bitmap_slice, 3})));
    return DeviceTensor(out);
  }
  ASSIGN_OR_RETURN(DmTensor out, std::move(stream).commit(element, call.commit_address));
  return DeviceTensor(out);
}

absl::StatusOr<SampleRun> RunCalls(const ProgramCalls& calls, Backend& backend, const DeviceOptions& device_options) {
  ASSIGN_OR_RETURN(Axes axes, Axes::Parse(calls.axes));
  MappingScope m(axes);
  ASSIGN_OR_RETURN(std::unique_ptr<Device> device, Device::Create(1, device_options));
  Context ctx(*device, backend);
  ASSIGN_OR_RETURN(DmTensor input, Place(ctx, m, calls.input, calls.hbm_relayout));
  std::optional<TrfTensor> trf;
  if (calls.weights && calls.weights_load) {
    ASSIGN_OR_RETURN(DmTensor weights, Place(ctx, m, *calls.weights));
    ASSIGN_OR_RETURN(DeviceTensor loaded, RunPipeline(ctx, m, *calls.weights_load, weights, std::nullopt));
    trf = TrfTensor(loaded);
  }
  DmTensor source = input;
  if (calls.relayout) {
    ASSIGN_OR_RETURN(source, input.to_dm(ctx.tdma, kRelayoutAddress, input.cluster(), input.slice(),
                                         m.m(*calls.relayout)));
  }
  ASSIGN_OR_RETURN(DeviceTensor out, RunPipeline(ctx, m, calls.main, source, trf));
  if (calls.to_hbm) {
    RETURN_IF_ERROR(DmTensor(out).to_hbm(ctx.tdma, kOutputHbmAddress, m.m(*calls.to_hbm)).status());
  }
  if (calls.to_spm) {
    const DmTensor dm(out);
    RETURN_IF_ERROR(dm.to_spm(ctx.tdma, kSpmAddress, dm.cluster(), dm.slice(), m.m(*calls.to_spm)).status());
  }
  SampleRun run;
  run.program = ctx.program();
  run.stream_elements = StreamPositions(run.program);
  run.note = "no host reference: compare backends";
  return run;
}

// ---------------------------------------------------------------------------------------------
// Features of a traced program.

void StageFeatures(const Stage& stage, std::set<std::string>& out) {
  if (const auto* fetch = std::get_if<FetchStage>(&stage)) {
    if (!fetch->adapter.zero_points.empty()) out.insert("zero_point");
    if (!fetch->adapter.table.empty()) out.insert("table");
    if (fetch->adapter.pad_value) out.insert("masked");
  } else if (const auto* sw = std::get_if<SwitchStage>(&stage)) {
    out.insert("switch");
    out.insert(absl::StrCat("switch:", SwitchKindName(sw->config.kind)));
  } else if (std::holds_alternative<CastStage>(stage)) {
    out.insert("cast");
  } else if (std::holds_alternative<TransposeStage>(stage)) {
    out.insert("transpose");
  } else if (const auto* align = std::get_if<AlignStage>(&stage)) {
    out.insert("contraction");
    out.insert(absl::StrCat("contraction:", Name(align->in.dtype)));
  } else if (const auto* contract = std::get_if<ContractStage>(&stage)) {
    out.insert(absl::StrCat("reduce:", ReduceOpName(contract->op)));
  } else if (const auto* acc = std::get_if<AccumulateStage>(&stage)) {
    out.insert(absl::StrCat("accumulate:", AccumulationKindName(acc->kind)));
  } else if (const auto* commit = std::get_if<CommitStage>(&stage)) {
    if (!commit->slices.all()) out.insert("bitmap");
  } else if (const auto* load = std::get_if<RegisterLoadStage>(&stage)) {
    out.insert(load->to_trf ? absl::StrCat("load:trf:", load->trf_mode) : "load:vrf");
  } else if (std::holds_alternative<VectorStage>(stage)) {
    out.insert("vector");
  }
}

}  // namespace

const std::vector<std::string>& RandomProgramFeatures() {
  static const std::vector<std::string> names = {"bitmap", "cast", "contraction", "dma", "interleave", "masked",
                                                 "sub", "switch", "table", "transpose", "vector", "zero_point"};
  return names;
}

absl::Status CheckFeatureNames(const std::vector<std::string>& names) {
  const std::vector<std::string>& known = RandomProgramFeatures();
  for (const std::string& name : names) {
    if (std::find(known.begin(), known.end(), name) == known.end()) {
      return absl::InvalidArgumentError(
          absl::StrCat("unknown feature `", name, "` (features: ", absl::StrJoin(known, ", "), ")"));
    }
  }
  return absl::OkStatus();
}

bool CallsForFeature(const std::vector<CoverageKey>& drawn, const std::string& feature) {
  auto has = [&](const char* category, const char* kind) {
    return std::find(drawn.begin(), drawn.end(), CoverageKey{category, kind}) != drawn.end();
  };
  // The kinds ProgramFeatures names each feature by (a draw calls for exactly the kinds its traced
  // program exercises: tests/program_coverage_test.cc).
  if (feature == "bitmap") return has("commit", "bitmap");
  if (feature == "cast") return has("stage", "cast");
  if (feature == "contraction") return has("stage", "align");
  if (feature == "dma") return has("dma", "DM->DM") || has("dma", "DM->HBM") || has("dma", "DM->SPM");
  if (feature == "interleave") return has("stage", "begin_interleaved");
  if (feature == "masked") return has("adapter", "masked");
  if (feature == "sub") return has("context", "sub");
  if (feature == "switch") return has("stage", "switch");
  if (feature == "table") return has("adapter", "table");
  if (feature == "transpose") return has("stage", "transpose");
  if (feature == "vector") return has("stage", "vector");
  if (feature == "zero_point") return has("adapter", "zero_point") || has("adapter", "zero_points");
  VISA_CHECK(false, "a feature without coverage kinds");
  return false;
}

std::vector<CoverageKey> DrawnKinds(const DrawOptions& options) {
  std::vector<CoverageKey> all = AllDrawnKinds();
  if (options.require.empty()) return all;
  // Required features narrow what a draw can call for (a required contraction rules out the
  // movement chain, a required sub context rules out commits and casts, ...): what these features
  // can draw is what a census of draws under them calls for. The census is large enough for the
  // rarest kind a filtered draw offers (about 1 in 60) and draws from fixed seeds, in a range runs
  // rarely draw from, so the must-run set is the same in every run.
  // Only draws that have every required feature count: the others are filtered before they run.
  std::set<CoverageKey> drawable;
  for (uint64_t seed = kCensusFirstSeed; seed < kCensusFirstSeed + kCensusDraws; ++seed) {
    const RandomProgram program = DrawRandomProgram(seed, options);
    const bool kept = std::all_of(options.require.begin(), options.require.end(),
                                  [&](const std::string& f) { return CallsForFeature(program.drawn, f); });
    if (kept) drawable.insert(program.drawn.begin(), program.drawn.end());
  }
  std::vector<CoverageKey> kinds;
  for (const CoverageKey& k : all) {
    if (drawable.count(k)) kinds.push_back(k);
  }
  return kinds;
}

std::vector<CoverageKey> AllDrawnKinds() {
  std::set<CoverageKey> kinds;
  auto add = [&](const char* category, std::initializer_list<std::string> names) {
    for (const std::string& name : names) kinds.insert({category, name});
  };
  add("stage", {"begin", "begin_interleaved", "fetch", "switch", "collect", "align", "contract", "accumulate", "cast",
                "transpose", "commit", "to_trf", "to_vrf", "vector"});
  for (const CoverageKey& k : VectorDrawnKinds()) kinds.insert(k);
  for (const CoverageKey& k : IndirectDrawnKinds()) kinds.insert(k);
  add("context", {"main", "sub", "weights"});
  // Every fetch the movement chain offers (the contraction's operands are among them).
  const std::vector<DType> types = {DType::kI8,  DType::kI4,  DType::kI16,    DType::kI32,   DType::kBF16,
                                    DType::kF16, DType::kF32, DType::kF8E4M3, DType::kF8E5M2};
  for (DType t : types) kinds.insert({"fetch", ConversionKind(t, t)});
  for (DType t : {DType::kI8, DType::kI4, DType::kI16}) kinds.insert({"fetch", ConversionKind(t, DType::kI32)});
  for (DType t : {DType::kBF16, DType::kF16, DType::kF8E4M3, DType::kF8E5M2}) {
    kinds.insert({"fetch", ConversionKind(t, DType::kF32)});
  }
  kinds.insert({"fetch", ConversionKind(DType::kF32, DType::kBF16)});
  add("adapter", {"plain", "masked", "table", "zero_point", "zero_points"});
  for (const SwitchConfig& c : {SwitchConfig::Transpose(2, 2), SwitchConfig::Broadcast1(2, 2),
                                SwitchConfig::Broadcast01(2, 2, 1), SwitchConfig::TransposedBroadcast1(2, 2),
                                SwitchConfig::InterTranspose(2, 2, 1), SwitchConfig::CustomBroadcast(16)}) {
    kinds.insert({"switch", SwitchKindName(c.kind)});
  }
  for (DType t : {DType::kBF16, DType::kF8E4M3, DType::kF8E5M2, DType::kI8, DType::kI4}) {
    kinds.insert({"contraction", Name(t)});
  }
  add("reduce", {"Add", "Max"});
  add("accumulate", {"Interleaved", "Sequential"});
  for (DType t : {DType::kI8, DType::kI16, DType::kI4}) kinds.insert({"cast", ConversionKind(DType::kI32, t)});
  for (DType t : {DType::kBF16, DType::kF16, DType::kF8E4M3, DType::kF8E5M2}) {
    kinds.insert({"cast", ConversionKind(DType::kF32, t)});
  }
  for (DType t : types) {
    if (TransposeRow(t)) kinds.insert({"transpose", Name(t)});
  }
  add("load", {"trf:Full", "trf:FirstHalf", "trf:SecondHalf", "vrf"});
  add("commit", {"all", "bitmap"});
  add("dma", {"host->HBM", "HBM->DM", "HBM->HBM", "DM->DM", "DM->HBM", "DM->SPM"});
  // Zero-point contractions: the staging types.
  kinds.insert({"fetch", ConversionKind(DType::kI8, DType::kI9)});
  kinds.insert({"fetch", ConversionKind(DType::kI4, DType::kI5)});
  kinds.insert({"contraction", Name(DType::kI9)});
  kinds.insert({"contraction", Name(DType::kI5)});
  return std::vector<CoverageKey>(kinds.begin(), kinds.end());
}

RandomProgram DrawRandomProgram(uint64_t seed, const DrawOptions& options) {
  if (options.require.empty() && DrawsIndirect(seed)) return DrawRandomIndirect(seed);  // random_programs/random_indirect.h
  ProgramCalls calls = Drawer(seed, options).Draw();
  RandomProgram program;
  program.seed = seed;
  program.description = Describe(seed, calls);
  program.drawn = DrawnCoverage(calls);
  Sample& s = program.sample;
  s.name = absl::StrCat("random-", seed);
  s.description = "a random program (random_programs/random_program.h)";
  s.axes = calls.axes;
  s.dtype = calls.input.dtype;
  s.slice = calls.input.slice;
  s.element = calls.input.element;
  s.runner = [calls = std::move(calls)](Backend& backend, const DeviceOptions& device_options) {
    return RunCalls(calls, backend, device_options);
  };
  return program;
}

std::vector<std::string> ProgramFeatures(const Program& program) {
  std::set<int64_t> weights;  // TRF tensors an align reads: their loads are not the program's output
  for (const Op& op : program.ops) {
    const auto* pipe = std::get_if<PipelineOp>(&op.body);
    if (pipe != nullptr && pipe->weights) weights.insert(pipe->weights->id);
  }
  std::set<std::string> out;
  for (const Op& op : program.ops) {
    if (const auto* dma = std::get_if<DmaOp>(&op.body)) {
      // Placing the inputs moves HBM -> DM; the kernel's own moves start in DM.
      if (dma->src.handle && dma->src.handle->tier() == Tier::kDm) out.insert("dma");
      continue;
    }
    const PipelineOp& pipe = std::get<PipelineOp>(op.body);
    if (pipe.inputs.size() == 2) out.insert("interleave");
    if (pipe.context == ContextKind::kSub && !weights.count(pipe.output.id)) out.insert("sub");
    for (const Stage& stage : pipe.stages) StageFeatures(stage, out);
  }
  return std::vector<std::string>(out.begin(), out.end());
}

}  // namespace visa::samples
