// The seeded weights and prompt of the Llama-style model.
#include "samples/models/llama_config.h"

#include <cmath>
#include <cstring>

#include "absl/strings/str_cat.h"

namespace visa::models {
namespace {

// splitmix64: a small, portable generator (the same stream on every platform and library).
class Generator {
 public:
  explicit Generator(uint64_t seed) : state_(seed) {}
  uint64_t Next() {
    uint64_t z = (state_ += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  // Uniform in [-1, 1).
  float Symmetric() { return static_cast<float>(static_cast<double>(Next() >> 11) / 4503599627370496.0 - 1.0); }

 private:
  uint64_t state_;
};

std::vector<float> Uniform(Generator& gen, int64_t n, float scale, float offset = 0.0f) {
  std::vector<float> v(static_cast<size_t>(n));
  for (float& x : v) x = RoundBf16(offset + scale * gen.Symmetric());
  return v;
}

}  // namespace

std::string LlamaConfig::Axes(int64_t tokens) const {
  return absl::StrCat("S = ", tokens, ", T = ", max_positions, ", D = ", hidden, ", F = ", ffn, ", V = ", vocab,
                      ", G = ", groups, ", H = ", kv_heads, ", E = ", head_dim, ", C = ", head_dim, ", L = 1",
                      chips > 1 ? absl::StrCat(", P = ", chips) : "");
}

float RoundBf16(float x) {
  uint32_t bits;
  std::memcpy(&bits, &x, 4);
  if ((bits & 0x7F800000u) == 0x7F800000u) {
    bits &= 0xFFFF0000u;  // inf stays inf (no NaN is produced here)
  } else {
    bits += 0x7FFFu + ((bits >> 16) & 1u);
    bits &= 0xFFFF0000u;
  }
  float out;
  std::memcpy(&out, &bits, 4);
  return out;
}

std::vector<float> MakeRopeTable(const LlamaConfig& c) {
  const int64_t T = c.max_positions, E = c.head_dim;
  std::vector<float> rope;
  rope.assign(static_cast<size_t>(T * E * E), 0.0f);
  for (int64_t t = 0; t < T; ++t) {
    for (int64_t r = 0; r < E / 2; ++r) {
      const double angle = static_cast<double>(t) * std::pow(static_cast<double>(c.rope_theta), -2.0 * r / E);
      const float cos = RoundBf16(static_cast<float>(std::cos(angle)));
      const float sin = RoundBf16(static_cast<float>(std::sin(angle)));
      auto at = [&](int64_t a, int64_t b) -> float& { return rope[static_cast<size_t>((t * E + 2 * r + a) * E + 2 * r + b)]; };
      at(0, 0) = cos;
      at(0, 1) = -sin;
      at(1, 0) = sin;
      at(1, 1) = cos;
    }
  }
  return rope;
}

LlamaWeights MakeWeights(const LlamaConfig& c) {
  Generator gen(c.seed);
  const int64_t D = c.hidden, F = c.ffn, H = c.kv_heads, G = c.groups, E = c.head_dim;
  const float in_d = 1.0f / std::sqrt(static_cast<float>(D));
  const float in_f = 1.0f / std::sqrt(static_cast<float>(F));
  const float in_q = 1.0f / std::sqrt(static_cast<float>(G * H * E));
  LlamaWeights w;
  w.embedding = Uniform(gen, c.vocab * D, 1.0f);
  w.lm_head = Uniform(gen, c.vocab * D, 1.0f);
  w.final_norm = Uniform(gen, D, 0.1f, 1.0f);
  for (int64_t l = 0; l < c.layers; ++l) {
    LlamaLayerWeights layer;
    layer.attn_norm = Uniform(gen, D, 0.1f, 1.0f);
    layer.wq = Uniform(gen, G * H * E * D, in_d);
    layer.wk = Uniform(gen, H * E * D, in_d);
    layer.wv = Uniform(gen, H * E * D, in_d);
    layer.wo = Uniform(gen, D * G * H * E, in_q);
    layer.ffn_norm = Uniform(gen, D, 0.1f, 1.0f);
    layer.gate = Uniform(gen, F * D, in_d);
    layer.up = Uniform(gen, F * D, in_d);
    layer.down = Uniform(gen, D * F, in_f);
    w.layers.push_back(std::move(layer));
  }
  w.rope = MakeRopeTable(c);
  return w;
}

std::vector<int32_t> MakePrompt(const LlamaConfig& c, uint64_t seed) {
  Generator gen(seed);
  std::vector<int32_t> prompt(static_cast<size_t>(c.prompt));
  for (int32_t& t : prompt) t = static_cast<int32_t>(gen.Next() % static_cast<uint64_t>(c.vocab));
  return prompt;
}

}  // namespace visa::models
