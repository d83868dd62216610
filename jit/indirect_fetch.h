// The JIT's indirect fetch (the Fetch Sequencer's IndirectLoop, dsl/indirect_fetch.h): it walks
// the recorded sequencer configuration as the hardware does. The IndirectLoop `(limit, [offset0,
// offset1, ...])` is the outermost entry: its offsets are read from the index tensor in device
// memory when the op runs (checked by the DMA gather's IndirectRows), and each of its |K| steps
// runs the compiled nest of the entries inside it (with the slices as its outer level) from the
// row at offset index[k] x the row stride, through the Fetch Adapter's op, into the step's stream
// positions. Padding positions of the stream are then set to the pad value (a masked fetch) or
// zero, as the adapter masks what the sequencer over-read; a left-padded stream reads a zeroed
// head staged before the table (the base address moved back). No pipeline with an indirect fetch
// is fused or run as one direct move; the stages after the fetch run as usual. On a device that
// tracks writes, the index and the rows the loop names are checked for unwritten elements first,
// as the interpreter checks them (runtime/indirect_dma.h: ReadIndirectRows).
#pragma once

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "jit/kernel_cache.h"
#include "runtime/host_tensor.h"
#include "runtime/program.h"
#include "runtime/tensor.h"

namespace visa::jit {

// `padding` is the stream's padding as runs (start, length pairs), computed once per layout by the
// caller: walking the layout's live positions on every run cost 60% of a 256-slice fetch.
absl::StatusOr<HostTensor> RunIndirectFetch(KernelCache& kernels, const DmTensor& table, const DeviceTensor& index,
                                            const FetchStage& stage, const std::vector<int64_t>& padding);
// Compiles the nest inside the IndirectLoop ahead of a run (Prepare).
absl::Status PrepareIndirectFetch(KernelCache& kernels, const DeviceTensor& table, const FetchStage& stage);

}  // namespace visa::jit
