// Samples whose schedules show the scheduler's rules (`visa schedule NAME`).
//
// gemm_double_buffered ("Scheduling" > Hardware Resources: the sub context prepares the next
// operation's data "while the current one computes"): two weight matrices B[0], B[1] share one
// streamed A; the sub context loads B[0] into the TRF's first half, main contracts with it while
// the sub context loads B[1] into the second half, then main contracts with B[1]. Its schedule
// shows the second load overlapping the first contraction.
//
// column_walk_during_dma ("Memory Performance" > Bank Starvation): a DMA copies a DM tensor to HBM
// while main fetches the same tensor down its columns; rows of 128 bytes put every fetch of a
// column on one DM bank, 128 in a row, past the 64-access limit: the schedule warns and names both.
#include <Eigen/Core>

#include "absl/strings/str_cat.h"
#include "dsl/status_macros.h"
#include "samples/contraction_sample.h"

namespace visa::samples {
namespace {

using Matrix = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

constexpr int64_t kI = 512, kJ = 512, kK = 512;

Matrix AsMatrix(const HostTensor& tensor, int64_t rows, int64_t cols) {
  std::vector<double> values = tensor.ToValues();
  Matrix m(rows, cols);
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t c = 0; c < cols; ++c) m(r, c) = static_cast<float>(values[r * cols + c]);
  }
  return m;
}

absl::StatusOr<DeviceTensor> DoubleBufferedGemm(Context& ctx, const std::vector<HbmTensor>& in,
                                                const MappingScope& s) {
  const Mapping cluster = s.m("1 # 2"), slice = s.m("I / 32, J / 32");
  ASSIGN_OR_RETURN(DmTensor a, in[0].to_dm(ctx.tdma, 0, cluster, slice, s.m("I % 32, K")));
  ASSIGN_OR_RETURN(DmTensor b, in[1].to_dm(ctx.tdma, 32 * kK * 2, cluster, slice, s.m("H, J % 32, K")));
  ASSIGN_OR_RETURN(DmTensor c, DmTensor::Create(ctx.device(), DType::kBF16, s.m("1"), cluster, slice,
                                                s.m("H, I % 32, J % 32"), 3 * 32 * kK * 2));
  for (int64_t h = 0; h < 2; ++h) {
    // K = 512 bf16 x J / 8 % 4 fills half a TRF row (4 KB): one half per weight matrix.
    ASSIGN_OR_RETURN(DmTensor b_h, b.tile(s.m("H"), 1, h));
    ASSIGN_OR_RETURN(TrfTensor b_trf, ctx.sub.begin(b_h)
                                          .fetch(DType::kBF16, s.m("J % 8, J / 8 % 4"), s.m("K"))
                                          .collect(s.m("J % 8, J / 8 % 4, K / 16"), s.m("K % 16"))
                                          .to_trf(s.m("J % 8"), s.m("J / 8 % 4, K"),
                                                  h == 0 ? TrfAddress::kFirstHalf : TrfAddress::kSecondHalf));
    ASSIGN_OR_RETURN(DmTensor c_h, c.tile(s.m("H"), 1, h));
    RETURN_IF_ERROR(ctx.main.begin(a.view())
                        .fetch(DType::kBF16, s.m("I % 32, J / 8 % 4"), s.m("K"))
                        .collect(s.m("I % 32, J / 8 % 4, K / 16"), s.m("K % 16"))
                        .align(s.m("I % 32, J / 8 % 4, K / 32"), s.m("K % 32"), b_trf)
                        .contract(s.m("1"))
                        .accumulate(s.m("I % 32, J / 8 % 4"), s.m("J % 8"), AccumulationKind::kInterleaved)
                        .cast(DType::kBF16, s.m("J % 8 # 16"))
                        .commit_view(c_h));
  }
  ASSIGN_OR_RETURN(HbmTensor out, c.to_hbm(ctx.tdma, 2 << 28, s.m("H, I, J")));
  return out;
}


// [A, B] i8 with 128-byte rows, fetched 8 bytes of B at a time down A: every fetch of a column
// lands on bank (8 x (B / 8)) / 8 % 16, 128 times in a row; the output is the transpose's layout
// [B / 8, A, B % 8].
Sample ColumnWalkDuringDma() {
  Sample s;
  s.name = "column_walk_during_dma";
  s.description =
      "a DM tensor copied to HBM by DMA while main fetches it column by column (128 fetches in a row "
      "from one DM bank): a bank-starvation warning";
  s.axes = "A = 128, B = 128";
  s.dtype = DType::kI8;
  s.element = "A, B";
  s.kernel = [](Context& ctx, const DmTensor& input, const MappingScope& m) -> absl::StatusOr<DeviceTensor> {
    // Reads only: the DMA and the walk do not wait for each other.
    RETURN_IF_ERROR(input.to_hbm(ctx.tdma, 0, m.m("A, B")).status());
    ASSIGN_OR_RETURN(DmTensor out, ctx.main.begin(input.view())
                                       .fetch(DType::kI8, m.m("B / 8, A"), m.m("B % 8"))
                                       .collect(m.m("B / 8, A"), m.m("B % 8 # 32"))
                                       .commit(m.m("B / 8, A, B % 8"), 0x10000));
    return out;
  };
  s.readback = "A, B";
  return s;
}

Sample DoubleBufferedGemmSample() {
  ContractionSpec spec;
  spec.name = "gemm_double_buffered";
  spec.description =
      "GEMM with two weight matrices (I = J = K = 512, H = 2, bf16): the sub context loads B[1] into "
      "the TRF's second half while main contracts with B[0]";
  spec.axes = absl::StrCat("I = ", kI, ", J = ", kJ, ", K = ", kK, ", H = 2");
  spec.operands = {{DType::kBF16, "I, K", 42, 0}, {DType::kBF16, "H, K, J", 43, 1 << 28}};
  spec.operands[1].hbm = "H, J, K";  // staged as DM holds it, so the move keeps 8-byte packets
  spec.host_math = [](const std::vector<HostTensor>& in) {
    return PrepareHostGemm({.batch = 2, .rows = kI, .inner = kK, .cols = kJ, .shared_lhs = true}, in[0], in[1]);
  };
  spec.kernel = DoubleBufferedGemm;
  spec.readback = "H, I, J";
  spec.expected = [](const std::vector<HostTensor>& in, const MappingScope&) -> absl::StatusOr<Expected> {
    const Matrix a = AsMatrix(in[0], kI, kK);
    const Matrix b = AsMatrix(in[1], 2 * kK, kJ);
    auto products = std::make_shared<std::vector<Matrix>>();
    auto magnitudes = std::make_shared<std::vector<Matrix>>();
    for (int64_t h = 0; h < 2; ++h) {
      const Matrix b_h = b.block(h * kK, 0, kK, kJ);
      products->push_back(a * b_h);
      magnitudes->push_back(a.cwiseAbs() * b_h.cwiseAbs());
    }
    constexpr int kLevels = 5 + static_cast<int>(kK / 32);
    Expected expected;
    expected.value = [products](const Index& i) { return static_cast<double>((*products)[i["H"]](i["I"], i["J"])); };
    expected.bound = [products, magnitudes](const Index& i) {
      return SumBound(kLevels, (*magnitudes)[i["H"]](i["I"], i["J"]), (*products)[i["H"]](i["I"], i["J"]), true);
    };
    expected.note = absl::StrCat("bound: ", kLevels, " f32 roundings (tree depth + time steps) x sum|a*b| + bf16 "
                                 "half-ulp, Eigen float reference");
    return expected;
  };
  return MakeContractionSample(std::move(spec));
}

}  // namespace

std::vector<Sample> ScheduleSamples() { return {DoubleBufferedGemmSample(), ColumnWalkDuringDma()}; }

}  // namespace visa::samples
