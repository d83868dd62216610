// Program text form and hash.
#include "runtime/program.h"

#include <atomic>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace visa {

std::string DescribeStage(const Stage& stage) {
  struct Describer {
    std::string operator()(const BeginStage& s) const {
      std::string text = absl::StrCat("begin ", s.shape.ToString());
      if (s.interleave) absl::StrAppend(&text, " interleaved over [", s.interleave->ToString(), "]");
      return text;
    }
    std::string operator()(const FetchStage& s) const { return s.Describe(); }
    std::string operator()(const SwitchStage& s) const {
      return absl::StrCat("switch ", s.Describe(), " slice [", s.out.slice.ToString(), "] time [",
                          s.out.time.ToString(), "] cycles ", s.cycles);
    }
    std::string operator()(const CollectStage& s) const { return s.Describe(); }
    std::string operator()(const CastStage& s) const { return s.Describe(); }
    std::string operator()(const TransposeStage& s) const { return s.Describe(); }
    std::string operator()(const CommitStage& s) const { return s.Describe(); }
    std::string operator()(const RegisterLoadStage& s) const { return s.Describe(); }
    std::string operator()(const AlignStage& s) const { return s.Describe(); }
    std::string operator()(const ContractStage& s) const { return s.Describe(); }
    std::string operator()(const AccumulateStage& s) const { return s.Describe(); }
    std::string operator()(const VectorStage& s) const { return s.Describe(); }
  };
  return std::visit(Describer{}, stage);
}

std::string OpText(const Op& op, size_t index) {
  if (const auto* dma = std::get_if<DmaOp>(&op.body); dma && dma->fill) {
    return absl::StrCat("op ", index, ": memset ", dma->context, " ", dma->dst.text, "\n  ", dma->fill->Describe(), "\n");
  }
  if (const auto* dma = std::get_if<DmaOp>(&op.body)) {
    std::string text = absl::StrCat("op ", index, ": dma ", dma->context, " ", dma->src.text, " -> ", dma->dst.text, "\n");
    if (!dma->operation.empty()) absl::StrAppend(&text, "  operation ", dma->operation, "\n");
    if (dma->indirect && dma->index) {
      absl::StrAppend(&text, "  indirect ", dma->indirect->Describe(), "\n  index ", dma->index->text, "\n");
      if (dma->base) absl::StrAppend(&text, "  into ", dma->base->text, "\n");
    }
    if (dma->descriptors) absl::StrAppend(&text, dma->descriptors->ToText("  "));
    if (!dma->no_descriptors.empty()) absl::StrAppend(&text, "  no dma descriptor: ", dma->no_descriptors, "\n");
    return text;
  }
  const auto& pipe = std::get<PipelineOp>(op.body);
  std::string text = absl::StrCat("op ", index, ": pipeline ", TuContextName(pipe.context), "\n");
  if (!pipe.operation.empty()) absl::StrAppend(&text, "  operation ", pipe.operation, "\n");
  for (const TensorRef& in : pipe.inputs) absl::StrAppend(&text, "  input ", in.text, "\n");
  if (pipe.weights) absl::StrAppend(&text, "  weights ", pipe.weights->text, "\n");
  for (const TensorRef& vrf : pipe.vrf_operands) absl::StrAppend(&text, "  vrf operand ", vrf.text, "\n");
  for (const Stage& stage : pipe.stages) absl::StrAppend(&text, "  ", DescribeStage(stage), "\n");
  absl::StrAppend(&text, "  output ", pipe.output.text, "\n");
  return text;
}

std::string Program::ToText() const {
  std::string text;
  for (size_t i = 0; i < ops.size(); ++i) absl::StrAppend(&text, OpText(ops[i], i));
  return text;
}

void AssignSerial(Op& op) {
  static std::atomic<uint64_t> last{0};
  const uint64_t serial = ++last;
  std::visit([serial](auto& body) { body.serial = serial; }, op.body);
}

uint64_t Program::Hash() const {
  uint64_t hash = 1469598103934665603ull;
  for (unsigned char c : ToText()) {
    hash ^= c;
    hash *= 1099511628211ull;
  }
  return hash;
}

}  // namespace visa
