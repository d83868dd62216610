// The Vector Engine's stage on the JIT: the stage split into compiled actions in step order.
// Runs of element ops become one compiled loop each (vector_kernel.h); Narrow / Widen relayouts
// and the operand images (VRF tensors, the stash) are compiled moves by index, as the
// interpreter's MoveByIndex places them (missing axes broadcast, padding zero); execution ids move
// with the data.
#pragma once

#include <vector>

#include "absl/status/statusor.h"
#include "jit/kernel_cache.h"
#include "runtime/host_tensor.h"
#include "runtime/program.h"
#include "runtime/tensor.h"

namespace visa::jit {

// Runs `stage` on `stream` (laid out by stage.in.Full()); `vrfs` are the pipeline's VRF operands.
// What the run derives from the stage alone (kernels, relayouts, id tables, zip positions) is kept
// for op `serial`'s later runs as part of its stage `stage_index` (op_memo.h; serial 0: not kept).
absl::StatusOr<HostTensor> RunVectorStage(KernelCache& kernels, HostTensor stream, const VectorStage& stage,
                                          const std::vector<DeviceTensor>& vrfs, uint64_t serial = 0,
                                          uint64_t stage_index = 0);

// Compiles every kernel RunVectorStage would use, without running (Prepare).
absl::Status CompileVectorStage(KernelCache& kernels, const VectorStage& stage, const std::vector<TensorRef>& vrfs);

}  // namespace visa::jit
