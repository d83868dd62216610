// ScheduleHtml: the viewer's data (ViewerJson) and the page around it (tools/schedule_viewer.js
// and .css, embedded at build time as schedule_viewer_assets.h).
#include "tools/schedule_html.h"

#include <algorithm>
#include <map>
#include <set>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "runtime/tier.h"
#include "tools/schedule_viewer_assets.h"

namespace visa::cli {
namespace {

using nlohmann::json;

const char* WaitKindName(WaitReason::Kind kind) {
  switch (kind) {
    case WaitReason::Kind::kNone: return "none";
    case WaitReason::Kind::kResource: return "resource";
    case WaitReason::Kind::kProgramOrder: return "program order";
    case WaitReason::Kind::kHazard: return "hazard";
  }
  return "?";
}

// The chip a unit of a tier lies on (units as MemoryRange numbers them: chips for HBM, slices for
// DM / SPM / VRF, TRF rows kTrfRows per slice).
int64_t ChipOfUnit(Tier tier, int64_t unit) {
  switch (tier) {
    case Tier::kHbm: return unit;
    case Tier::kTrf: return unit / (int64_t{kSlicesPerChip} * kTrfRows);
    case Tier::kHost: return 0;
    default: return unit / kSlicesPerChip;
  }
}

// The chips an op writes on (else reads on), ascending; {0} for an op touching no device bytes. Its
// lane is the first one's.
std::vector<int64_t> ChipsOfOp(const OpDescription& d) {
  for (const std::vector<MemoryRange>* ranges : {&d.writes, &d.reads}) {
    std::set<int64_t> chips;
    for (const MemoryRange& r : *ranges) {
      for (const Interval& units : r.units) {
        for (int64_t chip = ChipOfUnit(r.tier, units.begin); chip <= ChipOfUnit(r.tier, units.end - 1); ++chip) {
          chips.insert(chip);
        }
      }
    }
    if (!chips.empty()) return {chips.begin(), chips.end()};
  }
  return {0};
}

json RangeJson(const MemoryRange& r) {
  json j = {{"tier", TierName(r.tier)}, {"tensor", r.tensor}, {"text", r.ToString()}};
  if (!r.bytes.empty()) {
    j["begin"] = r.bytes.front().begin;
    j["end"] = r.bytes.back().end;
  }
  return j;
}

json WaitJson(const WaitReason& w) {
  json j = {{"kind", WaitKindName(w.kind)}, {"text", w.ToString()}, {"op", w.on}};
  if (w.kind == WaitReason::Kind::kHazard) {
    j["hazard"] = HazardName(w.hazard.kind);
    j["tensor"] = w.hazard.tensor;
  }
  return j;
}

// `visa explain`'s text for one op: its configuration, then the scheduler's view of it.
std::string ExplainText(const Op& op, size_t index, const OpDescription& description) {
  return absl::StrCat(OpText(op, index), "  = ", description.ToString());
}

// A tensor in the memory view: one tier's address hull over the ops that touch it.
struct TensorSpan {
  std::string tensor, tier;
  int64_t begin = 0, end = 0, first = 0, last = 0;
  std::vector<int> ops;
};

json TensorsJson(const Schedule& schedule, const std::vector<ScheduleInput>& inputs) {
  std::map<std::pair<std::string, std::string>, TensorSpan> spans;
  std::vector<std::pair<std::string, std::string>> order;
  for (const ScheduledOp& op : schedule.ops) {
    const OpDescription& d = inputs[op.index].description;
    for (const std::vector<MemoryRange>* ranges : {&d.reads, &d.writes}) {
      for (const MemoryRange& r : *ranges) {
        if (r.bytes.empty() || r.tier == Tier::kHost) continue;
        const auto key = std::make_pair(std::string(TierName(r.tier)), r.tensor);
        auto [it, added] = spans.try_emplace(key);
        TensorSpan& s = it->second;
        if (added) {
          order.push_back(key);
          s = {r.tensor, key.first, r.bytes.front().begin, r.bytes.back().end, op.start, op.end, {}};
        }
        s.begin = std::min(s.begin, r.bytes.front().begin);
        s.end = std::max(s.end, r.bytes.back().end);
        s.first = std::min(s.first, op.start);
        s.last = std::max(s.last, op.end);
        if (s.ops.empty() || s.ops.back() != op.index) s.ops.push_back(op.index);
      }
    }
  }
  json out = json::array();
  for (const auto& key : order) {
    const TensorSpan& s = spans.at(key);
    out.push_back({{"tensor", s.tensor}, {"tier", s.tier}, {"begin", s.begin}, {"end", s.end},
                   {"first", s.first}, {"last", s.last}, {"ops", s.ops}});
  }
  return out;
}

// JSON inside <script type="application/json">: "</" would end the element early.
std::string ScriptSafe(std::string text) {
  absl::StrReplaceAll({{"</", "<\\/"}}, &text);
  return text;
}

std::string HtmlEscape(const std::string& text) {
  return absl::StrReplaceAll(text, {{"&", "&amp;"}, {"<", "&lt;"}, {">", "&gt;"}, {"\"", "&quot;"}});
}

}  // namespace

std::vector<int> CriticalPath(const Schedule& schedule) {
  std::vector<int> path;
  const ScheduledOp* last = nullptr;
  for (const ScheduledOp& op : schedule.ops) {
    if (op.end == schedule.makespan && (last == nullptr || op.start >= last->start)) last = &op;
  }
  std::set<int> seen;  // the chain only goes to earlier ops; the set guards against a cycle anyway
  for (const ScheduledOp* op = last; op != nullptr && seen.insert(op->index).second;) {
    path.push_back(op->index);
    const int on = op->waited_on.kind == WaitReason::Kind::kNone ? -1 : op->waited_on.on;
    op = on >= 0 && on < static_cast<int>(schedule.ops.size()) ? &schedule.ops[on] : nullptr;
  }
  return path;
}

std::string StepOfLabel(const std::string& label) {
  const size_t colon = label.find(": ");
  if (colon == std::string::npos) return "";
  const std::string name = label.substr(0, colon);
  return std::string(absl::StripTrailingAsciiWhitespace(name.substr(0, name.find(" ["))));
}

std::string EngineOf(const std::string& label) {
  const size_t colon = label.find(": ");
  const std::string chain = colon == std::string::npos ? label : label.substr(colon + 2);
  if (absl::StartsWith(chain, "tdma") || absl::StartsWith(chain, "pdma") || absl::StrContains(chain, "dma ")) {
    return "dma";
  }
  if (absl::StrContains(chain, "contract")) return "contract";
  if (absl::StrContains(chain, "vector")) return "vector";
  if (absl::StrContains(chain, "transpose")) return "transpose";
  if (absl::StrContains(chain, "to_trf") || absl::StrContains(chain, "to_vrf")) return "load";
  if (absl::StrContains(chain, "memset")) return "memset";
  return "move";
}

json ViewerJson(const ViewerInput& input) {
  const Schedule& schedule = *input.schedule;
  const std::vector<ScheduleInput>& inputs = *input.inputs;
  std::set<int> starving;
  for (const StarvationWarning& w : schedule.warnings) {
    starving.insert(w.tensor_unit_ops.begin(), w.tensor_unit_ops.end());
    starving.insert(w.dma_op);
  }
  std::set<int64_t> chips;
  for (const ScheduledOp& op : schedule.ops) chips.insert(ChipsOfOp(inputs[op.index].description).front());
  // Lanes: main, sub, DMA, each per chip when there are several.
  json lanes = json::array();
  std::map<std::pair<int64_t, Resource>, int> lane_of;
  for (int64_t chip : chips) {
    for (Resource r : {Resource::kMain, Resource::kSub, Resource::kDma}) {
      lane_of[{chip, r}] = static_cast<int>(lanes.size());
      lanes.push_back({{"id", static_cast<int>(lanes.size())},
                       {"resource", ResourceName(r)},
                       {"chip", chip},
                       {"name", chips.size() > 1 ? absl::StrCat("chip ", chip, " ", ResourceName(r))
                                                 : std::string(ResourceName(r))}});
    }
  }
  std::map<std::string, int64_t> busy_cycles;
  json ops = json::array();
  for (const ScheduledOp& op : schedule.ops) {
    const OpDescription& d = inputs[op.index].description;
    const std::vector<int64_t> op_chips = ChipsOfOp(d);
    const int64_t chip = op_chips.front();
    busy_cycles[ResourceName(op.resource)] += op.cycles();
    json hazards = json::array();
    for (const Hazard& h : op.hazards) hazards.push_back({{"kind", HazardName(h.kind)}, {"op", h.on}, {"tensor", h.tensor}});
    json reads = json::array(), writes = json::array();
    for (const MemoryRange& r : d.reads) reads.push_back(RangeJson(r));
    for (const MemoryRange& r : d.writes) writes.push_back(RangeJson(r));
    const size_t colon = op.label.find(": ");
    json j = {{"op", op.index},
              {"label", op.label},
              {"name", colon == std::string::npos ? "" : op.label.substr(0, colon)},
              {"step", StepOfLabel(op.label)},
              {"engine", EngineOf(op.label)},
              {"resource", ResourceName(op.resource)},
              {"chip", chip},
              {"chips", op_chips},
              {"lane", lane_of.at({chip, op.resource})},
              {"start", op.start},
              {"end", op.end},
              {"ready", op.ready},
              {"estimated", op.estimated},
              {"host", IsHostTransfer(op.label)},
              {"waited_on", WaitJson(op.waited_on)},
              {"hazards", hazards},
              {"explain", ExplainText(input.program->ops[op.index], op.index, d)},
              {"reads", reads},
              {"writes", writes},
              {"starving", starving.contains(op.index)},
              {"longest_bank_run", op.longest_bank_run}};
    if (static_cast<size_t>(op.index) < input.host_seconds.size() && input.host_seconds[op.index]) {
      j["host_s"] = *input.host_seconds[op.index];
    }
    ops.push_back(std::move(j));
  }
  json busy = json::object();
  for (Resource r : {Resource::kMain, Resource::kSub, Resource::kDma}) {
    const int64_t cycles = busy_cycles[ResourceName(r)];
    busy[ResourceName(r)] = schedule.makespan > 0 ? static_cast<double>(cycles) / static_cast<double>(schedule.makespan) : 0.0;
  }
  json warnings = json::array();
  for (const StarvationWarning& w : schedule.warnings) {
    warnings.push_back({{"ops", w.tensor_unit_ops}, {"dma_op", w.dma_op}, {"bank", w.bank}, {"message", w.ToString()}});
  }
  const CycleSpan kernel = KernelSpan(schedule);
  return {{"sample", input.sample},
          {"description", input.description},
          {"makespan", schedule.makespan},
          {"kernel_span", {kernel.from, kernel.to}},
          {"chips", chips.size()},
          {"lanes", lanes},
          {"busy", busy},
          {"critical_path", CriticalPath(schedule)},
          {"host_measured", !input.host_seconds.empty()},
          {"ops", ops},
          {"tensors", TensorsJson(schedule, inputs)},
          {"warnings", warnings}};
}

std::string ScheduleHtml(const ViewerInput& input) {
  const std::string title = "visa schedule " + input.sample;
  // Names come from kernels: bytes that are not UTF-8 become U+FFFD rather than an exception.
  const std::string data = ViewerJson(input).dump(-1, ' ', false, json::error_handler_t::replace);
  return absl::StrCat("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>",
                      HtmlEscape(title), "</title>\n<style>\n", kScheduleViewerCss, "</style>\n</head>\n<body>\n",
                      "<script id=\"schedule-data\" type=\"application/json\">\n", ScriptSafe(data),
                      "\n</script>\n<script>\n", kScheduleViewerJs, "</script>\n</body>\n</html>\n");
}

}  // namespace visa::cli
