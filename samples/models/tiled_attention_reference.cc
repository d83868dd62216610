// The tiled attention's host reference (tiled_attention.h): the whole softmax at once, in f64.
#include <algorithm>
#include <cmath>
#include <limits>

#include "samples/models/tiled_attention.h"

namespace visa::models {

AttentionReference ReferenceAttention(const AttentionTiles& shape, const std::vector<double>& q,
                                      const std::vector<double>& k, const std::vector<double>& v) {
  const int64_t S = shape.queries, D = shape.head_dim, T = shape.keys;
  const double scale = 1.0 / std::sqrt(static_cast<double>(D));
  AttentionReference r;
  r.out.assign(static_cast<size_t>(S * D), 0.0);
  r.magnitude.assign(static_cast<size_t>(S * D), 0.0);
  std::vector<double> scores(static_cast<size_t>(T));
  for (int64_t s = 0; s < S; ++s) {
    double max = -std::numeric_limits<double>::infinity();
    for (int64_t t = 0; t < T; ++t) {
      double dot = 0;
      for (int64_t d = 0; d < D; ++d) dot += q[static_cast<size_t>(s * D + d)] * k[static_cast<size_t>(t * D + d)];
      scores[static_cast<size_t>(t)] = dot * scale;
      max = std::max(max, scores[static_cast<size_t>(t)]);
    }
    // The online softmax's rescaling: tiles after the first whose max exceeds the running max.
    double running = -std::numeric_limits<double>::infinity();
    for (int64_t j = 0; j < T / shape.tile; ++j) {
      const auto first = scores.begin() + j * shape.tile;
      const double tile_max = *std::max_element(first, first + shape.tile);
      if (j > 0 && tile_max > running) ++r.max_moves;
      running = std::max(running, tile_max);
    }
    double sum = 0;
    for (int64_t t = 0; t < T; ++t) sum += std::exp(scores[static_cast<size_t>(t)] - max);
    for (int64_t t = 0; t < T; ++t) {
      const double p = std::exp(scores[static_cast<size_t>(t)] - max) / sum;
      for (int64_t d = 0; d < D; ++d) {
        const double value = v[static_cast<size_t>(t * D + d)];
        r.out[static_cast<size_t>(s * D + d)] += p * value;
        r.magnitude[static_cast<size_t>(s * D + d)] += p * std::fabs(value);
      }
    }
  }
  return r;
}

}  // namespace visa::models
