// "Hello, TCP!" contractions: the dot product, GEMV and GEMM kernels of the manual, line by line,
// each checked against Eigen with the error bound of the Reducer's summation order.
//
// Where the manual's listing cannot run as printed, the kernel says why next to the change:
// GEMV collects 32-byte flits (the Collect Engine's packet is one flit; the listing passes its
// 64-byte Packet), and GEMM takes K = 1024 and puts B at 128 KiB (the listing's K = 2048 needs a
// 16 KB TRF row, twice the 8 KB the TRF has, and its B at 4 KiB would overlap A's 128 KiB).
#include <Eigen/Core>

#include "absl/strings/str_cat.h"
#include "dsl/status_macros.h"
#include "samples/contraction_sample.h"

namespace visa::samples {
namespace {

using Matrix = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

// A host tensor laid out row-major as [rows, cols] (its mapping's position order).
Matrix AsMatrix(const HostTensor& tensor, int64_t rows, int64_t cols) {
  std::vector<double> values = tensor.ToValues();
  Matrix m(rows, cols);
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t c = 0; c < cols; ++c) m(r, c) = static_cast<float>(values[r * cols + c]);
  }
  return m;
}

// out = lhs (rows x inner) * rhs (inner x cols), compared by (row axis, col axis) of the index;
// `levels` is the number of rounded additions on a path (tree depth + time accumulations).
Expected MatmulExpected(const Matrix& lhs, const Matrix& rhs, std::string row_axis, std::string col_axis,
                        int levels, bool bf16_output) {
  auto product = std::make_shared<Matrix>(lhs * rhs);
  auto magnitudes = std::make_shared<Matrix>(lhs.cwiseAbs() * rhs.cwiseAbs());
  auto at = [row_axis, col_axis](const Matrix& m, const Index& index) {
    return static_cast<double>(m(row_axis.empty() ? 0 : index[row_axis], col_axis.empty() ? 0 : index[col_axis]));
  };
  Expected expected;
  expected.value = [product, at](const Index& index) { return at(*product, index); };
  expected.bound = [product, magnitudes, at, levels, bf16_output](const Index& index) {
    return SumBound(levels, at(*magnitudes, index), at(*product, index), bf16_output);
  };
  expected.note = absl::StrCat("bound: ", levels, " f32 roundings (tree depth + time steps) x sum|a*b|",
                               bf16_output ? " + bf16 half-ulp" : "", ", Eigen float reference");
  return expected;
}

// The manual's dot product: both operands along A in one slice, A / 32 accumulated in time.
Sample DotProduct() {
  ContractionSpec spec;
  spec.name = "dot";
  spec.description = "Hello TCP dot product (A = 2048, bf16): align, contract, accumulate, cast, commit";
  spec.axes = "A = 2048";
  spec.operands = {{DType::kBF16, "A", 42, 0}, {DType::kBF16, "A", 43, 1 << 28}};
  spec.host_math = [](const std::vector<HostTensor>& in) {
    return PrepareHostGemm({.rows = 1, .inner = 2048, .cols = 1}, in[0], in[1]);
  };
  spec.kernel = [](Context& ctx, const std::vector<HbmTensor>& in, const MappingScope& s) -> absl::StatusOr<DeviceTensor> {
    const Mapping cluster = s.m("1 # 2"), slice = s.m("1 # 256"), time = s.m("1");
    ASSIGN_OR_RETURN(DmTensor lhs, in[0].to_dm(ctx.tdma, 0, cluster, slice, s.m("A")));
    ASSIGN_OR_RETURN(DmTensor rhs, in[1].to_dm(ctx.tdma, 1 << 12, cluster, slice, s.m("A")));
    ASSIGN_OR_RETURN(TrfTensor rhs_trf, ctx.sub.begin(rhs.view())
                                            .fetch(DType::kBF16, time, s.m("A"))
                                            .collect(s.m("A / 16"), s.m("A % 16"))
                                            .to_trf(s.m("1"), s.m("A"), TrfAddress::kFull));
    ASSIGN_OR_RETURN(DmTensor result, ctx.main.begin(lhs.view())
                                          .fetch(DType::kBF16, time, s.m("A"))
                                          .collect(s.m("A / 16"), s.m("A % 16"))
                                          .align(s.m("A / 32"), s.m("A % 32"), rhs_trf)
                                          .contract(s.m("1"))
                                          .accumulate(s.m("1"), s.m("1 # 8"), AccumulationKind::kInterleaved)
                                          .cast(DType::kBF16, s.m("1 # 16"))
                                          .commit(s.m("1 # 8"), 1 << 13));
    ASSIGN_OR_RETURN(HbmTensor out, result.to_hbm(ctx.tdma, 2 << 28, s.m("1")));
    return out;
  };
  spec.readback = "1";
  spec.expected = [](const std::vector<HostTensor>& in, const MappingScope&) -> absl::StatusOr<Expected> {
    return MatmulExpected(AsMatrix(in[0], 1, 2048), AsMatrix(in[1], 2048, 1), "", "", 5 + 64, true);
  };
  return MakeContractionSample(std::move(spec));
}

// The manual's GEMV: the vector broadcast to every I slice, J split into Time and Packet.
Sample Gemv() {
  ContractionSpec spec;
  spec.name = "gemv";
  spec.description = "Hello TCP GEMV (I = 256, J = 2048, bf16): one output row per slice";
  spec.axes = "I = 256, J = 2048";
  spec.operands = {{DType::kBF16, "I, J", 42, 0}, {DType::kBF16, "J", 43, 1 << 28}};
  spec.host_math = [](const std::vector<HostTensor>& in) {
    return PrepareHostGemm({.rows = 256, .inner = 2048, .cols = 1}, in[0], in[1]);
  };
  spec.kernel = [](Context& ctx, const std::vector<HbmTensor>& in, const MappingScope& s) -> absl::StatusOr<DeviceTensor> {
    const Mapping cluster = s.m("1 # 2"), slice = s.m("I");
    const Mapping time = s.m("J / 32"), packet = s.m("J % 32");
    ASSIGN_OR_RETURN(DmTensor matrix, in[0].to_dm(ctx.tdma, 0, cluster, slice, s.m("J")));
    ASSIGN_OR_RETURN(DmTensor vector, in[1].to_dm(ctx.tdma, 1 << 12, cluster, slice, s.m("J")));
    ASSIGN_OR_RETURN(TrfTensor vector_trf, ctx.sub.begin(vector.view())
                                               .fetch(DType::kBF16, s.m("1"), s.m("J"))
                                               .collect(s.m("J / 16"), s.m("J % 16"))
                                               .to_trf(s.m("1"), s.m("J"), TrfAddress::kFull));
    // The listing collects <Time, Packet> (64-byte packets); the Collect Engine emits 32-byte
    // flits, so it collects [J / 16] [J % 16] and the Stream Adapter pairs them back.
    ASSIGN_OR_RETURN(DmTensor result, ctx.main.begin(matrix.view())
                                          .fetch(DType::kBF16, time, packet)
                                          .collect(s.m("J / 16"), s.m("J % 16"))
                                          .align(time, packet, vector_trf)
                                          .contract(s.m("1"))
                                          .accumulate(s.m("1"), s.m("1 # 8"), AccumulationKind::kInterleaved)
                                          .cast(DType::kBF16, s.m("1 # 16"))
                                          .commit(s.m("1 # 8"), 1 << 13));
    ASSIGN_OR_RETURN(HbmTensor out, result.to_hbm(ctx.tdma, 2 << 28, s.m("I")));
    return out;
  };
  spec.readback = "I";
  spec.expected = [](const std::vector<HostTensor>& in, const MappingScope&) -> absl::StatusOr<Expected> {
    return MatmulExpected(AsMatrix(in[0], 256, 2048), AsMatrix(in[1], 2048, 1), "I", "", 5 + 64, true);
  };
  return MakeContractionSample(std::move(spec));
}

// The manual's GEMM: Slice [I / 32, J / 32], Row [J % 8]; B through the TRF, A streamed. bf16
// casts its f32 sums back to bf16; i8 (the same kernel at the Reducer's i8 widths: 32-element
// flits, 64-element packets) keeps its exact i32 sums.
Sample Gemm(const std::string& name, int64_t k, bool slow, DType dtype = DType::kBF16) {
  const bool is_i8 = dtype == DType::kI8;
  ContractionSpec spec;
  spec.name = name;
  spec.description = absl::StrCat("Hello TCP GEMM (I = J = 512, K = ", k, ", ", Name(dtype), "): a 32 x 32 tile per slice");
  spec.axes = absl::StrCat("I = 512, J = 512, K = ", k);
  spec.operands = {{dtype, "I, K", 42, 0}, {dtype, "K, J", 43, 1 << 28}};
  spec.host_math = [k](const std::vector<HostTensor>& in) {
    return PrepareHostGemm({.rows = 512, .inner = k, .cols = 512}, in[0], in[1]);
  };
  spec.relaxes_dma_packet_rule = absl::StrCat("the manual's b.to_dm moves [K, J] into DM as J % 32, K, ",
                                              is_i8 ? 1 : 2, "-byte packets");
  spec.kernel = [k, dtype, is_i8](Context& ctx, const std::vector<HbmTensor>& in, const MappingScope& s) -> absl::StatusOr<DeviceTensor> {
    const Mapping cluster = s.m("1 # 2"), slice = s.m("I / 32, J / 32");
    const int64_t bytes = is_i8 ? 1 : 2;
    const std::string flit = is_i8 ? "32" : "16", packet = is_i8 ? "64" : "32";
    ASSIGN_OR_RETURN(DmTensor a, in[0].to_dm(ctx.tdma, 0, cluster, slice, s.m("I % 32, K")));
    // B after A's I % 32 x K elements (the listing's 1 << 12 would overlap them).
    ASSIGN_OR_RETURN(DmTensor b, in[1].to_dm(ctx.tdma, 32 * k * bytes, cluster, slice, s.m("J % 32, K")));
    ASSIGN_OR_RETURN(TrfTensor b_trf, ctx.sub.begin(b.view())
                                          .fetch(dtype, s.m("J % 8, J / 8 % 4"), s.m("K"))
                                          .collect(s.m("J % 8, J / 8 % 4, K / " + flit), s.m("K % " + flit))
                                          .to_trf(s.m("J % 8"), s.m("J / 8 % 4, K"), TrfAddress::kFull));
    Stream sums = ctx.main.begin(a.view())
                      .fetch(dtype, s.m("I % 32, J / 8 % 4"), s.m("K"))
                      .collect(s.m("I % 32, J / 8 % 4, K / " + flit), s.m("K % " + flit))
                      .align(s.m("I % 32, J / 8 % 4, K / " + packet), s.m("K % " + packet), b_trf)
                      .contract(s.m("1"))
                      .accumulate(s.m("I % 32, J / 8 % 4"), s.m("J % 8"), AccumulationKind::kInterleaved);
    if (!is_i8) sums = std::move(sums).cast(DType::kBF16, s.m("J % 8 # 16"));
    ASSIGN_OR_RETURN(DmTensor result, std::move(sums).commit(s.m("I % 32, J % 32"), 64 * k * bytes));
    ASSIGN_OR_RETURN(HbmTensor out, result.to_hbm(ctx.tdma, 2 << 28, s.m("I, J")));
    return out;
  };
  spec.readback = "I, J";
  spec.expected = [k, is_i8](const std::vector<HostTensor>& in, const MappingScope&) -> absl::StatusOr<Expected> {
    Expected expected = MatmulExpected(AsMatrix(in[0], 512, k), AsMatrix(in[1], k, 512), "I", "J",
                                       5 + static_cast<int>(k / 32), true);
    // i8 sums are exact (|sum| <= 1024 * 128 * 128 = 2^24, which the f32 reference also holds exactly).
    if (is_i8) {
      expected.bound = [](const Index&) { return 0.0; };
      expected.note = "exact i32 sums, Eigen float reference (exact below 2^24)";
    }
    return expected;
  };
  spec.slow = slow;
  return MakeContractionSample(std::move(spec));
}

}  // namespace

std::vector<Sample> HelloContractionSamples() {
  return {DotProduct(), Gemv(), Gemm("gemm", 1024, true), Gemm("gemm_k64", 64, false),
          Gemm("gemm_i8", 1024, true, DType::kI8)};
}

}  // namespace visa::samples
