// The host speed references of the samples (samples/host_math.h) compute the samples'
// math: checked against plain double loops over the same values.
#include "samples/host_math.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "dsl/axes.h"
#include "dsl/mapping_parser.h"

namespace visa::samples {
namespace {

HostTensor RandomTensor(const MappingScope& s, const std::string& layout, uint64_t seed, DType dtype = DType::kBF16) {
  absl::StatusOr<HostTensor> tensor = HostTensor::Random(dtype, s.m(layout), seed);
  EXPECT_TRUE(tensor.ok()) << tensor.status();
  return *std::move(tensor);
}

// out[b][r][c] = sum_k lhs[b or 0][r][k] * rhs[b][k][c] (or rhs[b][c][k] transposed), in double.
std::vector<double> NaiveGemm(const GemmShape& shape, const std::vector<double>& lhs, const std::vector<double>& rhs) {
  std::vector<double> out(shape.batch * shape.rows * shape.cols, 0.0);
  for (int64_t b = 0; b < shape.batch; ++b) {
    const double* a = lhs.data() + (shape.shared_lhs ? 0 : b) * shape.rows * shape.inner;
    const double* w = rhs.data() + b * shape.inner * shape.cols;
    for (int64_t r = 0; r < shape.rows; ++r) {
      for (int64_t c = 0; c < shape.cols; ++c) {
        double sum = 0;
        for (int64_t k = 0; k < shape.inner; ++k) {
          sum += a[r * shape.inner + k] * (shape.rhs_transposed ? w[c * shape.inner + k] : w[k * shape.cols + c]);
        }
        out[(b * shape.rows + r) * shape.cols + c] = sum;
      }
    }
  }
  return out;
}

// f32 sums of `inner` bf16 products in [-1, 1]: far inside 1e-4 relative to the inner length.
void ExpectNear(const std::vector<double>& want, const std::vector<float>& got, double tolerance) {
  ASSERT_EQ(want.size(), got.size());
  for (size_t i = 0; i < want.size(); ++i) EXPECT_NEAR(want[i], got[i], tolerance) << "at " << i;
}

// The host GEMM of `shape` over random operands laid out as `lhs` and `rhs`, against the loops.
void ExpectGemmMatchesLoops(const std::string& axes, const std::string& lhs_layout, const std::string& rhs_layout,
                            const GemmShape& shape) {
  MappingScope s(*Axes::Parse(axes));
  HostTensor lhs = RandomTensor(s, lhs_layout, 1), rhs = RandomTensor(s, rhs_layout, 2);
  HostMath math = PrepareHostGemm(shape, lhs, rhs);
  math.run();
  ExpectNear(NaiveGemm(shape, lhs.ToValues(), rhs.ToValues()), *math.out, 1e-4);
}

TEST(HostMath, GemmMatchesLoops) {
  ExpectGemmMatchesLoops("I = 16, K = 64, J = 24", "I, K", "K, J", {.rows = 16, .inner = 64, .cols = 24});
}

TEST(HostMath, BatchedTransposedGemmMatchesLoops) {
  ExpectGemmMatchesLoops("V = 3, M = 8, N = 5, K = 32", "V, M, K", "V, N, K",
                         {.batch = 3, .rows = 8, .inner = 32, .cols = 5, .rhs_transposed = true});
}

TEST(HostMath, SharedLhsGemmMatchesLoops) {
  ExpectGemmMatchesLoops("I = 8, K = 16, J = 8, H = 2", "I, K", "H, K, J",
                         {.batch = 2, .rows = 8, .inner = 16, .cols = 8, .shared_lhs = true});
}

TEST(HostMath, EpiloguesMatchLoops) {
  MappingScope s(*Axes::Parse("I = 64, K = 32, J = 16"));
  HostTensor lhs = RandomTensor(s, "I, K", 7), rhs = RandomTensor(s, "K, J", 8);
  HostTensor bias = RandomTensor(s, "I / 32, J", 9, DType::kF32);
  const GemmShape relu{.rows = 64, .inner = 32, .cols = 16, .epilogue = GemmEpilogue::kRelu};
  std::vector<double> want = NaiveGemm(relu, lhs.ToValues(), rhs.ToValues());
  HostMath relu_math = PrepareHostGemm(relu, lhs, rhs);
  relu_math.run();
  std::vector<double> relu_want = want;
  for (double& x : relu_want) x = std::max(x, 0.0);
  ExpectNear(relu_want, *relu_math.out, 1e-4);

  GemmShape silu = relu;
  silu.epilogue = GemmEpilogue::kBiasSilu;
  HostMath silu_math = PrepareHostGemm(silu, lhs, rhs, &bias);
  silu_math.run();
  const std::vector<double> b = bias.ToValues();
  std::vector<double> silu_want = want;
  for (int64_t r = 0; r < 64; ++r) {
    for (int64_t c = 0; c < 16; ++c) {
      const double x = want[r * 16 + c] + b[(r / 32) * 16 + c];
      silu_want[r * 16 + c] = x / (1 + std::exp(-x));
    }
  }
  ExpectNear(silu_want, *silu_math.out, 1e-4);
}

TEST(HostMath, Conv2dMatchesLoops) {
  const ConvShape2d shape{.h = 2, .fh = 3, .k = 2, .c = 3, .w = 5, .fw = 3, .row = 16, .fw_stored = 4,
                          .stride = 2, .dilation = 2};
  MappingScope s(*Axes::Parse("R = 8, X = 16, C = 3, F = 6, P = 4"));
  HostTensor x = RandomTensor(s, "R, X", 10), wt = RandomTensor(s, "C, F, P", 11);
  const std::vector<double> xs = x.ToValues(), ws = wt.ToValues();
  std::vector<double> want(shape.h * shape.w * shape.c, 0.0);
  for (int64_t h = 0; h < shape.h; ++h) {
    for (int64_t w = 0; w < shape.w; ++w) {
      for (int64_t c = 0; c < shape.c; ++c) {
        for (int64_t fh = 0; fh < shape.fh; ++fh) {
          for (int64_t k = 0; k < shape.k; ++k) {
            for (int64_t fw = 0; fw < shape.fw; ++fw) {
              want[(h * shape.w + w) * shape.c + c] +=
                  xs[((h + fh) * shape.k + k) * shape.row + shape.stride * w + shape.dilation * fw] *
                  ws[((c * shape.fh + fh) * shape.k + k) * shape.fw_stored + fw];
            }
          }
        }
      }
    }
  }
  HostMath math = PrepareHostConv2d(shape, x, wt);
  math.run();
  ExpectNear(want, *math.out, 1e-5);
}

// Softmax of each row of random f32 values in [-1, 1): f32 exp and sums, inside 1e-6 of the
// double loop (values in (0, 1], 32 terms).
TEST(HostMath, RowSoftmaxMatchesLoops) {
  MappingScope s(*Axes::Parse("M = 8, N = 32"));
  HostTensor x = RandomTensor(s, "M, N", 3, DType::kF32);
  HostMath math = PrepareHostRowSoftmax({8, 32}, x);
  math.run();
  const std::vector<double> v = x.ToValues();
  std::vector<double> want(v.size());
  for (int64_t r = 0; r < 8; ++r) {
    double max = v[r * 32], sum = 0;
    for (int64_t c = 0; c < 32; ++c) max = std::max(max, v[r * 32 + c]);
    for (int64_t c = 0; c < 32; ++c) sum += std::exp(v[r * 32 + c] - max);
    for (int64_t c = 0; c < 32; ++c) want[r * 32 + c] = std::exp(v[r * 32 + c] - max) / sum;
  }
  ExpectNear(want, *math.out, 1e-6);
}

// RMSNorm over two chunks of a row: out[r, i, c] = x_i[r, c] / sqrt(mean of both chunks' squares + eps).
TEST(HostMath, RmsNormOverChunksMatchesLoops) {
  MappingScope s(*Axes::Parse("M = 4, N = 16"));
  const std::vector<HostTensor> chunks = {RandomTensor(s, "M, N", 4, DType::kF32), RandomTensor(s, "M, N", 5, DType::kF32)};
  const float eps = 1e-5f;
  HostMath math = PrepareHostRmsNorm({4, 16}, chunks, eps);
  math.run();
  const std::vector<double> a = chunks[0].ToValues(), b = chunks[1].ToValues();
  std::vector<double> want(2 * a.size());
  for (int64_t r = 0; r < 4; ++r) {
    double squares = 0;
    for (int64_t c = 0; c < 16; ++c) squares += a[r * 16 + c] * a[r * 16 + c] + b[r * 16 + c] * b[r * 16 + c];
    const double scale = 1 / std::sqrt(squares / 32 + eps);
    for (int64_t c = 0; c < 16; ++c) {
      want[(r * 2 + 0) * 16 + c] = a[r * 16 + c] * scale;
      want[(r * 2 + 1) * 16 + c] = b[r * 16 + c] * scale;
    }
  }
  ExpectNear(want, *math.out, 1e-5);
}

}  // namespace
}  // namespace visa::samples
