// Trimming a pipeline's padded units (jit/live_units.h): which pipelines are trimmed, to what, and
// that the JIT's results on such pipelines stay those of the interpreter.
#include "jit/live_units.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <sstream>
#include <string>
#include <vector>

#include "dsl/mapping_parser.h"
#include "runtime/trace_backend.h"
#include "samples/sample.h"
#include "runtime/trace_options.h"
#include "tools/check_command.h"

namespace visa::jit {
namespace {

// The pipelines of a sample's program, as `visa run` records them.
std::vector<PipelineOp> Pipelines(const std::string& sample_name) {
  const samples::Sample* sample = samples::FindSample(sample_name);
  EXPECT_NE(sample, nullptr) << sample_name;
  if (sample == nullptr) return {};
  TraceBackend trace;
  absl::StatusOr<samples::SampleRun> traced = sample->Run(trace, TracingOptions());
  EXPECT_TRUE(traced.ok()) << traced.status();
  std::vector<PipelineOp> pipelines;
  if (!traced.ok()) return pipelines;
  for (const Op& op : traced->program.ops) {
    if (const auto* pipe = std::get_if<PipelineOp>(&op.body)) pipelines.push_back(*pipe);
  }
  return pipelines;
}

const StreamShape& Units(const PipelineOp& op) { return std::get<BeginStage>(op.stages.front()).shape; }

// batched_matmul_k runs on cluster `1 # 2`, slice `1 # 256`: one live unit of 512.
TEST(LiveUnits, OneLiveSliceOfFiveHundredTwelveIsTrimmedToIt) {
  std::vector<PipelineOp> pipelines = Pipelines("batched_matmul_k");
  ASSERT_EQ(pipelines.size(), 2u);  // the TRF load, the contraction
  for (const PipelineOp& op : pipelines) {
    ASSERT_EQ(Units(op).cluster.size() * Units(op).slice.size(), 512);
    std::optional<PipelineOp> trimmed = TrimToLiveUnits(op);
    ASSERT_TRUE(trimmed.has_value());
    ASSERT_EQ(trimmed->stages.size(), op.stages.size());
    EXPECT_EQ(Units(*trimmed).cluster.size() * Units(*trimmed).slice.size(), 1);
    // Every stage's stream keeps its positions per unit: 1 / 512 of the padded ones.
    for (size_t i = 0; i < op.stages.size(); ++i) {
      const auto* fetch = std::get_if<FetchStage>(&op.stages[i]);
      if (fetch == nullptr) continue;
      const auto& kept = std::get<FetchStage>(trimmed->stages[i]);
      EXPECT_EQ(kept.out.Full().size() * 512, fetch->out.Full().size());
    }
  }
}

// The Switch Engine moves data between slices: its pipelines keep every unit.
TEST(LiveUnits, SwitchPipelinesAreNotTrimmed) {
  std::vector<PipelineOp> pipelines = Pipelines("switch_broadcast1");
  ASSERT_FALSE(pipelines.empty());
  int switching = 0;
  for (const PipelineOp& op : pipelines) {
    const bool switches = std::any_of(op.stages.begin(), op.stages.end(),
                                      [](const Stage& s) { return std::holds_alternative<SwitchStage>(s); });
    if (!switches) continue;
    ++switching;
    EXPECT_FALSE(TrimToLiveUnits(op).has_value());
  }
  EXPECT_GT(switching, 0);
}

// Units without padding (the GEMM's 256 slices on both clusters would be; its clusters are
// `1 # 2`, so only the cluster level is trimmed): the live units stay all of the slices.
TEST(LiveUnits, TrimsOnlyThePaddedLevel) {
  std::vector<PipelineOp> pipelines = Pipelines("gemm_k64");
  ASSERT_FALSE(pipelines.empty());
  std::optional<PipelineOp> trimmed = TrimToLiveUnits(pipelines.front());
  ASSERT_TRUE(trimmed.has_value());
  EXPECT_EQ(Units(*trimmed).cluster.size(), 1);
  EXPECT_EQ(Units(*trimmed).slice.size(), Units(pipelines.front()).slice.size());
}

// A pipeline whose units are not padded at all is left as it is.
TEST(LiveUnits, NoPaddingNoTrim) {
  PipelineOp op;
  BeginStage begin;
  begin.shape.chip = *ParseMapping("1", Axes());
  begin.shape.cluster = *ParseMapping("1", Axes());
  begin.shape.slice = *ParseMapping("1", Axes());
  op.stages.push_back(begin);
  EXPECT_FALSE(TrimToLiveUnits(op).has_value());
}

// embedding_fetch gathers rows on slice `1 # 256` of cluster `1 # 2`: the indirect fetch walks the
// one live unit, not 512 (a fresh device paid a page fault per padded slice it read).
TEST(LiveUnits, AnIndirectFetchIsTrimmedToItsLiveUnit) {
  std::vector<PipelineOp> pipelines = Pipelines("embedding_fetch");
  int indirect = 0;
  for (const PipelineOp& op : pipelines) {
    if (!op.fetch_index) continue;
    ++indirect;
    ASSERT_EQ(Units(op).cluster.size() * Units(op).slice.size(), 512);
    std::optional<PipelineOp> trimmed = TrimToLiveUnits(op);
    ASSERT_TRUE(trimmed.has_value());
    EXPECT_EQ(Units(*trimmed).cluster.size() * Units(*trimmed).slice.size(), 1);
    for (const Stage& stage : trimmed->stages) {
      if (const auto* fetch = std::get_if<FetchStage>(&stage)) {
        EXPECT_TRUE(fetch->indirect.has_value());
        EXPECT_EQ(fetch->out.cluster.size() * fetch->out.slice.size(), 1);
      }
    }
  }
  EXPECT_EQ(indirect, 1);
}

// The trimmed walk writes the interpreter's bits, op by op (`visa check`), on samples with padded
// units: contractions on one slice, a convolution, an f8 matmul, indirect fetches.
TEST(LiveUnits, JitEqualsInterpreterOnPaddedUnitSamples) {
  for (const std::string name : {"batched_matmul_k", "batched_matmul_nm", "dot", "conv2d_stride2", "matmul_f8",
                                 "embedding_fetch", "embedding_fetch_strided", "gathered_matmul"}) {
    std::ostringstream out, err;
    EXPECT_EQ(cli::CheckSampleCommand({.sample = name}, out, err), 0) << name << ": " << out.str() << err.str();
    EXPECT_NE(out.str().find("identical"), std::string::npos) << out.str();
  }
}

}  // namespace
}  // namespace visa::jit
