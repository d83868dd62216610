// InPlaceVector: a Vector Engine pipeline of element ops run in device memory in place, with no
// stream image: the fetch, the stages that only relabel, the vector stage's relayouts and the
// store are one compiled move from the input to the output (each position by its index, as
// direct_pipeline.h), and the vector stage's element-op kernels then run over the output's written
// positions where they lie. A Cast stage before the commit (f32 rows stored as bf16) moves the
// input into a 32-bit image laid out as the output instead, runs the kernels there, and casts that
// image into the output by one compiled move.
//
// Element ops compute each position from its own value, its execution id and the operand images'
// values at its index; so when every position keeps its index from the fetch to the store, running
// them after the move on the output gives the bits the staged stages give. That holds only when:
// the branch mode gives ids that do not depend on the position (Unconditional; Comparison, whose
// ids the first kernel computes from the values; Vrf, whose ids are the ids VRF's values at each
// written position's index, read as the operands are, each checked to be 0-15 before anything is
// written); no reduction, zip or two-group mode (a stash step copies each run's values as they
// are then into a run-sized buffer that later stash operands read); every
// relayout of the stage keeps every index (a loop nest each way); the stream is 32-bit from the
// fetch to the store; both ends in place and apart, the store into every slice, and every VRF
// operand in place, 32-bit, apart from the output, with a loop nest into the output's layout. An
// interleaved pair of inputs (begin_interleaved) of one layout is first moved, each tensor by a
// kept nest, into a per-thread buffer laid out as the walk stages it (Staged::ReadPair).
// Otherwise the reason is returned and the pipeline runs stage by stage (vector_stage.h).
//
// The plan (the move, the written runs, the kernels, the VRF image moves, scratch for ids and
// images) is made on the op's first run and kept by its serial while its ends stay the same
// placements (as ready_moves.h), so a relaunch builds no layout, key or nest.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "jit/kernel_cache.h"
#include "runtime/backend.h"
#include "runtime/program.h"

namespace visa::jit {

// Runs `op` in place when it qualifies: true when it ran (or failed: the error), false when it must
// run stage by stage (with VISA_JIT_DEBUG set, the reason is printed once per op).
absl::StatusOr<bool> RunVectorInPlace(KernelCache& kernels, const PipelineOp& op, const PipelineTensors& tensors);

// Compiles the kernels an in-place run of `op` uses, from its traced handles (Prepare): true when it
// qualifies (the staged stages' kernels are then not compiled ahead).
absl::StatusOr<bool> PrepareVectorInPlace(KernelCache& kernels, const PipelineOp& op);

// Why `op` on these tensors does not run in place, or empty when it does (for tests).
absl::StatusOr<std::string> WhyNotInPlace(KernelCache& kernels, const PipelineOp& op, const PipelineTensors& tensors);

}  // namespace visa::jit
