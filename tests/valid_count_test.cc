// The Valid Count Generator: every placement of the manual's "Valid Count Generator's Interface"
// tables (supported ones with their configuration and trace, unsupported ones as errors naming the
// rule), the worked configurations of "... Implementation", and, for every supported placement,
// the formula's vc(s, t) against the truth read from the stream's own mapping.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "dsl/mapping_parser.h"
#include "dsl/valid_count.h"

namespace visa {
namespace {

using ::testing::HasSubstr;

class ValidCountTest : public ::testing::Test {
 protected:
  void Use(const std::string& axes) { scope_ = std::make_unique<MappingScope>(*Axes::Parse(axes)); }
  Mapping m(const std::string& text) { return scope_->m(text); }
  StreamShape Shape(const std::string& slice, const std::string& time, const std::string& packet) {
    return StreamShape{DType::kI32, m("1"), m("1"), m(slice), m(time), m(packet), std::nullopt};
  }
  absl::StatusOr<ValidCountConfig> Plan(const std::string& slice, const std::string& time,
                                        const std::string& packet, const std::string& axis = "R") {
    return PlanValidCount(Shape(slice, time, packet), axis);
  }
  // The truth from the mapping: in Packet Reduce mode the live lanes of the flit (they must form a
  // prefix); otherwise 8 when lane 0 holds data, else 0.
  static int Truth(const ValidCountConfig& config, int64_t s, int64_t t) {
    const StreamShape& in = config.in;
    const Mapping full = Pair({in.slice, in.time, in.packet});
    const int64_t base = (s * in.time.size() + t) * kVeLanes;
    if (config.mode != VcgMode::kPacketReduce) return full.map(base).live() ? kVeLanes : 0;
    int live = 0;
    while (live < kVeLanes && full.map(base + live).live()) ++live;
    for (int p = live; p < kVeLanes; ++p) EXPECT_FALSE(full.map(base + p).live()) << "not a prefix at " << s << "," << t;
    return live;
  }
  // Flits whose Slice or Time position is padding by itself hold nothing (a digit with a single
  // live value carries no axis); the reduce never reads them, so their count is not compared.
  static void ExpectMatchesTruth(const ValidCountConfig& config) {
    for (int64_t s = 0; s < config.in.slice.size(); ++s) {
      if (!config.in.slice.map(s).live()) continue;
      for (int64_t t = 0; t < config.in.time.size(); ++t) {
        if (!config.in.time.map(t).live()) continue;
        ASSERT_EQ(ValidCount(config, s, t), Truth(config, s, t)) << "slice " << s << " t " << t << "\n"
                                                                  << config.Describe();
      }
    }
  }
  std::unique_ptr<MappingScope> scope_;
};

// Quick Reference, "Slice + Time": Slice = [X, R # 24 / 3], Time = [R # 24 % 3], R = 17, and its
// "Valid count trace for R = 17": R-slices 0-4 all valid, 5 boundary (2 of 3), 6-7 invalid.
TEST_F(ValidCountTest, SliceTimeTraceForR17) {
  Use("A = 4, R = 17, X = 32");
  absl::StatusOr<ValidCountConfig> config = Plan("X, R # 24 / 3", "R # 24 % 3", "A # 8");
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->mode, VcgMode::kTimeReduce);
  EXPECT_EQ(config->placement, VcgPlacement::kSliceTime);
  EXPECT_EQ(config->padded_size, 24);
  EXPECT_EQ(config->gates[0].mask, 0x07u);
  EXPECT_EQ(config->gates[0].match, 5u);  // floor(17 / 3)
  EXPECT_EQ(config->gates[0].valid, 2);   // 17 mod 3
  EXPECT_FALSE(config->gates[0].transposed);
  const int expected[8][3] = {{8, 8, 8}, {8, 8, 8}, {8, 8, 8}, {8, 8, 8}, {8, 8, 8}, {8, 8, 0}, {0, 0, 0}, {0, 0, 0}};
  for (int x : {0, 13, 31}) {  // the pattern repeats for every X group
    for (int r = 0; r < 8; ++r) {
      for (int t = 0; t < 3; ++t) EXPECT_EQ(ValidCount(*config, x * 8 + r, t), expected[r][t]) << x << " " << r << " " << t;
    }
  }
  ExpectMatchesTruth(*config);
  EXPECT_THAT(config->Describe(), HasSubstr("Time Reduce (Slice + Time), R = 17 padded to 24"));
  EXPECT_THAT(config->Describe(), HasSubstr("gate 0: mask 0x07, match 5, V 2, standard"));
}

// "Slice + Time (R Split Into Multiple Sub-Expressions in Slice)": R = 13,
// Slice = [R # 16 / 8, X, R # 16 / 2 % 4]: S0-S5 valid, S6 boundary (1 of 2), S7 invalid.
TEST_F(ValidCountTest, SliceTimeWithTwoSliceParts) {
  Use("R = 13, X = 32");
  absl::StatusOr<ValidCountConfig> config = Plan("R # 16 / 8, X, R # 16 / 2 % 4", "R # 16 % 2", "1 # 8");
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->gates[0].valid, 1);
  for (int r = 0; r < 8; ++r) {
    const int64_t slice = (r / 4) * 128 + 5 * 4 + r % 4;  // X = 5
    EXPECT_EQ(ValidCount(*config, slice, 0), r < 7 ? 8 : 0) << r;
    EXPECT_EQ(ValidCount(*config, slice, 1), r < 6 ? 8 : 0) << r;
  }
  ExpectMatchesTruth(*config);
}

// "Slice + Time (Transposed, Supported)": R = 5, Slice = [X, R # 8 % 4], Time = [R # 8 / 4]:
// boundary 5 mod 4 = 1, V = floor(5 / 4) = 1, slices above the boundary keep 1 of 2 steps.
TEST_F(ValidCountTest, SliceTimeTransposedSupported) {
  Use("R = 5, X = 64");
  absl::StatusOr<ValidCountConfig> config = Plan("X, R # 8 % 4", "R # 8 / 4", "1 # 8");
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->placement, VcgPlacement::kSliceTimeTransposed);
  EXPECT_TRUE(config->gates[0].transposed);
  EXPECT_EQ(config->gates[0].match, 1u);
  EXPECT_EQ(config->gates[0].valid, 1);
  EXPECT_EQ(ValidCount(*config, 0, 1), 8);
  for (int r = 1; r < 4; ++r) {
    EXPECT_EQ(ValidCount(*config, r, 0), 8);
    EXPECT_EQ(ValidCount(*config, r, 1), 0);
  }
  ExpectMatchesTruth(*config);
}

// "Slice + Time (Transposed, Not Supported)": R = 14 padded to 20: time_size 5 != ceil(14 / 4).
TEST_F(ValidCountTest, SliceTimeTransposedOverAllocatedIsRejected) {
  Use("R = 14, X = 64");
  absl::StatusOr<ValidCountConfig> config = Plan("X, R # 20 % 4", "R # 20 / 4", "1 # 8");
  ASSERT_FALSE(config.ok());
  EXPECT_THAT(config.status().message(), HasSubstr("Valid Count Generator: Slice + Time (transposed)"));
  EXPECT_THAT(config.status().message(), HasSubstr("ceil(14 / 4) = 4"));
  EXPECT_THAT(config.status().message(), HasSubstr("pad R to 16"));
  // The manual's fix: pad to 16.
  absl::StatusOr<ValidCountConfig> fixed = Plan("X, R # 16 % 4", "R # 16 / 4", "1 # 8");
  ASSERT_TRUE(fixed.ok()) << fixed.status();
  ExpectMatchesTruth(*fixed);
}

// "Time Only": R = 12 in Time = [R # 16]: steps 0-11 valid, 12-15 invalid, in every slice.
TEST_F(ValidCountTest, TimeOnly) {
  Use("A = 8, R = 12, X = 64");
  absl::StatusOr<ValidCountConfig> config = Plan("X, A / 2", "R # 16", "A % 2 # 8");
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->placement, VcgPlacement::kTime);
  EXPECT_EQ(config->gates[0].mask, 0u);
  EXPECT_EQ(config->gates[0].match, 0u);
  EXPECT_EQ(config->gates[0].valid, 12);
  for (int64_t s : {0, 77, 255}) {
    for (int t = 0; t < 16; ++t) EXPECT_EQ(ValidCount(*config, s, t), t < 12 ? 8 : 0);
  }
  ExpectMatchesTruth(*config);
}

// "Non-Outer/Inner Ordering (Not Supported)": Slice = [X, R # 16 / 2 % 4, R # 16 / 8].
TEST_F(ValidCountTest, NonOuterInnerOrderingIsRejected) {
  Use("R = 13, X = 32");
  absl::StatusOr<ValidCountConfig> config = Plan("X, R # 16 / 2 % 4, R # 16 / 8", "R # 16 % 2", "1 # 8");
  ASSERT_FALSE(config.ok());
  EXPECT_THAT(config.status().message(), HasSubstr("Non-outer/inner ordering"));
  EXPECT_THAT(config.status().message(), HasSubstr("[X, R # 16 / 2 % 4, R # 16 / 8]"));
}

// The Time-Slice-Time interleave (Slice = [X, R # 16 / 2 % 4], Time = [R # 16 / 8, R # 16 % 2]).
TEST_F(ValidCountTest, TimeSliceTimeInterleaveIsRejected) {
  Use("R = 13, X = 64");
  absl::StatusOr<ValidCountConfig> config = Plan("X, R # 16 / 2 % 4", "R # 16 / 8, R # 16 % 2", "1 # 8");
  ASSERT_FALSE(config.ok());
  EXPECT_THAT(config.status().message(), HasSubstr("Time-Slice-Time interleave"));
  // The manual's fix: Slice outer, Time inner.
  absl::StatusOr<ValidCountConfig> fixed = Plan("X, R # 16 / 4", "R # 16 % 4", "1 # 8");
  ASSERT_TRUE(fixed.ok()) << fixed.status();
  ExpectMatchesTruth(*fixed);
}

// "Time: Flexible Ordering": R's Time parts in any order with X between them (R # 48: Time holds
// R # 48 / 8 split in two, Packet R # 48 % 8).
TEST_F(ValidCountTest, TimePartsInAnyOrder) {
  Use("A = 4, R = 45, X = 2, Y = 256");
  absl::StatusOr<ValidCountConfig> config = Plan("Y", "R # 48 / 8 % 2, X, R # 48 / 8 / 2", "R # 48 % 8");
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->placement, VcgPlacement::kTimePacket);
  ASSERT_EQ(config->counters.size(), 3u);
  EXPECT_EQ(config->counters[0].stride, 16);  // R # 48 / 8 / 2, innermost in Time
  EXPECT_EQ(config->counters[1].dim, VcgDim::kUnassigned);
  EXPECT_EQ(config->counters[2].stride, 8);
  ExpectMatchesTruth(*config);
}

// "Packet Only": R = 3 in Packet = [R # 8]: every packet has vc = 3.
TEST_F(ValidCountTest, PacketOnly) {
  Use("A = 8, R = 3, X = 64");
  absl::StatusOr<ValidCountConfig> config = Plan("X, A / 2", "1", "R # 8");
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->mode, VcgMode::kPacketReduce);
  EXPECT_EQ(config->placement, VcgPlacement::kPacket);
  EXPECT_EQ(ValidCount(*config, 0, 0), 3);
  EXPECT_EQ(ValidCount(*config, 200, 0), 3);
  ExpectMatchesTruth(*config);
}

// "Time + Packet": R = 19 padded to 24: [8, 8, 3] in every slice (also the Implementation page's
// "Example 1: V_p = 19, stride_p = 8").
TEST_F(ValidCountTest, TimePacket) {
  Use("A = 8, R = 19, X = 64");
  absl::StatusOr<ValidCountConfig> config = Plan("X, A / 2", "R # 24 / 8", "R # 24 % 8");
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->packet.valid, 19);
  EXPECT_EQ(config->packet.stride_p, 8);
  ASSERT_EQ(config->counters.size(), 1u);
  EXPECT_EQ(config->counters[0].limit, 3);
  EXPECT_EQ(config->counters[0].stride, 8);
  for (int64_t s : {0, 9, 255}) {
    EXPECT_EQ(ValidCount(*config, s, 0), 8);
    EXPECT_EQ(ValidCount(*config, s, 1), 8);
    EXPECT_EQ(ValidCount(*config, s, 2), 3);
  }
  ExpectMatchesTruth(*config);
  EXPECT_THAT(config->Describe(), HasSubstr("packet dim: V_p 19, stride_p 8"));
}

// "Time + Packet (R fills fewer than 8 positions)": R = 7, Packet = [R # 8 % 4 # 8]: [4, 3].
TEST_F(ValidCountTest, TimePacketFewerThanEightLanes) {
  Use("A = 8, R = 7, X = 64");
  absl::StatusOr<ValidCountConfig> config = Plan("X, A / 2", "R # 8 / 4", "R # 8 % 4 # 8");
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->packet.stride_p, 4);
  EXPECT_EQ(ValidCount(*config, 3, 0), 4);
  EXPECT_EQ(ValidCount(*config, 3, 1), 3);
  ExpectMatchesTruth(*config);
}

// Implementation page, "Example 2: V_p = 11, stride_p = 4": [4, 4, 3].
TEST_F(ValidCountTest, PacketDimExampleTwo) {
  Use("W = 11");
  absl::StatusOr<ValidCountConfig> config = Plan("1", "W # 12 / 4", "W # 12 % 4 # 8", "W");
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(ValidCount(*config, 0, 0), 4);
  EXPECT_EQ(ValidCount(*config, 0, 1), 4);
  EXPECT_EQ(ValidCount(*config, 0, 2), 3);
  ExpectMatchesTruth(*config);
}

// Implementation page, "Packet + Time", n = 50: counters (limit 3, stride 8) and (limit 3,
// stride 24) on the packet dim; the last row is 2, 0, 0. The two Time parts are contiguous
// (24 = 8 x 3), so they read as one counter (limit 9, stride 8) with the same index.
TEST_F(ValidCountTest, PacketTimeTwoCountersN50) {
  Use("N = 50");
  absl::StatusOr<ValidCountConfig> config = Plan("1", "N # 72 / 24, N # 72 / 8 % 3", "N # 72 % 8", "N");
  ASSERT_TRUE(config.ok()) << config.status();
  ASSERT_EQ(config->counters.size(), 1u);
  EXPECT_EQ(config->counters[0].limit, 9);
  EXPECT_EQ(config->counters[0].stride, 8);
  const int expected[9] = {8, 8, 8, 8, 8, 8, 2, 0, 0};
  for (int t = 0; t < 9; ++t) EXPECT_EQ(ValidCount(*config, 0, t), expected[t]) << t;
  ExpectMatchesTruth(*config);
}

// "Time + Packet (Packet Not Innermost, Not Supported)".
TEST_F(ValidCountTest, PacketNotInnermostIsRejected) {
  Use("A = 8, R = 19, X = 64");
  absl::StatusOr<ValidCountConfig> config = Plan("X, A / 2", "R # 24 % 8", "R # 24 / 8 # 8");
  ASSERT_FALSE(config.ok());
  EXPECT_THAT(config.status().message(), HasSubstr("Packet not innermost"));
  EXPECT_THAT(config.status().message(), HasSubstr("[R # 24 / 8 # 8]"));
}

// "Time + Packet (Mixed Packet Axes, Not Supported)": R in lanes 0-3, A in lanes 4-7.
TEST_F(ValidCountTest, MixedPacketAxesAreRejected) {
  Use("A = 2, R = 19, X = 256");
  absl::StatusOr<ValidCountConfig> config = Plan("X", "R # 24 / 4", "A, R # 24 % 4");
  ASSERT_FALSE(config.ok());
  EXPECT_THAT(config.status().message(), HasSubstr("mixed Packet axes"));
}

// "Time + Packet: Perfectly Aligned": R = 24 = 3 x 8, no padding, no VCG.
TEST_F(ValidCountTest, PerfectlyAlignedNeedsNoVcg) {
  Use("A = 8, R = 24, X = 64");
  absl::StatusOr<ValidCountConfig> config = Plan("X, A / 2", "R / 8", "R % 8");
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->mode, VcgMode::kUnneeded);
  for (int t = 0; t < 3; ++t) EXPECT_EQ(ValidCount(*config, 17, t), 8);
  EXPECT_THAT(config->Describe(), HasSubstr("every flit full"));
}

// "Slice + Packet (Not Supported)": R = 2045 over 256 slices x 8 lanes; the fix without padding
// (R = 2048) needs no VCG.
TEST_F(ValidCountTest, SlicePacketIsRejected) {
  Use("R = 2045, S = 2048");
  absl::StatusOr<ValidCountConfig> config = Plan("R # 2048 / 8", "1", "R # 2048 % 8");
  ASSERT_FALSE(config.ok());
  EXPECT_THAT(config.status().message(), HasSubstr("Slice + Packet"));
  absl::StatusOr<ValidCountConfig> aligned = Plan("S / 8", "1", "S % 8", "S");
  ASSERT_TRUE(aligned.ok()) << aligned.status();
  EXPECT_EQ(aligned->mode, VcgMode::kUnneeded);
}

// The Intra-Slice Reduce page's "Reduce Axis Spanning Slice, Time, and Packet" (R = 13 over all
// three) needs slice-dependent partial counts: the Implementation page's summary table says
// Slice + Time + Packet is not expressible, so the VCG refuses it (use identity padding).
TEST_F(ValidCountTest, SliceTimePacketIsRejected) {
  Use("R = 13");
  absl::StatusOr<ValidCountConfig> config = Plan("R # 32 / 8", "R # 32 / 4 % 2", "R # 32 % 4 # 8");
  ASSERT_FALSE(config.ok());
  EXPECT_THAT(config.status().message(), HasSubstr("Slice + Packet"));
}

// Implementation page, standard mode: H = 5 as Ho (slice) x Hi (time) = 4 x 2 with slice id
// Ho * 4 + Co: the H gate is mask 0b1100, match 0b1000, V 1; the C gate mask 0b0011, match 2.
TEST_F(ValidCountTest, GateConfigurationsOfTheHcwExample) {
  Use("H = 5, C = 5, W = 19");
  absl::StatusOr<ValidCountConfig> h = Plan("H # 8 / 2, C # 8 / 2", "H # 8 % 2, C # 8 % 2", "1 # 8", "H");
  ASSERT_TRUE(h.ok()) << h.status();
  EXPECT_EQ(h->gates[0].mask, 0b1100u);
  EXPECT_EQ(h->gates[0].match, 0b1000u);
  EXPECT_EQ(h->gates[0].valid, 1);
  absl::StatusOr<ValidCountConfig> c = Plan("H # 8 / 2, C # 8 / 2", "H # 8 % 2, C # 8 % 2", "1 # 8", "C");
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->gates[0].mask, 0b0011u);
  EXPECT_EQ(c->gates[0].match, 2u);
  EXPECT_EQ(c->gates[0].valid, 1);
  // Co = 2 (boundary): valid for Ci = 0 only; Co = 3: closed (the heatmap's columns).
  EXPECT_EQ(ValidCount(*c, 2, 0), 8);
  EXPECT_EQ(ValidCount(*c, 2, 1), 0);
  EXPECT_EQ(ValidCount(*c, 3, 0), 0);
}

// Implementation page: H = 14 as 8 (slice) x 3 (time), standard: match 4, V 2; H = 19 as 8
// (slice, inner) x 3 (time, outer), transposed: match 3, V 2.
TEST_F(ValidCountTest, StandardAndTransposedWorkedExamples) {
  Use("H = 14, G = 19");
  absl::StatusOr<ValidCountConfig> standard = Plan("H # 24 / 3", "H # 24 % 3", "1 # 8", "H");
  ASSERT_TRUE(standard.ok()) << standard.status();
  EXPECT_EQ(standard->gates[0].match, 4u);
  EXPECT_EQ(standard->gates[0].valid, 2);
  ExpectMatchesTruth(*standard);
  absl::StatusOr<ValidCountConfig> transposed = Plan("G # 24 % 8", "G # 24 / 8", "1 # 8", "G");
  ASSERT_TRUE(transposed.ok()) << transposed.status();
  EXPECT_TRUE(transposed->gates[0].transposed);
  EXPECT_EQ(transposed->gates[0].match, 3u);
  EXPECT_EQ(transposed->gates[0].valid, 2);
  ExpectMatchesTruth(*transposed);
}

TEST_F(ValidCountTest, SliceOnly) {
  Use("R = 13, X = 16");
  absl::StatusOr<ValidCountConfig> config = Plan("X, R # 16", "1", "1 # 8");
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->placement, VcgPlacement::kSlice);
  ExpectMatchesTruth(*config);
}

TEST_F(ValidCountTest, PlacementErrors) {
  Use("R = 13, A = 8");
  EXPECT_THAT(Plan("1", "R # 16", "A % 4").status().message(), HasSubstr("tags 8-way flits"));
  EXPECT_THAT(Plan("1", "A", "A # 8").status().message(), HasSubstr("appears in none of"));
  Use("R = 16");
  EXPECT_THAT(Plan("1", "R / 4, R % 4 # 8", "1 # 8").status().message(),
              HasSubstr("only the outermost part of R may be padded"));
  EXPECT_THAT(Plan("1", "R / 8, R % 4", "1 # 8").status().message(), HasSubstr("contiguous"));
  EXPECT_THAT(PlanValidCount(StreamShape{DType::kI32, m("1"), m("R # 16"), m("1"), m("1"), m("1 # 8"), std::nullopt}, "R")
                  .status()
                  .message(),
              HasSubstr("not in Chip"));
}

// A sweep over axis sizes: every supported placement the rules accept agrees with the mapping's
// own padding at every (slice, time) (standard and transposed Slice + Time, Time + Packet with 4
// and 8 lanes, Time only), and the transposed form is refused exactly when over-allocated.
TEST_F(ValidCountTest, SweepAgreesWithTheMapping) {
  for (int n = 2; n <= 40; ++n) {  // (R = 1 padded is no axis at all: its digit has one live value)
    SCOPED_TRACE(n);
    Use("R = " + std::to_string(n) + ", X = 4");
    const int slice_part = 8;
    const int time_part = (n + slice_part - 1) / slice_part;
    const std::string p = std::to_string(slice_part * time_part);
    auto standard = Plan("X, R # " + p + " / " + std::to_string(time_part), "R # " + p + " % " + std::to_string(time_part), "1 # 8");
    ASSERT_TRUE(standard.ok()) << standard.status();
    ExpectMatchesTruth(*standard);
    auto transposed = Plan("X, R # " + p + " % 8", "R # " + p + " / 8", "1 # 8");
    ASSERT_TRUE(transposed.ok()) << transposed.status();
    ExpectMatchesTruth(*transposed);
    const std::string over = std::to_string(slice_part * (time_part + 1));
    if (n > slice_part) {  // (otherwise the over-allocated Time part is pure padding, no part of R)
      EXPECT_FALSE(Plan("X, R # " + over + " % 8", "R # " + over + " / 8", "1 # 8").ok());
    }
    auto over_standard = Plan("X, R # " + over + " / " + std::to_string(time_part + 1),
                              "R # " + over + " % " + std::to_string(time_part + 1), "1 # 8");
    ASSERT_TRUE(over_standard.ok()) << over_standard.status();  // standard mode tolerates over-allocation
    ExpectMatchesTruth(*over_standard);
    for (int lanes : {4, 8}) {
      const std::string q = std::to_string(lanes * ((n + lanes - 1) / lanes));
      auto packet = Plan("X", "R # " + q + " / " + std::to_string(lanes),
                         lanes == 8 ? "R # " + q + " % 8" : "R # " + q + " % 4 # 8");
      ASSERT_TRUE(packet.ok()) << packet.status();
      ExpectMatchesTruth(*packet);
    }
    auto time_only = Plan("X", "R # 64", "1 # 8");
    ASSERT_TRUE(time_only.ok()) << time_only.status();
    ExpectMatchesTruth(*time_only);
  }
}

// The sequencer has 8 counters: R in five Time parts separated by four other axes needs 9.
TEST_F(ValidCountTest, AtMostEightCounters) {
  Use("R = 31, A = 2, B = 2, C = 2, D = 2");
  absl::StatusOr<ValidCountConfig> nine =
      Plan("1", "R # 32 / 16, A, R # 32 / 8 % 2, B, R # 32 / 4 % 2, C, R # 32 / 2 % 2, D, R # 32 % 2", "1 # 8");
  ASSERT_FALSE(nine.ok());
  EXPECT_THAT(nine.status().message(), HasSubstr("sequencer: at most 8 counters"));
  EXPECT_THAT(nine.status().message(), HasSubstr("needs 9"));
  absl::StatusOr<ValidCountConfig> seven =
      Plan("1", "R # 32 / 8, A, R # 32 / 4 % 2, B, C, R # 32 / 2 % 2, D, R # 32 % 2", "1 # 8");
  ASSERT_TRUE(seven.ok()) << seven.status();
  EXPECT_EQ(seven->counters.size(), 7u);
  ExpectMatchesTruth(*seven);
}

// "Downstream: 4-Way Operations": split gives min(v, 4) and max(v - 4, 0), trim min(v, 4).
TEST_F(ValidCountTest, Way4Halving) {
  for (int v = 0; v <= 8; ++v) {
    EXPECT_EQ(HalfValidCount(v, Narrowing::kSplit, 0), std::min(v, 4));
    EXPECT_EQ(HalfValidCount(v, Narrowing::kSplit, 1), std::max(v - 4, 0));
    EXPECT_EQ(HalfValidCount(v, Narrowing::kSplit, 0) + HalfValidCount(v, Narrowing::kSplit, 1), v);  // concat
    EXPECT_EQ(HalfValidCount(v, Narrowing::kTrim, 0), std::min(v, 4));
  }
  Use("R = 19, Q = 7");
  absl::StatusOr<ValidCountConfig> wide = Plan("1", "R # 24 / 8", "R # 24 % 8");
  ASSERT_TRUE(wide.ok());
  EXPECT_THAT(CheckTrim(*wide).message(), HasSubstr("trim_way4 keeps lanes 0..3"));
  EXPECT_EQ(Way4ValidCounts(*wide, 0, Narrowing::kSplit), (std::vector<int>{4, 4, 4, 4, 3, 0}));
  absl::StatusOr<ValidCountConfig> narrow = Plan("1", "Q # 8 / 4", "Q # 8 % 4 # 8", "Q");
  ASSERT_TRUE(narrow.ok());
  EXPECT_TRUE(CheckTrim(*narrow).ok());
  EXPECT_EQ(Way4ValidCounts(*narrow, 0, Narrowing::kTrim), (std::vector<int>{4, 3}));
}

}  // namespace
}  // namespace visa
