// The Contraction Engine chapter's case studies: batched matmul VMK, VNK -> VMN mapped three ways
// (K contracted by the Reducer, V vectorized, N x M tiled), an i8 contraction with exact integer
// results and an f8 one; each against an Eigen reference.
#include <Eigen/Core>

#include "absl/strings/str_cat.h"
#include "dsl/status_macros.h"
#include "samples/contraction_sample.h"

namespace visa::samples {
namespace {

using Matrix = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

constexpr int kV = 4, kM = 32, kN = 24, kK = 32;
const char* kBatchedAxes = "V = 4, M = 32, N = 24, K = 32";

// lhs [V, M, K] and rhs [V, N, K] as host tensors laid out that way: out[v, m, n] = sum_k l * r.
Expected BatchedExpected(const HostTensor& lhs, const HostTensor& rhs, int levels, bool bf16_output) {
  std::vector<double> l = lhs.ToValues(), r = rhs.ToValues();
  auto value = std::make_shared<std::vector<double>>(kV * kM * kN);
  auto magnitude = std::make_shared<std::vector<double>>(kV * kM * kN);
  for (int v = 0; v < kV; ++v) {
    Matrix a(kM, kK), b(kN, kK);
    for (int m = 0; m < kM; ++m)
      for (int k = 0; k < kK; ++k) a(m, k) = static_cast<float>(l[(v * kM + m) * kK + k]);
    for (int n = 0; n < kN; ++n)
      for (int k = 0; k < kK; ++k) b(n, k) = static_cast<float>(r[(v * kN + n) * kK + k]);
    Matrix c = a * b.transpose();
    Matrix mags = a.cwiseAbs() * b.cwiseAbs().transpose();
    for (int m = 0; m < kM; ++m) {
      for (int n = 0; n < kN; ++n) {
        (*value)[(v * kM + m) * kN + n] = c(m, n);
        (*magnitude)[(v * kM + m) * kN + n] = mags(m, n);
      }
    }
  }
  auto at = [](const std::vector<double>& t, const Index& i) { return t[(i["V"] * kM + i["M"]) * kN + i["N"]]; };
  Expected expected;
  expected.value = [value, at](const Index& i) { return at(*value, i); };
  expected.bound = [value, magnitude, at, levels, bf16_output](const Index& i) {
    return SumBound(levels, at(*magnitude, i), at(*value, i), bf16_output);
  };
  expected.note = absl::StrCat("bound: ", levels, " f32 roundings x sum|a*b|, Eigen float reference");
  return expected;
}

// rhs [V, N, K] into the TRF as Row [N % 8], Element [V, N / 8, K] (the K and N x M mappings).
absl::StatusOr<TrfTensor> WeightsByRow(Context& ctx, const HbmTensor& rhs_hbm, const MappingScope& s) {
  ASSIGN_OR_RETURN(DmTensor rhs, rhs_hbm.to_dm(ctx.tdma, 1 << 16, s.m("1 # 2"), s.m("1 # 256"), s.m("V, N, K")));
  return ctx.sub.begin(rhs.view())
      .fetch(DType::kBF16, s.m("N % 8, V, N / 8"), s.m("K"))
      .collect(s.m("N % 8, V, N / 8, K / 16"), s.m("K % 16"))
      .to_trf(s.m("N % 8"), s.m("V, N / 8, K"), TrfAddress::kFull);
}

ContractionSpec BatchedSpec(std::string name, std::string description) {
  ContractionSpec spec;
  spec.name = std::move(name);
  spec.description = std::move(description);
  spec.axes = kBatchedAxes;
  spec.operands = {{DType::kBF16, "V, M, K", 42, 0}, {DType::kBF16, "V, N, K", 43, 1 << 28}};
  spec.host_math = [](const std::vector<HostTensor>& in) {
    return PrepareHostGemm({.batch = 4, .rows = 32, .inner = 32, .cols = 24, .rhs_transposed = true}, in[0], in[1]);
  };
  spec.readback = "V, M, N";
  return spec;
}

// K contraction by the Reducer: Packet [K] (64 bytes) summed by the tree, N / 8 a Time broadcast.
Sample BatchedKContraction() {
  ContractionSpec spec = BatchedSpec("batched_matmul_k", "VMK,VNK->VMN with K in the packet (tree depth 5), "
                                                         "N % 8 on Rows, N / 8 a Time broadcast");
  spec.kernel = [](Context& ctx, const std::vector<HbmTensor>& in, const MappingScope& s) -> absl::StatusOr<DeviceTensor> {
    const Mapping cluster = s.m("1 # 2"), slice = s.m("1 # 256");
    ASSIGN_OR_RETURN(DmTensor lhs, in[0].to_dm(ctx.tdma, 0, cluster, slice, s.m("V, M, K")));
    ASSIGN_OR_RETURN(TrfTensor trf, WeightsByRow(ctx, in[1], s));
    ASSIGN_OR_RETURN(DmTensor out, ctx.main.begin(lhs.view())
                                       .fetch(DType::kBF16, s.m("V, M"), s.m("K"))
                                       .collect(s.m("V, M, K / 16"), s.m("K % 16"))
                                       .align(s.m("V, M, N / 8"), s.m("K"), trf)
                                       .contract(s.m("1"))
                                       .accumulate(s.m("V, M, N / 8"), s.m("N % 8"), AccumulationKind::kInterleaved)
                                       .commit(s.m("V, M, N"), 1 << 17));
    return out;
  };
  spec.expected = [](const std::vector<HostTensor>& in, const MappingScope&) -> absl::StatusOr<Expected> {
    return BatchedExpected(in[0], in[1], 5, false);
  };
  return MakeContractionSample(std::move(spec));
}

// V vectorized: Packet [V # 32] keeps the batch (tree depth 0), K accumulated over Time.
Sample BatchedVVectorized() {
  ContractionSpec spec = BatchedSpec("batched_matmul_v", "VMK,VNK->VMN with V in the packet (tree depth 0), "
                                                         "K accumulated in time order");
  spec.operands[0].hbm = "M, K, V";
  spec.operands[1].hbm = "N, K, V";
  spec.kernel = [](Context& ctx, const std::vector<HbmTensor>& in, const MappingScope& s) -> absl::StatusOr<DeviceTensor> {
    const Mapping cluster = s.m("1 # 2"), slice = s.m("1 # 256");
    ASSIGN_OR_RETURN(DmTensor lhs, in[0].to_dm(ctx.tdma, 0, cluster, slice, s.m("M, K, V")));
    ASSIGN_OR_RETURN(DmTensor rhs, in[1].to_dm(ctx.tdma, 1 << 16, cluster, slice, s.m("N, K, V")));
    ASSIGN_OR_RETURN(TrfTensor trf, ctx.sub.begin(rhs.view())
                                        .fetch(DType::kBF16, s.m("N % 8, N / 8, K"), s.m("V # 16"))
                                        .collect(s.m("N % 8, N / 8, K"), s.m("V # 16"))
                                        .to_trf(s.m("N % 8"), s.m("N / 8, K, V # 16"), TrfAddress::kFull));
    ASSIGN_OR_RETURN(DmTensor out, ctx.main.begin(lhs.view())
                                       .fetch(DType::kBF16, s.m("M, N / 8, K"), s.m("V # 16"))
                                       .collect(s.m("M, N / 8, K"), s.m("V # 16"))
                                       .align(s.m("M, N / 8, K"), s.m("V # 32"), trf)
                                       .contract(s.m("V # 32"))
                                       .accumulate(s.m("M, N / 8, V # 32"), s.m("N % 8"), AccumulationKind::kInterleaved)
                                       .commit(s.m("M, N / 8, V # 32, N % 8"), 1 << 17));
    return out;
  };
  spec.expected = [](const std::vector<HostTensor>& in, const MappingScope&) -> absl::StatusOr<Expected> {
    return BatchedExpected(in[0], in[1], kK, false);
  };
  return MakeContractionSample(std::move(spec));
}

// N x M tiled: Packet [M] from the stream (tree depth 0), one weight broadcast across it
// (reg_read_size 2 bytes), K accumulated over Time.
Sample BatchedNmTiled() {
  ContractionSpec spec = BatchedSpec("batched_matmul_nm", "VMK,VNK->VMN with M in the packet, each weight "
                                                          "broadcast 32x (reg_read_size 2 B), K in time");
  spec.operands[0].hbm = "V, K, M";
  spec.kernel = [](Context& ctx, const std::vector<HbmTensor>& in, const MappingScope& s) -> absl::StatusOr<DeviceTensor> {
    const Mapping cluster = s.m("1 # 2"), slice = s.m("1 # 256");
    ASSIGN_OR_RETURN(DmTensor lhs, in[0].to_dm(ctx.tdma, 0, cluster, slice, s.m("V, K, M")));
    ASSIGN_OR_RETURN(TrfTensor trf, WeightsByRow(ctx, in[1], s));
    ASSIGN_OR_RETURN(DmTensor out, ctx.main.begin(lhs.view())
                                       .fetch(DType::kBF16, s.m("V, N / 8, K"), s.m("M"))
                                       .collect(s.m("V, N / 8, K, M / 16"), s.m("M % 16"))
                                       .align(s.m("V, N / 8, K"), s.m("M"), trf)
                                       .contract(s.m("M"))
                                       .accumulate(s.m("V, N / 8, M"), s.m("N % 8"), AccumulationKind::kInterleaved)
                                       .commit(s.m("V, N / 8, M, N % 8"), 1 << 17));
    return out;
  };
  spec.expected = [](const std::vector<HostTensor>& in, const MappingScope&) -> absl::StatusOr<Expected> {
    return BatchedExpected(in[0], in[1], kK, false);
  };
  return MakeContractionSample(std::move(spec));
}

// [A, K] x [R, K] -> [A, R] on 8 slices of `dtype` (i8: exact i32; f8: f32 within the bound).
Sample SmallMatmul(std::string name, DType dtype) {
  ContractionSpec spec;
  spec.name = name;
  spec.description = absl::StrCat(Name(dtype), " contraction on 8 slices: [A, K] x [R, K] -> [A, R], tree depth 6, ",
                                  "K / 64 accumulated");
  spec.axes = "S = 8, A = 16, R = 8, K = 256";
  spec.operands = {{dtype, "S, A, K", 42, 0}, {dtype, "S, R, K", 43, 1 << 28}};
  spec.host_math = [](const std::vector<HostTensor>& in) {
    return PrepareHostGemm({.batch = 8, .rows = 16, .inner = 256, .cols = 8, .rhs_transposed = true}, in[0], in[1]);
  };
  spec.kernel = [dtype](Context& ctx, const std::vector<HbmTensor>& in, const MappingScope& s) -> absl::StatusOr<DeviceTensor> {
    const Mapping cluster = s.m("1 # 2"), slice = s.m("S # 256");
    ASSIGN_OR_RETURN(DmTensor lhs, in[0].to_dm(ctx.tdma, 0, cluster, slice, s.m("A, K")));
    ASSIGN_OR_RETURN(DmTensor rhs, in[1].to_dm(ctx.tdma, 1 << 16, cluster, slice, s.m("R, K")));
    ASSIGN_OR_RETURN(TrfTensor trf, ctx.sub.begin(rhs.view())
                                        .fetch(dtype, s.m("R"), s.m("K"))
                                        .collect(s.m("R, K / 32"), s.m("K % 32"))
                                        .to_trf(s.m("R"), s.m("K"), TrfAddress::kFull));
    ASSIGN_OR_RETURN(DmTensor out, ctx.main.begin(lhs.view())
                                       .fetch(dtype, s.m("A"), s.m("K"))
                                       .collect(s.m("A, K / 32"), s.m("K % 32"))
                                       .align(s.m("A, K / 64"), s.m("K % 64"), trf)
                                       .contract(s.m("1"))
                                       .accumulate(s.m("A"), s.m("R"), AccumulationKind::kInterleaved)
                                       .commit(s.m("A, R"), 1 << 17));
    return out;
  };
  spec.readback = "S, A, R";
  spec.expected = [dtype](const std::vector<HostTensor>& in, const MappingScope&) -> absl::StatusOr<Expected> {
    std::vector<double> l = in[0].ToValues(), r = in[1].ToValues();
    auto value = std::make_shared<std::vector<double>>(8 * 16 * 8);
    auto magnitude = std::make_shared<std::vector<double>>(8 * 16 * 8);
    for (int slice = 0; slice < 8; ++slice) {
      // Integers in double are exact here (|sum| < 2^22); floats go through Eigen in f32.
      Matrix a(16, 256), b(8, 256);
      Eigen::MatrixXd ad(16, 256), bd(8, 256);
      for (int i = 0; i < 16; ++i)
        for (int k = 0; k < 256; ++k) ad(i, k) = a(i, k) = static_cast<float>(l[(slice * 16 + i) * 256 + k]);
      for (int j = 0; j < 8; ++j)
        for (int k = 0; k < 256; ++k) bd(j, k) = b(j, k) = static_cast<float>(r[(slice * 8 + j) * 256 + k]);
      Eigen::MatrixXd c = ad * bd.transpose();
      Matrix mags = a.cwiseAbs() * b.cwiseAbs().transpose();
      for (int i = 0; i < 16; ++i) {
        for (int j = 0; j < 8; ++j) {
          (*value)[(slice * 16 + i) * 8 + j] = c(i, j);
          (*magnitude)[(slice * 16 + i) * 8 + j] = mags(i, j);
        }
      }
    }
    auto at = [](const std::vector<double>& t, const Index& i) { return t[(i["S"] * 16 + i["A"]) * 8 + i["R"]]; };
    Expected expected;
    expected.value = [value, at](const Index& i) { return at(*value, i); };
    if (IsFloat(dtype)) {
      expected.bound = [magnitude, at](const Index& i) { return SumBound(6 + 4, at(*magnitude, i), 0, false); };
      expected.note = "bound: 10 f32 roundings (depth 6 + 4 time steps) x sum|a*b|, Eigen reference";
    } else {
      expected.bound = [](const Index&) { return 0.0; };
    }
    return expected;
  };
  return MakeContractionSample(std::move(spec));
}

}  // namespace

std::vector<Sample> BatchedContractionSamples() {
  return {BatchedKContraction(), BatchedVVectorized(), BatchedNmTiled(), SmallMatmul("matmul_i8", DType::kI8),
          SmallMatmul("matmul_f8", DType::kF8E4M3)};
}

}  // namespace visa::samples
