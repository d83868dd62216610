// VectorPassSummary and VectorPassLabel, read from each step's own description (VeStep::Describe).
#include "tools/vector_pass_label.h"

#include <vector>

#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "dsl/vector_engine.h"

namespace visa::cli {
namespace {

// What one step computes, from its description's words: "vector_fp_unary Exp on FpExp" -> "Exp",
// "intra_slice_reduce N Max f32: ..." -> "Max reduce"; empty for a layout step.
std::string StepWord(const VeStep& step) {
  const std::string text = step.Describe();
  const std::vector<absl::string_view> words = absl::StrSplit(text, absl::ByAnyChar(" \n:"), absl::SkipEmpty());
  switch (step.kind) {
    case VeStep::Kind::kSplit:
    case VeStep::Kind::kConcat:
    case VeStep::Kind::kTrim:
    case VeStep::Kind::kPad:
    case VeStep::Kind::kReinterpret:
      return "";
    case VeStep::Kind::kStash:
      return "stash";
    case VeStep::Kind::kIntraReduce:  // "intra_slice_reduce AXIS OP TYPE"
      return words.size() > 2 ? std::string(words[2]) + " reduce" : "reduce";
    case VeStep::Kind::kInterReduce:  // "inter_slice_reduce OP TYPE"
      return words.size() > 1 ? std::string(words[1]) + " slice-reduce" : "slice-reduce";
    case VeStep::Kind::kZip:
    case VeStep::Kind::kOp:
      return words.size() > 1 ? std::string(words[1]) : std::string(step.call);
  }
  return "";
}

}  // namespace

std::string VectorPassSummary(const VectorStage& stage) {
  std::vector<std::string> words;
  for (const VeStep& step : stage.steps) {
    std::string word = StepWord(step);
    if (!word.empty()) words.push_back(std::move(word));
  }
  return absl::StrJoin(words, " ");
}

std::string VectorPassLabel(const Op& op, const std::string& label) {
  const auto* pipe = std::get_if<PipelineOp>(&op.body);
  if (pipe == nullptr) return label;
  std::vector<std::string> summaries;
  for (const Stage& stage : pipe->stages) {
    if (const auto* vector = std::get_if<VectorStage>(&stage)) summaries.push_back(VectorPassSummary(*vector));
  }
  // The chain follows the name (": ") when there is one; its stages are separated by " > ".
  const size_t colon = label.find(": ");
  const size_t chain_begin = colon == std::string::npos ? 0 : colon + 2;
  std::string out = label.substr(0, chain_begin);
  size_t next = 0;
  const std::vector<absl::string_view> stages = absl::StrSplit(absl::string_view(label).substr(chain_begin), " > ");
  for (size_t i = 0; i < stages.size(); ++i) {
    if (i > 0) out += " > ";
    out.append(stages[i].data(), stages[i].size());
    if (stages[i] == "vector" && next < summaries.size()) {
      if (!summaries[next].empty()) out += "[" + summaries[next] + "]";
      ++next;
    }
  }
  return out;
}

}  // namespace visa::cli
