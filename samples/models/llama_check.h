// Comparing the device's logits with the host reference's, within a bound derived from bf16
// rounding; and the model's samples (`visa run llama_tiny_prefill` and so on).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "samples/models/llama_config.h"

namespace visa::models {

// The bound on |device - reference| for each logit. The device and the reference round to bf16 at
// the same points and differ only in the order of their f32 additions (a relative difference of
// order 2^-24 per addition), so a value rounded to bf16 comes out the same on both unless its f32
// values straddle a rounding boundary; then it differs by one bf16 ulp (2^-8 relative). For the
// LM head's logit v = sum_d h[d] * w[d, v] over the final hidden state h (bf16):
//   - the head's own f32 sums in another order: D * 2^-24 * sum_d |h[d] * w[d, v]| (Higham's
//     gamma_D, D additions);
//   - kHiddenFlips elements of h one bf16 ulp apart (from roundings that went the other way,
//     here or upstream): kHiddenFlips * 2^-8 * max_d |h[d] * w[d, v]|.
// A difference beyond that is more than rounding order and is reported.
inline constexpr double kHiddenFlips = 16.0;

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
