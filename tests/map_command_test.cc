// Tests of `visa map`: output formats, exit codes and error reporting, driven in process.
#include <sstream>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tools/map_command.h"

namespace visa::cli {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

struct Result {
  int code;
  std::string out, err;
};

Result RunVisaMap(MapOptions options) {
  std::ostringstream out, err;
  int code = RunMap(options, out, err);
  return {code, out.str(), err.str()};
}

TEST(MapCommand, PrintsSizeAndNormalForm) {
  Result r = RunVisaMap({.expr = "B / 64, B % 64", .axes = "A=8,B=512"});
  EXPECT_EQ(r.code, 0);
  EXPECT_EQ(r.out, "size: 512\nnormal: B\n");
}

TEST(MapCommand, NormalFormKeepsTheNestedStrideRearrangement) {
  Result r = RunVisaMap({.expr = "B / 64, B % 32, B / 32 % 2", .axes = "A=8,B=512"});
  EXPECT_EQ(r.out, "size: 512\nnormal: B / 64, B % 32, B / 32 % 2\n");
}

TEST(MapCommand, EnumeratesEveryAxisNamedSortedWithZeros) {
  Result r = RunVisaMap({.expr = "C, D # 4", .axes = "C=2,D=3", .enumerate = true});
  EXPECT_EQ(r.code, 0);
  EXPECT_EQ(r.out,
            "0 C=0 D=0\n1 C=0 D=1\n2 C=0 D=2\n3 pad\n"
            "4 C=1 D=0\n5 C=1 D=1\n6 C=1 D=2\n7 pad\n");
}

TEST(MapCommand, EnumeratesAxislessLivePositionsAsEmptyBraces) {
  Result r = RunVisaMap({.expr = "2 # 3", .axes = "A=2", .enumerate = true});
  EXPECT_EQ(r.out, "0 {}\n1 {}\n2 pad\n");
}

TEST(MapCommand, EnumeratesSkewedAxesByTheirBaseCoordinates) {
  Result r = RunVisaMap({.expr = "A, B' = 4", .axes = "A=4,B=4,B'=B-A", .enumerate = true});
  EXPECT_THAT(r.out, HasSubstr("7 A=1 B=0\n"));
  EXPECT_THAT(r.out, HasSubstr("4 A=1 B=1\n"));
}

TEST(MapCommand, EnumeratesEveryCellOfALinearCombination) {
  Result r = RunVisaMap({.expr = "$(N: 1, F: 2)", .axes = "N=5,F=3", .enumerate = true});
  EXPECT_THAT(r.out, HasSubstr("4 F=1 N=2 | F=2 N=0 | F=0 N=4\n"));
}

TEST(MapCommand, EquivalentExitsZero) {
  Result r = RunVisaMap({.expr = "B / 64, B % 64", .axes = "B=512", .equiv = "B"});
  EXPECT_EQ(r.code, 0);
  EXPECT_EQ(r.out, "equivalent\n");
}

TEST(MapCommand, NotEquivalentNamesTheFirstDifferingPosition) {
  Result r = RunVisaMap({.expr = "A, B", .axes = "A=2,B=2", .equiv = "B, A"});
  EXPECT_EQ(r.code, 1);
  EXPECT_EQ(r.out, "not equivalent: position 1: {B=1} vs {A=1}\n");
}

TEST(MapCommand, NotEquivalentNamesDifferentSizes) {
  Result r = RunVisaMap({.expr = "A", .axes = "A=8", .equiv = "A # 16"});
  EXPECT_EQ(r.code, 1);
  EXPECT_EQ(r.out, "not equivalent: sizes 8 and 16\n");
}

TEST(MapCommand, DefsAreEscapable) {
  Result r = RunVisaMap({.expr = "{ L }, { R }", .axes = "A=8,B=512", .defs = {"L=A", "R=B"},
                  .equiv = "A, B"});
  EXPECT_EQ(r.out, "equivalent\n");
}

TEST(MapCommand, UserErrorsGoToStderrWithExitTwo) {
  for (const MapOptions& options : std::vector<MapOptions>{
           {.expr = "A / 3", .axes = "A=8"},
           {.expr = "X", .axes = "A=8"},
           {.expr = "A, (B", .axes = "A=8,B=2"},
           {.expr = "", .axes = "A=8"},
           {.expr = "A", .axes = "A=8,A=3"},
           {.expr = "A", .axes = "A=eight"},
           {.expr = "{ L }", .axes = "A=8", .defs = {"L"}},
           {.expr = "A", .axes = "A=8", .equiv = "A /"},
       }) {
    Result r = RunVisaMap(options);
    EXPECT_EQ(r.code, 2) << options.expr;
    EXPECT_THAT(r.err, StartsWith("error: ")) << options.expr;
    EXPECT_EQ(r.out, "") << options.expr;
  }
}

TEST(MapCommand, ErrorsNameTheRuleAndColumn) {
  EXPECT_THAT(RunVisaMap({.expr = "A / 3", .axes = "A=8"}).err, HasSubstr("stride"));
  EXPECT_THAT(RunVisaMap({.expr = "A, (B", .axes = "A=8,B=2"}).err, HasSubstr("column 6"));
  EXPECT_THAT(RunVisaMap({.expr = "A", .axes = "A=8,A=3"}).err, HasSubstr("declared multiple times"));
}

}  // namespace
}  // namespace visa::cli
