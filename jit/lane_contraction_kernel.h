// Lane contraction kernels: one pipeline's fetch, Contraction Engine arithmetic and accumulation
// fused into one loop nest per slice, vectorized across 16 time steps that share their weights.
//
// Why these lanes: the pairwise tree reduces along the packet, so vectorizing along the packet
// needs a shuffle per level; the Rows are at most 8. Time steps that differ only in a retained
// digit along which the weights are broadcast (the GEMM's rows of A) land in distinct accumulator
// slots and read the same weights, so 16 of them form the lanes of one vector: each lane's tree
// is the manual's tree, level by level, and each slot still receives its time steps in order.
// The bits are the interpreter's: products in the accumulator type, the tree in its order, a
// slot's first contribution stored as is; a fused multiply-add only where the products are exact.
//
// Per slice the kernel (1) widens the weights it needs from the TRF rows in place into a packed
// [weight block][row][packet] buffer, (2) reads the operand from the slice's DM in place through
// the fetch sequencer's offsets, applies the Fetch Adapter and widens it into [x block][packet]
// [16 lanes], (3) walks the steps, each accumulator block's in time order, and (4) scatters the
// lane accumulators into the accumulator image [outer][row][retained time][contracted packet].
// Float kernels do (1) and (2) block by block inside (3): the steps run in an order that keeps
// the steps sharing a block together, and each block is packed right before its first step into
// a slot a finished block freed.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "dsl/contraction_engine.h"
#include "dsl/dtype.h"
#include "jit/element_op.h"

namespace llvm {
class Function;
class Module;
}

namespace visa::jit {

inline constexpr int64_t kLanes = 16;

// x_base[o]: the slice's DM bytes at the fetched tensor's Element (nullptr: no data); w_base[o *
// rows + r]: the TRF row's bytes at the weights' Element; acc / written: [outer][row][retained
// time][contracted packet] (one slice's part with slice_accumulators); scratch:
// LaneContractionSpec::ScratchBytes() per calling thread.
using LaneContractionFn = void (*)(const uint8_t* const* x_base, const uint8_t* const* w_base, uint32_t* acc,
                                   uint8_t* written, uint8_t* scratch, int64_t begin, int64_t end);

struct LaneContractionSpec {
  DType dm_type = DType::kBF16;   // the fetched tensor's type in DM
  ElementOp fetch;                // the Fetch Adapter: DM element -> stream element
  DType x_type = DType::kBF16, w_type = DType::kBF16, acc_type = DType::kF32;
  ReduceOp op = ReduceOp::kAdd;
  int64_t rows = 1, packet = 1, group = 1, out_times = 1, out_packet = 1;
  std::vector<uint8_t> live_outer, live_row, live_packet;
  std::vector<int64_t> target;    // per tree group: contracted packet position, -1 when dropped

  // Weight blocks: the element offset (in a TRF row) of each distinct weight time step, and of
  // each packet position from there.
  std::vector<int64_t> w_offset, w_packet;
  // Operand blocks: per block and lane, the element offset in the slice's DM (-1: an empty lane),
  // and per packet position the offset from there (both from the fetch sequencer).
  std::vector<int64_t> x_lane, x_packet;
  // Accumulator blocks: per block and lane, the retained time position (-1: not kept).
  std::vector<int64_t> acc_lane;
  // The steps in time order: which operand, weight and accumulator block each combines.
  std::vector<int64_t> step_x, step_w, step_acc;
  // The first tree level as fma(x0, w0, x1 * w1): only for operands whose products are exact
  // (exact_products.h), where it gives the same bits with one instruction fewer per pair.
  bool fma_first_level = false;
  // The first tree level as one vdpbf16ps per pair of packet positions (AVX512_BF16), on the raw
  // bf16 pairs: the operand packed as transposed pairs, the weights read in place from the TRF.
  // Only for operands whose products are exact and whose pair sums are normal or zero
  // (exact_products.h: PairSumsAreExact), where it gives the tree's bits (UsesBf16Pairs).
  bool bf16_pairs = false;
  // acc / written hold one slice's accumulators ([row][retained time][contracted packet]) and
  // each call runs one slice: the caller's epilogue (contraction_epilogue.h) takes them from a
  // small per-thread buffer instead of a full-size image.
  bool slice_accumulators = false;

  int64_t groups() const { return packet / group; }
  int64_t w_blocks() const { return static_cast<int64_t>(w_offset.size()); }
  int64_t x_blocks() const { return static_cast<int64_t>(x_lane.size()) / kLanes; }
  int64_t acc_blocks() const { return static_cast<int64_t>(acc_lane.size()) / kLanes; }
  int64_t ScratchBytes() const;
  std::string Key() const;
};

// Which parts of a kernel's step run as loops instead of written out. Every product written out is
// code to generate (a GEMM step of 8 Rows x 32 positions was 3,600 IR instructions, 120-210 ms of
// code generation on an AVX2 host); as loops the arithmetic and its order are the same.
struct StepShape {
  bool row_block_loop = false;  // the full blocks of 4 live Rows as a loop (8 or more live Rows)
  bool group_loop = false;      // the live tree groups as a loop (their live positions alike)
  // > 0: each tree group as a loop over aligned chunks of this many positions (each chunk a
  // subtree of the manual's tree), their sums combined by the tree above them; only where every
  // chunk's live positions are alike.
  int64_t chunk_leaves = 0;
};
// Integer pair and byte quad steps (multiply-add chains) are written out: StepShape{}.
StepShape StepShapeOf(const LaneContractionSpec& spec);

// Whether the kernel packs its operands as 32-bit values and sums them by trees (StepShapeOf), not
// as integer pairs or byte quads (which need AVX512BW, VNNI): every float kernel, and the integer
// ones on a host without those.
bool PacksValues(const LaneContractionSpec& spec);

// Whether a spec may run with bf16_pairs: bf16 operands fetched without conversion, an f32 sum,
// contiguous packets of whole 32-element chunks with every position live, weights read in place,
// and a host with AVX512_BF16.
bool UsesBf16Pairs(const LaneContractionSpec& spec);

void BuildLaneContractionFunction(llvm::Module& module, const std::string& name, const LaneContractionSpec& spec);

// The function `name` of LaneContractionFn's signature, added to `module` with no body (its five
// pointers never alias): the lane and packet kernels (packet_contraction_kernel.h) share it.
llvm::Function* DeclareLaneContractionFunction(llvm::Module& module, const std::string& name);

}  // namespace visa::jit
