// Pipelines over padded units: the manual's kernels often place a tensor on one cluster of two
// (`1 # 2`) or one slice of 256 (`1 # 256`). The stage-by-stage walk builds its stream images over
// every unit of the chip / cluster / slice mappings, so such a kernel paid for 512 units to compute
// one (the batched matmul sample spent 26 ms contracting zeros). When the live units come first, a
// copy of the pipeline with the padding taken off those mappings walks the live units alone: a
// stream position keeps its number (the live units are a prefix), so every move between the
// trimmed streams and the tensors, which maps by index, is unchanged.
#pragma once

#include <optional>

#include "runtime/program.h"

namespace visa::jit {

// The pipeline with its units' padding removed, or nullopt when there is none to remove or the
// trim would change what runs: the Switch Engine (it moves data between slices), Vector Engine
// stages (tried: the tiny Llama model's pipelines then failed; their VRF operands and reductions
// keep the padded units), a commit to some slices only, an interleaved fetch, stages
// whose units differ, or live units that are not the first ones.
std::optional<PipelineOp> TrimToLiveUnits(const PipelineOp& op);

// How many of a stream's units (chip x cluster x slice, in that order) come before its last one
// that holds an index, when those are the first ones: all units without padding, nullopt when the
// live units are not a prefix.
std::optional<int64_t> LiveUnitPrefix(const StreamShape& shape);

// The units a pipeline's streams span (chip x cluster x slice positions of its begin stage).
int64_t LiveUnitCount(const PipelineOp& op);

}  // namespace visa::jit
