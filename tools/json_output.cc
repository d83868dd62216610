// The JSON shapes of json_output.h.
#include "tools/json_output.h"

#include <variant>

#include "absl/strings/str_format.h"

namespace visa::cli {
namespace {

nlohmann::json IntervalsJson(const std::vector<Interval>& intervals) {
  nlohmann::json list = nlohmann::json::array();
  for (const Interval& i : intervals) list.push_back({i.begin, i.end});
  return list;
}

nlohmann::json RangeJson(const MemoryRange& range) {
  return {{"tier", TierName(range.tier)},
          {"tensor", range.tensor},
          {"units", IntervalsJson(range.units)},
          {"bytes", IntervalsJson(range.bytes)},
          {"total_bytes", range.total_bytes()}};
}

nlohmann::json TermJson(const CycleTerm& term) {
  return {{"stage", term.stage},
          {"kind", term.kind == CycleTerm::Kind::kStream ? "stream" : "latency"},
          {"cycles", term.cycles ? nlohmann::json(*term.cycles) : nlohmann::json(nullptr)},
          {"formula", term.formula}};
}

}  // namespace

nlohmann::json RunJson(const std::string& sample, const std::string& backend, const samples::SampleRun& run) {
  return {{"sample", sample},
          {"backend", backend},
          {"ok", !run.mismatch.has_value()},
          {"elements", run.elements},
          {"max_error", run.max_error},
          {"mismatch", run.mismatch ? nlohmann::json(*run.mismatch) : nlohmann::json(nullptr)},
          {"note", run.note},
          {"kernel_seconds", run.kernel_seconds},
          {"device_resident_bytes", run.device_resident_bytes},
          {"stream_elements", run.stream_elements}};
}

nlohmann::json OpJson(const Op& op, size_t index) {
  const OpDescription description = Describe(op);
  nlohmann::json json = {{"index", index},
                         {"kind", std::holds_alternative<DmaOp>(op.body) ? "dma" : "pipeline"},
                         {"text", OpText(op, index)},
                         {"resource", ResourceName(description.resource)},
                         {"cycles", description.cycles ? nlohmann::json(*description.cycles) : nlohmann::json(nullptr)}};
  json["terms"] = nlohmann::json::array();
  for (const CycleTerm& term : description.terms) json["terms"].push_back(TermJson(term));
  json["reads"] = nlohmann::json::array();
  for (const MemoryRange& range : description.reads) json["reads"].push_back(RangeJson(range));
  json["writes"] = nlohmann::json::array();
  for (const MemoryRange& range : description.writes) json["writes"].push_back(RangeJson(range));
  return json;
}

nlohmann::json ProgramJson(const Program& program) {
  nlohmann::json ops = nlohmann::json::array();
  for (size_t i = 0; i < program.ops.size(); ++i) ops.push_back(OpJson(program.ops[i], i));
  return {{"ops", ops}, {"hash", absl::StrFormat("%016x", program.Hash())}};
}

}  // namespace visa::cli
