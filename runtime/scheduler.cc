// The scheduler: resources, hazards and program order; bank-starvation warnings.
#include "runtime/scheduler.h"

#include <algorithm>
#include <array>
#include <map>
#include <optional>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"

namespace visa {
namespace {

// The first range of `later` that overlaps one of `earlier`, if any; its tensor names the hazard.
std::optional<std::string> Collision(const std::vector<MemoryRange>& later,
                                     const std::vector<MemoryRange>& earlier) {
  for (const MemoryRange& a : later) {
    for (const MemoryRange& b : earlier) {
      if (Overlaps(a, b)) return b.tensor;
    }
  }
  return std::nullopt;
}

std::vector<Hazard> HazardsBetween(const OpDescription& later, const OpDescription& earlier, int on) {
  std::vector<Hazard> hazards;
  if (auto t = Collision(later.reads, earlier.writes)) hazards.push_back({HazardKind::kRaw, on, *t});
  if (auto t = Collision(later.writes, earlier.reads)) hazards.push_back({HazardKind::kWar, on, *t});
  if (auto t = Collision(later.writes, earlier.writes)) hazards.push_back({HazardKind::kWaw, on, *t});
  return hazards;
}

bool TouchesDmBanks(const OpDescription& d) {
  auto in_dm = [](const MemoryRange& r) { return r.tier == Tier::kDm || r.tier == Tier::kSpm; };
  return std::any_of(d.reads.begin(), d.reads.end(), in_dm) ||
         std::any_of(d.writes.begin(), d.writes.end(), in_dm);
}

bool Concurrent(const ScheduledOp& a, const ScheduledOp& b) {
  return a.start < b.end && b.start < a.end && a.cycles() > 0 && b.cycles() > 0;
}

// The bank where the ops' runs add up most, and that sum.
std::pair<int, int64_t> WorstBank(const std::vector<const BankRuns*>& runs) {
  int worst = 0;
  int64_t most = -1;
  for (int b = 0; b < kDmBanks; ++b) {
    int64_t sum = 0;
    for (const BankRuns* r : runs) sum += (*r)[b];
    if (sum > most) {
      most = sum;
      worst = b;
    }
  }
  return {worst, most};
}

// One DMA op against the Tensor Unit ops running while it does: each alone, then a main and a sub
// op that also run together (the limit "is cumulative across all concurrent commands").
void CheckStarvation(const std::vector<ScheduleInput>& in, const Schedule& schedule, int dma,
                     std::vector<StarvationWarning>& warnings) {
  std::vector<int> concurrent;
  for (const ScheduledOp& op : schedule.ops) {
    if (op.resource != Resource::kDma && Concurrent(op, schedule.ops[dma])) concurrent.push_back(op.index);
  }
  std::vector<int> alone_starves;
  for (int t : concurrent) {
    auto [bank, accesses] = WorstBank({&in[t].bank_runs});
    if (accesses >= kBankStarvationLimit) {
      warnings.push_back({{t}, dma, bank, accesses});
      alone_starves.push_back(t);
    }
  }
  for (int m : concurrent) {
    for (int s : concurrent) {
      const ScheduledOp& main = schedule.ops[m];
      const ScheduledOp& sub = schedule.ops[s];
      if (main.resource != Resource::kMain || sub.resource != Resource::kSub || !Concurrent(main, sub)) continue;
      if (std::count(alone_starves.begin(), alone_starves.end(), m) ||
          std::count(alone_starves.begin(), alone_starves.end(), s)) {
        continue;
      }
      auto [bank, accesses] = WorstBank({&in[m].bank_runs, &in[s].bank_runs});
      if (accesses >= kBankStarvationLimit) warnings.push_back({{m, s}, dma, bank, accesses});
    }
  }
}

// "fetch > collect > commit": the first word of each stage's description after `begin`.
std::string StageList(const PipelineOp& op) {
  std::vector<std::string> names;
  for (const Stage& stage : op.stages) {
    if (std::holds_alternative<BeginStage>(stage)) continue;
    const std::string text = DescribeStage(stage);
    names.push_back(absl::AsciiStrToLower(text.substr(0, text.find(' '))));
  }
  return absl::StrJoin(names, " > ");
}

// The op's operation name (`.named(...)`, ScopedDmaOperation: e.g. the model step it belongs to)
// leads the label, so a long program's timeline reads by step.
std::string Named(const std::string& operation) { return operation.empty() ? "" : absl::StrCat(operation, ": "); }

std::string Label(const Op& op) {
  if (const auto* dma = std::get_if<DmaOp>(&op.body)) {
    auto name = [](const TensorRef& ref) { return ref.handle ? TensorNameOf(ref) : std::string("host"); };
    // A memset reads nothing (its `src` is its destination): the row names what it does.
    if (dma->fill()) return absl::StrCat(Named(dma->operation), ContextName(dma->context), " memset -> ", name(dma->dst));
    return absl::StrCat(Named(dma->operation), ContextName(dma->context), " ", name(dma->src), " -> ", name(dma->dst));
  }
  const auto& pipe = std::get<PipelineOp>(op.body);
  return absl::StrCat(Named(pipe.operation), StageList(pipe), " -> ", TensorNameOf(pipe.output));
}

}  // namespace

const char* HazardName(HazardKind kind) {
  switch (kind) {
    case HazardKind::kRaw:
      return "RAW";
    case HazardKind::kWar:
      return "WAR";
    case HazardKind::kWaw:
      return "WAW";
  }
  return "?";
}

std::string WaitReason::ToString() const {
  switch (kind) {
    case Kind::kNone:
      return "-";
    case Kind::kResource:
      return absl::StrCat("resource: op ", on);
    case Kind::kProgramOrder:
      return absl::StrCat("order: op ", on);
    case Kind::kHazard:
      return absl::StrCat(HazardName(hazard.kind), " on op ", on, " (", hazard.tensor, ")");
  }
  return "?";
}

std::string StarvationWarning::ToString() const {
  std::vector<std::string> ops;
  for (int t : tensor_unit_ops) ops.push_back(absl::StrCat("op ", t));
  return absl::StrCat(
      "warning: bank starvation: ", absl::StrJoin(ops, " and "), tensor_unit_ops.size() == 1 ? " makes " : " make ",
      accesses,
      " consecutive accesses to DM bank ", bank, " while DMA op ", dma_op,
      " is active; with the DMA's own request that exceeds 64 (Memory Performance > Bank "
      "Starvation: a DMA request blocked for 4,096 cycles is a NoC timeout and a cluster reset). "
      "Interleave the access pattern across banks, or keep the DMA apart from ",
      tensor_unit_ops.size() == 1 ? "this op" : "these ops");
}

std::string Schedule::ToText() const {
  std::string text = absl::StrFormat("%-4s %-8s %10s %10s %10s  %-28s %s\n", "op", "resource", "start", "end",
                                     "cycles", "waited on", "what");
  for (const ScheduledOp& op : ops) {
    absl::StrAppend(&text, absl::StrFormat("%-4d %-8s %10d %10d %10s  %-28s %s\n", op.index,
                                           ResourceName(op.resource), op.start, op.end,
                                           op.estimated ? absl::StrCat(op.cycles()) : "?",
                                           op.waited_on.ToString(), op.label));
  }
  absl::StrAppend(&text, "makespan: ", makespan, " cycles\n");
  for (const ScheduledOp& op : ops) {
    if (op.holds_dma) {
      absl::StrAppend(&text, "note: op ", op.index, " makes ", op.longest_bank_run,
                      " consecutive accesses to one DM bank: scheduled as if it occupied DMA\n");
    }
    if (!op.estimated) {
      absl::StrAppend(&text, "note: op ", op.index, " has no cycle estimate (no stage has a formula); it counts 0\n");
    }
  }
  for (const StarvationWarning& w : warnings) absl::StrAppend(&text, w.ToString(), "\n");
  return text;
}

Schedule MakeSchedule(const std::vector<ScheduleInput>& in, const SchedulerOptions& options) {
  Schedule schedule;
  std::map<Resource, int> last_on;  // the op that holds each resource last
  for (int i = 0; i < static_cast<int>(in.size()); ++i) {
    const OpDescription& d = in[i].description;
    ScheduledOp op;
    op.index = i;
    op.label = in[i].label;
    op.resource = d.resource;
    op.estimated = d.cycles.has_value();
    op.longest_bank_run = LongestRun(in[i].bank_runs);
    // Candidates, strongest reason first so that a tie names the hazard.
    int64_t start = 0;
    auto consider = [&](int64_t time, WaitReason reason) {
      if (time > start) {
        start = time;
        op.waited_on = reason;
      }
    };
    for (int j = 0; j < i; ++j) {
      for (const Hazard& h : HazardsBetween(d, in[j].description, j)) {
        op.hazards.push_back(h);
        consider(schedule.ops[j].end, {WaitReason::Kind::kHazard, j, h});
      }
    }
    op.holds_dma = options.starving_ops_hold_dma && d.resource != Resource::kDma &&
                   op.longest_bank_run >= kBankStarvationLimit;
    for (Resource r : {d.resource, Resource::kDma}) {
      if (r == Resource::kDma && d.resource != Resource::kDma && !op.holds_dma) continue;
      if (auto it = last_on.find(r); it != last_on.end()) {
        op.ready = std::max(op.ready, schedule.ops[it->second].end);
        consider(schedule.ops[it->second].end, {WaitReason::Kind::kResource, it->second, {}});
      }
    }
    if (i > 0) {
      op.ready = std::max(op.ready, schedule.ops[i - 1].start);
      consider(schedule.ops[i - 1].start, {WaitReason::Kind::kProgramOrder, i - 1, {}});
    }
    op.start = start;
    op.end = start + d.cycles.value_or(0);
    last_on[d.resource] = i;
    if (op.holds_dma) last_on[Resource::kDma] = i;
    schedule.makespan = std::max(schedule.makespan, op.end);
    schedule.ops.push_back(std::move(op));
  }
  for (int i = 0; i < static_cast<int>(in.size()); ++i) {
    if (in[i].description.resource == Resource::kDma && TouchesDmBanks(in[i].description)) {
      CheckStarvation(in, schedule, i, schedule.warnings);
    }
  }
  return schedule;
}

std::vector<ScheduleInput> ScheduleInputs(const Program& program) {
  std::vector<ScheduleInput> inputs;
  for (const Op& op : program.ops) {
    ScheduleInput input{Label(op), Describe(op), {}};
    if (const auto* pipe = std::get_if<PipelineOp>(&op.body)) input.bank_runs = PipelineBankRuns(*pipe);
    inputs.push_back(std::move(input));
  }
  return inputs;
}

Schedule MakeSchedule(const Program& program, const SchedulerOptions& options) {
  return MakeSchedule(ScheduleInputs(program), options);
}

}  // namespace visa
