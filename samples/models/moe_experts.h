// The manual's "Mixture of Experts" layer after the index generation (3.4-3.6) on the device:
// the dispatch (a DMA scatter of each assignment's token row to its Scatter_Idx slot of the
// blocked tensor), the experts' weights gathered by Expert_IDs (DMA gathers), the blockwise SwiGLU
// FFN (Contraction Engine per block, SiLU(gate) x up on the Vector Engine in the gate GEMM's
// epilogue) and the combine (a DMA gather of the results in token order, weighted by the routing
// weights and summed over K on the Vector Engine).
//
// The device computes every block of the grid's capacity (the page: "sparse operations skip
// execution for empty Grids"; the DSL has no run-time skip): the slots no assignment fills are
// zero rows, the blocks past the grid take Expert_IDs = E, a zero expert appended to the weight
// tables, and the combine reads only the filled slots.
#pragma once

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "runtime/backend.h"
#include "runtime/device.h"
#include "runtime/program.h"
#include "samples/models/moe_blocks.h"
#include "samples/models/moe_reference.h"

namespace visa::models {

// The experts' weights, row-major: w_gate, w_up [E, D, F], w_down [E, F, D].
struct MoeExpertWeights {
  std::vector<double> w_gate, w_up, w_down;
};
// Multiples of 1/64 in [-1/2, 1/2] (exact in bf16), from `seed`.
MoeExpertWeights MakeMoeExpertWeights(const MoeShape& shape, uint64_t seed = 11);

struct MoeLayerRun {
  MoeBlocksRun blocks;     // the routing's top K and the index generation's results
  std::vector<double> out;  // [T, D] f32 read back
  Program program;
  double kernel_seconds = 0;
  int64_t device_resident_bytes = 0;
};

// The whole layer on `backend`, on a device of its own: routing, index generation, dispatch,
// weight gather, blockwise SwiGLU, combine.
absl::StatusOr<MoeLayerRun> RunMoeLayer(Backend& backend, const MoeShape& shape, const std::vector<double>& x,
                                        const std::vector<double>& w_router, const MoeExpertWeights& experts,
                                        const DeviceOptions& options = {});

}  // namespace visa::models
