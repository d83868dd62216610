// ScheduleJson and ScheduleTrace.
#include "tools/schedule_json.h"

#include <algorithm>

namespace visa::cli {
namespace {

using nlohmann::json;

const char* WaitKindName(WaitReason::Kind kind) {
  switch (kind) {
    case WaitReason::Kind::kNone:
      return "none";
    case WaitReason::Kind::kResource:
      return "resource";
    case WaitReason::Kind::kProgramOrder:
      return "program order";
    case WaitReason::Kind::kHazard:
      return "hazard";
  }
  return "?";
}

json WaitJson(const WaitReason& w) {
  json j = {{"kind", WaitKindName(w.kind)}, {"text", w.ToString()}};
  if (w.kind != WaitReason::Kind::kNone) j["op"] = w.on;
  if (w.kind == WaitReason::Kind::kHazard) {
    j["hazard"] = HazardName(w.hazard.kind);
    j["tensor"] = w.hazard.tensor;
  }
  return j;
}

int TrackOf(Resource r) { return r == Resource::kMain ? 1 : r == Resource::kSub ? 2 : 3; }

}  // namespace

json ScheduleJson(const Schedule& schedule, const std::string& sample) {
  json ops = json::array();
  for (const ScheduledOp& op : schedule.ops) {
    json hazards = json::array();
    for (const Hazard& h : op.hazards) {
      hazards.push_back({{"kind", HazardName(h.kind)}, {"op", h.on}, {"tensor", h.tensor}});
    }
    ops.push_back({{"op", op.index},
                   {"label", op.label},
                   {"resource", ResourceName(op.resource)},
                   {"start", op.start},
                   {"end", op.end},
                   {"cycles", op.cycles()},
                   {"estimated", op.estimated},
                   {"waited_on", WaitJson(op.waited_on)},
                   {"hazards", hazards},
                   {"longest_bank_run", op.longest_bank_run},
                   {"holds_dma", op.holds_dma}});
  }
  json warnings = json::array();
  for (const StarvationWarning& w : schedule.warnings) {
    warnings.push_back({{"ops", w.tensor_unit_ops},
                        {"dma_op", w.dma_op},
                        {"bank", w.bank},
                        {"accesses", w.accesses},
                        {"message", w.ToString()}});
  }
  return {{"sample", sample}, {"makespan", schedule.makespan}, {"ops", ops}, {"warnings", warnings}};
}

json ScheduleTrace(const Schedule& schedule, const Program& program, const std::vector<ScheduleInput>& inputs,
                   const std::string& sample) {
  json events = json::array();
  events.push_back({{"name", "process_name"}, {"ph", "M"}, {"pid", 1}, {"args", {{"name", "visa schedule " + sample}}}});
  for (Resource r : {Resource::kMain, Resource::kSub, Resource::kDma}) {
    events.push_back({{"name", "thread_name"}, {"ph", "M"}, {"pid", 1}, {"tid", TrackOf(r)},
                      {"args", {{"name", ResourceName(r)}}}});
    events.push_back({{"name", "thread_sort_index"}, {"ph", "M"}, {"pid", 1}, {"tid", TrackOf(r)},
                      {"args", {{"sort_index", TrackOf(r)}}}});
  }
  for (const ScheduledOp& op : schedule.ops) {
    json terms = json::array();
    for (const CycleTerm& t : inputs[op.index].description.terms) terms.push_back(t.ToString());
    events.push_back({{"name", "op " + std::to_string(op.index) + ": " + op.label},
                      {"cat", ResourceName(op.resource)},
                      {"ph", "X"},
                      {"pid", 1},
                      {"tid", TrackOf(op.resource)},
                      {"ts", op.start},
                      {"dur", op.cycles()},
                      {"args",
                       {{"op", op.index},
                        {"cycles", op.cycles()},
                        {"waited_on", op.waited_on.ToString()},
                        {"cycle_terms", terms},
                        {"configuration", OpText(program.ops[op.index], op.index)}}}});
  }
  // One arrow per hazard, from inside the earlier op's slice to the start of the later one.
  int flow = 0;
  for (const ScheduledOp& op : schedule.ops) {
    for (const Hazard& h : op.hazards) {
      const ScheduledOp& from = schedule.ops[h.on];
      const int64_t at = std::max(from.start, from.end - 1);
      const std::string name = std::string(HazardName(h.kind)) + " " + h.tensor;
      events.push_back({{"name", name}, {"cat", "hazard"}, {"ph", "s"}, {"id", flow}, {"pid", 1},
                        {"tid", TrackOf(from.resource)}, {"ts", at}});
      events.push_back({{"name", name}, {"cat", "hazard"}, {"ph", "f"}, {"bp", "e"}, {"id", flow}, {"pid", 1},
                        {"tid", TrackOf(op.resource)}, {"ts", op.start}});
      ++flow;
    }
  }
  return {{"traceEvents", events}, {"displayTimeUnit", "ns"},
          {"otherData", {{"sample", sample}, {"makespan_cycles", schedule.makespan},
                         {"time_unit", "1 trace microsecond = 1 cycle"}}}};
}

}  // namespace visa::cli
