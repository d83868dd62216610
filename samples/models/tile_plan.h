// The tile sizes of a GEMM too large for the slices at once (the manual's "Tiling" > Tile Size
// Selection): C[M, N] = A[M, K] B[K, N] in bf16, each slice holding a 32-column tile of N (256
// slices: N <= 8192), A streamed 32 rows at a time (the accumulator's rows), K cut into chunks of
// `k_chunk` that a TRF row holds (4 columns x k_chunk bf16), the f32 partial sums of `m_block`
// row tiles kept in DM between chunks. The rule checks each memory per slice: the TRF (8 KiB a
// row; two chunks when double buffered), the DM (512 KiB: B resident, two A tiles, the partial
// sums, the bf16 output tile), the VRF (8 KiB: two partial-sum tiles), and the 32-byte flits (a
// chunk is a whole number of 64-byte packets, the aligner's K % 32).
#pragma once

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace visa::models {

struct GemmTiles {
  int64_t m = 0, n = 0, k = 0;
};

struct TilePlan {
  int64_t k_chunk = 0;  // contracted values per GEMM op (a TRF row holds 4 columns of it)
  int64_t m_block = 1;  // 32-row tiles sharing one TRF load of a chunk of B
  bool trf_double_buffered() const;  // two chunks fit a TRF row: the next loads under the GEMM
  std::string ToString() const;      // "k_chunk 512 x m_block 4 (TRF halves)"
};

inline constexpr int64_t kGemmRows = 32;           // A rows per op (the accumulator's)
inline constexpr int64_t kSliceColumns = 32;       // N per slice
inline constexpr int64_t kSlices = 256;            // per cluster
inline constexpr int64_t kTrfRowBytes = 8 * 1024;  // "8 KB x 8 MAC rows / slice"
inline constexpr int64_t kDmSliceBytes = 512 * 1024;
inline constexpr int64_t kVrfSliceBytes = 8 * 1024;
inline constexpr int64_t kFlitBytes = 32;

// Bytes per slice the plan uses of each memory.
struct SliceBudget {
  int64_t trf_row = 0, dm = 0, vrf = 0;
};
SliceBudget BudgetOf(const GemmTiles& shape, const TilePlan& plan);

// OK when the plan tiles the shape and fits every memory; else InvalidArgument naming the rule
// ("tile plan: DM capacity", "... TRF capacity", "... flit alignment", "... shape").
absl::Status CheckTilePlan(const GemmTiles& shape, const TilePlan& plan);

// The rule: the largest chunk (a multiple of 32 dividing K) that leaves the TRF double buffered
// (k_chunk <= 512: the next chunk loads on the sub context while the GEMM runs); then the largest
// m_block (up to 8: the TRF load is then under 1/8 of the GEMMs it feeds) that divides M / 32 and
// fits the DM. docs/tiling.md measures the trade-off on the cycle model.
absl::StatusOr<TilePlan> ChooseTilePlan(const GemmTiles& shape);

}  // namespace visa::models
