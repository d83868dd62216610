// The JIT's indirect fetch (the Fetch Sequencer's IndirectLoop, dsl/indirect_fetch.h): a compiled
// move brings the table into a dense image of rows W, the IndirectLoop copies whole rows at
// offsets index[k] x row bytes (read from the index tensor when the op runs, checked by the DMA
// gather's IndirectRows), and a compiled move with the Fetch Adapter's op lays the K rows out as
// the stream. No pipeline with an indirect fetch is fused or run as one direct move; the stages
// after the fetch run as usual. Rows that are not whole bytes are Unimplemented.
#pragma once

#include "absl/status/statusor.h"
#include "jit/kernel_cache.h"
#include "runtime/host_tensor.h"
#include "runtime/program.h"
#include "runtime/tensor.h"

namespace visa::jit {

absl::StatusOr<HostTensor> RunIndirectFetch(KernelCache& kernels, const DmTensor& table, const DeviceTensor& index,
                                            const FetchStage& stage);
// Compiles the two moves ahead of a run (Prepare).
absl::Status PrepareIndirectFetch(KernelCache& kernels, const DeviceTensor& table, const FetchStage& stage);

}  // namespace visa::jit
