// The Mixture of Experts layer's host reference (moe_reference.h): plain loops.
#include "samples/models/moe_reference.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <numeric>

#include "absl/strings/str_cat.h"

namespace visa::models {
namespace {

size_t At(int64_t row, int64_t cols, int64_t col) { return static_cast<size_t>(row * cols + col); }

// Round to nearest even at bf16 (the scores are finite).
float RoundToBf16(double value) {
  const float f = static_cast<float>(value);
  uint32_t bits = std::bit_cast<uint32_t>(f);
  bits += 0x7fff + ((bits >> 16) & 1);
  return std::bit_cast<float>(bits & 0xffff0000u);
}

// True when expert a ranks before expert b: the higher score, or among equal scores the higher id.
bool RanksBefore(float score_a, int64_t a, float score_b, int64_t b) {
  if (score_a != score_b) return score_a > score_b;
  return a > b;
}

double Silu(double v) { return v / (1.0 + std::exp(-v)); }

}  // namespace

std::string MoeShape::Axes() const {
  return absl::StrCat("T = ", tokens, ", D = ", hidden, ", F = ", ffn, ", E = ", experts, ", I = ", experts, ", R = ", top_k);
}

int64_t MoeShape::WorstGrid() const { return (tokens * top_k - experts) / block + experts; }

std::vector<float> ReferenceScores(const MoeShape& shape, const std::vector<double>& x,
                                   const std::vector<double>& w_router) {
  const int64_t T = shape.tokens, D = shape.hidden, E = shape.experts;
  std::vector<float> scores(static_cast<size_t>(T * E));
  for (int64_t t = 0; t < T; ++t) {
    for (int64_t e = 0; e < E; ++e) {
      double sum = 0;
      for (int64_t d = 0; d < D; ++d) sum += x[At(t, D, d)] * w_router[At(d, E, e)];
      scores[At(t, E, e)] = RoundToBf16(sum);
    }
  }
  return scores;
}

MoeRouting ReferenceRouting(const MoeShape& shape, const std::vector<float>& scores) {
  const int64_t T = shape.tokens, E = shape.experts, K = shape.top_k;
  MoeRouting r;
  r.scores = scores;
  r.rank.assign(static_cast<size_t>(T * E), 0);
  r.topk.reserve(static_cast<size_t>(T * K));
  r.weights.reserve(static_cast<size_t>(T * K));
  for (int64_t t = 0; t < T; ++t) {
    std::vector<int64_t> order(static_cast<size_t>(E));
    std::iota(order.begin(), order.end(), 0);
    std::sort(order.begin(), order.end(), [&](int64_t a, int64_t b) {
      return RanksBefore(scores[At(t, E, a)], a, scores[At(t, E, b)], b);
    });
    for (int64_t place = 0; place < E; ++place) r.rank[At(t, E, order[static_cast<size_t>(place)])] = static_cast<int32_t>(place);
    const std::vector<int64_t> chosen(order.begin(), order.begin() + K);
    double max = -INFINITY;
    for (int64_t e : chosen) max = std::max(max, static_cast<double>(scores[At(t, E, e)]));
    double sum = 0;
    for (int64_t e : chosen) sum += std::exp(static_cast<double>(scores[At(t, E, e)]) - max);
    for (int64_t e : chosen) {
      r.topk.push_back(static_cast<int32_t>(e));
      r.weights.push_back(std::exp(static_cast<double>(scores[At(t, E, e)]) - max) / sum);
    }
  }
  return r;
}

MoeBlocks ReferenceBlocks(const MoeShape& shape, const MoeRouting& routing) {
  const int64_t T = shape.tokens, E = shape.experts, K = shape.top_k, B = shape.block;
  MoeBlocks b;
  b.count.assign(static_cast<size_t>(E), 0);
  b.local_offset.assign(static_cast<size_t>(T * K), 0);
  // Queue positions in (token, k) order: the order the page's cumsum over (T, K) counts in.
  for (int64_t t = 0; t < T; ++t) {
    for (int64_t k = 0; k < K; ++k) {
      const int32_t e = routing.topk[At(t, K, k)];
      b.local_offset[At(t, K, k)] = b.count[static_cast<size_t>(e)]++;
    }
  }
  int32_t next = 0;
  for (int64_t e = 0; e < E; ++e) {
    const int32_t blocks = static_cast<int32_t>((b.count[static_cast<size_t>(e)] + B - 1) / B);
    b.num_blocks.push_back(blocks);
    b.global_offset.push_back(next);
    for (int32_t i = 0; i < blocks; ++i) b.expert_ids.push_back(static_cast<int32_t>(e));
    next += blocks;
  }
  b.grid = next;
  for (int64_t t = 0; t < T; ++t) {
    for (int64_t k = 0; k < K; ++k) {
      const int32_t e = routing.topk[At(t, K, k)];
      b.scatter_idx.push_back(static_cast<int32_t>(b.global_offset[static_cast<size_t>(e)] * B) +
                              b.local_offset[At(t, K, k)]);
    }
  }
  return b;
}

MoeOutput ReferenceMoe(const MoeShape& shape, const MoeRouting& routing, const std::vector<double>& x,
                       const std::vector<double>& w_gate, const std::vector<double>& w_up,
                       const std::vector<double>& w_down) {
  const int64_t T = shape.tokens, D = shape.hidden, F = shape.ffn, K = shape.top_k;
  MoeOutput o;
  o.out.assign(static_cast<size_t>(T * D), 0.0);
  o.magnitude.assign(static_cast<size_t>(T * D), 0.0);
  std::vector<double> hidden(static_cast<size_t>(F));
  for (int64_t t = 0; t < T; ++t) {
    for (int64_t k = 0; k < K; ++k) {
      const int64_t e = routing.topk[At(t, K, k)];
      const double weight = routing.weights[At(t, K, k)];
      for (int64_t f = 0; f < F; ++f) {
        double gate = 0, up = 0;
        for (int64_t d = 0; d < D; ++d) {
          gate += x[At(t, D, d)] * w_gate[static_cast<size_t>((e * D + d) * F + f)];
          up += x[At(t, D, d)] * w_up[static_cast<size_t>((e * D + d) * F + f)];
        }
        hidden[static_cast<size_t>(f)] = Silu(gate) * up;
      }
      for (int64_t d = 0; d < D; ++d) {
        double sum = 0, magnitude = 0;
        for (int64_t f = 0; f < F; ++f) {
          const double term = hidden[static_cast<size_t>(f)] * w_down[static_cast<size_t>((e * F + f) * D + d)];
          sum += term;
          magnitude += std::fabs(term);
        }
        o.out[At(t, D, d)] += weight * sum;
        o.magnitude[At(t, D, d)] += weight * magnitude;
      }
    }
  }
  return o;
}

}  // namespace visa::models
