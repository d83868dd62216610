// WalkPipeline: the one dispatch from a recorded pipeline's stages to what evaluates them.
//
// Every stage-by-stage evaluator (the interpreter, the JIT's kernels and its ahead-of-time
// compilation) walks a pipeline through this function with a visitor that says what a stream is
// for it (an image, or only its layout) and what each kind of stage does:
//
//   using Stream = ...;
//   absl::StatusOr<Stream> Fetch(const BeginStage&, const FetchStage&);
//   absl::StatusOr<Stream> Rearrange(Stream, const StreamShape& out);  // switch, collect, transpose
//   absl::StatusOr<Stream> Cast(Stream, const CastStage&);
//   absl::StatusOr<Stream> Contract(Stream, const AlignStage&, const ContractStage&,
//                                   const AccumulateStage&);           // the Contraction Engine
//   absl::StatusOr<Stream> Vector(Stream, const VectorStage&);          // vector_init .. vector_final
//   absl::Status Store(Stream, const Stage& last);                     // commit, to_trf, to_vrf
//
// The Contraction Engine's three calls (align, contract, accumulate) are one step: align and
// contract only configure what accumulate completes.
#pragma once

#include <utility>
#include <variant>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "dsl/status_macros.h"
#include "runtime/program.h"

namespace visa {

// The stages from `first` on, given the stream the stages before it produced (a backend that runs
// a prefix of the pipeline its own way, e.g. fused, walks the rest with this).
template <typename Visitor>
absl::Status WalkPipelineFrom(const PipelineOp& op, size_t first, typename Visitor::Stream stream, Visitor& visitor) {
  const std::vector<Stage>& stages = op.stages;
  for (size_t i = first; i < stages.size(); ++i) {
    const Stage& stage = stages[i];
    if (i + 1 == stages.size()) return visitor.Store(std::move(stream), stage);
    if (const auto* sw = std::get_if<SwitchStage>(&stage)) {
      ASSIGN_OR_RETURN(stream, visitor.Rearrange(std::move(stream), sw->out));
    } else if (const auto* collect = std::get_if<CollectStage>(&stage)) {
      ASSIGN_OR_RETURN(stream, visitor.Rearrange(std::move(stream), collect->out));
    } else if (const auto* transpose = std::get_if<TransposeStage>(&stage)) {
      ASSIGN_OR_RETURN(stream, visitor.Rearrange(std::move(stream), transpose->out));
    } else if (const auto* cast = std::get_if<CastStage>(&stage)) {
      ASSIGN_OR_RETURN(stream, visitor.Cast(std::move(stream), *cast));
    } else if (const auto* vector = std::get_if<VectorStage>(&stage)) {
      ASSIGN_OR_RETURN(stream, visitor.Vector(std::move(stream), *vector));
    } else if (const auto* align = std::get_if<AlignStage>(&stage)) {
      VISA_CHECK(i + 2 < stages.size() && std::holds_alternative<ContractStage>(stages[i + 1]) &&
                     std::holds_alternative<AccumulateStage>(stages[i + 2]),
                 "align is followed by contract and accumulate");
      ASSIGN_OR_RETURN(stream, visitor.Contract(std::move(stream), *align, std::get<ContractStage>(stages[i + 1]),
                                                std::get<AccumulateStage>(stages[i + 2])));
      i += 2;
    } else {
      VISA_CHECK(false, absl::StrCat("a pipeline stage out of place: ", DescribeStage(stage)).c_str());
    }
  }
  VISA_CHECK(false, "a recorded pipeline ends with a store");
  return absl::InternalError("unreachable");
}

template <typename Visitor>
absl::Status WalkPipeline(const PipelineOp& op, Visitor& visitor) {
  const std::vector<Stage>& stages = op.stages;
  VISA_CHECK(stages.size() >= 3 && std::holds_alternative<BeginStage>(stages[0]) &&
                 std::holds_alternative<FetchStage>(stages[1]),
             "a recorded pipeline starts with begin and fetch");
  ASSIGN_OR_RETURN(typename Visitor::Stream stream,
                   visitor.Fetch(std::get<BeginStage>(stages[0]), std::get<FetchStage>(stages[1])));
  return WalkPipelineFrom(op, 2, std::move(stream), visitor);
}

}  // namespace visa
