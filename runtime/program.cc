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

namespace {

// The text of each DMA kind under its "op N: dma ..." line.
struct DmaWorkText {
  std::string operator()(const DmaMove& m) const {
    std::string text;
    if (m.descriptors) absl::StrAppend(&text, m.descriptors->ToText("  "));
    if (!m.no_descriptors.empty()) absl::StrAppend(&text, "  no dma descriptor: ", m.no_descriptors, "\n");
    return text;
  }
  std::string operator()(const DmaGather& g) const {
    return absl::StrCat("  indirect ", g.loop.Describe(), "\n  index ", g.index.text, "\n");
  }
  std::string operator()(const DmaScatter& s) const {
    return absl::StrCat("  indirect ", s.loop.Describe(), "\n  index ", s.index.text, "\n  into ", s.base.text, "\n");
  }
  std::string operator()(const DmaMemset&) const { return ""; }
};

}  // namespace

const DmaDescriptors* DmaOp::descriptors() const {
  const auto* move = std::get_if<DmaMove>(&work);
  return move != nullptr && move->descriptors ? &*move->descriptors : nullptr;
}
const IndirectLoop* DmaOp::indirect() const {
  if (const auto* g = std::get_if<DmaGather>(&work)) return &g->loop;
  if (const auto* s = std::get_if<DmaScatter>(&work)) return &s->loop;
  return nullptr;
}
const TensorRef* DmaOp::index() const {
  if (const auto* g = std::get_if<DmaGather>(&work)) return &g->index;
  if (const auto* s = std::get_if<DmaScatter>(&work)) return &s->index;
  return nullptr;
}
const TensorRef* DmaOp::base() const {
  const auto* s = std::get_if<DmaScatter>(&work);
  return s != nullptr ? &s->base : nullptr;
}
const MemsetFill* DmaOp::fill() const {
  const auto* m = std::get_if<DmaMemset>(&work);
  return m != nullptr ? &m->fill : nullptr;
}

std::string OpText(const Op& op, size_t index) {
  if (const auto* dma = std::get_if<DmaOp>(&op.body); dma && dma->fill()) {
    return absl::StrCat("op ", index, ": memset ", ContextName(dma->context), " ", dma->dst.text, "\n  ",
                        dma->fill()->Describe(), "\n");
  }
  if (const auto* dma = std::get_if<DmaOp>(&op.body)) {
    std::string text = absl::StrCat("op ", index, ": dma ", ContextName(dma->context), " ", dma->src.text, " -> ",
                                    dma->dst.text, "\n");
    if (!dma->operation.empty()) absl::StrAppend(&text, "  operation ", dma->operation, "\n");
    absl::StrAppend(&text, std::visit(DmaWorkText{}, dma->work));
    return text;
  }
  const auto& pipe = std::get<PipelineOp>(op.body);
  std::string text = absl::StrCat("op ", index, ": pipeline ", ContextName(pipe.context), "\n");
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
