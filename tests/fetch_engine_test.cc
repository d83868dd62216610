// Fetch Engine planning: the manual's masking cases, batching figures and fetch_size by context.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "dsl/fetch_engine.h"
#include "dsl/mapping_parser.h"

namespace visa {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

struct Planner {
  explicit Planner(const std::string& axes) : s(*Axes::Parse(axes)) {}
  absl::StatusOr<FetchStage> Plan(DType dtype, const std::string& element, const std::string& time,
                                  const std::string& packet, ContextKind context = ContextKind::kMain,
                                  DType out = DType::kI8) {
    StreamShape begin{dtype, s.m("1"), s.m("1 # 2"), s.m("1 # 256"), s.m("1"), s.m(element)};
    return PlanFetchStage(begin, nullptr, context, out, s.m(time), s.m(packet), {});
  }
  MappingScope s;
};

TEST(FetchMasking, Case1PaddedAxisOuterPartInnermostInTime) {
  // Masking Configuration, case 1 (without the left pad, which mappings cannot express):
  // Element [A, B # 96], Time [A, B' / 32], Packet [B' % 32] with B = 90: 26 valid in the last flit.
  Planner p("A = 32, B = 90");
  absl::StatusOr<FetchStage> stage = p.Plan(DType::kI8, "A, B # 96", "A, B # 96 / 32", "B # 96 % 32");
  ASSERT_TRUE(stage.ok()) << stage.status();
  EXPECT_EQ(stage->sequencer.ToString(), "[32 : 96, 3 : 32, 32 : 1] : 32");
  EXPECT_EQ(stage->access.cycles, 96);  // Time::SIZE = 32 * 3
  EXPECT_EQ(stage->mask.case_number, 1);
  EXPECT_EQ(stage->mask.last_dim, 1);
  EXPECT_THAT(stage->mask.rightmost_valid, ElementsAre(26));
}

TEST(FetchMasking, Case2PaddedAxisOuterPartNotInnermost) {
  Planner p("A = 32, B = 90");
  absl::StatusOr<FetchStage> stage = p.Plan(DType::kI8, "A, B # 96", "B # 96 / 32, A", "B # 96 % 32");
  ASSERT_TRUE(stage.ok()) << stage.status();
  EXPECT_EQ(stage->sequencer.ToString(), "[3 : 32, 32 : 96, 32 : 1] : 32");
  EXPECT_EQ(stage->mask.case_number, 2);
  EXPECT_EQ(stage->mask.last_dim, 0);
}

TEST(FetchMasking, Case3PerIndexValidCounts) {
  // Case 3: f32, B = 97 padded to 128 in packets of 16: [16, 16, 16, 16, 16, 16, 1, 0].
  Planner p("A = 32, B = 97");
  absl::StatusOr<FetchStage> stage =
      p.Plan(DType::kF32, "A, B # 128", "A, B # 128 / 16", "B # 128 % 16", ContextKind::kMain, DType::kF32);
  ASSERT_TRUE(stage.ok()) << stage.status();
  EXPECT_EQ(stage->mask.case_number, 3);
  EXPECT_EQ(stage->mask.last_dim, 1);
  EXPECT_THAT(stage->mask.rightmost_valid, ElementsAre(16, 16, 16, 16, 16, 16, 1, 0));
  // The manual prints "Cycles: Time::SIZE = 256", but its own batching formula gives
  // Time::SIZE x ceil(64-byte packet / 32-byte fetch) = 512; the formula is what we compute.
  EXPECT_EQ(stage->access.cycles, 512);
}

TEST(FetchMasking, SinglePaddedPacket) {
  // "A 63-element axis must be padded to 64 elements": the 64th element is masked.
  Planner p("A = 63");
  absl::StatusOr<FetchStage> stage = p.Plan(DType::kI8, "A", "1", "A # 64");
  ASSERT_TRUE(stage.ok()) << stage.status();
  EXPECT_EQ(stage->mask.case_number, 1);
  EXPECT_THAT(stage->mask.rightmost_valid, ElementsAre(63));
  EXPECT_THAT(stage->Describe(), HasSubstr("masking case 1"));
}

TEST(FetchMasking, NoPaddingNoMask) {
  Planner p("A = 32, B = 96");
  absl::StatusOr<FetchStage> stage = p.Plan(DType::kI8, "A, B", "A, B / 32", "B % 32");
  ASSERT_TRUE(stage.ok()) << stage.status();
  EXPECT_EQ(stage->mask.case_number, 0);
}

TEST(FetchMasking, Case3NeedsAtMostEightIndices) {
  Planner p("A = 2, B = 33");
  absl::StatusOr<FetchStage> stage = p.Plan(DType::kI8, "A, B # 160", "A, B # 160 / 8", "B # 160 % 8");
  ASSERT_FALSE(stage.ok());
  EXPECT_THAT(stage.status().message(), HasSubstr("case 3 supports at most 8"));
}

TEST(FetchSize, SubContextFetchesEightBytes) {
  Planner p("N = 4, C = 3, H = 4, W = 16");
  absl::StatusOr<FetchStage> stage =
      p.Plan(DType::kI8, "N, C, H, W", "N, C, H", "W", ContextKind::kSub);
  ASSERT_TRUE(stage.ok()) << stage.status();
  EXPECT_EQ(stage->access.access_bytes, 8);
  EXPECT_EQ(stage->access.accesses_per_packet, 2);
}

TEST(FetchSize, BatchingFactorOfTheManual) {
  // Batching, fetch_batch_4 (notes' W = 16): packet 96 bytes, fetch_size 32, 3 fetches per packet.
  Planner p("N = 4, C = 3, H = 4, W = 16");
  absl::StatusOr<FetchStage> stage = p.Plan(DType::kI4, "N, C, H, W", "N", "C, H, W", ContextKind::kMain,
                                            DType::kI4);
  ASSERT_TRUE(stage.ok()) << stage.status();
  EXPECT_EQ(stage->access.access_bytes, 32);
  EXPECT_EQ(stage->access.accesses_per_packet, 3);
  EXPECT_EQ(stage->access.cycles, 12);
}

}  // namespace
}  // namespace visa
