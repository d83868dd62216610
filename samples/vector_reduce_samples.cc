// Vector Engine reduction samples: the manual's intra-slice reduce examples (over Time, Packet,
// both, and Slice + Time + Packet with the Valid Count Generator), its inter-slice reduce examples
// (dummy, broadcast, promotion, then intra, after intra), a row softmax and RMS normalization
// through the Split Reduce pattern. Each reference is a plain host loop over the input in the
// manual's order of combination (the 2-level tree, then time steps, then slices in order) with
// saturation by hand, or a double computation with a stated bound.
#include <cmath>
#include <cstdint>
#include <limits>

#include "absl/strings/str_cat.h"
#include "dsl/status_macros.h"
#include "samples/contraction_sample.h"
#include "samples/masked_reduce_samples.h"

namespace visa::samples {
namespace {

constexpr float kNegInf = -std::numeric_limits<float>::infinity();

int32_t SatAdd(int32_t a, int32_t b) {
  const int64_t sum = int64_t{a} + int64_t{b};
  return static_cast<int32_t>(std::clamp<int64_t>(sum, std::numeric_limits<int32_t>::min(),
                                                  std::numeric_limits<int32_t>::max()));
}
int32_t WrapAdd(int32_t a, int32_t b) { return static_cast<int32_t>(static_cast<uint32_t>(a) + static_cast<uint32_t>(b)); }

// The input value at the given axis values.
double In(const HostTensor& input, std::initializer_list<std::pair<const char*, int64_t>> at) {
  Index index;
  for (const auto& [axis, value] : at) index.Set(axis, value);
  return *input.Get(index);
}
int32_t InI(const HostTensor& input, std::initializer_list<std::pair<const char*, int64_t>> at) {
  return static_cast<int32_t>(In(input, at));
}
float InF(const HostTensor& input, std::initializer_list<std::pair<const char*, int64_t>> at) {
  return static_cast<float>(In(input, at));
}

Stream Enter(Stream s) { return std::move(s).vector_init().vector_intra_slice_branch(BranchMode::Unconditional()); }

// ---- Intra-slice reduce: the manual's four examples --------------------------------------------

// "Reduce in Time (i32 Saturating Add)": R only in Time, accumulated over 16 time steps.
Sample ReduceTime() {
  Sample s;
  s.name = "vector_intra_reduce_time";
  s.description = "Intra-Slice Reduce, the manual's reduce in Time: i32 AddSat over Time [R], Packet [A % 2 # 4] kept";
  s.axes = "A = 8, R = 16";
  s.dtype = DType::kI32;
  s.slice = "A / 2 # 256";
  s.element = "R, A % 2";
  s.kernel = [](Context& ctx, const DmTensor& in, const MappingScope& m) -> absl::StatusOr<DeviceTensor> {
    return Enter(ctx.main.begin(in.view()).fetch(DType::kI32, m.m("R"), m.m("A % 2 # 8")).collect(m.m("R"), m.m("A % 2 # 8")))
        .vector_trim_way4(m.m("A % 2 # 4"))
        .vector_intra_slice_reduce("R", m.m("1"), m.m("A % 2 # 4"), IntraSliceReduceOpI32::kAddSat)
        .vector_pad_way8(m.m("A % 2 # 8"))
        .vector_final()
        .commit(m.m("A % 2"), 1 << 16);
  };
  s.readback = "A";
  s.reference = [](const Index& at, const HostTensor& x) {
    int32_t acc = InI(x, {{"A", at["A"]}, {"R", 0}});
    for (int64_t r = 1; r < 16; ++r) acc = SatAdd(acc, InI(x, {{"A", at["A"]}, {"R", r}}));
    return static_cast<double>(acc);
  };
  return s;
}

// "Reduce in Packet Only (f32 Add)": the 2-level tree op(op(a, b), op(c, d)) within each flit.
Sample ReducePacket() {
  Sample s;
  s.name = "vector_intra_reduce_packet";
  s.description = "Intra-Slice Reduce, the manual's reduce in Packet: f32 Add tree over Packet [R # 8] -> [1 # 4]";
  s.axes = "A = 8, R = 4";
  s.dtype = DType::kF32;
  s.slice = "A / 2 # 256";
  s.element = "A % 2, R";
  s.kernel = [](Context& ctx, const DmTensor& in, const MappingScope& m) -> absl::StatusOr<DeviceTensor> {
    return Enter(ctx.main.begin(in.view())
                     .fetch(DType::kF32, m.m("A % 2"), m.m("R # 8"))
                     .collect(m.m("A % 2"), m.m("R # 8")))
        .vector_trim_way4(m.m("R"))
        .vector_intra_slice_reduce("R", m.m("A % 2"), m.m("1 # 4"), IntraSliceReduceOpF32::kAdd)
        .vector_pad_way8(m.m("1 # 8"))
        .vector_final()
        .commit(m.m("A % 2, 1 # 2"), 1 << 16);
  };
  s.readback = "A";
  s.reference = [](const Index& at, const HostTensor& x) {
    float v[4];
    for (int r = 0; r < 4; ++r) v[r] = InF(x, {{"A", at["A"]}, {"R", r}});
    return static_cast<double>((v[0] + v[1]) + (v[2] + v[3]));
  };
  return s;
}

// "Reduce Split Across Time and Packet (f32 Max)": the tree over R % 4, then R / 4 time steps.
// The manual's Slice [A / 2] holds no A % 2, so its A is the 4 slices here.
Sample ReduceTimePacket() {
  Sample s;
  s.name = "vector_intra_reduce_time_packet";
  s.description = "Intra-Slice Reduce, the manual's split reduce: f32 Max over Time [R / 4] and Packet [R % 4 # 8]";
  s.axes = "A = 4, R = 16";
  s.dtype = DType::kF32;
  s.slice = "A # 256";
  s.element = "R";
  s.kernel = [](Context& ctx, const DmTensor& in, const MappingScope& m) -> absl::StatusOr<DeviceTensor> {
    return Enter(ctx.main.begin(in.view())
                     .fetch(DType::kF32, m.m("R / 4"), m.m("R % 4 # 8"))
                     .collect(m.m("R / 4"), m.m("R % 4 # 8")))
        .vector_trim_way4(m.m("R % 4"))
        .vector_intra_slice_reduce("R", m.m("1"), m.m("1 # 4"), IntraSliceReduceOpF32::kMax)
        .vector_pad_way8(m.m("1 # 8"))
        .vector_final()
        .commit(m.m("1 # 2"), 1 << 16);
  };
  s.readback = "A";
  s.reference = [](const Index& at, const HostTensor& x) {
    float best = kNegInf;
    for (int64_t r = 0; r < 16; ++r) best = std::max(best, InF(x, {{"A", at["A"]}, {"R", r}}));
    return static_cast<double>(best);
  };
  return s;
}

// "Reduce Axis Spanning Slice, Time, and Packet (i32 Min)": R = 13 padded to 32 over 4 slices. The
// Valid Count Generator cannot give the boundary slice its own packet count (dsl/valid_count.h), so
// R >= 13 is left out as the Padding Strategy's second way says: the masked fetch fills it with
// Min's identity i32::MAX and the reduce runs with identity padding.
Sample ReduceSliceTimePacket() {
  Sample s;
  s.name = "vector_intra_reduce_slice_time_packet";
  s.description = "Intra-Slice Reduce, the manual's R = 13 over Slice, Time and Packet: i32 Min, padding filled "
                  "with i32::MAX by the masked fetch (identity padding)";
  s.axes = "R = 13";
  s.dtype = DType::kI32;
  s.slice = "R # 32 / 8 # 256";
  s.element = "R # 32 % 8";
  s.kernel = [](Context& ctx, const DmTensor& in, const MappingScope& m) -> absl::StatusOr<DeviceTensor> {
    return Enter(ctx.main.begin(in.view())
                     .fetch_masked(DType::kI32, std::numeric_limits<int32_t>::max(), m.m("R # 32 / 4 % 2"),
                                   m.m("R # 32 % 4 # 8"))
                     .collect(m.m("R # 32 / 4 % 2"), m.m("R # 32 % 4 # 8")))
        .vector_trim_way4(m.m("R # 32 % 4"))
        .vector_intra_slice_reduce("R", m.m("1"), m.m("1 # 4"), IntraSliceReduceOpI32::kMin, ReducePadding::kIdentity)
        .vector_pad_way8(m.m("1 # 8"))
        .vector_final()
        .commit(m.m("1 # 2"), 1 << 16);
  };
  s.readback = "R # 32 / 8";
  s.reference = [](const Index& at, const HostTensor& x) {
    int32_t best = std::numeric_limits<int32_t>::max();
    for (int64_t r = at["R"]; r < std::min<int64_t>(at["R"] + 8, 13); ++r) best = std::min(best, InI(x, {{"R", r}}));
    return static_cast<double>(best);
  };
  return s;
}

// ---- Inter-slice reduce: the manual's examples --------------------------------------------------

// R = 4 slices combined in slice order, the first stored as is.
int32_t SliceSumSat(const HostTensor& x, int64_t a, const std::function<int32_t(int32_t)>& pre) {
  int32_t acc = pre(InI(x, {{"A", a}, {"R", 0}}));
  for (int64_t r = 1; r < 4; ++r) acc = SatAdd(acc, pre(InI(x, {{"A", a}, {"R", r}})));
  return acc;
}

Sample InterSliceI32(std::string name, std::string description, std::function<Stream(Stream, const MappingScope&)> chain,
                     std::function<double(const HostTensor&, int64_t)> reference) {
  Sample s;
  s.name = std::move(name);
  s.description = std::move(description);
  s.axes = "R = 4, A = 512";
  s.dtype = DType::kI32;
  s.slice = "A / 8, R";
  s.element = "A % 8";
  s.kernel = [chain](Context& ctx, const DmTensor& in, const MappingScope& m) -> absl::StatusOr<DeviceTensor> {
    Stream entered = ctx.main.begin(in.view()).fetch(DType::kI32, m.m("1"), m.m("A % 8")).collect(m.m("1"), m.m("A % 8"));
    return chain(std::move(entered).vector_init(), m).vector_final().commit(m.m("A % 8"), 1 << 16);
  };
  s.readback = "A";
  s.reference = [reference](const Index& at, const HostTensor& x) { return reference(x, at["A"]); };
  return s;
}

std::vector<Sample> InterSliceI32Samples() {
  auto same = [](int32_t v) { return v; };
  auto plus100 = [](int32_t v) { return WrapAdd(v, 100); };
  std::vector<Sample> samples;
  samples.push_back(InterSliceI32(
      "vector_inter_reduce_dummy", "Inter-Slice Block, the manual's dummy replacement: i32 AddSat over R, Slice [A / 8, R] -> [A / 8, 1 # 4]",
      [](Stream s, const MappingScope& m) {
        return std::move(s).vector_inter_slice_reduce(m.m("A / 8, 1 # 4"), m.m("1"), InterSliceReduceOpI32::kAddSat);
      },
      [same](const HostTensor& x, int64_t a) { return static_cast<double>(SliceSumSat(x, a, same)); }));
  samples.push_back(InterSliceI32(
      "vector_inter_then_intra", "Inter-Slice Block, the manual's InterFirst: AddSat across slices, then vector_fxp(AddFxp, 100)",
      [](Stream s, const MappingScope& m) {
        return std::move(s)
            .vector_inter_slice_reduce(m.m("A / 8, 1 # 4"), m.m("1"), InterSliceReduceOpI32::kAddSat)
            .vector_intra_slice_branch(BranchMode::Unconditional())
            .vector_fxp(FxpBinaryOp::kAddFxp, 100);
      },
      [same](const HostTensor& x, int64_t a) { return static_cast<double>(WrapAdd(SliceSumSat(x, a, same), 100)); }));
  samples.push_back(InterSliceI32(
      "vector_intra_then_inter", "Inter-Slice Block, the manual's IntraFirst: vector_fxp(AddFxp, 100), then AddSat across slices",
      [](Stream s, const MappingScope& m) {
        return std::move(s)
            .vector_intra_slice_branch(BranchMode::Unconditional())
            .vector_fxp(FxpBinaryOp::kAddFxp, 100)
            .vector_inter_slice_reduce(m.m("A / 8, 1 # 4"), m.m("1"), InterSliceReduceOpI32::kAddSat);
      },
      [plus100](const HostTensor& x, int64_t a) { return static_cast<double>(SliceSumSat(x, a, plus100)); }));
  return samples;
}

// "Broadcast Into a New Slice Axis": the sum over R is repeated over the new axis X.
Sample InterBroadcast() {
  Sample s;
  s.name = "vector_inter_reduce_broadcast";
  s.description = "Inter-Slice Block, the manual's broadcast: f32 Add over R, Slice [W, R] -> [W, X]";
  s.axes = "W = 64, R = 4, X = 4, P = 8";
  s.dtype = DType::kF32;
  s.slice = "W, R";
  s.element = "P";
  s.kernel = [](Context& ctx, const DmTensor& in, const MappingScope& m) -> absl::StatusOr<DeviceTensor> {
    return ctx.main.begin(in.view())
        .fetch(DType::kF32, m.m("1"), m.m("P"))
        .collect(m.m("1"), m.m("P"))
        .vector_init()
        .vector_inter_slice_reduce(m.m("W, X"), m.m("1"), InterSliceReduceOpF32::kAdd)
        .vector_final()
        .commit(m.m("P"), 1 << 16);
  };
  s.readback = "W, X, P";
  s.reference = [](const Index& at, const HostTensor& x) {
    float acc = InF(x, {{"W", at["W"]}, {"R", 0}, {"P", at["P"]}});
    for (int64_t r = 1; r < 4; ++r) acc += InF(x, {{"W", at["W"]}, {"R", r}, {"P", at["P"]}});
    return static_cast<double>(acc);
  };
  return s;
}

// "Promotion from Time into SliceOut": T2, from the middle of Time, takes R's place in Slice.
Sample InterPromotion() {
  Sample s;
  s.name = "vector_inter_reduce_promotion";
  s.description = "Inter-Slice Block, the manual's promotion: f32 Add over R, [W, R] x [T0, T2, T1] -> [W, T2] x [T0, T1]";
  s.axes = "W = 32, R = 4, T0 = 2, T2 = 4, T1 = 2, P = 8";
  s.dtype = DType::kF32;
  s.slice = "[W, R] # 256";
  s.element = "T0, T2, T1, P";
  s.kernel = [](Context& ctx, const DmTensor& in, const MappingScope& m) -> absl::StatusOr<DeviceTensor> {
    return ctx.main.begin(in.view())
        .fetch(DType::kF32, m.m("T0, T2, T1"), m.m("P"))
        .collect(m.m("T0, T2, T1"), m.m("P"))
        .vector_init()
        .vector_inter_slice_reduce(m.m("[W, T2] # 256"), m.m("T0, T1"), InterSliceReduceOpF32::kAdd)
        .vector_final()
        .commit(m.m("T0, T1, P"), 1 << 16);
  };
  s.readback = "W, T2, T0, T1, P";
  s.reference = [](const Index& at, const HostTensor& x) {
    auto value = [&](int64_t r) {
      return InF(x, {{"W", at["W"]}, {"R", r}, {"T0", at["T0"]}, {"T2", at["T2"]}, {"T1", at["T1"]}, {"P", at["P"]}});
    };
    float acc = value(0);
    for (int64_t r = 1; r < 4; ++r) acc += value(r);
    return static_cast<double>(acc);
  };
  return s;
}


// ---- Kernels built of several passes ------------------------------------------------------------

// One value per row in DM (element [1]) to the VRF of its slice, on the sub context.
absl::StatusOr<VrfTensor> RowToVrf(Context& ctx, const DmTensor& row, int64_t vrf_address, const MappingScope& m) {
  return ctx.sub.begin(row.view()).fetch(DType::kF32, m.m("1"), m.m("1 # 8")).collect(m.m("1"), m.m("1 # 8"))
      .to_vrf(m.m("1 # 8"), vrf_address);
}

// A row softmax, one row of N = 32 per slice, in three passes: the row max (intra-slice reduce Max),
// the sum of exp(x - max) (SubF with the max from the VRF, Exp, reduce Add), and exp(x - max) / sum
// (FpDiv with the sum from the VRF).
Sample RowSoftmax() {
  Sample s;
  s.name = "vector_row_softmax";
  s.description = "Vector Engine reductions: row softmax (reduce Max; SubF, Exp, reduce Add; SubF, Exp, FpDiv) "
                  "over N = 32 per slice";
  s.axes = "M = 256, N = 32";
  s.dtype = DType::kF32;
  s.slice = "M";
  s.element = "N";
  s.kernel = [](Context& ctx, const DmTensor& x, const MappingScope& m) -> absl::StatusOr<DeviceTensor> {
    auto fetch = [&] {
      return Enter(ctx.main.begin(x.view()).fetch(DType::kF32, m.m("N / 8"), m.m("N % 8")).collect(m.m("N / 8"), m.m("N % 8")))
          .vector_split(m.m("N / 4"), m.m("N % 4"));
    };
    ASSIGN_OR_RETURN(DmTensor row_max, fetch()
                                           .vector_intra_slice_reduce("N", m.m("1"), m.m("1 # 4"), IntraSliceReduceOpF32::kMax)
                                           .vector_pad_way8(m.m("1 # 8"))
                                           .vector_final()
                                           .commit(m.m("1 # 2"), 1 << 16));
    ASSIGN_OR_RETURN(VrfTensor max_vrf, RowToVrf(ctx, row_max, 0, m));
    ASSIGN_OR_RETURN(DmTensor row_sum, fetch()
                                           .vector_fp_binary(FpBinaryOp::SubF(), max_vrf)
                                           .vector_fp_unary(FpUnaryOp::kExp)
                                           .vector_intra_slice_reduce("N", m.m("1"), m.m("1 # 4"), IntraSliceReduceOpF32::kAdd)
                                           .vector_pad_way8(m.m("1 # 8"))
                                           .vector_final()
                                           .commit(m.m("1 # 2"), 1 << 17));
    ASSIGN_OR_RETURN(VrfTensor sum_vrf, RowToVrf(ctx, row_sum, 64, m));
    return fetch()
        .vector_fp_binary(FpBinaryOp::SubF(), max_vrf)
        .vector_fp_unary(FpUnaryOp::kExp)
        .vector_fp_div(FpDivBinaryOp::kDivF, sum_vrf)
        .vector_concat(m.m("N / 8"), m.m("N % 8"))
        .vector_final()
        .commit(m.m("N"), 1 << 18);
  };
  s.readback = "M, N";
  s.reference = [](const Index& at, const HostTensor& x) {
    double max = -INFINITY, sum = 0;
    for (int64_t n = 0; n < 32; ++n) max = std::max(max, In(x, {{"M", at["M"]}, {"N", n}}));
    for (int64_t n = 0; n < 32; ++n) sum += std::exp(In(x, {{"M", at["M"]}, {"N", n}}) - max);
    return std::exp(In(x, {{"M", at["M"]}, {"N", at["N"]}}) - max) / sum;
  };
  // Each output is exp / sum, values in (0, 1]: expf's error, 32 rounded additions and a division
  // stay well inside 64 f32 ulps of 1.
  s.tolerance = 64.0 / (1 << 24);
  s.host_math = [](const std::vector<HostTensor>& in) { return PrepareHostRowSoftmax({256, 32}, in[0]); };
  return s;
}

// RMS normalization whose statistic goes through the manual's Split Reduce pattern: the hidden
// dimension in two chunks x0, x1 (rows M in slices, N = 32 each). Per chunk, sum(x^2 + eps)
// (FmaF Mode002, reduce Add); the two partial sums fetched interleaved (I = 2), unzipped and added
// with vector_clip_zip(Add); then 1 / sqrt(total / 2N) (MulF, Sqrt, FpDiv Mode10); finally both
// chunks, fetched interleaved, times that (MulF with the VRF).
constexpr double kRmsEps = 1e-5;
Sample RmsNormSplitReduce() {
  ContractionSpec spec;
  spec.name = "vector_rms_norm_split_reduce";
  spec.description = "Vector Engine reductions: RMSNorm over two chunks of the hidden dimension through Split "
                     "Reduce (interleaved fetch, unzip, clip_zip Add)";
  spec.axes = "M = 256, N = 32, I = 2";
  spec.operands = {{DType::kF32, "M, N", 42, 0}, {DType::kF32, "M, N", 43, 1 << 28}};
  spec.kernel = [](Context& ctx, const std::vector<HbmTensor>& in, const MappingScope& m) -> absl::StatusOr<DeviceTensor> {
    const Mapping cluster = m.m("1 # 2"), slice = m.m("M");
    ASSIGN_OR_RETURN(DmTensor x0, in[0].to_dm(ctx.tdma, 0, cluster, slice, m.m("N")));
    ASSIGN_OR_RETURN(DmTensor x1, in[1].to_dm(ctx.tdma, 1 << 12, cluster, slice, m.m("N")));
    // mean(x^2 + eps) = mean(x^2) + eps: each element carries eps into the sums.
    const float eps = static_cast<float>(kRmsEps);
    auto partial = [&](const DmTensor& x, int64_t address) -> absl::StatusOr<DmTensor> {
      return Enter(ctx.main.begin(x.view()).fetch(DType::kF32, m.m("N / 8"), m.m("N % 8")).collect(m.m("N / 8"), m.m("N % 8")))
          .vector_split(m.m("N / 4"), m.m("N % 4"))
          .vector_fp_ternary_with_mode(FpTernaryOp::kFmaF, TernaryArgMode::kMode002, VeBranchOperand(0.0f, eps))
          .vector_intra_slice_reduce("N", m.m("1"), m.m("1 # 4"), IntraSliceReduceOpF32::kAdd)
          .vector_pad_way8(m.m("1 # 8"))
          .vector_final()
          .commit(m.m("1 # 2"), address);
    };
    ASSIGN_OR_RETURN(DmTensor sum0, partial(x0, 1 << 16));
    ASSIGN_OR_RETURN(DmTensor sum1, partial(x1, (1 << 16) + 64));
    ASSIGN_OR_RETURN(DmTensor total, ctx.main.begin_interleaved(m.m("I"), sum0.view(), sum1.view())
                                         .fetch(DType::kF32, m.m("I"), m.m("1 # 8"))
                                         .collect(m.m("I"), m.m("1 # 8"))
                                         .vector_init()
                                         .vector_intra_slice_unzip("I", m.m("1 # 2"), m.m("1"))
                                         .vector_clip_zip(ClipBinaryOpF32::kAdd)
                                         .vector_final()
                                         .commit(m.m("1 # 2"), (1 << 16) + 128));
    ASSIGN_OR_RETURN(DmTensor inverse_rms,
                     Enter(ctx.main.begin(total.view()).fetch(DType::kF32, m.m("1"), m.m("1 # 8")).collect(m.m("1"), m.m("1 # 8")))
                         .vector_trim_way4(m.m("1 # 4"))
                         .vector_fp_binary(FpBinaryOp::MulF(FpMulAlu::kMul0), 1.0f / 64.0f)
                         .vector_fp_unary(FpUnaryOp::kSqrt)
                         .vector_fp_div_with_mode(FpDivBinaryOp::kDivF, BinaryArgMode::kMode10, 1.0f)
                         .vector_pad_way8(m.m("1 # 8"))
                         .vector_final()
                         .commit(m.m("1 # 2"), (1 << 16) + 192));
    ASSIGN_OR_RETURN(VrfTensor scale, RowToVrf(ctx, inverse_rms, 0, m));
    ASSIGN_OR_RETURN(DmTensor y, Enter(ctx.main.begin_interleaved(m.m("I"), x0.view(), x1.view())
                                           .fetch(DType::kF32, m.m("I, N / 8"), m.m("N % 8"))
                                           .collect(m.m("I, N / 8"), m.m("N % 8")))
                                     .vector_split(m.m("I, N / 4"), m.m("N % 4"))
                                     .vector_fp_binary(FpBinaryOp::MulF(FpMulAlu::kMul0), scale)
                                     .vector_concat(m.m("I, N / 8"), m.m("N % 8"))
                                     .vector_final()
                                     .commit(m.m("I, N"), 1 << 17));
    ASSIGN_OR_RETURN(HbmTensor out, y.to_hbm(ctx.tdma, 2 << 28, m.m("M, I, N")));
    return out;
  };
  spec.readback = "M, I, N";
  spec.expected = [](const std::vector<HostTensor>& in, const MappingScope&) -> absl::StatusOr<Expected> {
    HostTensor x0 = in[0], x1 = in[1];
    auto value = [x0, x1](const Index& at) {
      double squares = 0;
      for (int64_t n = 0; n < 32; ++n) {
        const double a = In(x0, {{"M", at["M"]}, {"N", n}}), b = In(x1, {{"M", at["M"]}, {"N", n}});
        squares += a * a + b * b;
      }
      const double x = In(at["I"] == 0 ? x0 : x1, {{"M", at["M"]}, {"N", at["N"]}});
      return x / std::sqrt(squares / 64.0 + kRmsEps);
    };
    // |x| < 1 and rms >= sqrt(eps): the relative error of 32 + 1 rounded fma / add steps, the scale,
    // sqrt, division and product stays inside 128 f32 ulps of the value.
    auto bound = [value](const Index& at) { return 128.0 / (1 << 24) * std::fabs(value(at)) + 1e-30; };
    return Expected{value, bound, "RMSNorm in double, bound 128 f32 ulps relative"};
  };
  spec.host_math = [](const std::vector<HostTensor>& in) {
    return PrepareHostRmsNorm({256, 32}, in, static_cast<float>(kRmsEps));
  };
  return MakeContractionSample(std::move(spec));
}
}  // namespace

std::vector<Sample> VectorReduceSamples() {
  std::vector<Sample> samples = {ReduceTime(), ReducePacket(), ReduceTimePacket(), ReduceSliceTimePacket(),
                                 InterBroadcast(), InterPromotion(), RowSoftmax(), RmsNormSplitReduce()};
  for (Sample& s : InterSliceI32Samples()) samples.push_back(std::move(s));
  for (Sample& s : MaskedReduceSamples()) samples.push_back(std::move(s));
  return samples;
}

}  // namespace visa::samples
