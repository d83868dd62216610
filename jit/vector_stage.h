// The Vector Engine's stage on the JIT: the stage split into compiled actions in step order.
// Runs of element ops become one compiled loop each (vector_kernel.h); Narrow / Widen relayouts
// and the operand images (VRF tensors, the stash) are compiled moves by index, as the
// interpreter's MoveByIndex places them (missing axes broadcast, padding zero); execution ids move
// with the data.
#pragma once

#include <vector>

#include "absl/status/statusor.h"
#include "jit/kernel_cache.h"
#include "jit/vector_kernel.h"
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

// The stage's element-op segments in step order, for a run in which every position keeps its index
// (in_place_vector.h): each non-empty segment's kernel spec with, per operand image, the VRF operand
// it reads (-1: the stash), and every step that ended a segment (relayouts, stash writes,
// reductions, zips).
struct StageSegments {
  std::vector<VectorKernelSpec> specs;
  std::vector<std::vector<int>> image_vrfs;  // per spec
  // Per spec: whether a stash step stands between it and the spec before it (or the stage's start):
  // the values as they are then are what its and later specs' stash operands read.
  std::vector<bool> stash_before;
  std::vector<const VeStep*> between;
};
StageSegments SegmentsOf(const VectorStage& stage);

// Compiles every kernel RunVectorStage would use, without running (Prepare).
absl::Status CompileVectorStage(KernelCache& kernels, const VectorStage& stage, const std::vector<TensorRef>& vrfs);

}  // namespace visa::jit
