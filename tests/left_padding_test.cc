// Left padding `# n + A + # m` (manual, "Masking Configuration", Padding cases 1-3): the mapping
// value (parser, printer, map, inverse, normal form, equivalence), the sequencer's base address,
// the fetch adapter's masking configuration, and the rules that reject what it cannot do.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "dsl/equivalence.h"
#include "dsl/fetch_engine.h"
#include "dsl/left_padding.h"
#include "dsl/mapping_parser.h"
#include "dsl/normal_form.h"
#include "dsl/sequencer.h"

namespace visa {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

MappingScope Scope(const std::string& axes) { return MappingScope(*Axes::Parse(axes)); }

TEST(LeftPaddingMapping, PadsBeforeTheOperand) {
  MappingScope s = Scope("B = 3");
  const Mapping m = s.m("# 2 + B + # 4");
  ASSERT_TRUE(m.ok()) << m.status();
  EXPECT_EQ(m.size(), 9);
  // Independent expectation: positions 0-1 pad, 2-4 hold B = 0..2, 5-8 pad.
  for (int64_t p = 0; p < 9; ++p) {
    const Cell cell = m.map(p);
    if (p >= 2 && p < 5) {
      ASSERT_TRUE(cell.live()) << p;
      EXPECT_EQ(cell.index["B"], p - 2);
    } else {
      EXPECT_EQ(cell.kind, Cell::Kind::kPad) << p;
    }
  }
  EXPECT_EQ(m.map(9).kind, Cell::Kind::kOutOfBounds);
}

// Digits of a left-padded axis add their b' before the shift (the manual's `let B' = ... in`):
// `[# 2 + B + # 4] / 32, [# 2 + B + # 4] % 32` holds B = 32 h + l - 2 where that is in range.
TEST(LeftPaddingMapping, SplitDigitsShiftTheirSum) {
  MappingScope s = Scope("B = 90");
  const Mapping split = s.m("[# 2 + B + # 4] / 32, [# 2 + B + # 4] % 32");
  ASSERT_TRUE(split.ok()) << split.status();
  for (int64_t p = 0; p < 96; ++p) {
    const Cell cell = split.map(p);
    if (p >= 2 && p < 92) {
      ASSERT_TRUE(cell.live()) << p;
      EXPECT_EQ(cell.index["B"], p - 2) << p;
    } else {
      EXPECT_EQ(cell.kind, Cell::Kind::kPad) << p;
    }
  }
  EXPECT_THAT(Equivalent(split, s.m("# 2 + B + # 4")), absl::StatusOr<bool>(true));
  // A left padding cannot join a linear combination (one position, several indices).
  const Mapping combined = s.m("$([# 2 + B]: 1, B: 1)");
  ASSERT_FALSE(combined.ok());
  EXPECT_THAT(combined.status().message(), HasSubstr("left padding: "));
}

TEST(LeftPaddingMapping, PrintsAndParsesBack) {
  MappingScope s = Scope("A = 4, B = 90");
  for (const char* text : {"# 2 + B + # 4", "# 2 + B", "A, # 2 + B + # 4", "[# 2 + B + # 4] / 32",
                           "[# 2 + B + # 4] % 32", "[# 2 + B], A", "#{0} 3 + B + #{!} 1",
                           "[# 2 + B + # 4] # 100"}) {
    const Mapping m = s.m(text);
    ASSERT_TRUE(m.ok()) << text << ": " << m.status();
    const Mapping again = s.m(m.ToString());
    ASSERT_TRUE(again.ok()) << m.ToString() << ": " << again.status();
    EXPECT_EQ(again, m) << text << " printed as " << m.ToString();
  }
  EXPECT_EQ(s.m("# 2 + B + # 4").ToString(), "# 2 + B + # 4");
  EXPECT_EQ(s.m("[# 2 + B + # 4] / 32").ToString(), "[# 2 + B + # 4] / 32");
  // `B + # m` is the right padding the manual's case 3 writes: `B # (|B| + m)`.
  EXPECT_EQ(s.m("B + # 6"), s.m("B # 96"));
  // C++ form.
  EXPECT_EQ(s.m("B").left_pad(2).pad(96), s.m("# 2 + B + # 4"));
}

TEST(LeftPaddingMapping, InverseNormalFormAndEquivalence) {
  MappingScope s = Scope("A = 4, B = 90");
  const Mapping m = s.m("A, # 2 + B + # 4");
  Index index;
  index.Add("A", 1);
  index.Add("B", 5);
  EXPECT_EQ(m.inverse(index), 96 + 2 + 5);
  Index outside;
  outside.Add("B", 90);
  EXPECT_EQ(m.inverse(outside), std::nullopt);
  // A shift has no digit form: the normal form keeps it as a composite.
  EXPECT_FALSE(m.normal_form().is_canonical());
  EXPECT_EQ(m.normal_form().size(), 4 * 96);
  EXPECT_THAT(Equivalent(s.m("# 0 + B"), s.m("B")), absl::StatusOr<bool>(true));
  EXPECT_THAT(Equivalent(s.m("# 2 + B + # 4"), s.m("[# 2 + B] # 96")), absl::StatusOr<bool>(true));
  EXPECT_THAT(Equivalent(s.m("# 2 + B + # 4"), s.m("# 3 + B + # 3")), absl::StatusOr<bool>(false));
  EXPECT_THAT(Equivalent(s.m("# 2 + B + # 4"), s.m("B # 96")), absl::StatusOr<bool>(false));
  // A left pad of a whole block is a pad digit: `# 90 + B` holds B in its second half.
  EXPECT_THAT(Equivalent(s.m("# 90 + B"), s.m("[B # 180] / 1")), absl::StatusOr<bool>(false));
}

TEST(LeftPaddingMapping, ParseErrorsNameTheForm) {
  MappingScope s = Scope("B = 3");
  absl::StatusOr<Mapping> no_plus = ParseMapping("# 2 B", *Axes::Parse("B = 3"));
  ASSERT_FALSE(no_plus.ok());
  EXPECT_THAT(no_plus.status().message(), HasSubstr("expected `+` after a left padding"));
  absl::StatusOr<Mapping> no_hash = ParseMapping("B + 4", *Axes::Parse("B = 3"));
  ASSERT_FALSE(no_hash.ok());
  EXPECT_THAT(no_hash.status().message(), HasSubstr("expected a right padding `# m` after `+`"));
}

// The manual's Padding case 1: [A = 32 : 96, B' / 32 = 3 : 32, B' % 32 = 32 : 1] : 32 @ base_addr = -2.
TEST(LeftPaddingSequencer, Case1MovesTheBaseAddressBackByTheLeftPad) {
  MappingScope s = Scope("A = 32, B = 90");
  absl::StatusOr<SequencerConfig> config = DeriveSequencer(
      s.m("A, B # 96"), s.m("A, [# 2 + B + # 4] / 32"), s.m("[# 2 + B + # 4] % 32"), SequencerMode::kRead);
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->ToString(), "[32 : 96, 3 : 32, 32 : 1] : 32 @ base_addr = -2");
  EXPECT_EQ(config->base_offset, -2);
  // Stream position (a, b') reads buffer offset 96 a + b' - 2 (an independent host formula).
  const std::vector<int64_t> offsets = config->Offsets();
  for (int64_t a : {0, 5, 31}) {
    for (int64_t b : {0, 1, 2, 50, 95}) EXPECT_EQ(offsets[a * 96 + b], 96 * a + b - 2);
  }
}

TEST(LeftPaddingSequencer, Case2OuterPartOutsideTheInnermostTimeEntry) {
  MappingScope s = Scope("A = 32, B = 90");
  absl::StatusOr<SequencerConfig> config = DeriveSequencer(
      s.m("A, B # 96"), s.m("[# 2 + B + # 4] / 32, A"), s.m("[# 2 + B + # 4] % 32"), SequencerMode::kRead);
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->ToString(), "[3 : 32, 32 : 96, 32 : 1] : 32 @ base_addr = -2");
}

TEST(LeftPaddingSequencer, TheBaseMovesByTheAxisDigitsWeight) {
  // B held outside C (weight 4): a left pad of 1 moves the base back 4 positions.
  MappingScope s = Scope("B = 6, C = 4");
  absl::StatusOr<SequencerConfig> config =
      DeriveSequencer(s.m("B # 8, C"), s.m("# 1 + B + # 1"), s.m("C"), SequencerMode::kRead);
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->ToString(), "[8 : 4, 4 : 1] : 4 @ base_addr = -4");
}

TEST(LeftPaddingSequencer, RulesThatReject) {
  MappingScope s = Scope("A = 4, B = 90");
  // A write would land before the buffer.
  absl::StatusOr<SequencerConfig> write = DeriveSequencer(
      s.m("A, B # 96"), s.m("A"), s.m("# 2 + B + # 4"), SequencerMode::kCommit);
  ASSERT_FALSE(write.ok());
  EXPECT_THAT(write.status().message(), HasSubstr("Left padding: "));
  EXPECT_THAT(write.status().message(), HasSubstr("only a read"));
  // The buffer has no room past B's end for the shifted reads.
  absl::StatusOr<SequencerConfig> no_room =
      DeriveSequencer(s.m("A, B"), s.m("A"), s.m("# 2 + B + # 4"), SequencerMode::kRead);
  ASSERT_FALSE(no_room.ok());
  EXPECT_THAT(no_room.status().message(), HasSubstr("Left padding: the buffer `A, B` has no room"));
  EXPECT_THAT(no_room.status().message(), HasSubstr("`B # 92`"));
  // Only an axis can be left-padded (a rule of the mapping itself).
  const Mapping not_axis = s.m("# 2 + [B / 2] + # 1");
  ASSERT_FALSE(not_axis.ok());
  EXPECT_THAT(not_axis.status().message(), HasSubstr("left padding: "));
  EXPECT_THAT(not_axis.status().message(), HasSubstr("a left padding pads an axis"));
  // One shift per axis.
  absl::StatusOr<SequencerConfig> two = DeriveSequencer(
      s.m("A, B # 96"), s.m("# 1 + B + # 5"), s.m("# 2 + B + # 4"), SequencerMode::kRead);
  ASSERT_FALSE(two.ok());
  EXPECT_THAT(two.status().message(), HasSubstr("left-pads B by 1 and by 2"));
  // The axis in two buffer digits: the shift would carry between them.
  absl::StatusOr<SequencerConfig> split = DeriveSequencer(
      s.m("[B # 96] / 8, A, [B # 96] % 8"), s.m("A"), s.m("# 2 + B + # 4"), SequencerMode::kRead);
  ASSERT_FALSE(split.ok());
  EXPECT_THAT(split.status().message(), HasSubstr("Left padding: "));
  EXPECT_THAT(split.status().message(), HasSubstr("in 2 digits"));
}

struct Planner {
  explicit Planner(const std::string& axes) : s(*Axes::Parse(axes)) {}
  absl::StatusOr<FetchStage> Plan(DType dtype, const std::string& element, const std::string& time,
                                  const std::string& packet) {
    StreamShape begin{dtype, s.m("1"), s.m("1 # 2"), s.m("1 # 256"), s.m("1"), s.m(element)};
    return PlanFetchStage(begin, nullptr, ContextKind::kMain, dtype, s.m(time), s.m(packet), {});
  }
  MappingScope s;
};

// Padding case 1 as the manual prints it: last_dim = 1, lpad = 2, pad_value = 0, 96 cycles. The
// manual prints last_dim_rightmost_valid_count[0] = 4, the number of elements its result masks at
// the right; by its own definition ("masks dim0 - count elements from the right") the count is
// 32 - 4 = 28, which is what the configuration holds.
TEST(LeftPaddingMasking, ManualCase1) {
  Planner p("A = 32, B = 90");
  absl::StatusOr<FetchStage> stage =
      p.Plan(DType::kI8, "A, B # 96", "A, [# 2 + B + # 4] / 32", "[# 2 + B + # 4] % 32");
  ASSERT_TRUE(stage.ok()) << stage.status();
  EXPECT_EQ(stage->sequencer.ToString(), "[32 : 96, 3 : 32, 32 : 1] : 32 @ base_addr = -2");
  EXPECT_EQ(stage->access.cycles, 96);
  EXPECT_EQ(stage->mask.case_number, 1);
  EXPECT_EQ(stage->mask.last_dim, 1);
  EXPECT_EQ(stage->mask.lpad, 2);
  EXPECT_THAT(stage->mask.rightmost_valid, ElementsAre(28));
  EXPECT_THAT(stage->Describe(), HasSubstr("masking case 1, last_dim 1, lpad 2, last_dim_rightmost_valid_count [28]"));
  EXPECT_THAT(stage->Describe(), HasSubstr("@ base_addr = -2"));
}

TEST(LeftPaddingMasking, ManualCase2) {
  Planner p("A = 32, B = 90");
  absl::StatusOr<FetchStage> stage =
      p.Plan(DType::kI8, "A, B # 96", "[# 2 + B + # 4] / 32, A", "[# 2 + B + # 4] % 32");
  ASSERT_TRUE(stage.ok()) << stage.status();
  EXPECT_EQ(stage->sequencer.ToString(), "[3 : 32, 32 : 96, 32 : 1] : 32 @ base_addr = -2");
  EXPECT_EQ(stage->access.cycles, 96);
  EXPECT_EQ(stage->mask.case_number, 2);
  EXPECT_EQ(stage->mask.last_dim, 0);
  EXPECT_EQ(stage->mask.lpad, 2);
  EXPECT_THAT(stage->mask.rightmost_valid, ElementsAre(28));
}

// Padding case 3, written as the manual writes it (`B' = B + # 31`, Time [A, B' / 16, 1]). The
// manual's `@ base_addr = -2` there has no left pad to come from (a copy of case 1's): the base
// stays. Its per-index counts are the manual's.
TEST(LeftPaddingMasking, ManualCase3) {
  Planner p("A = 32, B = 97");
  absl::StatusOr<FetchStage> stage =
      p.Plan(DType::kF32, "A, B # 128", "A, [B + # 31] / 16, 1", "[B + # 31] % 16");
  ASSERT_TRUE(stage.ok()) << stage.status();
  EXPECT_EQ(stage->sequencer.ToString(), "[32 : 128, 8 : 16, 16 : 1] : 16");
  EXPECT_EQ(stage->mask.case_number, 3);
  EXPECT_EQ(stage->mask.lpad, 0);
  EXPECT_THAT(stage->mask.rightmost_valid, ElementsAre(16, 16, 16, 16, 16, 16, 1, 0));
}

TEST(LeftPaddingMasking, OnlyALeftPadStillMasks) {
  Planner p("A = 4, B = 30");
  absl::StatusOr<FetchStage> stage = p.Plan(DType::kI8, "A, B # 32", "A", "# 2 + B");
  ASSERT_TRUE(stage.ok()) << stage.status();
  EXPECT_EQ(stage->mask.case_number, 1);
  EXPECT_EQ(stage->mask.lpad, 2);
  EXPECT_THAT(stage->mask.rightmost_valid, ElementsAre(32));
}

TEST(LeftPaddingMasking, RulesThatReject) {
  // The left pad must be the packet's innermost axis (the sequencer itself could walk it).
  Planner p("A = 32, B = 32");
  MappingScope& s = p.s;
  ASSERT_TRUE(DeriveSequencer(s.m("A # 40, B"), s.m("# 2 + A + # 6"), s.m("B"), SequencerMode::kRead).ok());
  absl::StatusOr<FetchStage> outer = p.Plan(DType::kI8, "A # 40, B", "# 2 + A + # 6", "B");
  ASSERT_FALSE(outer.ok());
  EXPECT_THAT(outer.status().message(), HasSubstr("Masking Configuration"));
  // A left pad as long as the first packet.
  Planner q("A = 4, B = 60");
  absl::StatusOr<FetchStage> long_pad = q.Plan(DType::kI8, "A, B # 96", "A, [# 32 + B + # 4] / 32", "[# 32 + B + # 4] % 32");
  ASSERT_FALSE(long_pad.ok());
  EXPECT_THAT(long_pad.status().message(), HasSubstr("Masking Configuration: a left pad of 32"));
}

}  // namespace
}  // namespace visa
