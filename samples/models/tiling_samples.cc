// The tiling samples (tiling_samples.h).
#include "samples/models/tiling_samples.h"

#include "samples/models/tiled_attention.h"
#include "samples/models/tiled_gemm.h"

namespace visa::samples {

std::vector<Sample> TilingSamples() {
  return {
      models::TiledGemmSample("tiled_gemm", {.m = 8192, .n = 8192, .k = 2048}, /*slow=*/true),
      // Two row tiles by two chunks of K over 8 slices: every step of the full size's schedule.
      models::TiledGemmSample("tiled_gemm_reduced", {.m = 64, .n = 256, .k = 1024}, /*slow=*/false),
      models::TiledAttentionSample("tiled_attention", {.keys = 8192, .tile = 1024}, /*slow=*/true),
      // Four key tiles of 128: the running max and sum rescaled three times per row.
      models::TiledAttentionSample("tiled_attention_reduced", {.keys = 512, .tile = 128}, /*slow=*/false),
  };
}

}  // namespace visa::samples
