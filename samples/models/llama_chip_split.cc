// The tensor-parallel split of the Llama-style model over chips (llama_chip_split.h).
#include "samples/models/llama_chip_split.h"

#include <vector>

#include "absl/strings/str_cat.h"
#include "dsl/status_macros.h"
#include "samples/models/matrix_slices.h"

namespace visa::models {
namespace {

bool PowerOfTwo(int64_t n) { return n > 0 && (n & (n - 1)) == 0; }

}  // namespace

absl::StatusOr<ChipHeads> HeadsOfChip(const LlamaConfig& c, int64_t chip) {
  if (c.kv_heads % c.chips == 0) {
    const int64_t h = c.kv_heads / c.chips;
    return ChipHeads{chip * h, h, 0, c.groups};
  }
  const int64_t repeats = c.chips / c.kv_heads;
  if (c.chips % c.kv_heads == 0 && c.groups % repeats == 0) {
    const int64_t g = c.groups / repeats;
    return ChipHeads{chip % c.kv_heads, 1, (chip / c.kv_heads) * g, g};
  }
  return absl::InvalidArgumentError(absl::StrCat("llama tensor parallel: ", c.kv_heads, " KV heads x ", c.groups,
                                                 " groups do not split over ", c.chips,
                                                 " chips (the chips must divide the KV heads, or be a multiple of "
                                                 "them that divides the query heads)"));
}

absl::StatusOr<LlamaConfig> ChipConfig(const LlamaConfig& c) {
  if (!PowerOfTwo(c.chips)) {
    return absl::InvalidArgumentError(
        absl::StrCat("llama tensor parallel: ", c.chips, " chips: the AllReduce's butterfly needs a power of two"));
  }
  if (c.ffn % (32 * c.chips) != 0) {
    return absl::InvalidArgumentError(absl::StrCat("llama tensor parallel: F = ", c.ffn, " over ", c.chips,
                                                   " chips is not a multiple of 32 columns per chip"));
  }
  ASSIGN_OR_RETURN(const ChipHeads heads, HeadsOfChip(c, 0));
  LlamaConfig local = c;
  local.kv_heads = heads.h_count;
  local.groups = heads.g_count;
  local.ffn = c.ffn / c.chips;
  return local;
}

std::string ChipLevel(const LlamaConfig& c) { return c.chips > 1 ? "P" : "1"; }

LlamaLayerWeights ChipLayerWeights(const LlamaConfig& c, const ChipHeads& heads, const LlamaLayerWeights& w,
                                   int64_t chip) {
  const int64_t D = c.hidden, K = c.head_dim, F = c.ffn / c.chips;
  LlamaLayerWeights out;
  out.attn_norm = w.attn_norm;
  out.ffn_norm = w.ffn_norm;
  for (int64_t g = heads.g_begin; g < heads.g_begin + heads.g_count; ++g) {
    // wq [G, H, C, D]: the chip's KV heads' block of rows in group g.
    const std::vector<float> rows = Rows(w.wq, K * D, g * c.kv_heads + heads.h_begin, heads.h_count);
    out.wq.insert(out.wq.end(), rows.begin(), rows.end());
  }
  out.wk = Rows(w.wk, K * D, heads.h_begin, heads.h_count);  // [H, C, D]
  out.wv = Rows(w.wv, K * D, heads.h_begin, heads.h_count);  // [H, E, D]
  // wo [D, G, H, E]: per row d and group g, the chip's heads' E columns.
  for (int64_t d = 0; d < D; ++d) {
    for (int64_t g = heads.g_begin; g < heads.g_begin + heads.g_count; ++g) {
      const auto first = w.wo.begin() + ((d * c.groups + g) * c.kv_heads + heads.h_begin) * K;
      out.wo.insert(out.wo.end(), first, first + heads.h_count * K);
    }
  }
  out.gate = Rows(w.gate, D, chip * F, F);       // [F, D]
  out.up = Rows(w.up, D, chip * F, F);           // [F, D]
  out.down = Columns(w.down, c.ffn, chip * F, F);  // [D, F]
  return out;
}

}  // namespace visa::models
