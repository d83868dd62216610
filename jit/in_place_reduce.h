// InPlaceReduce: a Vector Engine pipeline with reductions run from device memory to device memory
// on scratch images the op keeps, instead of the stage-by-stage walk's fresh zero-filled images.
//
// The walk (vector_stage.h) gives each step a new image: the fetch, every relayout (data and ids),
// each reduction's output, the store's staging. Their allocation, page faults and zero fills were
// most of a small reduce's time. Here, for a pipeline `begin, fetch, relabelings, one vector stage,
// relabelings, store into every slice` whose stage holds a reduction, the fetch, the relabelings and
// the stage's leading relayouts are one compiled move from the input into the layout the first
// element op or reduction reads (each position by index, padding zero, as the walk leaves it);
// then the stage's actions run in order exactly as the walk runs them (the same element kernels over
// every position, the same compiled reductions in the interpreter's order, relayouts by index into
// zeroed images); the trailing relayouts and the store are one compiled move by index into the
// output. So every value the walk computes, pads included, is computed from the same bits.
//
// It qualifies when: the branch mode is Unconditional (ids all 0), ValidCount or AxisToggle (ids by
// position alone: computed once per plan on the stage's input and moved by index through its
// relayouts, as the walk moves them; 0 after a reduction) or Comparison (computed from the values
// by the first segment's kernel, the stage's first step an op, and read by no later segment before
// a reduction zeroes them), not after a leading inter-slice reduce;
// no stash, zip or two-group mode; the stream 32-bit from the fetch to the store; a fetch pad value
// only when a relayout comes first in the stage (the walk's relayout moves by index into a zeroed
// image: every pad is 0 after it, as in the kept image); every relayout keeps every index; both
// ends in place and apart, the store into every slice; every VRF operand in place, 32-bit, apart
// from the output.
// Otherwise the reason is returned and the pipeline runs stage by stage.
#pragma once

#include <string>

#include "absl/status/statusor.h"
#include "jit/kernel_cache.h"
#include "runtime/backend.h"
#include "runtime/program.h"

namespace visa::jit {

// Runs `op` this way when it qualifies: true when it ran (or the error), false when it must run stage
// by stage (with VISA_JIT_DEBUG set, the reason is printed once per plan).
absl::StatusOr<bool> RunReduceInPlace(KernelCache& kernels, const PipelineOp& op, const PipelineTensors& tensors);

// Compiles the kernels such a run of `op` uses, from its traced handles (Prepare): true when it
// qualifies.
absl::StatusOr<bool> PrepareReduceInPlace(KernelCache& kernels, const PipelineOp& op);

// Why `op` on these tensors does not run this way, or empty when it does (for tests).
absl::StatusOr<std::string> WhyNotReduceInPlace(KernelCache& kernels, const PipelineOp& op,
                                                const PipelineTensors& tensors);

}  // namespace visa::jit
