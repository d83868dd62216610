// Row and column ranges of a row-major host matrix: how a tensor-parallel split hands each chip
// its share of a weight (llama_chip_split.h for the Llama-style model's floats, llama70b_chip_split.h
// for the 70B layer's bf16 bits).
#pragma once

#include <cstdint>
#include <vector>

namespace visa::models {

// Rows [begin, begin + count) of a row-major matrix with `width` columns.
template <typename T>
std::vector<T> Rows(const std::vector<T>& m, int64_t width, int64_t begin, int64_t count) {
  return std::vector<T>(m.begin() + begin * width, m.begin() + (begin + count) * width);
}

// Columns [begin, begin + count) of every row of a row-major matrix with `width` columns.
template <typename T>
std::vector<T> Columns(const std::vector<T>& m, int64_t width, int64_t begin, int64_t count) {
  std::vector<T> out;
  const size_t rows = m.size() / static_cast<size_t>(width);
  out.reserve(rows * static_cast<size_t>(count));
  for (size_t row = 0; row < rows; ++row) {
    const auto first = m.begin() + static_cast<int64_t>(row) * width + begin;
    out.insert(out.end(), first, first + count);
  }
  return out;
}

}  // namespace visa::models
