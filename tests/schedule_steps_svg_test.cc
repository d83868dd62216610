// The SVG timeline's band of model steps (tools/schedule_svg.cc): ops named by a step (the part
// of the label before ": ", up to a bracketed detail) are spanned as one step from the first
// op's start to the last op's end; a schedule of unnamed ops draws no band.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/common/schedule_test_helpers.h"

#include "runtime/scheduler.h"
#include "tools/schedule_svg.h"

namespace visa::cli {
namespace {

using schedule_test::Op;

using ::testing::HasSubstr;
using ::testing::Not;


TEST(ScheduleStepsSvgTest, NamedOpsAreSpannedByStep) {
  Schedule s;
  s.ops = {Op(0, "Q projection [g0 k0] operands: tdma hbm#1 -> dm#2", Resource::kDma, 0, 100),
           Op(1, "Q projection [g0 k0]: fetch > collect > align > contract -> dm#3", Resource::kMain, 100, 150),
           Op(2, "attention [head 0] scores: fetch > collect > align > contract -> dm#4", Resource::kMain, 150, 300),
           Op(3, "Q projection [g0] result: tdma dm#3 -> hbm#5", Resource::kDma, 150, 200)};
  s.makespan = 300;
  const std::string svg = ScheduleSvg(s, "steps");
  EXPECT_THAT(svg, HasSubstr(">steps</text>"));
  EXPECT_THAT(svg, HasSubstr("<title>Q projection: [0, 200) 200 cycles</title>"));
  EXPECT_THAT(svg, HasSubstr("<title>attention: [150, 300) 150 cycles</title>"));
}

TEST(ScheduleStepsSvgTest, UnnamedOpsDrawNoBand) {
  Schedule s;
  s.ops = {Op(0, "tdma hbm#1 -> dm#2", Resource::kDma, 0, 100),
           Op(1, "fetch > collect > commit -> dm#3", Resource::kMain, 100, 150)};
  s.makespan = 150;
  const std::string svg = ScheduleSvg(s, "plain");
  EXPECT_THAT(svg, Not(HasSubstr("class=\"step\"")));
  EXPECT_THAT(svg, Not(HasSubstr(">steps</text>")));
}

}  // namespace
}  // namespace visa::cli
