// The samples' math on the host, built -O3 -march=native (samples/CMakeLists.txt):
// what a user's own host code would run, the reference `visa bench` reports.
#include "samples/host_math.h"

#include <Eigen/Core>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <memory>
#include <vector>

namespace visa::samples {
namespace {

using Matrix = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

std::vector<float> Floats(const HostTensor& tensor) {
  std::vector<double> values = tensor.ToValues();
  return std::vector<float>(values.begin(), values.end());
}

using Out = Eigen::Map<Matrix>;

// The operands of a host GEMM, owned by the computation that uses them.
struct GemmOperands {
  std::vector<Matrix> lhs, rhs;
  Matrix bias;
};

void ApplyEpilogue(const GemmShape& shape, const Matrix& bias, Out out) {
  if (shape.epilogue == GemmEpilogue::kRelu) {
    out = out.cwiseMax(0.0f);
  } else if (shape.epilogue == GemmEpilogue::kBiasSilu) {
    for (int64_t r = 0; r < shape.rows; ++r) {
      for (int64_t c = 0; c < shape.cols; ++c) {
        const float x = out(r, c) + bias(r / 32, c);
        out(r, c) = x / (1.0f + std::exp(-x));
      }
    }
  }
}

}  // namespace

double TimeHostMath(const HostMath& math) {
  math.run();
  const auto start = std::chrono::steady_clock::now();
  math.run();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

HostMath PrepareHostGemm(const GemmShape& shape, const HostTensor& lhs, const HostTensor& rhs,
                         const HostTensor* bias) {
  auto operands = std::make_shared<GemmOperands>();
  const std::vector<float> a = Floats(lhs), b = Floats(rhs);
  const int64_t a_size = shape.rows * shape.inner, b_size = shape.inner * shape.cols;
  for (int64_t i = 0; i < shape.batch; ++i) {
    if (i == 0 || !shape.shared_lhs) {
      operands->lhs.push_back(Eigen::Map<const Matrix>(a.data() + i * a_size, shape.rows, shape.inner));
    }
    if (shape.rhs_transposed) {
      operands->rhs.push_back(Eigen::Map<const Matrix>(b.data() + i * b_size, shape.cols, shape.inner));
    } else {
      operands->rhs.push_back(Eigen::Map<const Matrix>(b.data() + i * b_size, shape.inner, shape.cols));
    }
  }
  if (bias != nullptr) {
    const std::vector<float> values = Floats(*bias);
    operands->bias = Eigen::Map<const Matrix>(values.data(), shape.rows / 32, shape.cols);
  }
  auto out = std::make_shared<std::vector<float>>(shape.batch * shape.rows * shape.cols);
  auto run = [shape, operands, out] {
    for (int64_t i = 0; i < shape.batch; ++i) {
      Out product(out->data() + i * shape.rows * shape.cols, shape.rows, shape.cols);
      const Matrix& lhs = operands->lhs[shape.shared_lhs ? 0 : i];
      if (shape.rhs_transposed) {
        product.noalias() = lhs * operands->rhs[i].transpose();
      } else {
        product.noalias() = lhs * operands->rhs[i];
      }
      ApplyEpilogue(shape, operands->bias, product);
    }
  };
  return {run, out};
}

HostMath PrepareHostConv2d(const ConvShape2d& shape, const HostTensor& x, const HostTensor& wt) {
  auto input = std::make_shared<std::vector<float>>(Floats(x));
  auto weights = std::make_shared<std::vector<float>>(Floats(wt));
  auto out = std::make_shared<std::vector<float>>(shape.h * shape.w * shape.c);
  auto run = [shape, input, weights, out] {
    const float* xs = input->data();
    const float* ws = weights->data();
    for (int64_t h = 0; h < shape.h; ++h) {
      for (int64_t w = 0; w < shape.w; ++w) {
        for (int64_t ch = 0; ch < shape.c; ++ch) {
          float sum = 0;
          for (int64_t fh = 0; fh < shape.fh; ++fh) {
            for (int64_t k = 0; k < shape.k; ++k) {
              const float* row = xs + ((h + fh) * shape.k + k) * shape.row + shape.stride * w;
              const float* taps = ws + ((ch * shape.fh + fh) * shape.k + k) * shape.fw_stored;
              for (int64_t fw = 0; fw < shape.fw; ++fw) sum += row[shape.dilation * fw] * taps[fw];
            }
          }
          (*out)[(h * shape.w + w) * shape.c + ch] = sum;
        }
      }
    }
  };
  return {run, out};
}

HostMath PrepareHostRowSoftmax(const RowsShape& shape, const HostTensor& x) {
  auto input = std::make_shared<std::vector<float>>(Floats(x));
  auto out = std::make_shared<std::vector<float>>(shape.rows * shape.cols);
  auto run = [shape, input, out] {
    for (int64_t r = 0; r < shape.rows; ++r) {
      const float* row = input->data() + r * shape.cols;
      float* y = out->data() + r * shape.cols;
      float max = row[0];
      for (int64_t c = 1; c < shape.cols; ++c) max = std::max(max, row[c]);
      float sum = 0;
      for (int64_t c = 0; c < shape.cols; ++c) {
        y[c] = std::exp(row[c] - max);
        sum += y[c];
      }
      for (int64_t c = 0; c < shape.cols; ++c) y[c] /= sum;
    }
  };
  return {run, out};
}

HostMath PrepareHostRmsNorm(const RowsShape& shape, const std::vector<HostTensor>& chunks, float eps) {
  auto inputs = std::make_shared<std::vector<std::vector<float>>>();
  for (const HostTensor& chunk : chunks) inputs->push_back(Floats(chunk));
  const int64_t parts = static_cast<int64_t>(chunks.size());
  auto out = std::make_shared<std::vector<float>>(shape.rows * parts * shape.cols);
  auto run = [shape, parts, eps, inputs, out] {
    const float width = static_cast<float>(parts * shape.cols);
    for (int64_t r = 0; r < shape.rows; ++r) {
      float squares = 0;
      for (const std::vector<float>& x : *inputs) {
        for (int64_t c = 0; c < shape.cols; ++c) squares += x[r * shape.cols + c] * x[r * shape.cols + c];
      }
      const float scale = 1.0f / std::sqrt(squares / width + eps);
      for (int64_t i = 0; i < parts; ++i) {
        const float* x = (*inputs)[static_cast<size_t>(i)].data() + r * shape.cols;
        float* y = out->data() + (r * parts + i) * shape.cols;
        for (int64_t c = 0; c < shape.cols; ++c) y[c] = x[c] * scale;
      }
    }
  };
  return {run, out};
}

}  // namespace visa::samples
