// The host reference: f32 loops written from the page's formulas, bf16 where the device stores bf16.
#include "samples/models/llama_reference.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace visa::models {

LlamaReference::LlamaReference(const LlamaConfig& config, const LlamaWeights& weights)
    : config_(config), weights_(weights) {
  const size_t cache = static_cast<size_t>(config.kv_heads * config.max_positions * config.head_dim);
  k_cache_.assign(static_cast<size_t>(config.layers), std::vector<float>(cache, 0.0f));
  v_cache_ = k_cache_;
}

std::vector<float> LlamaReference::RmsNorm(const std::vector<float>& x, const std::vector<float>& w) const {
  const int64_t D = config_.hidden;
  float sum = 0;
  for (int64_t d = 0; d < D; ++d) sum += std::fmaf(x[d], x[d], config_.eps);
  const float inverse = 1.0f / std::sqrt(sum * (1.0f / static_cast<float>(D)));
  std::vector<float> y(static_cast<size_t>(D));
  for (int64_t d = 0; d < D; ++d) y[d] = RoundBf16(x[d] * inverse * w[d]);
  return y;
}

std::vector<float> LlamaReference::Project(const std::vector<float>& x, const std::vector<float>& w_t, int64_t n) {
  const int64_t k = static_cast<int64_t>(x.size());
  std::vector<float> out(static_cast<size_t>(n), 0.0f);
  for (int64_t i = 0; i < n; ++i) {
    float acc = 0;
    for (int64_t j = 0; j < k; ++j) acc += x[j] * w_t[i * k + j];
    out[i] = acc;
  }
  return out;
}

std::vector<float> LlamaReference::Forward(const std::vector<int32_t>& tokens, int64_t start) {
  const LlamaConfig& c = config_;
  const int64_t D = c.hidden, F = c.ffn, H = c.kv_heads, G = c.groups, E = c.head_dim, T = c.max_positions;
  const int64_t n = static_cast<int64_t>(tokens.size());
  const float scale = 1.0f / std::sqrt(static_cast<float>(E));
  auto bf16 = [](std::vector<float> v) {
    for (float& x : v) x = RoundBf16(x);
    return v;
  };
  // The residual stream of every token, f32 (the embedding rows are bf16 values).
  std::vector<std::vector<float>> xs;
  for (int32_t token : tokens) {
    xs.emplace_back(weights_.embedding.begin() + token * D, weights_.embedding.begin() + (token + 1) * D);
  }
  for (int64_t l = 0; l < c.layers; ++l) {
    const LlamaLayerWeights& w = weights_.layers[static_cast<size_t>(l)];
    std::vector<std::vector<float>> queries;  // per token [G, H, E] after RoPE
    // Q, K, V of every token first, each K / V stored in the cache at its position.
    for (int64_t i = 0; i < n; ++i) {
      const int64_t pos = start + i;
      const std::vector<float> xn = RmsNorm(xs[i], w.attn_norm);
      const std::vector<float> q = bf16(Project(xn, w.wq, G * H * E));
      const std::vector<float> k = bf16(Project(xn, w.wk, H * E));
      const std::vector<float> v = bf16(Project(xn, w.wv, H * E));
      const float* rope = &weights_.rope[static_cast<size_t>(pos * E * E)];
      auto rotate = [&](const float* head) {  // [C] -> [E]
        std::vector<float> out(static_cast<size_t>(E));
        for (int64_t e = 0; e < E; ++e) {
          float acc = 0;
          for (int64_t cc = 0; cc < E; ++cc) acc += head[cc] * rope[e * E + cc];
          out[e] = RoundBf16(acc);
        }
        return out;
      };
      std::vector<float> q_rope(static_cast<size_t>(G * H * E));
      for (int64_t gh = 0; gh < G * H; ++gh) {
        std::vector<float> r = rotate(&q[gh * E]);
        std::copy(r.begin(), r.end(), q_rope.begin() + gh * E);
      }
      queries.push_back(std::move(q_rope));
      for (int64_t h = 0; h < H; ++h) {
        std::vector<float> r = rotate(&k[h * E]);
        for (int64_t e = 0; e < E; ++e) {
          k_cache_[l][(h * T + pos) * E + e] = r[e];
          v_cache_[l][(h * T + pos) * E + e] = v[h * E + e];
        }
      }
    }
    for (int64_t i = 0; i < n; ++i) {
      const int64_t pos = start + i;
      std::vector<float> attn(static_cast<size_t>(G * H * E));
      for (int64_t g = 0; g < G; ++g) {
        for (int64_t h = 0; h < H; ++h) {
          const float* q = &queries[i][(g * H + h) * E];
          std::vector<float> scores(static_cast<size_t>(pos + 1));
          float max = -std::numeric_limits<float>::infinity();
          for (int64_t j = 0; j <= pos; ++j) {
            float acc = 0;
            for (int64_t e = 0; e < E; ++e) acc += q[e] * k_cache_[l][(h * T + j) * E + e];
            scores[j] = acc * scale;
            max = std::max(max, scores[j]);
          }
          float sum = 0;
          for (float& s : scores) {
            s = std::exp(s - max);
            sum += s;
          }
          for (int64_t e = 0; e < E; ++e) {
            float acc = 0;
            for (int64_t j = 0; j <= pos; ++j) acc += RoundBf16(scores[j] / sum) * v_cache_[l][(h * T + j) * E + e];
            attn[(g * H + h) * E + e] = RoundBf16(acc);
          }
        }
      }
      const std::vector<float> o = Project(attn, w.wo, D);
      for (int64_t d = 0; d < D; ++d) xs[i][d] += o[d];
      const std::vector<float> xn = RmsNorm(xs[i], w.ffn_norm);
      const std::vector<float> gate = Project(xn, w.gate, F);
      const std::vector<float> up = Project(xn, w.up, F);
      std::vector<float> act(static_cast<size_t>(F));
      for (int64_t f = 0; f < F; ++f) {
        const float sigmoid = 1.0f / (1.0f + std::exp(-gate[f]));
        act[f] = RoundBf16(sigmoid * gate[f] * up[f]);
      }
      const std::vector<float> down = Project(act, w.down, D);
      for (int64_t d = 0; d < D; ++d) xs[i][d] += down[d];
    }
  }
  last_hidden_ = RmsNorm(xs[n - 1], weights_.final_norm);
  return Project(last_hidden_, weights_.lm_head, c.vocab);
}

int32_t Argmax(const std::vector<float>& logits) {
  return static_cast<int32_t>(std::max_element(logits.begin(), logits.end()) - logits.begin());
}

float TopMargin(const std::vector<float>& logits) {
  const int32_t best = Argmax(logits);
  float second = -std::numeric_limits<float>::infinity();
  for (size_t i = 0; i < logits.size(); ++i) {
    if (static_cast<int32_t>(i) != best) second = std::max(second, logits[i]);
  }
  return logits[static_cast<size_t>(best)] - second;
}

}  // namespace visa::models
