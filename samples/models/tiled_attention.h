// The manual's "Tiling" > Example: Tiled Attention (FlashAttention-style): out[S, D] =
// softmax(Q K^T / sqrt(D)) V over a long sequence of T keys, without ever holding the [S, T]
// scores: the keys go in tiles of J; each tile's scores are reduced to a running row max m and
// sum l (online softmax: when the max moves, the earlier sum and output are rescaled by
// exp(m_old - m_new)), and its bf16 weights exp(s - m) times the tile of V are added to the
// running output. Q K^T and P V run on the Contraction Engine (one 32-key / 32-column tile per
// slice), the softmax statistics on the Vector Engine (one query row per slice). K and V share
// the queries (one KV head); D = 64 makes 1/sqrt(D) = 1/8 exact.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "runtime/tensor.h"
#include "runtime/tensor_unit.h"
#include "samples/sample.h"

namespace visa::models {

struct AttentionTiles {
  int64_t queries = 8;    // S, at most 32 (one GEMM tile's rows)
  int64_t head_dim = 64;  // D
  int64_t keys = 8192;    // T
  int64_t tile = 1024;    // J, keys per tile (a TRF row holds 4 columns x 1024 bf16 for P V)
  std::string Axes() const;  // "S = 8, D = 64, T = 8192, J = 1024"
};

// How V is staged in HBM: V^T by tiles, [T / J, D, J] (each tile's [D, J] contiguous).
std::string StagedV(const AttentionTiles& shape);

// The kernel over q [S, D], k [T, D] and v staged as StagedV (bf16, HBM); out [S, D] f32 in HBM.
absl::StatusOr<HbmTensor> TiledAttention(Context& ctx, const MappingScope& m, const AttentionTiles& shape,
                                         const HbmTensor& q, const HbmTensor& k, const HbmTensor& v);

// The host reference (tiled_attention_reference.cc): plain loops in f64 over the whole sequence
// (a two-pass softmax, no tiles), from the inputs' values; q [S, D], k [T, D], v [T, D] row-major.
struct AttentionReference {
  std::vector<double> out;        // [S, D]
  std::vector<double> magnitude;  // [S, D]: sum over t of p[s, t] |v[t, d]| (the error bound's scale)
  int64_t max_moves = 0;          // (row, tile > 0) pairs whose tile raised the running max
};
AttentionReference ReferenceAttention(const AttentionTiles& shape, const std::vector<double>& q,
                                      const std::vector<double>& k, const std::vector<double>& v);

samples::Sample TiledAttentionSample(const std::string& name, const AttentionTiles& shape, bool slow);

}  // namespace visa::models
