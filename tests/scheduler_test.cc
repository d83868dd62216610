// The scheduler on hand-built programs whose schedules are derived by hand from the manual's
// "Scheduling" chapter (resources, RAW / WAR / WAW hazards, program order), the bank-starvation
// warning ("Memory Performance" > Bank Starvation), same-bank runs of sequencers, and a recorded
// program (a sub-context TRF load overlapping main).
#include "runtime/trace_options.h"
#include "runtime/scheduler.h"

#include <random>
#include <set>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "absl/strings/str_cat.h"
#include "dsl/mapping_parser.h"
#include "interp/interpreter.h"
#include "runtime/tensor_unit.h"
#include "runtime/transfer.h"
#include "samples/sample.h"
#include "runtime/trace_backend.h"

namespace visa {
namespace {

using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::SizeIs;

MemoryRange Range(Tier tier, Interval bytes, const std::string& name, Interval units = {0, 256}) {
  return MemoryRange{tier, {units}, {bytes}, name};
}
MemoryRange Dm(Interval bytes, const std::string& name) { return Range(Tier::kDm, bytes, name); }

ScheduleInput Op(const std::string& label, Resource resource, std::optional<int64_t> cycles,
                 std::vector<MemoryRange> reads, std::vector<MemoryRange> writes) {
  OpDescription d;
  d.resource = resource;
  d.cycles = cycles;
  d.reads = std::move(reads);
  d.writes = std::move(writes);
  return ScheduleInput{label, d, {}};
}

TEST(Scheduler, SameResourceSerializesOtherResourcesOverlap) {
  // "two matrix multiplications both requiring the main context must execute sequentially.
  // However, a matrix multiplication (main context) can run in parallel with a DMA transfer".
  Schedule s = MakeSchedule({Op("mm1", Resource::kMain, 100, {Dm({0, 64}, "a")}, {Dm({1024, 1088}, "c")}),
                             Op("dma", Resource::kDma, 600, {Range(Tier::kHbm, {0, 4096}, "h", {0, 1})},
                                {Dm({8192, 8192 + 4096}, "d")}),
                             Op("mm2", Resource::kMain, 50, {Dm({0, 64}, "a")}, {Dm({2048, 2112}, "e")})});
  ASSERT_THAT(s.ops, SizeIs(3));
  EXPECT_EQ(s.ops[0].start, 0);
  EXPECT_EQ(s.ops[0].end, 100);
  EXPECT_EQ(s.ops[1].start, 0);  // the DMA engine is free and nothing collides
  EXPECT_EQ(s.ops[1].end, 600);
  EXPECT_EQ(s.ops[2].start, 100);  // main is busy with mm1 until 100
  EXPECT_EQ(s.ops[2].ready, 100);  // no hazard wait
  EXPECT_EQ(s.ops[2].end, 150);
  EXPECT_EQ(s.ops[2].waited_on.kind, WaitReason::Kind::kResource);
  EXPECT_EQ(s.ops[2].waited_on.on, 0);
  EXPECT_EQ(s.ops[2].waited_on.ToString(), "resource: op 0");
  EXPECT_EQ(s.makespan, 600);
  EXPECT_THAT(s.ops[2].hazards, IsEmpty());  // both read `a`: reads never conflict
}

TEST(Scheduler, ReadAfterWriteWaitsForTheWriter) {
  Schedule s = MakeSchedule({Op("load", Resource::kDma, 600, {}, {Dm({0, 256}, "x")}),
                             Op("use", Resource::kMain, 100, {Dm({128, 192}, "x")}, {Dm({4096, 4160}, "y")})});
  EXPECT_EQ(s.ops[1].start, 600);
  EXPECT_EQ(s.ops[1].end, 700);
  EXPECT_EQ(s.ops[1].waited_on.ToString(), "RAW on op 0 (x)");
  EXPECT_EQ(s.ops[1].ready, 0);  // main was free from 0: 600 cycles waiting on the hazard
  EXPECT_EQ(s.makespan, 700);
}

TEST(Scheduler, WriteAfterReadAndWriteAfterWrite) {
  // op 1 overwrites what op 0 reads (WAR); op 2 writes where op 1 wrote (WAW).
  Schedule s = MakeSchedule({Op("read", Resource::kMain, 100, {Dm({0, 256}, "x")}, {Dm({4096, 4352}, "y")}),
                             Op("overwrite", Resource::kDma, 600, {}, {Dm({0, 256}, "x2")}),
                             Op("rewrite", Resource::kSub, 30, {Dm({8192, 8448}, "z")}, {Dm({64, 128}, "x3")})});
  EXPECT_EQ(s.ops[1].start, 100);
  EXPECT_EQ(s.ops[1].waited_on.ToString(), "WAR on op 0 (x)");
  EXPECT_EQ(s.ops[1].end, 700);
  EXPECT_EQ(s.ops[2].start, 700);
  EXPECT_EQ(s.ops[2].waited_on.ToString(), "WAW on op 1 (x2)");
  // op 2 also overwrites op 0's input: both hazards are recorded, the later one bounds it.
  ASSERT_THAT(s.ops[2].hazards, SizeIs(2));
  EXPECT_EQ(s.ops[2].hazards[0].kind, HazardKind::kWar);
  EXPECT_EQ(s.ops[2].hazards[0].on, 0);
  EXPECT_EQ(s.ops[2].hazards[1].kind, HazardKind::kWaw);
  EXPECT_EQ(s.makespan, 730);
}

TEST(Scheduler, TouchingRangesAndOtherSlicesAreNoHazard) {
  Schedule s = MakeSchedule(
      {Op("w", Resource::kDma, 600, {}, {Dm({0, 256}, "x")}),
       Op("next bytes", Resource::kMain, 10, {Dm({256, 512}, "y")}, {}),
       Op("other slices", Resource::kSub, 10, {Range(Tier::kDm, {0, 256}, "z", {256, 512})}, {})});
  EXPECT_EQ(s.ops[1].start, 0);
  EXPECT_EQ(s.ops[2].start, 0);
  EXPECT_THAT(s.ops[1].hazards, IsEmpty());
  EXPECT_THAT(s.ops[2].hazards, IsEmpty());
}

TEST(Scheduler, ProgramOrderIsNeverReordered) {
  // "The scheduler respects the written order ... it does not reorder operations": the sub op is
  // free to run at 0 but is written after an op that starts at 600.
  Schedule s = MakeSchedule({Op("load", Resource::kDma, 600, {}, {Dm({0, 256}, "x")}),
                             Op("use", Resource::kMain, 100, {Dm({0, 256}, "x")}, {}),
                             Op("independent", Resource::kSub, 50, {Dm({8192, 8448}, "w")}, {})});
  EXPECT_EQ(s.ops[2].start, 600);
  EXPECT_EQ(s.ops[2].waited_on.ToString(), "order: op 1");
  EXPECT_EQ(s.makespan, 700);
}

TEST(Scheduler, MainWaitsForTheSubLoadItReadsAndTheNextLoadOverlapsIt) {
  // Double buffering ("Sub context ... enabling double-buffering where the next operation's data
  // is prepared while the current one computes"): load TRF rows A (sub, 64), contract with A
  // (main, 300), load TRF rows B (sub, 64) while main computes, contract with B.
  auto trf = [](Interval bytes, const std::string& name) { return Range(Tier::kTrf, bytes, name, {0, 2048}); };
  Schedule s = MakeSchedule({Op("load A", Resource::kSub, 64, {Dm({0, 4096}, "wa")}, {trf({0, 4096}, "trfA")}),
                             Op("mm A", Resource::kMain, 300, {Dm({65536, 69632}, "x"), trf({0, 4096}, "trfA")},
                                {Dm({131072, 135168}, "ya")}),
                             Op("load B", Resource::kSub, 64, {Dm({4096, 8192}, "wb")}, {trf({4096, 8192}, "trfB")}),
                             Op("mm B", Resource::kMain, 300, {Dm({65536, 69632}, "x"), trf({4096, 8192}, "trfB")},
                                {Dm({139264, 143360}, "yb")})});
  EXPECT_EQ(s.ops[1].start, 64);
  EXPECT_EQ(s.ops[1].waited_on.ToString(), "RAW on op 0 (trfA)");
  EXPECT_EQ(s.ops[2].start, 64);  // sub is free at 64, and mm A started at 64
  EXPECT_EQ(s.ops[2].end, 128);   // inside mm A's [64, 364)
  EXPECT_EQ(s.ops[3].start, 364);
  EXPECT_EQ(s.ops[3].waited_on.ToString(), "resource: op 1");  // trfB was ready at 128
  EXPECT_EQ(s.makespan, 664);
}

TEST(Scheduler, OpsWithoutAnEstimateTakeNoTimeAndAreNoted) {
  Schedule s = MakeSchedule({Op("unknown", Resource::kMain, std::nullopt, {}, {}),
                             Op("next", Resource::kMain, 10, {}, {})});
  EXPECT_FALSE(s.ops[0].estimated);
  EXPECT_EQ(s.ops[0].end, 0);
  EXPECT_EQ(s.ops[1].start, 0);
  EXPECT_THAT(s.ToText(), HasSubstr("note: op 0 has no cycle estimate"));
}

TEST(Scheduler, TextTableListsEveryOpAndTheMakespan) {
  Schedule s = MakeSchedule({Op("tdma host -> x", Resource::kDma, 600, {}, {Dm({0, 256}, "x")}),
                             Op("fetch > commit -> y", Resource::kMain, 100, {Dm({0, 256}, "x")}, {})});
  const std::string text = s.ToText();
  EXPECT_THAT(text, HasSubstr("RAW on op 0 (x)"));
  EXPECT_THAT(text, HasSubstr("fetch > commit -> y"));
  EXPECT_THAT(text, HasSubstr("makespan: 700 cycles"));
}

// Random programs: the schedule keeps every rule of the chapter, and every start is tight (it is
// 0 or the time some constraint released the op).
TEST(Scheduler, RandomProgramsKeepEveryRule) {
  std::mt19937 rng(13);
  auto pick = [&](int n) { return static_cast<int>(rng() % static_cast<unsigned>(n)); };
  for (int program = 0; program < 300; ++program) {
    std::vector<ScheduleInput> in;
    const int n = 2 + pick(12);
    for (int i = 0; i < n; ++i) {
      auto range = [&]() {
        const int64_t begin = pick(8) * 64;
        return Dm({begin, begin + 64 * (1 + pick(3))}, absl::StrCat("t", begin));
      };
      std::vector<MemoryRange> reads, writes;
      for (int k = pick(3); k > 0; --k) reads.push_back(range());
      for (int k = pick(2); k > 0; --k) writes.push_back(range());
      const Resource r = static_cast<Resource>(pick(3));
      in.push_back(Op(absl::StrCat("op", i), r, pick(5) == 0 ? std::optional<int64_t>() : 1 + pick(500), reads, writes));
    }
    Schedule s = MakeSchedule(in);
    ASSERT_EQ(s.ops.size(), in.size());
    int64_t makespan = 0;
    for (int i = 0; i < n; ++i) {
      const ScheduledOp& op = s.ops[i];
      EXPECT_EQ(op.cycles(), in[i].description.cycles.value_or(0));
      makespan = std::max(makespan, op.end);
      std::set<int64_t> releases = {0};
      if (i > 0) {
        EXPECT_GE(op.start, s.ops[i - 1].start) << "program order";
        releases.insert(s.ops[i - 1].start);
      }
      for (int j = 0; j < i; ++j) {
        const ScheduledOp& before = s.ops[j];
        if (before.resource == op.resource) {
          EXPECT_GE(op.start, before.end) << "resource " << j << " -> " << i;
          releases.insert(before.end);
        }
        bool hazard = false;
        for (const MemoryRange& r : in[i].description.reads)
          for (const MemoryRange& w : in[j].description.writes) hazard |= Overlaps(r, w);
        for (const MemoryRange& w : in[i].description.writes) {
          for (const MemoryRange& r : in[j].description.reads) hazard |= Overlaps(w, r);
          for (const MemoryRange& w2 : in[j].description.writes) hazard |= Overlaps(w, w2);
        }
        if (hazard) {
          EXPECT_GE(op.start, before.end) << "hazard " << j << " -> " << i;
          releases.insert(before.end);
        }
      }
      EXPECT_TRUE(releases.contains(op.start)) << "op " << i << " starts at " << op.start << " for no reason";
    }
    EXPECT_EQ(s.makespan, makespan);
  }
}

// ---- Bank starvation -------------------------------------------------------------------------

ScheduleInput WithRuns(ScheduleInput op, int bank, int64_t run) {
  op.bank_runs[bank] = run;
  return op;
}

TEST(BankStarvation, SixtyFourSameBankAccessesWhileDmaIsActiveWarn) {
  // "operations with 64+ consecutive same-bank accesses are not scheduled concurrently with DMA".
  Schedule s = MakeSchedule({Op("dma", Resource::kDma, 600, {}, {Dm({0, 4096}, "x")}),
                             WithRuns(Op("column walk", Resource::kMain, 200, {Dm({8192, 16384}, "c")}, {}), 3, 64)});
  ASSERT_THAT(s.warnings, SizeIs(1));
  EXPECT_EQ(s.warnings[0].dma_op, 0);
  EXPECT_EQ(s.warnings[0].tensor_unit_ops, std::vector<int>{1});
  EXPECT_EQ(s.warnings[0].bank, 3);
  EXPECT_THAT(s.ToText(), HasSubstr("warning: bank starvation: op 1 makes 64 consecutive accesses to DM bank 3 "
                                    "while DMA op 0 is active"));
}

TEST(BankStarvation, NoWarningBelowTheLimitOrWithoutConcurrentDmOnDma) {
  // 63 accesses + the DMA's request = 64: not more than 64.
  Schedule below = MakeSchedule({Op("dma", Resource::kDma, 600, {}, {Dm({0, 4096}, "x")}),
                                 WithRuns(Op("ok", Resource::kMain, 200, {Dm({8192, 16384}, "c")}, {}), 3, 63)});
  EXPECT_THAT(below.warnings, IsEmpty());
  // HBM to HBM never touches DM banks.
  Schedule hbm = MakeSchedule(
      {Op("dma", Resource::kDma, 600, {Range(Tier::kHbm, {0, 4096}, "h", {0, 1})},
          {Range(Tier::kHbm, {8192, 12288}, "h2", {0, 1})}),
       WithRuns(Op("walk", Resource::kMain, 200, {Dm({8192, 16384}, "c")}, {}), 3, 500)});
  EXPECT_THAT(hbm.warnings, IsEmpty());
  // Not concurrent: the op waits for the DMA (RAW) and runs after it.
  Schedule after = MakeSchedule({Op("dma", Resource::kDma, 600, {}, {Dm({0, 4096}, "x")}),
                                 WithRuns(Op("walk", Resource::kMain, 200, {Dm({0, 4096}, "x")}, {}), 3, 500)});
  EXPECT_THAT(after.warnings, IsEmpty());
}

TEST(BankStarvation, StarvingOpsCanHoldTheDmaEngine) {
  // "the compiler schedules them as if they occupy DMA": the walk waits for the running DMA, and
  // the next DMA waits for the walk; no warning is left.
  std::vector<ScheduleInput> in = {
      Op("dma", Resource::kDma, 600, {}, {Dm({0, 4096}, "x")}),
      WithRuns(Op("walk", Resource::kMain, 200, {Dm({8192, 16384}, "c")}, {}), 3, 64),
      Op("next dma", Resource::kDma, 600, {}, {Dm({32768, 36864}, "z")})};
  Schedule s = MakeSchedule(in, SchedulerOptions{.starving_ops_hold_dma = true});
  EXPECT_TRUE(s.ops[1].holds_dma);
  EXPECT_EQ(s.ops[1].start, 600);
  EXPECT_EQ(s.ops[1].waited_on.ToString(), "resource: op 0");
  EXPECT_EQ(s.ops[2].start, 800);
  EXPECT_EQ(s.ops[2].waited_on.ToString(), "resource: op 1");
  EXPECT_THAT(s.warnings, IsEmpty());
  EXPECT_THAT(s.ToText(), HasSubstr("note: op 1 makes 64 consecutive accesses to one DM bank: scheduled as if it "
                                    "occupied DMA"));
  // Without the option both run at once and the warning stands.
  Schedule plain = MakeSchedule(in);
  EXPECT_EQ(plain.ops[1].start, 0);
  EXPECT_THAT(plain.warnings, SizeIs(1));
  // Below the limit an op never holds DMA.
  in[1].bank_runs[3] = 63;
  EXPECT_FALSE(MakeSchedule(in, SchedulerOptions{.starving_ops_hold_dma = true}).ops[1].holds_dma);
}

TEST(BankStarvation, MainAndSubAddUpOnTheSameBank) {
  // "Main-context Fetch: 30 ..., Sub-context Fetch: 20 ..., DMA: 1 ... Total: 51 accesses → Safe";
  // 40 + 30 on one bank is past the limit, and the warning names both ops.
  auto run = [](int64_t main_run, int64_t sub_run) {
    return MakeSchedule({Op("dma", Resource::kDma, 600, {}, {Dm({0, 4096}, "x")}),
                         WithRuns(Op("main", Resource::kMain, 200, {Dm({8192, 16384}, "c")}, {}), 5, main_run),
                         WithRuns(Op("sub", Resource::kSub, 200, {Dm({16384, 20480}, "d")}, {}), 5, sub_run)});
  };
  EXPECT_THAT(run(30, 20).warnings, IsEmpty());
  Schedule s = run(40, 30);
  ASSERT_THAT(s.warnings, SizeIs(1));
  EXPECT_EQ(s.warnings[0].tensor_unit_ops, (std::vector<int>{1, 2}));
  EXPECT_EQ(s.warnings[0].accesses, 70);
  EXPECT_THAT(s.warnings[0].ToString(), HasSubstr("op 1 and op 2 make 70 consecutive accesses to DM bank 5"));
}

SequencerConfig Config(std::vector<std::pair<int64_t, int64_t>> entries, int packet_entries, int64_t packet_size) {
  SequencerConfig c;
  for (auto [size, stride] : entries) c.entries.push_back({size, stride, ""});
  c.packet_entries = packet_entries;
  c.packet_size = packet_size;
  return c;
}

TEST(SameBankRuns, ColumnWalkHitsOneBankContiguousRowsRotate) {
  // i8 8-byte packets 128 bytes apart: every access lands on bank (address / 8) % 16 = 0.
  AccessPlan eight{.packet_bytes = 8, .access_bytes = 8, .accesses_per_packet = 1};
  BankRuns column = SameBankRuns(Config({{100, 128}, {8, 1}}, 1, 8), eight, 8, 0);
  EXPECT_EQ(column[0], 100);
  EXPECT_EQ(LongestRun(column), 100);
  // From byte 8 the same walk lands on bank 1.
  EXPECT_EQ(SameBankRuns(Config({{100, 128}, {8, 1}}, 1, 8), eight, 8, 8)[1], 100);
  // 32-byte contiguous accesses: 4 banks each, the next access the next 4 banks.
  AccessPlan full{.packet_bytes = 32, .access_bytes = 32, .accesses_per_packet = 1};
  BankRuns rows = SameBankRuns(Config({{64, 32}, {32, 1}}, 1, 32), full, 8, 0);
  EXPECT_EQ(LongestRun(rows), 1);
  // bf16 elements: a 64-byte packet in two 32-byte fetches, packets 256 bytes apart: the first
  // fetch touches banks 0-3, the second 4-7, so no bank is hit twice in a row.
  AccessPlan two{.packet_bytes = 64, .access_bytes = 32, .accesses_per_packet = 2};
  BankRuns halves = SameBankRuns(Config({{10, 128}, {32, 1}}, 1, 32), two, 16, 0);
  EXPECT_EQ(LongestRun(halves), 1);
}

// ---- A recorded program ----------------------------------------------------------------------

TEST(ScheduleProgram, GemmLoadsTheTrfOnSubThenContractsOnMain) {
  const samples::Sample* gemm = samples::FindSample("gemm");
  ASSERT_NE(gemm, nullptr);
  TraceBackend trace;
  absl::StatusOr<samples::SampleRun> run = gemm->Run(trace, TracingOptions());
  ASSERT_TRUE(run.ok()) << run.status();
  std::vector<ScheduleInput> inputs = ScheduleInputs(run->program);
  Schedule s = MakeSchedule(inputs);
  ASSERT_EQ(s.ops.size(), run->program.ops.size());
  int sub = -1, main = -1;
  for (const ScheduledOp& op : s.ops) {
    if (op.resource == Resource::kSub && sub < 0) sub = op.index;
    if (op.resource == Resource::kMain && main < 0) main = op.index;
  }
  ASSERT_GE(sub, 0);
  ASSERT_GT(main, sub);
  // The contraction reads the TRF rows the sub-context load wrote.
  EXPECT_EQ(s.ops[main].waited_on.kind, WaitReason::Kind::kHazard);
  EXPECT_EQ(s.ops[main].waited_on.hazard.kind, HazardKind::kRaw);
  EXPECT_GE(s.ops[main].start, s.ops[sub].end);
  // Every op ends by the makespan, which one of them reaches.
  int64_t latest = 0;
  for (const ScheduledOp& op : s.ops) {
    EXPECT_LE(op.end, s.makespan);
    EXPECT_EQ(op.end - op.start, inputs[op.index].description.cycles.value_or(0));
    latest = std::max(latest, op.end);
  }
  EXPECT_EQ(latest, s.makespan);
  EXPECT_THAT(s.ops[main].label, HasSubstr("contract"));
}

}  // namespace
}  // namespace visa
