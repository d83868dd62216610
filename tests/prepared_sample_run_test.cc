// tools/prepared_sample_run.h: `visa run --backend jit` compiles every kernel of the sample before
// the sample's device exists, so the run itself compiles nothing; a traced contraction sample
// returns its Program without a reference to check.
#include "tools/prepared_sample_run.h"

#include <sstream>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "runtime/trace_options.h"
#include "runtime/trace_backend.h"
#include "tools/run_command.h"

namespace visa::cli {
namespace {

using ::testing::ContainsRegex;
using ::testing::HasSubstr;
using ::testing::Not;

constexpr char kSample[] = "gemm_k64";

TEST(PreparedSampleRun, TheRunCompilesNothingAfterPreparing) {
  const samples::Sample* sample = samples::FindSample(kSample);
  ASSERT_NE(sample, nullptr);
  absl::StatusOr<std::unique_ptr<jit::JitBackend>> jit = jit::JitBackend::Create();
  ASSERT_TRUE(jit.ok()) << jit.status();
  absl::StatusOr<PreparedSampleRun> prepared = RunPrepared(*sample, **jit, {});
  ASSERT_TRUE(prepared.ok()) << prepared.status();
  EXPECT_FALSE(prepared->run.mismatch.has_value()) << *prepared->run.mismatch;
  EXPECT_EQ(prepared->run.elements, 512 * 512);
  EXPECT_GT(prepared->compiled_before, 0);
  EXPECT_EQ(prepared->compiled_during, 0);
  EXPECT_GT((*jit)->stats().cache_hits, 0);  // the run found the prepared kernels
}

TEST(PreparedSampleRun, VisaRunSaysNothingCompiledDuringTheRun) {
  std::ostringstream out, err;
  ASSERT_EQ(RunSampleCommand({.sample = kSample, .backend = "jit", .time = true}, out, err), 0) << err.str();
  EXPECT_THAT(out.str(), ContainsRegex("jit kernels: [1-9][0-9]* compiled or loaded before the run, 0 during it"));
}

TEST(PreparedSampleRun, TheInterpreterRunHasNoKernelLine) {
  std::ostringstream out, err;
  ASSERT_EQ(RunSampleCommand({.sample = "dot", .time = true}, out, err), 0) << err.str();
  EXPECT_THAT(out.str(), HasSubstr("device memory touched"));
  EXPECT_THAT(out.str(), Not(HasSubstr("jit kernels")));
}

TEST(PreparedSampleRun, ATracedContractionSampleReturnsItsProgramUnchecked) {
  const samples::Sample* sample = samples::FindSample(kSample);
  ASSERT_NE(sample, nullptr);
  TraceBackend trace;
  absl::StatusOr<samples::SampleRun> run = sample->Run(trace, TracingOptions());
  ASSERT_TRUE(run.ok()) << run.status();
  EXPECT_FALSE(run->program.ops.empty());
  EXPECT_EQ(run->elements, 0);  // nothing computed, nothing compared
  EXPECT_FALSE(run->mismatch.has_value());
}

}  // namespace
}  // namespace visa::cli
