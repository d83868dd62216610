// Tests of the Cast Engine's rules: the manual's "Cast Engine" examples, the notes' vector #63,
// every supported and unsupported type pair, and a negative test per rule.
//
// Sources: the manual's "Cast Engine" page (Precision Lowering table, Packet Transformation,
// "Single-flit packet" and "Padded input packet" examples), notes/engine-semantics.md 3.7 and 2.3,
// notes/mapping-algebra.md 4.6 and test vector #63.
#include "dsl/cast_engine.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <tuple>

#include "absl/status/statusor.h"
#include "dsl/axes.h"
#include "dsl/equivalence.h"
#include "dsl/mapping.h"
#include "dsl/mapping_parser.h"
#include "dsl/stream.h"
#include "runtime/scalar_convert.h"

namespace visa {
namespace {

using ::testing::HasSubstr;

// A stream as the manual's signatures write it: CollectTensor<D, [1], [1], [1], Time, Packet>.
StreamShape Stream(const MappingScope& s, DType dtype, const std::string& time,
                   const std::string& packet) {
  StreamShape shape;
  shape.dtype = dtype;
  shape.chip = s.m("1");
  shape.cluster = s.m("1");
  shape.slice = s.m("1");
  shape.time = s.m(time);
  shape.packet = s.m(packet);
  return shape;
}

MappingScope Scope(const std::string& axes) { return MappingScope(Axes::Parse(axes).value()); }

bool Same(const Mapping& a, const Mapping& b) { return Equivalent(a, b).value_or(false); }

// ---- The manual's examples ----------------------------------------------------------------------

// "Single-flit packet": i32 Time [B], Packet [A] (8 x 4 B) -> i8 Packet [A # 32], Time unchanged.
TEST(CastEngineManual, SingleFlitPacket) {
  MappingScope s = Scope("B=4,A=8");
  StreamShape in = Stream(s, DType::kI32, "B", "A");
  absl::StatusOr<CastStage> stage = PlanCast(in, DType::kI8, s.m("A # 32"));
  ASSERT_TRUE(stage.ok()) << stage.status();
  EXPECT_EQ(stage->from, DType::kI32);
  EXPECT_EQ(stage->to, DType::kI8);
  EXPECT_EQ(stage->out.dtype, DType::kI8);
  EXPECT_TRUE(Same(stage->out.time, s.m("B")));
  EXPECT_TRUE(Same(stage->out.packet, s.m("A # 32")));
  EXPECT_EQ(stage->out.packet.size(), 32);
  EXPECT_EQ(stage->cycles, 4);  // one flit per time step
}

// "Padded input packet": i32 [A # 8] (4 live elements, one flit) -> i8 [A # 32].
TEST(CastEngineManual, PaddedInputPacket) {
  MappingScope s = Scope("A=4");
  StreamShape in = Stream(s, DType::kI32, "1", "A # 8");
  absl::StatusOr<CastStage> stage = PlanCast(in, DType::kI8, s.m("A # 32"));
  ASSERT_TRUE(stage.ok()) << stage.status();
  EXPECT_TRUE(Same(stage->out.packet, s.m("A # 32")));
  EXPECT_TRUE(Same(stage->out.time, s.m("1")));
  EXPECT_EQ(stage->cycles, 1);
}

// The Packet Transformation rule's general form: [P # (32 / sizeof(D1))] -> [P # (32 /
// sizeof(D2))].
TEST(CastEngineManual, PacketTransformationGeneralForm) {
  MappingScope s = Scope("T=16,P=3");
  absl::StatusOr<CastStage> stage =
      PlanCast(Stream(s, DType::kF32, "T", "P # 8"), DType::kBF16, s.m("P # 16"));
  ASSERT_TRUE(stage.ok()) << stage.status();
  EXPECT_TRUE(Same(stage->out.time, s.m("T")));
  EXPECT_EQ(stage->cycles, 16);
}

// ---- The notes' vector #63 ---------------------------------------------------------------------

TEST(CastEngineNotes, Vector63Accepted) {
  MappingScope eight = Scope("A=8");
  EXPECT_TRUE(PlanCast(Stream(eight, DType::kI32, "1", "A"), DType::kI8, eight.m("A # 32")).ok());
  MappingScope four = Scope("A=4");
  EXPECT_TRUE(PlanCast(Stream(four, DType::kI32, "1", "A # 8"), DType::kI8, four.m("A # 32")).ok());
}

TEST(CastEngineNotes, Vector63InputNotOneFlit) {
  MappingScope s = Scope("A=4");
  absl::StatusOr<CastStage> stage =
      PlanCast(Stream(s, DType::kI32, "1", "A"), DType::kI8, s.m("A # 32"));
  ASSERT_FALSE(stage.ok());
  EXPECT_EQ(stage.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(
      stage.status().message(),
      HasSubstr("Cast input packet must be exactly 32 bytes (one flit): 4 elements = 16 bytes"));
}

// ---- Every supported pair (manual, "Precision Lowering") ---------------------------------------

class CastEnginePairs : public ::testing::TestWithParam<std::tuple<DType, DType, std::string>> {};

TEST_P(CastEnginePairs, AcceptedWithOutputPaddedToOneFlit) {
  auto [from, to, out_packet] = GetParam();
  MappingScope s = Scope("T=2,A=8");
  absl::StatusOr<CastStage> stage = PlanCast(Stream(s, from, "T", "A"), to, s.m(out_packet));
  ASSERT_TRUE(stage.ok()) << stage.status();
  EXPECT_EQ(stage->out.dtype, to);
  EXPECT_EQ(stage->out.packet_bits(), 256);
  EXPECT_EQ(stage->cycles, 2);
}

INSTANTIATE_TEST_SUITE_P(PrecisionLowering, CastEnginePairs,
                         ::testing::Values(std::make_tuple(DType::kI32, DType::kI4, "A # 64"),
                                           std::make_tuple(DType::kI32, DType::kI8, "A # 32"),
                                           std::make_tuple(DType::kI32, DType::kI16, "A # 16"),
                                           std::make_tuple(DType::kF32, DType::kF8E5M2, "A # 32"),
                                           std::make_tuple(DType::kF32, DType::kF8E4M3, "A # 32"),
                                           std::make_tuple(DType::kF32, DType::kF16, "A # 16"),
                                           std::make_tuple(DType::kF32, DType::kBF16, "A # 16")));

// ---- Rule: only the listed type pairs (no identity, no widening, no int <-> float) --------------

class CastEngineRefusedPairs : public ::testing::TestWithParam<std::tuple<DType, DType>> {};

TEST_P(CastEngineRefusedPairs, NamesThePrecisionLoweringRule) {
  auto [from, to] = GetParam();
  MappingScope s = Scope("A=64");
  // An input packet of exactly one flit of `from`, so only the type rule can fail.
  int64_t elements = 256 / Bits(from);
  Mapping packet = s.m("A").resize(elements);
  StreamShape in = Stream(s, from, "1", "1");
  in.packet = packet;
  absl::StatusOr<CastStage> stage =
      PlanCast(in, to, packet.pad(std::max<int64_t>(elements, 256 / Bits(to))));
  ASSERT_FALSE(stage.ok());
  EXPECT_EQ(stage.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(stage.status().message(), HasSubstr("Cast Engine cannot convert"));
  EXPECT_THAT(stage.status().message(), HasSubstr("Precision Lowering"));
}

INSTANTIATE_TEST_SUITE_P(
    PrecisionLowering, CastEngineRefusedPairs,
    ::testing::Values(std::make_tuple(DType::kI32, DType::kI32),  // no identity
                      std::make_tuple(DType::kF32, DType::kF32),
                      std::make_tuple(DType::kI8, DType::kI4),  // input must be i32 / f32
                      std::make_tuple(DType::kBF16, DType::kF8E4M3),
                      std::make_tuple(DType::kI16, DType::kI32),   // no widening
                      std::make_tuple(DType::kI32, DType::kBF16),  // no int -> float
                      std::make_tuple(DType::kF32, DType::kI8)));  // no float -> int

// The engine accepts exactly the pairs the conversion table gives the Cast Engine stage, so the
// interpreter can always convert what the planner let through.
TEST(CastEngineRules, AcceptsExactlyTheCastEngineConversions) {
  MappingScope s = Scope("A=64");
  for (DType from : kAllDTypes) {
    for (DType to : kAllDTypes) {
      int64_t elements = 256 / Bits(from);
      StreamShape in = Stream(s, from, "1", "1");
      in.packet = s.m("A").resize(elements);
      int64_t out_elements = std::max<int64_t>(elements, 256 / Bits(to));
      bool allowed = CheckConversion(ConversionStage::kCastEngine, from, to).ok();
      EXPECT_EQ(PlanCast(in, to, in.packet.pad(out_elements)).ok(), allowed)
          << Name(from) << " -> " << Name(to);
    }
  }
}

// ---- Rule: the input packet is exactly one flit ------------------------------------------------

TEST(CastEngineRules, InputPacketLargerThanOneFlit) {
  MappingScope s = Scope("A=16");
  absl::StatusOr<CastStage> stage =
      PlanCast(Stream(s, DType::kF32, "1", "A"), DType::kBF16, s.m("A"));
  ASSERT_FALSE(stage.ok());
  EXPECT_THAT(
      stage.status().message(),
      HasSubstr("Cast input packet must be exactly 32 bytes (one flit): 16 elements = 64 bytes"));
}

// ---- Rule: the output packet is exactly one flit -----------------------------------------------

TEST(CastEngineRules, OutputPacketNotOneFlit) {
  MappingScope s = Scope("A=8");
  absl::StatusOr<CastStage> stage =
      PlanCast(Stream(s, DType::kI32, "1", "A"), DType::kI8, s.m("A"));
  ASSERT_FALSE(stage.ok());
  EXPECT_THAT(
      stage.status().message(),
      HasSubstr("Cast output packet must be exactly 32 bytes (one flit): 8 elements = 8 bytes"));
  EXPECT_THAT(stage.status().message(), HasSubstr("expected [A # 32]"));
}

TEST(CastEngineRules, OutputPacketSizedForTheWrongType) {
  // 32 elements is one flit of i8 but only 16 bytes of i4.
  MappingScope s = Scope("A=8");
  absl::StatusOr<CastStage> stage =
      PlanCast(Stream(s, DType::kI32, "1", "A"), DType::kI4, s.m("A # 32"));
  ASSERT_FALSE(stage.ok());
  EXPECT_THAT(
      stage.status().message(),
      HasSubstr("Cast output packet must be exactly 32 bytes (one flit): 32 elements = 16 bytes"));
}

// ---- Rule: the output packet is the input packet padded to one flit ----------------------------

TEST(CastEngineRules, OutputPacketHoldsAnotherAxis) {
  MappingScope s = Scope("A=8,B=8");
  absl::StatusOr<CastStage> stage =
      PlanCast(Stream(s, DType::kI32, "B", "A"), DType::kI8, s.m("B # 32"));
  ASSERT_FALSE(stage.ok());
  EXPECT_THAT(stage.status().message(),
              HasSubstr("Cast packet mismatch. Expected: [A # 32], got: [B # 32]"));
  EXPECT_THAT(stage.status().message(), HasSubstr("Packet Transformation"));
}

TEST(CastEngineRules, OutputPacketReordered) {
  // The engine converts in place: it cannot reorder the packet.
  MappingScope s = Scope("A=8");
  absl::StatusOr<CastStage> stage =
      PlanCast(Stream(s, DType::kI32, "1", "A"), DType::kI8, s.m("[A % 4, A / 4] # 32"));
  ASSERT_FALSE(stage.ok());
  EXPECT_THAT(stage.status().message(), HasSubstr("Cast packet mismatch"));
}

TEST(CastEngineRules, OutputPaddingInFrontOfTheData) {
  MappingScope s = Scope("A=8");
  absl::StatusOr<CastStage> stage =
      PlanCast(Stream(s, DType::kI32, "1", "A"), DType::kI8, s.m("[A, 1 # 4]"));
  ASSERT_FALSE(stage.ok());
  EXPECT_THAT(stage.status().message(), HasSubstr("Cast packet mismatch"));
}

TEST(CastEngineRules, OutputPaddingOfAnotherKind) {
  // The engine pads with arbitrary values (Top); it does not promise zeros.
  MappingScope s = Scope("A=8");
  absl::StatusOr<CastStage> stage =
      PlanCast(Stream(s, DType::kI32, "1", "A"), DType::kI8, s.m("A #{0} 32"));
  ASSERT_FALSE(stage.ok());
  EXPECT_THAT(stage.status().message(), HasSubstr("Cast packet mismatch"));
}

TEST(CastEngineRules, OutputPacketDroppingLiveElements) {
  MappingScope s = Scope("A=8");
  absl::StatusOr<CastStage> stage =
      PlanCast(Stream(s, DType::kI32, "1", "A"), DType::kI8, s.m("A = 4 # 32"));
  ASSERT_FALSE(stage.ok());
  EXPECT_THAT(stage.status().message(), HasSubstr("Cast packet mismatch"));
}

// ---- Packets are compared by meaning, never by text --------------------------------------------

TEST(CastEngineMeaning, EquivalentSpellingsAccepted) {
  MappingScope s = Scope("A=8,B=2");
  StreamShape in = Stream(s, DType::kI32, "B", "A");
  for (const char* text :
       {"A # 32", "[1 # 4, A]", "[A / 4, A % 4] # 32", "[A # 16] # 32", "A # 8 # 32"}) {
    absl::StatusOr<CastStage> stage = PlanCast(in, DType::kI8, s.m(text));
    EXPECT_TRUE(stage.ok()) << text << ": " << stage.status();
  }
}

TEST(CastEngineMeaning, InputPacketSplitAcrossDigits) {
  MappingScope s = Scope("A=4,B=2");
  absl::StatusOr<CastStage> stage =
      PlanCast(Stream(s, DType::kF32, "1", "[B, A]"), DType::kF8E4M3, s.m("[B, A] # 32"));
  ASSERT_TRUE(stage.ok()) << stage.status();
  stage = PlanCast(Stream(s, DType::kF32, "1", "[B, A]"), DType::kF8E4M3, s.m("[A, B] # 32"));
  EXPECT_FALSE(stage.ok());
}

// ---- Pass-through levels, invalid inputs, description ------------------------------------------

TEST(CastEngineShape, SpatialLevelsAndTimePassThrough) {
  MappingScope s = Scope("S=256,T=4,A=8");
  StreamShape in = Stream(s, DType::kF32, "T", "A");
  in.cluster = s.m("1 # 2");
  in.slice = s.m("S");
  absl::StatusOr<CastStage> stage = PlanCast(in, DType::kBF16, s.m("A # 16"));
  ASSERT_TRUE(stage.ok()) << stage.status();
  EXPECT_EQ(stage->out.chip, in.chip);
  EXPECT_EQ(stage->out.cluster, in.cluster);
  EXPECT_EQ(stage->out.slice, in.slice);
  EXPECT_EQ(stage->out.time, in.time);
  EXPECT_EQ(stage->cycles, 4);
}

TEST(CastEngineShape, InvalidMappingReportsItsOwnError) {
  MappingScope s = Scope("A=8");
  absl::StatusOr<CastStage> stage =
      PlanCast(Stream(s, DType::kI32, "1", "A"), DType::kI8, s.m("Q # 32"));
  ASSERT_FALSE(stage.ok());
  EXPECT_EQ(stage.status(), s.m("Q # 32").status());

  StreamShape broken = Stream(s, DType::kI32, "A / 3", "A");
  EXPECT_FALSE(PlanCast(broken, DType::kI8, s.m("A # 32")).ok());
}

TEST(CastEngineShape, Describe) {
  MappingScope s = Scope("B=4,A=8");
  absl::StatusOr<CastStage> stage =
      PlanCast(Stream(s, DType::kI32, "B", "A"), DType::kI8, s.m("A # 32"));
  ASSERT_TRUE(stage.ok()) << stage.status();
  EXPECT_EQ(stage->Describe(),
            "Cast i32 -> i8: packet [A # 32] (32 x i8), time [B] unchanged, 4 cycles");
}

}  // namespace
}  // namespace visa
