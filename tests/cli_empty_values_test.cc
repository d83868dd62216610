// Every flag and positional of every command refuses an empty value, through the entry point a
// user runs (cli::Main): CLI11 would read "" as a number's default or as a text flag not given.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tools/cli_main.h"

namespace visa::cli {
namespace {

using ::testing::HasSubstr;

struct Result {
  int code = 0;
  std::string err;
};

Result RunVisa(std::vector<std::string> args) {
  args.insert(args.begin(), "visa");
  std::vector<char*> argv;
  for (std::string& arg : args) argv.push_back(arg.data());
  ::testing::internal::CaptureStderr();
  ::testing::internal::CaptureStdout();
  const int code = Main(static_cast<int>(argv.size()), argv.data(), {}, {.name = "visa", .keep_builtin_samples = true});
  ::testing::internal::GetCapturedStdout();
  return {code, ::testing::internal::GetCapturedStderr()};
}

TEST(CliEmptyValues, NumericFlagsRefuseAnEmptyValueInsteadOfReadingZero) {
  for (const char* flag : {"--seed", "--threads", "--programs", "--time"}) {
    const Result result = RunVisa({"fuzz-diff", "--programs", "1", flag, ""});
    EXPECT_EQ(result.code, 2) << flag;
    EXPECT_THAT(result.err, HasSubstr(std::string(flag) + ": the value is empty")) << result.err;
  }
  const Result blank = RunVisa({"bench", "fetch_commit_permutation", "--repeat", "  "});
  EXPECT_EQ(blank.code, 2);
  EXPECT_THAT(blank.err, HasSubstr("--repeat: value `  ` is out of range")) << blank.err;
}

TEST(CliEmptyValues, TextFlagsRefuseAnEmptyValueInsteadOfTakingItAsNotGiven) {
  for (const char* flag : {"--src", "--dst", "--indirect", "--time", "--packet", "--dtype"}) {
    const Result result = RunVisa({"seq", "--axes", "A=8", "--buf", "A", flag, ""});
    EXPECT_EQ(result.code, 2) << flag;
    EXPECT_THAT(result.err, HasSubstr(std::string(flag) + ": the value is empty")) << result.err;
  }
}

TEST(CliEmptyValues, PositionalsRefuseAnEmptyValue) {
  const Result result = RunVisa({"explain", ""});
  EXPECT_EQ(result.code, 2);
  EXPECT_THAT(result.err, HasSubstr("the value is empty")) << result.err;
}

TEST(CliEmptyValues, SwitchesAndGivenValuesStillWork) {
  EXPECT_EQ(RunVisa({"seq", "--axes", "A=8", "--buf", "A", "--labels"}).code, 0);
  EXPECT_EQ(RunVisa({"map", "--axes", "A=8,B=16", "A, B"}).code, 0);
}

}  // namespace
}  // namespace visa::cli
