// The host reference of the Llama-style model: plain f32 loops over the same bf16 weights,
// rounding to bf16 where the device program stores bf16 (the inputs of every contraction), so
// that the device and the reference differ only by the order of f32 additions (and what a
// different order does to a later bf16 rounding). Its own KV cache; greedy sampling.
#pragma once

#include <cstdint>
#include <vector>

#include "samples/models/llama_config.h"

namespace visa::models {

class LlamaReference {
 public:
  LlamaReference(const LlamaConfig& config, const LlamaWeights& weights);

  // Runs `tokens` at positions start .. start + n - 1 (each attending to every position up to its
  // own, through the cache, which it extends) and returns the last token's logits [V].
  std::vector<float> Forward(const std::vector<int32_t>& tokens, int64_t start);

  // The last Forward's final RMSNorm output (bf16 values): what the LM head contracted.
  const std::vector<float>& last_hidden() const { return last_hidden_; }

 private:
  // y = bf16(x / rms(x) * w) for one row of D.
  std::vector<float> RmsNorm(const std::vector<float>& x, const std::vector<float>& w) const;
  // out[n] = sum_k x[k] * w_t[n, k] in f32 (w_t is [N, K]).
  static std::vector<float> Project(const std::vector<float>& x, const std::vector<float>& w_t, int64_t n);

  LlamaConfig config_;
  const LlamaWeights& weights_;
  std::vector<std::vector<float>> k_cache_, v_cache_;  // per layer [H, T, E]
  std::vector<float> last_hidden_;
};

// The greedy choice: the first index of the largest logit.
int32_t Argmax(const std::vector<float>& logits);

// The gap between the largest and the second largest logit (how far the greedy choice is from a tie).
float TopMargin(const std::vector<float>& logits);

}  // namespace visa::models
