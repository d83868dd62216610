// The Llama-style model's weights in a `.safetensors` file, under the tensor names of the common
// Llama checkpoints ("model.layers.0.self_attn.q_proj.weight", [out, in] row-major), so that the
// model samples can run with weights from a file (VISA_LLAMA_WEIGHTS=path) and a test can write
// the seeded weights and read them back.
//
// The layouts match LlamaWeights: q_proj [h_q * d_k, D] with query head g * h_kv + h, k_proj and
// v_proj [h_kv * d_k, D], o_proj [D, h_q * d_k], gate_proj / up_proj [F, D], down_proj [D, F],
// embed_tokens and lm_head [V, D], the norms [D]. The RoPE table is not a weight: it is made from
// the configuration (MakeRopeTable). The model rotates interleaved pairs (2r, 2r + 1); a
// checkpoint made for rotate-half RoPE needs its q_proj and k_proj rows permuted per head first.
// The tiny model's query head g * h_kv + h uses KV head h (the page's [G, h_kv] split); in the
// common checkpoints query head i uses KV head i / G, so their q_proj (and o_proj's columns) need
// the heads reordered from [H, G] to [G, H] (the 70B layer, llama70b_layer.h, uses their order).
#pragma once

#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "samples/models/llama_config.h"

namespace visa::models {

// Writes `weights` (bf16) as a `.safetensors` file at `path`.
absl::Status WriteLlamaWeightsFile(const LlamaConfig& config, const LlamaWeights& weights, const std::string& path);

// Reads a file written so (or any with those names and shapes, in BF16, F16 or F32: values are
// rounded to bf16); a missing tensor, a shape other than the configuration's or a malformed file
// is an error naming the tensor and the file.
absl::StatusOr<LlamaWeights> ReadLlamaWeightsFile(const LlamaConfig& config, const std::string& path);

}  // namespace visa::models
