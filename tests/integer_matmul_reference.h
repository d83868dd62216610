// The host reference for the integer contraction tests: out[a, r] = sum over k of
// (x[a, k] - zero_point) * w[r, k], exact in 64 bits, for x [A, K] and w [R, K] held in that order.
#pragma once

#include <cstdint>
#include <vector>

#include "runtime/host_tensor.h"

namespace visa {

// [A, R] row-major.
inline std::vector<int64_t> IntegerMatmulReference(const HostTensor& x, const HostTensor& w, int64_t rows_a,
                                                   int64_t rows_r, int64_t k_size, int64_t zero_point = 0) {
  const std::vector<double> xv = x.ToValues(), wv = w.ToValues();
  std::vector<int64_t> out(rows_a * rows_r, 0);
  for (int64_t a = 0; a < rows_a; ++a) {
    for (int64_t r = 0; r < rows_r; ++r) {
      int64_t sum = 0;
      for (int64_t k = 0; k < k_size; ++k) {
        sum += (static_cast<int64_t>(xv[a * k_size + k]) - zero_point) * static_cast<int64_t>(wv[r * k_size + k]);
      }
      out[a * rows_r + r] = sum;
    }
  }
  return out;
}

// The values of an integer tensor read back on the host, in its layout's order.
inline std::vector<int64_t> IntegerValues(const HostTensor& got) {
  std::vector<int64_t> values;
  for (double v : got.ToValues()) values.push_back(static_cast<int64_t>(v));
  return values;
}

}  // namespace visa
