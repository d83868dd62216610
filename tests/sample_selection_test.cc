// `--all` of `visa check` and `visa bench` leaves out the slow samples by name, and takes them
// with --include-slow; --include-slow without --all is refused naming the flag.
#include "tools/sample_selection.h"

#include <sstream>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tools/bench_command.h"
#include "tools/check_command.h"

namespace visa::cli {
namespace {

using ::testing::HasSubstr;

TEST(SampleSelectionTest, AllLeavesOutExactlyTheSlowSamplesAndNamesThem) {
  const SampleSelection selection = SelectAllSamples(/*include_slow=*/false);
  std::vector<std::string> slow;
  for (const samples::Sample& sample : samples::AllSamples()) {
    if (sample.slow) slow.push_back(sample.name);
  }
  ASSERT_FALSE(slow.empty()) << "the full-size 70B layer is a slow sample";
  EXPECT_EQ(selection.skipped_slow, slow);
  EXPECT_EQ(selection.chosen.size() + slow.size(), samples::AllSamples().size());
  for (const samples::Sample* sample : selection.chosen) EXPECT_FALSE(sample->slow) << sample->name;
  EXPECT_THAT(SkippedSlowNote(selection), HasSubstr("--include-slow"));
  EXPECT_THAT(SkippedSlowNote(selection), HasSubstr(slow[0]));
}

TEST(SampleSelectionTest, IncludeSlowTakesEverySample) {
  const SampleSelection selection = SelectAllSamples(/*include_slow=*/true);
  EXPECT_EQ(selection.chosen.size(), samples::AllSamples().size());
  EXPECT_TRUE(selection.skipped_slow.empty());
  EXPECT_EQ(SkippedSlowNote(selection), "");
}

TEST(SampleSelectionTest, CheckRefusesIncludeSlowWithoutAll) {
  std::ostringstream out, err;
  const int code = CheckSampleCommand({.sample = "fetch_commit_permutation", .include_slow = true}, out, err);
  EXPECT_EQ(code, 2);
  EXPECT_THAT(err.str(), HasSubstr("--include-slow goes with --all"));
  EXPECT_EQ(out.str(), "");
}

TEST(SampleSelectionTest, BenchRefusesIncludeSlowWithoutAll) {
  std::ostringstream out, err;
  const int code =
      BenchSampleCommand({.sample = "fetch_commit_permutation", .include_slow = true, .progress = false}, out, err);
  EXPECT_EQ(code, 2);
  EXPECT_THAT(err.str(), HasSubstr("--include-slow goes with --all"));
  EXPECT_EQ(out.str(), "");
}

}  // namespace
}  // namespace visa::cli
