// `visa check --all` and `visa bench --all` leave out the slow samples (the manual's full sizes,
// e.g. tiled_gemm: hours on the interpreter, past 22 GB in bench's fresh and warm runs); a slow
// sample is still checked by name.
#include <sstream>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "nlohmann/json.hpp"
#include "samples/sample.h"
#include "tools/bench_command.h"
#include "tools/check_command.h"

namespace visa::cli {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

constexpr char kSmall[] = "fetch_commit_permutation";

// Two small samples, the second a copy marked slow under another name.
void RegisterOneFastOneSlow() {
  samples::Sample slow = *samples::FindSample(kSmall);
  slow.name = "slow_copy";
  slow.slow = true;
  ASSERT_TRUE(samples::RegisterSamples({*samples::FindSample(kSmall), slow}, /*keep_builtin=*/false).ok());
}

TEST(AllSkipsSlowSamplesTest, CheckAllLeavesOutTheSlowSampleAndChecksItByName) {
  RegisterOneFastOneSlow();
  std::ostringstream out, err;
  ASSERT_EQ(CheckSampleCommand({.all = true, .progress = false}, out, err), 0) << err.str();
  EXPECT_THAT(out.str(), HasSubstr(std::string(kSmall) + ": identical"));
  EXPECT_THAT(out.str(), Not(HasSubstr("slow_copy: identical")));
  EXPECT_THAT(out.str(), HasSubstr("skipped 1 slow sample (run by name, or add --include-slow): slow_copy"));
  std::ostringstream by_name, by_name_err;
  EXPECT_EQ(CheckSampleCommand({.sample = "slow_copy", .progress = false}, by_name, by_name_err), 0);
  EXPECT_EQ(by_name.str(), "slow_copy: identical\n");
}

TEST(AllSkipsSlowSamplesTest, CheckAllWithIncludeSlowChecksItToo) {
  RegisterOneFastOneSlow();
  std::ostringstream out, err;
  ASSERT_EQ(CheckSampleCommand({.all = true, .include_slow = true, .progress = false}, out, err), 0) << err.str();
  EXPECT_THAT(out.str(), HasSubstr("slow_copy: identical"));
  EXPECT_THAT(out.str(), Not(HasSubstr("skipped")));
}

TEST(AllSkipsSlowSamplesTest, BenchAllLeavesOutTheSlowSample) {
  RegisterOneFastOneSlow();
  std::ostringstream out, err;
  ASSERT_EQ(BenchSampleCommand({.all = true, .json = true, .repeat = 1, .threads = 1, .progress = false}, out, err), 0)
      << err.str();
  const nlohmann::json json = nlohmann::json::parse(out.str());
  ASSERT_TRUE(json.is_array());
  ASSERT_EQ(json.size(), 2u);  // the measured sample, then the skipped one, named
  EXPECT_EQ(json[0]["sample"], kSmall);
  EXPECT_FALSE(json[0].contains("skipped"));
  EXPECT_EQ(json[1]["sample"], "slow_copy");
  EXPECT_THAT(std::string(json[1]["skipped"]), HasSubstr("--include-slow"));
}

}  // namespace
}  // namespace visa::cli
