// Contraction kernels: the LLVM IR of the Contraction Engine's arithmetic (contract + accumulate)
// on operands already placed in the computation mapping.
//
// The order is the one design.md "Numeric semantics" fixes and the interpreter follows: for every
// (outer position, Row, Time step in order, tree group) the packet's products are formed in the
// accumulator type, reduced by the pairwise tree (level k adds adjacent pairs of level k - 1,
// unrolled here), and combined into the group's accumulator slot, whose first contribution is
// stored as is. f32 operations carry no fast-math flags, so adds are never fused or reassociated.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "dsl/contraction_engine.h"
#include "dsl/dtype.h"

namespace llvm {
class Module;
}

namespace visa::jit {

// void f(uint32_t* acc, uint8_t* written, const uint8_t* x, const uint8_t* w, int64_t begin, int64_t end):
// outer positions [begin, end). x is [outer, time, packet]; w is addressed through the spec's
// w_* tables (the TRF image walked by its sequencer); acc and written are [outer, row, retained
// time, contracted packet].
using ContractFn = void (*)(uint32_t* acc, uint8_t* written, const uint8_t* x, const uint8_t* w, int64_t begin,
                            int64_t end);

struct ContractionSpec {
  DType x_type = DType::kBF16, w_type = DType::kBF16, acc_type = DType::kF32;
  ReduceOp op = ReduceOp::kAdd;
  int64_t outer = 1, rows = 1, times = 1, packet = 1, group = 1, out_times = 1, out_packet = 1;
  std::vector<int64_t> retained;     // per time step: retained position, -1 for padding
  std::vector<int64_t> target;       // per tree group: contracted packet position, -1 when dropped
  std::vector<uint8_t> live_outer, live_row, live_packet;
  // Where weight (outer o, Row r, time t, packet p) is in w: o * w_outer + r * w_row + w_time[t] +
  // w_packet[p]. With the TRF image itself these come from the TRF Sequencer (entries over time,
  // the contiguous reg_read_size read repeated over the packet).
  int64_t w_outer = 0, w_row = 0;
  std::vector<int64_t> w_time, w_packet;
  std::string Key() const;
};

void BuildContractionFunction(llvm::Module& module, const std::string& name, const ContractionSpec& spec);

}  // namespace visa::jit
