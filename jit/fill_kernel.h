// The JIT's memset (dsl/memset_fill.h): one compiled move from an image of the fill pattern into
// the view's cells in place, writing only its live positions (the same bits as runtime/memset.cc).
#pragma once

#include "absl/status/status.h"
#include "dsl/memset_fill.h"
#include "jit/kernel_cache.h"
#include "runtime/tensor.h"

namespace visa::jit {

absl::Status RunFill(KernelCache& kernels, const MemsetFill& fill, const DeviceTensor& view);
// Compiles the move ahead of a run (Prepare).
absl::Status PrepareFill(KernelCache& kernels, const MemsetFill& fill, const DeviceTensor& view);

}  // namespace visa::jit
