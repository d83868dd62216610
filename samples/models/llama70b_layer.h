// One Llama 3 70B layer's decode step at the manual's shapes (D = 8192, F = 28672, h_q = 64,
// h_kv = 8, d_k = 128, a KV cache of 1024 positions) on one chip, the weights streamed tile by tile
// from HBM into DM (tiled_projection.h), and its host reference. A reduced configuration runs the
// same tiling code in tests on both backends.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "runtime/backend.h"
#include "runtime/device.h"
#include "runtime/program.h"
#include "samples/models/llama_config.h"
#include "samples/models/tiled_projection.h"

namespace visa::models {

struct Llama70bConfig {
  int64_t hidden = 8192;         // D
  int64_t ffn = 28672;           // F
  int64_t kv_heads = 8;          // h_kv (H)
  int64_t groups = 8;            // G = h_q / h_kv (h_q = 64)
  int64_t head_dim = 128;        // d_k (E, C); G * d_k must be 1024 (one tile depth per KV head)
  int64_t max_positions = 1024;  // T: the KV cache's rows
  int64_t position = 1023;       // the decoded token's position: the cache holds 0 .. position - 1
  float eps = 1e-5f;
  float rope_theta = 500000.0f;
  uint64_t seed = 70;
  int64_t chips = 1;  // > 1: split over chips, tensor parallel (llama70b_chip_split.h)

  // The shared steps' configuration (its Axes name the layer's axes, P when chips > 1), with
  // `heads` KV heads.
  LlamaConfig AsLlama(int64_t heads) const;
  int64_t q_cols() const { return kv_heads * groups * head_dim; }
  int64_t kv_cols() const { return kv_heads * head_dim; }
};

// The reduced configuration the tests run on both backends: the same tiling (2 chunks of D, 3 of
// F, 2 KV heads of G = 8, d_k = 128), 64 cache positions.
Llama70bConfig ReducedLlama70b();

// The layer's weights and step inputs as bf16 bit patterns (row-major, projections transposed
// [out, in] as the tiles want them); x and the cache prefix from the same seed.
struct Llama70bWeights {
  std::vector<uint16_t> attn_norm, ffn_norm;  // [D]
  std::vector<uint16_t> wq;    // [H, G, C, D]: query head h * G + g (one KV head's queries together)
  std::vector<uint16_t> wk;    // [H, C, D]
  std::vector<uint16_t> wv;    // [H, E, D]
  std::vector<uint16_t> wo;    // [D, H, G, E]
  std::vector<uint16_t> gate, up;  // [F, D]
  std::vector<uint16_t> down;  // [D, F]
  std::vector<uint16_t> rope;  // [T, E, C] block-diagonal rotations (llama_config.h)
  std::vector<uint16_t> k_cache, v_cache;  // [H, T, E], rows < position filled, the rest zero
  std::vector<float> x;        // [D] the layer's input (f32)
  int64_t weight_bytes() const;  // the layer's projection and norm weights
};
Llama70bWeights MakeLlama70bWeights(const Llama70bConfig& c);

inline float Bf16ToFloat(uint16_t bits) {
  const uint32_t u = static_cast<uint32_t>(bits) << 16;
  float f;
  __builtin_memcpy(&f, &u, 4);
  return f;
}

// The host reference: f32 values rounded to bf16 where the device stores bf16, sums in double;
// the output [D] and each element's bound on |device - reference| (llama70b_reference.cc).
struct Llama70bReference {
  std::vector<float> out;
  std::vector<double> bound;
  double seconds = 0;
};
Llama70bReference ReferenceDecode(const Llama70bConfig& c, const Llama70bWeights& w);

// The decode step on a device: upload, trace, one launch; the output [D] and the cache rows written.
struct Llama70bRun {
  std::vector<float> out;
  Program program;
  double launch_seconds = 0, upload_seconds = 0, trace_seconds = 0;
  std::vector<double> relaunch_seconds;  // the launches after the first
  int64_t device_resident_bytes = 0;
};
// `launches` > 1 launches the traced step again on the caches it wrote (the same token decoded
// again: the same output), timing each.
absl::StatusOr<Llama70bRun> RunLlama70bDecode(const Llama70bConfig& c, const Llama70bWeights& w, Backend& backend,
                                              const DeviceOptions& options = {}, int64_t launches = 1);

}  // namespace visa::models

namespace visa::models {

// The layer's weights in a `.safetensors` file under the Llama checkpoint names of layer 0
// ("model.layers.0.self_attn.q_proj.weight" [h_q * d_k, D], ... "mlp.down_proj.weight" [D, F],
// bf16; q_proj's rows are the checkpoints' order: query head i = h * G + g uses KV head h).
// Reading takes the weights from the file and the step's inputs (x, the cache prefix) from the
// seed; a missing tensor, another dtype than BF16 or another shape is an error naming it.
// `visa run llama70b_layer_decode` reads the file VISA_LLAMA70B_WEIGHTS names, when set.
absl::Status WriteLlama70bWeightsFile(const Llama70bConfig& c, const Llama70bWeights& w, const std::string& path);
absl::StatusOr<Llama70bWeights> ReadLlama70bWeightsFile(const Llama70bConfig& c, const std::string& path);

}  // namespace visa::models
