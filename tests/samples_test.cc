// Every sample runs on the interpreter and matches its independent host reference.
#include <gtest/gtest.h>

#include "interp/interpreter.h"
#include "samples/sample.h"
#include "tools/run_command.h"

namespace visa::samples {
namespace {

// The segmentation sample moves the manual's full 64 KB tensor twice and the slow contraction
// samples run the manual's full sizes; they run in `visa run`.
bool TooSlowForUnitTests(const std::string& name) {
  const Sample* sample = FindSample(name);
  return name == "fetch_commit_segmentation" || (sample != nullptr && sample->slow);
}

class SampleTest : public ::testing::TestWithParam<std::string> {};

TEST_P(SampleTest, MatchesHostReferenceOnInterpreter) {
  const Sample* sample = FindSample(GetParam());
  ASSERT_NE(sample, nullptr);
  interp::Interpreter interpreter;
  absl::StatusOr<SampleRun> run = sample->Run(interpreter);
  ASSERT_TRUE(run.ok()) << run.status();
  EXPECT_FALSE(run->mismatch.has_value()) << run->Summary(sample->name);
  EXPECT_GT(run->elements, 0);
  EXPECT_FALSE(run->program.ops.empty());
}

std::vector<std::string> Names() {
  std::vector<std::string> names;
  for (const Sample& sample : AllSamples()) {
    if (!TooSlowForUnitTests(sample.name)) names.push_back(sample.name);
  }
  return names;
}

INSTANTIATE_TEST_SUITE_P(All, SampleTest, ::testing::ValuesIn(Names()),
                         [](const auto& info) { return info.param; });

TEST(RunCommand, PrintsTheOkLine) {
  std::ostringstream out, err;
  int code = cli::RunSampleCommand({.sample = "cast_i32_to_i8"}, out, err);
  EXPECT_EQ(code, 0);
  EXPECT_EQ(out.str(), "cast_i32_to_i8: ok (32 elements, max error 0)\n");
}

TEST(RunCommand, UnknownSampleAndBackendAreErrors) {
  std::ostringstream out, err;
  EXPECT_EQ(cli::RunSampleCommand({.sample = "nope"}, out, err), 2);
  EXPECT_NE(err.str().find("unknown sample"), std::string::npos);
  std::ostringstream out2, err2;
  EXPECT_EQ(cli::RunSampleCommand({.sample = "cast_i32_to_i8", .backend = "gpu"}, out2, err2), 2);
  EXPECT_NE(err2.str().find("unknown backend `gpu` (available: interp, jit)"), std::string::npos);
}

TEST(RunCommand, ListsEverySample) {
  std::ostringstream out, err;
  EXPECT_EQ(cli::RunSampleCommand({.list = true}, out, err), 0);
  for (const Sample& sample : AllSamples()) EXPECT_NE(out.str().find(sample.name), std::string::npos);
}

TEST(ExplainCommand, ShowsTheManualsCommitSequencerForThePermutation) {
  // Kernel Examples, Example 1: "[A=3:8, B=5:24, C=8:1] @ 1024 / 8".
  std::ostringstream out, err;
  ASSERT_EQ(cli::ExplainSampleCommand("fetch_commit_permutation", out, err), 0) << err.str();
  EXPECT_NE(out.str().find("sequencer [A -> 3 : 8, B -> 5 : 24, C # 32 -> 8 : 1] : 8"), std::string::npos)
      << out.str();
  EXPECT_NE(out.str().find("commit_in_size 8 B, contiguous 8 B, commit_size 8 B"), std::string::npos);
  EXPECT_NE(out.str().find("hash: "), std::string::npos);
}

TEST(ExplainCommand, DescribesEveryOpsResourceCyclesAndRanges) {
  // Example 1 reads the Element at DM 0x0 (30 bytes of data, padded to 32 for the DMA that stages
  // it: the range is the tensor's) and commits 15 x 8 bytes at DM 0x400; its fetch
  // and commit each take Time::SIZE = 15 cycles of one access per packet.
  std::ostringstream out, err;
  ASSERT_EQ(cli::ExplainSampleCommand("fetch_commit_permutation", out, err), 0) << err.str();
  const std::string text = out.str();
  EXPECT_NE(text.find("  = main pipeline: 15 cycles"), std::string::npos) << text;
  EXPECT_NE(text.find("reads  DM slices 0 bytes [0x0, 0x20) `dm#2`"), std::string::npos) << text;
  EXPECT_NE(text.find("writes DM slices 0 bytes [0x400, 0x478) `dm#3`"), std::string::npos) << text;
  EXPECT_NE(text.find("  = dma move: "), std::string::npos) << text;
}

TEST(ExplainCommand, ShowsTheTailPaddingConfigurations) {
  // Example 3: fetch_size 24 and the write sequencer [B=2:72, (A # 7)/24=3:24, A=24:1] / 24.
  std::ostringstream out, err;
  ASSERT_EQ(cli::ExplainSampleCommand("fetch_commit_tail_padding", out, err), 0) << err.str();
  EXPECT_NE(out.str().find("fetch_size 8 B"), std::string::npos) << out.str();
  EXPECT_NE(out.str().find("-> 2 : 72"), std::string::npos) << out.str();
  EXPECT_NE(out.str().find("-> 3 : 24"), std::string::npos) << out.str();
}

}  // namespace
}  // namespace visa::samples
