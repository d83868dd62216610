// The coverage kinds of a traced program (see program_coverage.h).
#include "random_programs/program_coverage.h"

#include <set>
#include <variant>

#include "absl/strings/str_cat.h"
#include "runtime/address.h"
#include "runtime/tier.h"
#include "random_programs/random_vector_chain.h"

namespace visa::samples {
namespace {

std::string AdapterKind(const FetchAdapter& adapter) {
  if (adapter.zero_points.size() > 1) return "zero_points";
  if (!adapter.zero_points.empty()) return "zero_point";
  if (!adapter.table.empty()) return "table";
  if (adapter.pad_value) return "masked";
  return "plain";
}

void StageCoverage(const Stage& stage, std::set<CoverageKey>& out) {
  if (const auto* fetch = std::get_if<FetchStage>(&stage)) {
    out.insert({"stage", "fetch"});
    out.insert({"fetch", ConversionKind(fetch->in_dtype, fetch->out.dtype)});
    out.insert({"adapter", AdapterKind(fetch->adapter)});
    if (fetch->indirect) out.insert({"indirect", fetch->adapter.pad_value ? "masked" : "fetch"});
  } else if (const auto* sw = std::get_if<SwitchStage>(&stage)) {
    out.insert({"stage", "switch"});
    out.insert({"switch", SwitchKindName(sw->config.kind)});
  } else if (std::holds_alternative<CollectStage>(stage)) {
    out.insert({"stage", "collect"});
  } else if (const auto* cast = std::get_if<CastStage>(&stage)) {
    out.insert({"stage", "cast"});
    out.insert({"cast", ConversionKind(cast->from, cast->to)});
  } else if (const auto* transpose = std::get_if<TransposeStage>(&stage)) {
    out.insert({"stage", "transpose"});
    out.insert({"transpose", Name(transpose->out.dtype)});
  } else if (const auto* align = std::get_if<AlignStage>(&stage)) {
    out.insert({"stage", "align"});
    out.insert({"contraction", Name(align->in.dtype)});
  } else if (const auto* contract = std::get_if<ContractStage>(&stage)) {
    out.insert({"stage", "contract"});
    out.insert({"reduce", ReduceOpName(contract->op)});
  } else if (const auto* acc = std::get_if<AccumulateStage>(&stage)) {
    out.insert({"stage", "accumulate"});
    out.insert({"accumulate", AccumulationKindName(acc->kind)});
  } else if (const auto* commit = std::get_if<CommitStage>(&stage)) {
    out.insert({"stage", "commit"});
    out.insert({"commit", commit->slices.all() ? "all" : "bitmap"});
  } else if (const auto* load = std::get_if<RegisterLoadStage>(&stage)) {
    out.insert({"stage", load->to_trf ? "to_trf" : "to_vrf"});
    out.insert({"load", load->to_trf ? absl::StrCat("trf:", load->trf_mode) : "vrf"});
  }
}

std::string TierOf(const TensorRef& ref) { return ref.handle ? TierName(ref.handle->tier()) : "host"; }

}  // namespace

std::string ConversionKind(DType from, DType to) { return absl::StrCat(Name(from), "->", Name(to)); }

std::vector<CoverageKey> ProgramCoverage(const Program& program) {
  std::set<int64_t> weights;  // TRF tensors an align reads
  for (const Op& op : program.ops) {
    const auto* pipe = std::get_if<PipelineOp>(&op.body);
    if (pipe != nullptr && pipe->weights) weights.insert(pipe->weights->id);
  }
  std::set<CoverageKey> out;
  for (const Op& op : program.ops) {
    if (const auto* dma = std::get_if<DmaOp>(&op.body)) {
      out.insert({"dma", absl::StrCat(TierOf(dma->src), "->", TierOf(dma->dst))});
      continue;
    }
    const PipelineOp& pipe = std::get<PipelineOp>(op.body);
    out.insert({"stage", pipe.inputs.size() == 2 ? "begin_interleaved" : "begin"});
    if (pipe.context == ContextKind::kMain) {
      out.insert({"context", "main"});
    } else {
      out.insert({"context", weights.count(pipe.output.id) ? "weights" : "sub"});
    }
    for (size_t i = 0; i < pipe.stages.size(); ++i) {
      StageCoverage(pipe.stages[i], out);
      if (const auto* vector = std::get_if<VectorStage>(&pipe.stages[i])) {
        out.insert({"stage", "vector"});
        const bool accumulated = i > 0 && std::holds_alternative<AccumulateStage>(pipe.stages[i - 1]);
        VectorStageCoverage(*vector, accumulated ? "accumulate" : "collect", out);
      }
    }
  }
  return std::vector<CoverageKey>(out.begin(), out.end());
}

}  // namespace visa::samples
