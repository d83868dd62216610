// Packet contraction kernels: a fused contraction none of whose retained time digits broadcasts
// the weights (a GEMV, a decode projection of one token), vectorized along the packet.
//
// Why not lanes: the lane kernel (lane_contraction_kernel.h) puts 16 time steps that share their
// weights in the 16 lanes of a vector; here every step reads its own weights, so a lane kernel
// would run each step in one lane of 16 and pack a 16-lane block per step. Instead each step's
// operand and each Row's weights are loaded along the packet as one vector, the products formed
// in the accumulator type, and the manual's pairwise tree reduced level by level with shuffles
// (level k adds adjacent pairs of level k - 1: even positions plus odd ones), which leaves each
// tree group's sum in its own element. Each sum is then combined into its accumulator slot in
// time order, the slot's first contribution stored as is. Same operations, same order, same
// bits as the interpreter; no packing, no scratch.
//
// Takes (PacketContractionOf): bf16 operands fetched without conversion, an f32 accumulator,
// contiguous packets of a power of two positions, every position live, and blocks of one lane.
// Other contractions without lanes run the lane kernel with one live lane per block.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "dsl/contraction_engine.h"
#include "dsl/dtype.h"
#include "jit/lane_contraction_kernel.h"

namespace llvm {
class Module;
}

namespace visa::jit {

struct PacketContractionSpec {
  DType x_type = DType::kBF16, w_type = DType::kBF16, acc_type = DType::kF32;
  ReduceOp op = ReduceOp::kAdd;
  int64_t rows = 1, packet = 1, group = 1, out_times = 1, out_packet = 1;
  std::vector<uint8_t> live_outer, live_row;
  std::vector<int64_t> target;  // per tree group: contracted packet position, -1 when dropped
  // The steps in time order: the operand's element offset in the slice's DM, the weights' element
  // offset in each TRF row, and the retained time position the sums go to.
  std::vector<int64_t> step_x, step_w, step_acc;

  int64_t groups() const { return packet / group; }
  std::string Key() const;
};

// The packet kernel's spec for a lane spec whose blocks hold one lane each, when it takes it (the
// conditions above); nullopt otherwise. The kernel has the lane kernel's signature
// (LaneContractionFn) and writes one slice's accumulators and flags as it does with
// slice_accumulators; it needs no scratch.
std::optional<PacketContractionSpec> PacketContractionOf(const LaneContractionSpec& lanes);

void BuildPacketContractionFunction(llvm::Module& module, const std::string& name, const PacketContractionSpec& spec);

}  // namespace visa::jit
