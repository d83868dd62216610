// The manual's "Tiling" sketch as a kernel: C[M, N] = A[M, K] B[K, N] (bf16 in, f32 accumulation,
// bf16 out) at sizes whose operands exceed the SRAM (M = N = 8192, K = 2048: A and B 32 MiB each,
// C 128 MiB in bf16 and 256 MiB in f32, against one cluster's 128 MiB of DM), tiled as
// tile_plan.h describes: each slice keeps its 32 columns of B in DM; A streams from HBM 32 rows by
// k_chunk at a time, the next tile's DMA issued before the current GEMM (double buffering under
// the contraction); each chunk of B goes into one half of the TRF on the sub context while main
// contracts with the other half; each op's epilogue adds the previous chunk's f32 sums (loaded
// into the VRF), the last chunk's casts to bf16, and the tile goes to its place in C in HBM.
#pragma once

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "runtime/tensor.h"
#include "runtime/tensor_unit.h"
#include "samples/models/tile_plan.h"
#include "samples/sample.h"

namespace visa::models {

// How A and B^T are staged in HBM for `plan` (mapping text over the axes M, N, K): A as its tiles
// [M / 32, K / k_chunk] of [32, k_chunk], B^T as its chunks [K / k_chunk] of [N, k_chunk], so
// every tile a DMA moves is contiguous.
std::string StagedA(const TilePlan& plan);
std::string StagedB(const TilePlan& plan);
// The output's layout in HBM: tile-major, one slice's 32 x 32 tile contiguous.
std::string StagedC();

// The kernel: `a` and `b` staged as above, the output [M, N] bf16 created at `out_address` in HBM.
absl::StatusOr<HbmTensor> TiledGemm(Context& ctx, const GemmTiles& shape, const TilePlan& plan, const HbmTensor& a,
                                    const HbmTensor& b, int64_t out_address);

// The sample: random A [M, K] and B [K, N] in bf16, the output against Eigen's float product with
// a rounding-derived bound at every element. `plan` defaults to ChooseTilePlan's.
samples::Sample TiledGemmSample(const std::string& name, const GemmTiles& shape, bool slow,
                                const TilePlan* plan = nullptr);

}  // namespace visa::models
