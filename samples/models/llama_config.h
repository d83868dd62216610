// A Llama-style decoder's configuration and its bf16 weights from a seeded generator: what the
// device program (llama_program.h) and the host reference (llama_reference.h) share.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace visa::models {

struct LlamaConfig {
  int64_t vocab = 512;       // V
  int64_t hidden = 256;      // D
  int64_t ffn = 512;         // F
  int64_t layers = 2;        // L
  int64_t kv_heads = 2;      // h_kv (axis H)
  int64_t groups = 2;        // G = h_q / h_kv (axis G)
  int64_t head_dim = 64;     // d_k (axes E and C: the head dimension after and before RoPE)
  int64_t max_positions = 64;  // s_max (axis T): the KV cache's rows
  int64_t prompt = 32;       // s_in of the prefill
  float eps = 1e-5f;         // RMSNorm's epsilon
  float rope_theta = 10000.0f;
  uint64_t seed = 2026;
  // The chips the layers are split over, tensor parallel (llama_chip_split.h): each chip computes
  // its share of the heads and of F, the partial sums of the output and down projections are
  // summed over the chips. 1: the whole model on one chip. The weights do not depend on it.
  int64_t chips = 1;

  int64_t q_heads() const { return kv_heads * groups; }
  // The axes of a program over `tokens` query positions (S), as MappingScope text; with more than
  // one chip also P, the chip index.
  std::string Axes(int64_t tokens) const;
};

// Every weight rounded to bf16 and held as float, laid out as the device's HBM holds it: each
// projection stored transposed (output rows, input innermost), because the Contraction Engine's
// TRF holds the weights with the contracted axis innermost and the DMA moves HBM -> DM only in
// 8-byte runs (an [in, out] store would need 2-byte packets to transpose on the way).
struct LlamaLayerWeights {
  std::vector<float> attn_norm;  // [D]
  std::vector<float> wq;         // [G, H, C, D]  (q head = g * h_kv + h, the page's [G, h_kv] split)
  std::vector<float> wk;         // [H, C, D]
  std::vector<float> wv;         // [H, E, D]
  std::vector<float> wo;         // [D, G, H, E]
  std::vector<float> ffn_norm;   // [D]
  std::vector<float> gate;       // [F, D]
  std::vector<float> up;         // [F, D]
  std::vector<float> down;       // [D, F]
};

struct LlamaWeights {
  std::vector<float> embedding;   // [V, D]
  // w_lm_head stored transposed, [V, D]. Not tied to the embedding (the page's "typically"): with
  // random weights a tied head mostly predicts the token it was given, and a generation of one
  // repeated token would test the decode loop poorly.
  std::vector<float> lm_head;
  std::vector<float> final_norm;  // [D]
  // The page's RoPE table w_rope[s_max, d_k', 2, 2] written out as a block-diagonal rotation per
  // position, [T, E, C]: rope[t, 2r + a, 2r + b] = [[cos, -sin], [sin, cos]][a][b] at angle
  // t * theta^(-2r / d_k), zero off the 2 x 2 blocks (see llama_program.cc, RoPE, for why).
  std::vector<float> rope;
  std::vector<LlamaLayerWeights> layers;
};

// Rounds to bf16 (nearest even) and back.
float RoundBf16(float x);

// The RoPE table of LlamaWeights::rope for `config` (T, d_k, theta), each entry rounded to bf16:
// not a learned weight, so a weights file does not carry it.
std::vector<float> MakeRopeTable(const LlamaConfig& config);

// Weights drawn from `config.seed`: projections uniform in +-1/sqrt(fan_in), norms near 1,
// embeddings uniform in +-1; all rounded to bf16.
LlamaWeights MakeWeights(const LlamaConfig& config);

// The prompt of `config.prompt` token ids drawn from `seed`.
std::vector<int32_t> MakePrompt(const LlamaConfig& config, uint64_t seed);

}  // namespace visa::models
