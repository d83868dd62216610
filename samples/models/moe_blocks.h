// The manual's "Mixture of Experts" index generation (3.3) on the device: from the routing's
// TopK_Indices to the histogram, the blocks per expert, the global offsets, the local offsets,
// Scatter_Idx and Expert_IDs, all in one slice on the Vector Engine.
//
// The page computes its cumsums "in the Vector Engine using branch logging" (Section 4): an add
// whose operand is read on branches 1, 2 and written back on branches 0, 1, a register carried
// from one element to the next. The DSL takes the logger's ids (BranchMode::Vrf, ids pre-written
// to the VRF), but its Vector Engine has no operand write (its operands are immediates, VRF
// tensors loaded before the pipeline and the stash, which is the same element's snapshot), so no
// value is carried along the stream. The nearest construction here is the
// cumsum as a masked all-pairs sum, the TopK ranking's own pattern (2.2): cumsum(v)[i] = sum over
// j of (j < i ? v[j] : 0), the mask a Comparison branch on the index difference j - i and the sum
// the intra-slice reduce. Likewise the page's filter compaction (not in the DSL: its Filter keeps
// the stream's shape) becomes a count: Expert_IDs[g] = #{e : cumsum(Num_Blocks)[e] <= g}, which
// lists the experts of the used blocks in order and E past the grid.
//
// Axes (added to the routing's): A = T*K assignments (a = t*K + k) and P, the same assignments
// as the compared ones; X, the experts as the summed ones; G, the grid (the page's worst case
// rounded up to 8).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "runtime/backend.h"
#include "runtime/device.h"
#include "runtime/program.h"
#include "runtime/tensor.h"
#include "samples/models/llama_steps.h"
#include "samples/models/moe_reference.h"

namespace visa::models {

// The shape rules of the index generation: B a power of two (Num_Blocks = (Count + B - 1) >> log2 B),
// E and T*K multiples of 8 (Vector Engine packets), T*K < 2^12 (the local offsets' keys,
// expert << (log2(T*K) + 1) | a, stay in i32 with room for the difference). InvalidArgument naming
// the rule otherwise.
absl::Status CheckMoeBlockShape(const MoeShape& shape);

// The grid the device allocates: the page's worst case (T*K - E) / B + E, rounded up to 8.
int64_t MoeGridCapacity(const MoeShape& shape);

// The axes of the whole kernel: the routing's, the index generation's, and the experts' (Z = E + 1
// experts, the last one all zeros for the blocks past the grid; S = G * B block slots; Q = B).
std::string MoeBlockAxes(const MoeShape& shape);

// The index generation's DM results in one slice: count, num_blocks, global_offset, local_offset
// and expert_ids padded ([axis, 1 # 2]), scatter_idx contiguous ([A]).
struct MoeDeviceBlocks {
  std::optional<DmTensor> count, num_blocks, global_offset, local_offset, scatter_idx, expert_ids;
};
// From the routing's TopK_Indices ([R, 1 # 2] i32 in each token's slice); DM scratch held by `scratch`.
absl::StatusOr<MoeDeviceBlocks> GenerateMoeIndices(Context& ctx, const MappingScope& m, const MoeShape& shape,
                                                   const DmTensor& topk_by_token, Scratch& scratch);

// The routing on the device (moe_layer.h) from host inputs: x in HBM (bf16 [T, D]), TopK_Indices
// and the routing weights ([R, 1 # 2] i32 / f32 in each token's slice).
struct MoeDeviceRouting {
  std::optional<HbmTensor> x;
  std::optional<DmTensor> topk, weights;
};
absl::StatusOr<MoeDeviceRouting> RouteMoe(Context& ctx, const MappingScope& m, const MoeShape& shape,
                                          const std::vector<double>& x, const std::vector<double>& w_router,
                                          Scratch& scratch);

// The index generation's results read back, as the reference's MoeBlocks plus the device's
// capacity-sized Expert_IDs.
struct MoeBlocksRun {
  std::vector<int32_t> topk;  // [T, K] the routing's, as the index generation read it
  MoeBlocks blocks;           // expert_ids: the first `grid` entries
  std::vector<int32_t> expert_ids_capacity;  // [G capacity]: E past the grid
  Program program;
  double kernel_seconds = 0;
  int64_t device_resident_bytes = 0;
};

absl::StatusOr<MoeBlocksRun> ReadMoeBlocks(const MoeShape& shape, const MappingScope& m, const DmTensor& topk,
                                           const MoeDeviceBlocks& blocks);

// The routing (moe_layer.h) and then the index generation, on `backend`, on a device of its own.
absl::StatusOr<MoeBlocksRun> RunMoeBlocks(Backend& backend, const MoeShape& shape, const std::vector<double>& x,
                                          const std::vector<double>& w_router, const DeviceOptions& options = {});

}  // namespace visa::models
