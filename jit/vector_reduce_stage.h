// The Vector Engine's reduction steps on the JIT: the stream's blocks (a slice for the intra-slice
// reduce, a cluster for the inter-slice reduce) reduced in parallel by generated code
// (jit/vector_reduce_kernel.h) in the order interp/vector_reduce.h states, so both backends agree
// bit for bit. JitStats::compiled_reductions counts the steps run this way.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "absl/status/statusor.h"
#include "dsl/vector_engine.h"
#include "jit/kernel_cache.h"

namespace visa::jit {

// A reduce step's compiled reduction with everything it needs but the data: what a vector stage's
// later runs keep (op_memo.h), so no spec key or table is built again.
struct ReadyReduce {
  IntraReduceFn intra = nullptr;  // else inter
  InterReduceFn inter = nullptr;
  std::shared_ptr<const std::vector<int32_t>> valid;  // the intra-slice reduce's VCG counts, by slice
  int64_t slices = 0;      // the intra-slice reduce's slice positions (a block reads row block % slices)
  int64_t valid_rows = 0;  // the slices `valid` holds (the first ones)
  int64_t in_elements = 0;
  int64_t out_elements = 0;
  int64_t out_steps = 0;
  int64_t blocks = 0;
  int threads = 1;
};
// With `live_blocks` >= 0 the step runs only its first `live_blocks` blocks (RunReadyReduce's
// `blocks`), and the valid counts cover only the slices those read.
absl::StatusOr<ReadyReduce> ReadyReduceStep(KernelCache& kernels, const VeStep& step, int64_t live_blocks = -1);
// `data` (the step's input image) reduced into `out` (resized to the output's positions): every
// block, or the first `blocks` (the others are padding units whose results no one reads).
void RunReadyReduce(KernelCache& kernels, const ReadyReduce& ready, const std::vector<uint8_t>& data,
                    std::vector<uint8_t>& out, int64_t blocks = -1);
// The same on images the caller holds: `data` the input's positions, `out` the output's.
void RunReadyReduce(KernelCache& kernels, const ReadyReduce& ready, const uint8_t* data, uint8_t* out,
                    int64_t blocks);

// `data` is the stream laid out by the step's input Full(); returns its output's bytes.
absl::StatusOr<std::vector<uint8_t>> RunReduceStep(KernelCache& kernels, const VeStep& step,
                                                   const std::vector<uint8_t>& data);

// Compiles the step's reduction without running it (Prepare).
absl::Status CompileReduceStep(KernelCache& kernels, const VeStep& step);

}  // namespace visa::jit
