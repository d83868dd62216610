// DirectPipeline: when a data-movement pipeline may run as one move, and that move.
#include "jit/direct_pipeline.h"

#include "absl/strings/str_cat.h"
#include "dsl/outer_padding.h"
#include "dsl/status_macros.h"
#include "jit/fused_contraction.h"
#include "jit/in_place.h"
#include "jit/mapping_facts.h"

namespace visa::jit {
namespace {

using Result = std::variant<DirectPipeline, std::string>;

// The stream layout the stages between the fetch and the store leave, or why they are not only
// relabelings (a cast changes values, a contraction combines them).
std::variant<Mapping, std::string> RelabeledStream(const PipelineOp& op) {
  const auto& fetch = std::get<FetchStage>(op.stages[1]);
  Mapping stream = fetch.out.Full();
  for (size_t i = 2; i + 1 < op.stages.size(); ++i) {
    const Stage& stage = op.stages[i];
    if (const auto* sw = std::get_if<SwitchStage>(&stage)) {
      stream = sw->out.Full();
    } else if (const auto* collect = std::get_if<CollectStage>(&stage)) {
      stream = collect->out.Full();
    } else if (const auto* transpose = std::get_if<TransposeStage>(&stage)) {
      stream = transpose->out.Full();
    } else {
      return std::string("a stage between fetch and store changes values: ") + DescribeStage(stage);
    }
  }
  return stream;
}

// An end's part of DirectPipelineKey: everything InPlaceLayout and InPlacePositions read.
std::string EndKey(const DeviceTensor& tensor) {
  const Placement& placement = tensor.placement();
  return absl::StrCat(Name(tensor.dtype()), " ", TierName(placement.tier), " @", placement.address, "+",
                      tensor.window_offset(), " ", MappingKey(tensor.full_mapping()), " positions ",
                      InPlaceLayout(tensor) ? InPlacePositions(tensor) : -1);
}

}  // namespace

std::string DirectPipelineKey(const PipelineOp& op, const DeviceTensor& input, const DeviceTensor& output) {
  return absl::StrCat(PipelineKey(op), "\nfrom ", EndKey(input), "\nto ", EndKey(output),
                      MayOverlap(input, output) ? "\noverlapping" : "");
}

namespace {

// Whether `positions` of the tensor's elements are whole bytes (an offset a pointer can take).
bool WholeBytes(int64_t positions, const DeviceTensor& tensor) { return positions * StorageBits(tensor.dtype()) % 8 == 0; }

}  // namespace

absl::StatusOr<Result> PlanDirectPipeline(KernelCache& kernels, const PipelineOp& op, const DeviceTensor& input,
                                          const DeviceTensor& output) {
  if (op.stages.size() < 3) return Result(std::string("no stages between begin and store"));
  const auto& begin = std::get<BeginStage>(op.stages[0]);
  const auto& fetch = std::get<FetchStage>(op.stages[1]);
  if (begin.interleave) return Result(std::string("an interleaved fetch reads two tensors"));
  if (const auto* commit = std::get_if<CommitStage>(&op.stages.back()); commit && !commit->slices.all()) {
    return Result(std::string("the commit leaves some slices as they were"));
  }
  std::variant<Mapping, std::string> stream = RelabeledStream(op);
  if (auto* reason = std::get_if<std::string>(&stream)) return Result(*reason);
  if (fetch.out.dtype != output.dtype()) return Result(std::string("the store changes the element type"));
  std::optional<Mapping> src = InPlaceLayout(input);
  std::optional<Mapping> dst = InPlaceLayout(output);
  if (!src || !dst) return Result(std::string("an end is not in a dense memory"));
  if (MayOverlap(input, output)) return Result(std::string("the input and the output may share bytes"));
  // A loop nest exists only when the source holds the index of every live destination position
  // (move_nest.h), so with these three the output's positions are exactly those the staged stages
  // write, each the input element of its index. A run list would also walk a memory-sized layout
  // position by position.
  const Mapping& last = std::get<Mapping>(stream);
  ASSIGN_OR_RETURN(ElementOp element_op, FetchAdapterOp(fetch, false, InPlacePositions(input)));
  if (kernels.HasNest(*dst, last) && kernels.HasNest(*dst, *src) && kernels.HasNest(last, *src)) {
    return Result(DirectPipeline{*std::move(dst), *std::move(src), std::move(element_op)});
  }
  // A chip view's ends and stream: without the pad the same indices lie at positions shifted by it.
  std::optional<PeeledPadding> to = PeelOuterPadding(*dst), from = PeelOuterPadding(*src);
  std::optional<PeeledPadding> stream_peeled = PeelOuterPadding(last);
  if (to && from && stream_peeled && WholeBytes(to->offset, output) && WholeBytes(from->offset, input) &&
      to->offset <= InPlacePositions(output) && from->offset <= InPlacePositions(input) &&
      kernels.HasNest(to->mapping, stream_peeled->mapping) && kernels.HasNest(to->mapping, from->mapping) &&
      kernels.HasNest(stream_peeled->mapping, from->mapping)) {
    return Result(DirectPipeline{to->mapping, from->mapping, std::move(element_op), to->offset, from->offset});
  }
  return Result(std::string("a move between the ends and the stream has no loop nest"));
}

}  // namespace visa::jit
