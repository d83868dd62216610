// The scheduler (manual, "Scheduling"): places a program's ops on the three resources (main
// context, sub context, DMA engine) in program order. An op starts when its resource is free, when
// every earlier op it has a RAW / WAR / WAW hazard with (overlapping device bytes) has ended, and
// never before the op written above it started (the scheduler "does not reorder operations").
// Main waiting for a sub-context TRF load is the RAW hazard on the TRF rows the load writes.
// It reports the makespan, each op's start, end and the constraint it waited on, and warns where
// Fetch / Commit would starve a concurrent DMA of a DM bank ("Memory Performance" > Bank
// Starvation).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "runtime/dm_bank_runs.h"
#include "runtime/op_description.h"
#include "runtime/program.h"

namespace visa {

// One op as the scheduler sees it.
struct ScheduleInput {
  std::string label;           // "fetch > collect > commit dm#3", "tdma hbm#1 -> dm#2"
  OpDescription description;   // resource, cycles, reads and writes
  BankRuns bank_runs{};        // consecutive same-bank DM accesses (pipelines)
};

enum class HazardKind { kRaw, kWar, kWaw };
const char* HazardName(HazardKind kind);  // "RAW", "WAR", "WAW"

// A dependence of an op on an earlier one through bytes both touch.
struct Hazard {
  HazardKind kind = HazardKind::kRaw;
  int on = -1;          // the earlier op
  std::string tensor;   // the earlier op's range the later one collides with, e.g. "trf#1"
};

// What held an op back: the constraint whose time was latest.
struct WaitReason {
  enum class Kind { kNone, kResource, kProgramOrder, kHazard };
  Kind kind = Kind::kNone;
  int on = -1;      // the op that freed the resource, started before, or ended the hazard
  Hazard hazard;    // for kHazard
  // "-", "main busy with op 1", "order after op 2", "RAW on op 0 (trf#1)"
  std::string ToString() const;
};

struct ScheduledOp {
  int index = 0;
  std::string label;
  Resource resource = Resource::kMain;
  int64_t start = 0, end = 0;
  // When its resource and program order let it start; start - ready is the time it waited on a
  // hazard (the shaded part of the timeline).
  int64_t ready = 0;
  bool estimated = true;          // false: the model has no cycle figure for it; it takes 0 cycles
  std::vector<Hazard> hazards;    // every hazard with an earlier op
  WaitReason waited_on;
  int64_t longest_bank_run = 0;
  bool holds_dma = false;  // a Tensor Unit op scheduled as if it occupied DMA (SchedulerOptions)
  int64_t cycles() const { return end - start; }
};

struct StarvationWarning {
  std::vector<int> tensor_unit_ops;  // the Tensor Unit ops whose runs add up on one bank
  int dma_op = -1;
  int bank = 0;
  int64_t accesses = 0;              // their consecutive accesses to that bank
  std::string ToString() const;
};

struct Schedule {
  std::vector<ScheduledOp> ops;
  int64_t makespan = 0;
  std::vector<StarvationWarning> warnings;
  // The table: op, resource, start, end, cycles, waited on; then the makespan and the warnings.
  std::string ToText() const;
};

struct SchedulerOptions {
  // The compiler's remedy ("Memory Performance" > Bank Starvation: "When Tensor Unit operations
  // would violate the 64-access limit, the compiler schedules them as if they occupy DMA"): a
  // Tensor Unit op with 64+ consecutive same-bank accesses also holds the DMA engine.
  bool starving_ops_hold_dma = false;
};

Schedule MakeSchedule(const std::vector<ScheduleInput>& ops, const SchedulerOptions& options = {});

// The program's ops described (Describe, PipelineBankRuns) and labelled.
std::vector<ScheduleInput> ScheduleInputs(const Program& program);
Schedule MakeSchedule(const Program& program, const SchedulerOptions& options = {});

}  // namespace visa
