// The Vector Engine's reduction steps on the JIT: the stream's blocks (a slice for the intra-slice
// reduce, a cluster for the inter-slice reduce) reduced in parallel by generated code
// (jit/vector_reduce_kernel.h) in the order interp/vector_reduce.h states, so both backends agree
// bit for bit. JitStats::compiled_reductions counts the steps run this way.
#pragma once

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "dsl/vector_engine.h"
#include "jit/kernel_cache.h"

namespace visa::jit {

// `data` is the stream laid out by the step's input Full(); returns its output's bytes.
absl::StatusOr<std::vector<uint8_t>> RunReduceStep(KernelCache& kernels, const VeStep& step,
                                                   const std::vector<uint8_t>& data);

// Compiles the step's reduction without running it (Prepare).
absl::Status CompileReduceStep(KernelCache& kernels, const VeStep& step);

}  // namespace visa::jit
