// The samples' math as a host program would compute it, built -O3 -march=native: the speed
// reference `visa bench` sets the JIT's whole run against (float GEMMs through Eigen, the
// convolution, softmax and RMSNorm as direct loops). Not the correctness reference: that is each sample's
// `expected`, which also derives the error bounds and so costs several times the math alone.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "runtime/host_tensor.h"

namespace visa::samples {

// A computation made ready to time, and where it leaves its result (row-major, batch outermost).
struct HostMath {
  std::function<void()> run;
  std::shared_ptr<const std::vector<float>> out;
};

// Seconds one run of `math` takes, after one run that warms the output and the caches (as a
// relaunched kernel has them).
double TimeHostMath(const HostMath& math);

// What follows the product, element by element (the Vector Engine samples after a GEMM).
enum class GemmEpilogue { kNone, kRelu, kBiasSilu };

// out[b] = lhs[b] (rows x inner) * rhs[b] (inner x cols), `batch` times, in f32.
struct GemmShape {
  int64_t batch = 1, rows = 1, inner = 1, cols = 1;
  GemmEpilogue epilogue = GemmEpilogue::kNone;
  bool rhs_transposed = false;  // rhs[b] holds cols x inner (both operands contracted innermost)
  bool shared_lhs = false;      // one lhs for every batch entry
};

// The product over the values of `lhs` and `rhs` (and `bias`, [rows / 32, cols], for kBiasSilu)
// read in their host order; the float copies are made here, so the returned computation is the
// math alone, ready to time.
HostMath PrepareHostGemm(const GemmShape& shape, const HostTensor& lhs, const HostTensor& rhs,
                         const HostTensor* bias = nullptr);

// out[h, w, c] = sum over fh, k, fw of x[(h + fh) * k_dim + k][stride * w + dilation * fw] *
// wt[c][fh][k][fw], with x rows of `row` elements and wt's fw padded to `fw_stored`.
struct ConvShape2d {
  int64_t h = 0, fh = 0, k = 0, c = 0, w = 0, fw = 0, row = 0, fw_stored = 0, stride = 1, dilation = 1;
};
HostMath PrepareHostConv2d(const ConvShape2d& shape, const HostTensor& x, const HostTensor& wt);

// Row-wise math over `rows` rows of `cols` values, row-major.
struct RowsShape {
  int64_t rows = 1, cols = 1;
};

// out[r, c] = exp(x[r, c] - max_c x[r, c]) / sum_c exp(x[r, c] - max_c x[r, c]), in f32.
HostMath PrepareHostRowSoftmax(const RowsShape& shape, const HostTensor& x);

// RMSNorm over a hidden dimension held in chunks [rows, cols] each: out[r, i, c] =
// chunk_i[r, c] / sqrt(sum over i, c of chunk_i[r, c]^2 / (chunks x cols) + eps), in f32.
HostMath PrepareHostRmsNorm(const RowsShape& shape, const std::vector<HostTensor>& chunks, float eps);

}  // namespace visa::samples
