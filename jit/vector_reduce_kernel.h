// The Vector Engine's reductions compiled: one function per intra-slice reduce (a slice per block)
// and per inter-slice reduce (a cluster per block), in exactly the order of combination that
// interp/vector_reduce.h states, so the compiled reduce and the interpreter agree bit for bit.
//
// What is fixed at compile time is the reduction's shape: the op and dtype, each input time step's
// output slot (out_time_of), whether Packet is reduced by the tree, and for the inter-slice reduce
// each output position's sources. Valid counts (the Valid Count Generator's, per slice) are a table
// computed by the caller; whether a slot already holds a contribution is tracked per block, as the
// interpreter tracks it (the first contribution is stored as is): in values for up to eight slots,
// else in a scratch array.
//
// Integer ops and IEEE add / mul are emitted inline (on a flit's lanes as one vector); f32 Max / Min
// call the interpreter's very fmax / fmin wrappers (dsl/vector_ops.h), whose signed-zero choice
// IR does not define.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "dsl/vector_reduce.h"

namespace llvm {
class Module;
}

namespace visa::jit {

struct IntraReduceKernelSpec {
  VeReduceOp op = VeReduceOp::kAdd;
  bool f32 = false;
  bool packet_reduced = false;
  bool valid_counts = false;  // a runtime table of Way4 valid counts (else 4 everywhere)
  int64_t slices = 1;         // the table holds one row of in-steps counts per slice
  int64_t out_steps = 0;
  std::vector<int64_t> out_time_of;  // per input step, -1 for padding

  std::string Key() const;
};

// fn(in, out, valid, have, begin, end): blocks [begin, end); `in` and `out` the whole streams
// (in.time x 4 and out.time x 4 lanes per block), `valid` slices x in-steps counts (block b reads
// row b % slices; unused without valid_counts), `have` a scratch of out_steps bytes (used
// beyond eight output steps).
using IntraReduceFn = void (*)(const uint32_t* in, uint32_t* out, const int32_t* valid, uint8_t* have,
                               int64_t begin, int64_t end);

struct InterReduceKernelSpec {
  VeReduceOp op = VeReduceOp::kAdd;
  bool f32 = false;
  int64_t in_positions = 0;                   // slice x time positions of a cluster's input
  std::vector<std::vector<int64_t>> sources;  // per output position, its inputs in order

  std::string Key() const;
};

// fn(in, out, begin, end): clusters [begin, end), 8 lanes per position.
using InterReduceFn = void (*)(const uint32_t* in, uint32_t* out, int64_t begin, int64_t end);

void BuildIntraReduceFunction(llvm::Module& module, const std::string& name, const IntraReduceKernelSpec& spec);
void BuildInterReduceFunction(llvm::Module& module, const std::string& name, const InterReduceKernelSpec& spec);

}  // namespace visa::jit
