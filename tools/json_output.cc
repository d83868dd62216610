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

namespace {

nlohmann::json Seconds(const Figure& f) { return f.seconds ? nlohmann::json(*f.seconds) : nlohmann::json(nullptr); }
nlohmann::json Skipped(const Figure& f) { return f.seconds ? nlohmann::json(nullptr) : nlohmann::json(f.skipped); }
nlohmann::json RatioJson(const Figure& a, const Figure& b) {
  std::optional<double> r = Ratio(a, b);
  return r ? nlohmann::json(*r) : nlohmann::json(nullptr);
}

}  // namespace

nlohmann::json BenchJson(const SampleFigures& f) {
  const Figure fresh = Figure::Of(f.jit_fresh), memcpy = Figure::Of(f.memcpy_written);
  nlohmann::json ops = nlohmann::json::array();
  for (size_t i = 0; i < f.ops.size(); ++i) {
    const OpFigures& op = f.ops[i];
    const Figure op_fresh = Figure::Of(op.fresh_seconds), op_memcpy = Figure::Of(op.memcpy_seconds);
    ops.push_back({{"index", i},
                   {"kind", op.kind},
                   {"resource", op.resource},
                   {"engines", op.engines},
                   {"read_bytes", op.read_bytes},
                   {"written_bytes", op.written_bytes},
                   {"jit_run_s", op.fresh_seconds},
                   {"jit_run_page_faults", op.fresh_page_faults},
                   {"jit_warm_s", Seconds(op.warm)},
                   {"memcpy_s", op.memcpy_seconds},
                   {"memcpy_fresh_s", op.memcpy_fresh_seconds},
                   {"jit_over_memcpy", RatioJson(op_fresh, op_memcpy)},
                   {"jit_over_memcpy_fresh", RatioJson(op_fresh, Figure::Of(op.memcpy_fresh_seconds))},
                   {"jit_warm_over_memcpy", RatioJson(op.warm, op_memcpy)},
                   {"memcpy_cold_dst_s", op.memcpy_cold_dst_seconds},
                   {"jit_warm_over_memcpy_cold_dst", RatioJson(op.warm, Figure::Of(op.memcpy_cold_dst_seconds))}});
  }
  return {{"sample", f.sample},
          {"repeat", f.repeat},
          {"threads", f.threads},
          {"target", f.target},
          {"interp_s", Seconds(f.interp)},
          {"interp_runs", f.interp_runs},
          {"interp_skipped", Skipped(f.interp)},
          {"jit_compile_first_s", f.compile_first},
          {"jit_compile_cached_s", f.compile_cached},
          {"jit_run_s", f.jit_fresh},
          {"jit_warm_s", Seconds(f.jit_warm)},
          {"jit_warm_skipped", Skipped(f.jit_warm)},
          {"host_reference_s", Seconds(f.host_reference)},
          {"host_reference_skipped", Skipped(f.host_reference)},
          {"read_bytes", f.read_bytes},
          {"written_bytes", f.written_bytes},
          {"memcpy_s", f.memcpy_written},
          {"memcpy_fresh_s", f.memcpy_written_fresh},
          {"jit_over_memcpy_fresh", RatioJson(fresh, Figure::Of(f.memcpy_written_fresh))},
          {"interp_over_jit", RatioJson(f.interp, fresh)},
          {"interp_over_jit_warm", RatioJson(f.interp, f.jit_warm)},
          {"jit_over_host_reference", RatioJson(fresh, f.host_reference)},
          {"jit_warm_over_host_reference", RatioJson(f.jit_warm, f.host_reference)},
          {"host_reference_over_jit", RatioJson(f.host_reference, fresh)},
          {"jit_over_memcpy", RatioJson(fresh, memcpy)},
          {"jit_warm_over_memcpy", RatioJson(f.jit_warm, memcpy)},
          {"warm_fastest_op_s", Seconds(f.warm_fastest_op)},
          {"warm_outside_ops_per_op_s", Seconds(f.warm_outside_ops_per_op)},
          {"ops", ops}};
}

}  // namespace visa::cli
