// The Llama 3 70B layer's decode step split over chips, tensor parallel (llama_chip_split.h's
// Megatron split applied to llama70b_layer.h's tiled layer): each chip holds whole KV heads with all
// their G query groups (so a head's output stays one tile depth of the output projection) and
// F / chips of the FFN. Q, K, V, gate and up are split by output columns, the output and down
// projections by contracted rows, their partial sums added over the chips by chip_all_reduce.h's
// AllReduce; the norms, RoPE table, input and residual stream are replicated on every chip.
#pragma once

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "samples/models/llama70b_layer.h"

namespace visa::models {

// One chip's shapes of `c` (kv_heads / chips, ffn / chips, `chips` kept). Fails naming the rule
// when `c` does not split: llama_chip_split.h's rules (ChipConfig), and each chip whole KV heads
// (the chips divide h_kv) and F / chips a multiple of the tile depth (1024).
absl::StatusOr<Llama70bConfig> Llama70bChipConfig(const Llama70bConfig& c);

// Chip `chip`'s share of one split projection `matrix` of `w` ([out, in] as Llama70bWeights lays
// them out): of wq, wk, wv, gate and up its rows, of wo and down its columns.
std::vector<uint16_t> Llama70bChipShare(const Llama70bConfig& c, const Llama70bWeights& w,
                                        std::vector<uint16_t> Llama70bWeights::*matrix, int64_t chip);

// The reduced configuration split over 4 chips: ReducedLlama70b's tiling with 4 KV heads and
// F = 4096, so that each chip holds one KV head (G x d_k = 1024) and 1024 of F.
Llama70bConfig ReducedLlama70bOnChips(int64_t chips);

}  // namespace visa::models
