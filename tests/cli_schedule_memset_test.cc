// `visa schedule memset_rows` as a user runs it: the memset is the sub-context row of the table
// (not a DMA, reading nothing), its 64 cycles (256 bytes of rows 2..5 in 4-byte ITOS words, the
// derived estimate of runtime/memset.h), after the DMA that wrote the tensor (WAW), and the same
// op in the JSON output and the Chrome trace.
#include <sstream>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "nlohmann/json.hpp"
#include "tools/schedule_command.h"

namespace visa::cli {
namespace {

using ::testing::HasSubstr;
using ::testing::MatchesRegex;

struct Result {
  int code = 0;
  std::string out, err;
};

Result Schedule(ScheduleOptions options) {
  std::ostringstream out, err;
  const int code = ScheduleSampleCommand(options, out, err);
  return {code, out.str(), err.str()};
}

// The table's line of op `op`.
std::string Row(const std::string& table, int op) {
  std::istringstream lines(table);
  std::string line;
  while (std::getline(lines, line)) {
    if (line.rfind(std::to_string(op) + " ", 0) == 0) return line;
  }
  return "";
}

TEST(CliScheduleMemset, TheTableShowsTheMemsetOnTheSubRow) {
  Result r = Schedule({.sample = "memset_rows"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("# memset_rows: "));
  // Op 2, after the pdma to HBM (op 0) and the tdma into DM (op 1) that wrote the tensor.
  const std::string memset = Row(r.out, 2);
  EXPECT_THAT(memset, MatchesRegex("2 +sub +1514 +1578 +64 +WAW on op 1 \\(dm#2\\) +sub memset -> dm#2"));
  EXPECT_THAT(Row(r.out, 1), HasSubstr("tdma hbm#1 -> dm#2"));
  EXPECT_THAT(r.out, HasSubstr("makespan: 1578 cycles"));
}

TEST(CliScheduleMemset, TheJsonHoldsTheSameMemset) {
  Result r = Schedule({.sample = "memset_rows", .json = true});
  ASSERT_EQ(r.code, 0) << r.err;
  nlohmann::json json = nlohmann::json::parse(r.out, nullptr, /*allow_exceptions=*/false);
  ASSERT_FALSE(json.is_discarded()) << r.out;
  ASSERT_EQ(json["ops"].size(), 3u);
  const nlohmann::json& op = json["ops"][2];
  EXPECT_EQ(op["resource"], "sub");
  EXPECT_EQ(op["label"], "sub memset -> dm#2");
  EXPECT_EQ(op["cycles"], 64);
  EXPECT_EQ(op["estimated"], true);
  EXPECT_EQ(op["waited_on"]["hazard"], "WAW");
  EXPECT_EQ(op["waited_on"]["op"], 1);
  EXPECT_EQ(json["makespan"], 1578);
}

}  // namespace
}  // namespace visa::cli
