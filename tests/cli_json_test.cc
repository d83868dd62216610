// `--json` on run, check, explain and bench: each output parses with nlohmann-json and holds the
// figures the text output prints; progress lines appear only when enabled.
#include <sstream>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tools/bench_command.h"
#include "tools/check_command.h"
#include "tools/progress.h"
#include "tools/run_command.h"

namespace visa::cli {
namespace {

using ::testing::HasSubstr;

constexpr char kSample[] = "fetch_commit_permutation";

nlohmann::json Parse(const std::string& text) {
  nlohmann::json json = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  EXPECT_FALSE(json.is_discarded()) << text;
  return json;
}

TEST(CliJsonTest, RunPrintsOneObject) {
  std::ostringstream out, err;
  ASSERT_EQ(RunSampleCommand({.sample = kSample, .json = true}, out, err), 0) << err.str();
  nlohmann::json json = Parse(out.str());
  EXPECT_EQ(json["sample"], kSample);
  EXPECT_EQ(json["backend"], "interp");
  EXPECT_EQ(json["ok"], true);
  EXPECT_EQ(json["elements"], 30);  // the README's `visa run` line: 30 elements
  EXPECT_TRUE(json["mismatch"].is_null());
  EXPECT_TRUE(json["kernel_seconds"].is_number());
}

TEST(CliJsonTest, RunListIsAnArrayOfEverySample) {
  std::ostringstream out, err;
  ASSERT_EQ(RunSampleCommand({.list = true, .json = true}, out, err), 0) << err.str();
  nlohmann::json json = Parse(out.str());
  ASSERT_TRUE(json.is_array());
  ASSERT_FALSE(json.empty());
  EXPECT_EQ(json[0]["name"], kSample);
}

TEST(CliJsonTest, ExplainListsEveryOpWithItsDescription) {
  std::ostringstream text, out, err;
  ASSERT_EQ(ExplainSampleCommand(kSample, false, text, err), 0) << err.str();
  ASSERT_EQ(ExplainSampleCommand(kSample, true, out, err), 0) << err.str();
  nlohmann::json json = Parse(out.str());
  EXPECT_EQ(json["sample"], kSample);
  ASSERT_TRUE(json["ops"].is_array());
  ASSERT_FALSE(json["ops"].empty());
  for (const nlohmann::json& op : json["ops"]) {
    EXPECT_THAT(std::string(op["resource"]), testing::AnyOf("main", "sub", "dma"));
    EXPECT_TRUE(op["terms"].is_array());
    // The text output prints the same op line.
    EXPECT_THAT(text.str(), HasSubstr(std::string(op["text"])));
  }
  EXPECT_THAT(text.str(), HasSubstr(absl::StrCat("hash: ", std::string(json["hash"]))));
}

TEST(CliJsonTest, CheckCountsEachResult) {
  std::ostringstream out, err;
  ASSERT_EQ(CheckSampleCommand({.sample = kSample, .json = true}, out, err), 0) << err.str();
  nlohmann::json json = Parse(out.str());
  EXPECT_EQ(json["identical"], 1);
  EXPECT_EQ(json["different"], 0);
  EXPECT_EQ(json["errors"], 0);
  EXPECT_EQ(json["samples"][0]["result"], "identical");
}

TEST(CliJsonTest, BenchPrintsEveryFigure) {
  std::ostringstream out, err;
  ASSERT_EQ(BenchSampleCommand({.sample = kSample, .json = true, .repeat = 1, .threads = 1}, out, err), 0) << err.str();
  nlohmann::json json = Parse(out.str());
  for (const char* key : {"interp_s", "jit_compile_first_s", "jit_run_s", "interp_over_jit"}) {
    EXPECT_TRUE(json[key].is_number()) << key;
  }
  EXPECT_EQ(json["threads"], 1);
  EXPECT_TRUE(json["ops"].is_array());
}

TEST(ProgressTest, ReportsDoneTotalElapsedAndEstimate) {
  std::ostringstream err;
  {
    Progress progress("check", 4, err, /*enabled=*/true);
    progress.Step("a");
    progress.Step("b");
    progress.Step("c");
  }
  EXPECT_THAT(err.str(), HasSubstr("check: 3/4 c, "));
  EXPECT_THAT(err.str(), HasSubstr("s elapsed, about "));
  EXPECT_EQ(err.str().back(), '\n');
}

TEST(ProgressTest, QuietWhenDisabled) {
  std::ostringstream err;
  Progress progress("check", 4, err, /*enabled=*/false);
  progress.Step("a");
  progress.Finish();
  EXPECT_EQ(progress.done(), 1);
  EXPECT_EQ(err.str(), "");
}

}  // namespace
}  // namespace visa::cli
