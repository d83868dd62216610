// DirectPipeline: a data-movement pipeline (fetch, then only switch / collect / transpose, then a
// store into every slice) run as one compiled move from the input's memory to the output's, with
// no stream image in between.
//
// Switch, collect and transpose only relabel where each index sits in the stream, and the fetch
// and the store both match positions by index, so the whole pipeline is the move from the output's
// in-place layout to the input's, with the Fetch Adapter's element op. It is used only when that
// move provably writes exactly what the staged stages would: both ends in place and apart, and
// loop nests (which hold every destination index in the source) from the output to the input and
// to the last stream, and from that stream to the input. Otherwise the reason is returned and the
// pipeline runs stage by stage. Ends behind a common outer left pad (a chip view's Chip level) are
// planned without it, each from the position its pad shifts it to.
#pragma once

#include <string>
#include <variant>

#include "jit/element_op.h"
#include "jit/kernel_cache.h"
#include "runtime/program.h"
#include "runtime/tensor.h"

namespace visa::jit {

struct DirectPipeline {
  Mapping dst;  // the output's in-place layout
  Mapping src;  // the input's in-place layout
  ElementOp op; // the Fetch Adapter's conversion (a copy when it has none)
  // Where dst's and src's position 0 lie in each end's in-place positions: nonzero for a chip
  // view's ends, whose left-padded Chip level (`# c + Chip + # n`) has no loop nest until peeled
  // (dsl/outer_padding.h).
  int64_t dst_offset = 0, src_offset = 0;
};

// The direct move for `op` between `input` and `output` (handles or run-time tensors: only their
// layouts and placements are read), or why there is none.
absl::StatusOr<std::variant<DirectPipeline, std::string>> PlanDirectPipeline(KernelCache& kernels,
                                                                             const PipelineOp& op,
                                                                             const DeviceTensor& input,
                                                                             const DeviceTensor& output);

// What PlanDirectPipeline's answer depends on, as a cache key: the op's stages (PipelineKey) and
// each end's element type, tier, address, window and full mapping, the positions addressable from
// it, and whether the ends may overlap. Equal keys give equal plans.
std::string DirectPipelineKey(const PipelineOp& op, const DeviceTensor& input, const DeviceTensor& output);

}  // namespace visa::jit
