// How the Llama-style model is split over chips, tensor parallel (Megatron style): each chip holds
// a share of the attention heads and of the FFN's hidden dimension F. The Q, K, V, gate and up
// projections are split by their output columns (a chip computes whole heads and whole columns of
// F), the output and down projections by their contracted rows (each chip's product is a partial
// sum over its heads or its F columns, summed over the chips by an AllReduce: chip_all_reduce.h).
// Everything else (the embedding, the norms, RoPE, the LM head, the residual stream) is replicated:
// every chip holds and computes the same values.
#pragma once

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "samples/models/llama_config.h"

namespace visa::models {

// The query heads one chip computes, as a [G, H] block of the model's (q head = g * h_kv + h) and
// its KV heads: whole KV heads with every group when the chips divide h_kv, else one KV head
// (repeated on chips / h_kv chips: its K and V projections and cache are computed on each) with
// G / (chips / h_kv) of its groups.
struct ChipHeads {
  int64_t h_begin = 0, h_count = 0, g_begin = 0, g_count = 0;
};
absl::StatusOr<ChipHeads> HeadsOfChip(const LlamaConfig& c, int64_t chip);

// The shapes one chip's program computes: its heads (kv_heads = h_count, groups = g_count) and
// F / chips; `chips` kept (the program's axis P). Fails naming the rule when `c` does not split
// over c.chips: a power of two (the AllReduce's butterfly), heads as HeadsOfChip says, F / chips
// a multiple of 32 (a GEMM tile's columns).
absl::StatusOr<LlamaConfig> ChipConfig(const LlamaConfig& c);

// The Chip level of every tensor of the program: "1" on one chip, else "P" (chip p holds P = p).
std::string ChipLevel(const LlamaConfig& c);

// Chip `chip`'s share of one layer's weights, laid out as one chip's layer of ChipConfig(c).
LlamaLayerWeights ChipLayerWeights(const LlamaConfig& c, const ChipHeads& heads, const LlamaLayerWeights& w,
                                   int64_t chip);

}  // namespace visa::models
