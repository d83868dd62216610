// Comparing the device's logits with the host reference's, within a bound derived from bf16
// rounding; and the model's samples (`visa run llama_tiny_prefill` and so on).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "samples/models/llama_config.h"

namespace visa::models {

// The bound on |device - reference| for each logit: the device and the reference round to bf16
// at the same points and differ only in the order of their f32 additions, so their values at a
// bf16 rounding point differ by at most a few bf16 ulps (a different order may round the other
// way, one ulp = 2^-8 relative; kLogitUlps allows for that and what it does downstream through
// two layers' norms and contractions). The LM head contracts the final hidden state h with the
// table, so a logit moves by at most kLogitUlps * 2^-8 * sum_d |h[d] * w_emb[v, d]|.
inline constexpr double kLogitUlps = 8.0;

struct LogitsComparison {
  double max_error = 0;
  double max_bound = 0;
  std::optional<std::string> mismatch;  // the first logit outside its bound, or differing argmax
};
LogitsComparison CompareLogits(const LlamaConfig& config, const LlamaWeights& weights,
                               const std::vector<float>& device, const std::vector<float>& reference,
                               const std::vector<float>& reference_hidden);

// The small configuration the samples and tests run (LlamaConfig's defaults) and its prompt seed.
inline constexpr uint64_t kPromptSeed = 7;

}  // namespace visa::models
