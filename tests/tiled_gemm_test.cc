// The tiled GEMM beyond the SRAM (samples/models/tiled_gemm.h) and its tile-size rule
// (samples/models/tile_plan.h): the rule's choice at the manual's size, each capacity and alignment
// it refuses (the message names the rule), the reduced sample on both backends (identical, and
// within the Eigen reference's bound), its timeline (A tiles' DMA and B chunks' TRF loads under
// the GEMMs), and the trade-off table docs/tiling.md reports (device cycles by tile plan).
#include <algorithm>
#include <iostream>
#include <sstream>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "dsl/status_macros.h"
#include "interp/interpreter.h"
#include "runtime/scheduler.h"
#include "runtime/trace_backend.h"
#include "runtime/trace_options.h"
#include "samples/models/tile_plan.h"
#include "samples/models/tiled_gemm.h"
#include "tools/check_command.h"

namespace visa::models {
namespace {

using ::testing::HasSubstr;

constexpr GemmTiles kManual{.m = 8192, .n = 8192, .k = 2048};

TEST(TilePlanTest, ManualSizeGetsDoubleBufferedHalvesAndEightRowTilesPerTrfLoad) {
  absl::StatusOr<TilePlan> plan = ChooseTilePlan(kManual);
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_EQ(plan->k_chunk, 512);  // 4 columns x 512 bf16 = 4 KiB: half a TRF row
  EXPECT_TRUE(plan->trf_double_buffered());
  EXPECT_EQ(plan->m_block, 8);
  const SliceBudget b = BudgetOf(kManual, *plan);
  EXPECT_LE(b.trf_row, kTrfRowBytes);
  EXPECT_LE(b.dm, kDmSliceBytes);
  EXPECT_LE(b.vrf, kVrfSliceBytes);
  // B's 32 columns x 2048 bf16 (128 KiB) + two A tiles (64 KiB) + 8 partial tiles (32 KiB) + the
  // bf16 output tile (2 KiB).
  EXPECT_EQ(b.dm, 128 * 1024 + 64 * 1024 + 32 * 1024 + 2 * 1024);
}

TEST(TilePlanTest, AFullTrfChunkIsValidButNotDoubleBuffered) {
  const TilePlan full{.k_chunk = 1024, .m_block = 1};
  EXPECT_TRUE(CheckTilePlan(kManual, full).ok());
  EXPECT_FALSE(full.trf_double_buffered());
}

TEST(TilePlanTest, RefusesAChunkLargerThanATrfRow) {
  const absl::Status s = CheckTilePlan(kManual, {.k_chunk = 2048, .m_block = 1});
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("tile plan: TRF capacity"));
  EXPECT_THAT(s.message(), HasSubstr("k_chunk 2048"));
}

TEST(TilePlanTest, RefusesAChunkThatIsNotWholePackets) {
  const absl::Status s = CheckTilePlan(kManual, {.k_chunk = 48, .m_block = 1});
  EXPECT_THAT(s.message(), HasSubstr("tile plan: flit alignment"));
}

TEST(TilePlanTest, RefusesMoreColumnsThanTheSlicesHold) {
  const absl::Status s = CheckTilePlan({.m = 64, .n = 16384, .k = 512}, {.k_chunk = 512, .m_block = 1});
  EXPECT_THAT(s.message(), HasSubstr("tile plan: shape"));
  EXPECT_THAT(s.message(), HasSubstr("N = 16384"));
}

TEST(TilePlanTest, RefusesAnMBlockThatDoesNotDivideTheRowTiles) {
  const absl::Status s = CheckTilePlan({.m = 96, .n = 256, .k = 512}, {.k_chunk = 512, .m_block = 2});
  EXPECT_THAT(s.message(), HasSubstr("tile plan: shape"));
  EXPECT_THAT(s.message(), HasSubstr("m_block must divide the 3 row tiles"));
}

TEST(TilePlanTest, NoPlanWhenBDoesNotFitTheDm) {
  // 32 columns x 16384 bf16 of B per slice is 1 MiB, twice a slice's DM.
  absl::StatusOr<TilePlan> plan = ChooseTilePlan({.m = 64, .n = 8192, .k = 16384});
  ASSERT_FALSE(plan.ok());
  EXPECT_THAT(plan.status().message(), HasSubstr("tile plan: DM capacity"));
}

TEST(TiledGemmTest, ReducedSampleMatchesEigenAndIsIdenticalOnBothBackends) {
  const samples::Sample* sample = samples::FindSample("tiled_gemm_reduced");
  ASSERT_NE(sample, nullptr);
  interp::Interpreter interpreter;
  absl::StatusOr<samples::SampleRun> run = sample->Run(interpreter);
  ASSERT_TRUE(run.ok()) << run.status();
  EXPECT_FALSE(run->mismatch.has_value()) << run->Summary(sample->name);
  EXPECT_EQ(run->elements, 64 * 256);
  EXPECT_GT(run->max_error, 0);  // bf16 output: not trivially exact
  std::ostringstream out, err;
  EXPECT_EQ(cli::CheckSampleCommand({.sample = "tiled_gemm_reduced", .progress = false}, out, err), 0)
      << out.str() << err.str();
  EXPECT_THAT(out.str(), HasSubstr("identical"));
}

Program Traced(const samples::Sample& sample) {
  TraceBackend trace;
  absl::StatusOr<samples::SampleRun> run = sample.Run(trace, TracingOptions());
  VISA_CHECK(run.ok(), "the traced sample runs");
  return run->program;
}

bool Overlap(const ScheduledOp& a, const ScheduledOp& b) { return a.start < b.end && b.start < a.end; }

// The next A tile's DMA runs while a GEMM contracts, and the next chunk of B loads into the other
// TRF half on the sub context while main contracts with this one.
TEST(TiledGemmTest, ScheduleShowsTheLoadsUnderTheContraction) {
  const samples::Sample* sample = samples::FindSample("tiled_gemm_reduced");
  ASSERT_NE(sample, nullptr);
  const Schedule schedule = MakeSchedule(Traced(*sample));
  int dma_under_gemm = 0, trf_under_gemm = 0, gemms = 0;
  for (const ScheduledOp& gemm : schedule.ops) {
    if (gemm.resource != Resource::kMain || gemm.label.find("tiled GEMM [") == std::string::npos) continue;
    ++gemms;
    for (const ScheduledOp& other : schedule.ops) {
      if (!Overlap(gemm, other)) continue;
      if (other.resource == Resource::kDma && other.label.find("A tile") != std::string::npos) ++dma_under_gemm;
      if (other.resource == Resource::kSub && other.label.find("to TRF") != std::string::npos) ++trf_under_gemm;
    }
  }
  EXPECT_EQ(gemms, 4);  // 2 row tiles x 2 chunks
  EXPECT_GE(dma_under_gemm, gemms - 1);  // every GEMM but the last has the next tile's DMA under it
  EXPECT_GE(trf_under_gemm, 1);          // chunk 1 loads under chunk 0's GEMMs
}

// The kernel's device time: from the end of the host's uploads (pdma, which the sample's timeline
// includes) to the end, with the main context's and the DMA engine's busy cycles in it.
struct KernelTime {
  int64_t cycles = 0, main_busy = 0, dma_busy = 0;
};

KernelTime KernelTimeOf(const Schedule& schedule) {
  KernelTime t;
  int64_t uploads_end = 0;
  for (const ScheduledOp& op : schedule.ops) {
    if (op.label.rfind("pdma", 0) == 0) uploads_end = std::max(uploads_end, op.end);
  }
  for (const ScheduledOp& op : schedule.ops) {
    if (op.label.rfind("pdma", 0) == 0) continue;
    if (op.resource == Resource::kMain) t.main_busy += op.cycles();
    if (op.resource == Resource::kDma) t.dma_busy += op.cycles();
  }
  t.cycles = schedule.makespan - uploads_end;
  return t;
}

// The trade-off docs/tiling.md reports: device cycles (the cycle model) of the tiled GEMM by tile
// plan, at a shape with every slice busy and eight row tiles. Chunks of K trade ops (fixed costs:
// DMA start-up, pipeline latencies, partial-sum loads) against TRF double buffering; the rule's
// choice must be within 1% of the fastest plan measured.
TEST(TiledGemmTest, TradeOffTableOfTilePlans) {
  const GemmTiles shape{.m = 256, .n = 8192, .k = 2048};
  absl::StatusOr<TilePlan> chosen = ChooseTilePlan(shape);
  ASSERT_TRUE(chosen.ok()) << chosen.status();
  const double macs = static_cast<double>(shape.m) * shape.n * shape.k;
  // One cluster's peak: 256 slices x 8 rows x 16 bf16 MACs a cycle (one 32-byte flit fetched per cycle).
  const double peak_cycles = macs / (256.0 * 8 * 16);
  std::cout << "| k_chunk | m_block | TRF | ops | kernel cycles | main busy | DMA busy | peak / kernel |\n"
               "|---|---|---|---|---|---|---|---|\n";
  int64_t chosen_cycles = 0, best = 0;
  for (const TilePlan plan : {TilePlan{128, 1}, TilePlan{256, 1}, TilePlan{512, 1}, TilePlan{512, 8},
                              TilePlan{1024, 1}, TilePlan{1024, 8}}) {
    ASSERT_TRUE(CheckTilePlan(shape, plan).ok()) << CheckTilePlan(shape, plan);
    const samples::Sample sample = TiledGemmSample("tiled_gemm_plan", shape, false, &plan);
    const Program program = Traced(sample);
    const KernelTime t = KernelTimeOf(MakeSchedule(program));
    std::cout << "| " << plan.k_chunk << " | " << plan.m_block << " | "
              << (plan.trf_double_buffered() ? "halves" : "full") << " | " << program.ops.size() << " | " << t.cycles
              << " | " << t.main_busy << " | " << t.dma_busy << " | " << peak_cycles / static_cast<double>(t.cycles)
              << " |\n";
    if (plan.k_chunk == chosen->k_chunk && plan.m_block == chosen->m_block) chosen_cycles = t.cycles;
    if (best == 0 || t.cycles < best) best = t.cycles;
  }
  std::cout << "chosen " << chosen->ToString() << ": " << chosen_cycles << " cycles; peak " << peak_cycles << "\n";
  EXPECT_LE(static_cast<double>(chosen_cycles), 1.01 * static_cast<double>(best));
}

}  // namespace
}  // namespace visa::models
