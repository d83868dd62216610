// The 70B layer's tensor-parallel split over chips (llama70b_chip_split.h).
#include "samples/models/llama70b_chip_split.h"

#include "absl/strings/str_cat.h"
#include "dsl/status_macros.h"
#include "samples/models/llama_chip_split.h"
#include "samples/models/matrix_slices.h"
#include "samples/models/tiled_projection.h"

namespace visa::models {

absl::StatusOr<Llama70bConfig> Llama70bChipConfig(const Llama70bConfig& c) {
  LlamaConfig split = c.AsLlama(c.kv_heads);
  RETURN_IF_ERROR(ChipConfig(split).status());
  if (c.kv_heads % c.chips != 0 || (c.ffn / c.chips) % kTileDepth != 0) {
    return absl::InvalidArgumentError(absl::StrCat("llama70b tensor parallel: ", c.kv_heads, " KV heads and F = ", c.ffn,
                                                   " over ", c.chips, " chips: each chip needs whole KV heads (G x d_k "
                                                   "= one tile depth) and F / chips a multiple of ",
                                                   kTileDepth));
  }
  Llama70bConfig local = c;
  local.kv_heads = c.kv_heads / c.chips;
  local.ffn = c.ffn / c.chips;
  return local;
}

std::vector<uint16_t> Llama70bChipShare(const Llama70bConfig& c, const Llama70bWeights& w,
                                        std::vector<uint16_t> Llama70bWeights::*matrix, int64_t chip) {
  const int64_t D = c.hidden, K = c.head_dim, G = c.groups, F = c.ffn / c.chips;
  const absl::StatusOr<ChipHeads> heads = HeadsOfChip(c.AsLlama(c.kv_heads), chip);
  VISA_CHECK(heads.ok() && heads->g_count == G, "Llama70bChipConfig accepted the split");
  const int64_t h0 = heads->h_begin, hn = heads->h_count;
  const std::vector<uint16_t>& m = w.*matrix;
  if (matrix == &Llama70bWeights::wq) return Rows(m, D, h0 * G * K, hn * G * K);  // [H, G, C, D]: the chip's heads
  if (matrix == &Llama70bWeights::wk || matrix == &Llama70bWeights::wv) return Rows(m, D, h0 * K, hn * K);  // [H, C, D]
  if (matrix == &Llama70bWeights::wo) return Columns(m, c.q_cols(), h0 * G * K, hn * G * K);  // [D, H, G, E]
  if (matrix == &Llama70bWeights::down) return Columns(m, c.ffn, chip * F, F);                // [D, F]
  VISA_CHECK(matrix == &Llama70bWeights::gate || matrix == &Llama70bWeights::up, "a split projection");
  return Rows(m, D, chip * F, F);  // [F, D]
}

Llama70bConfig ReducedLlama70bOnChips(int64_t chips) {
  Llama70bConfig c = ReducedLlama70b();
  c.kv_heads = 4;
  c.ffn = 4096;
  c.chips = chips;
  return c;
}

}  // namespace visa::models
