// Tests of the Transpose Engine's rules and derived configuration: the manual's "Transpose Engine"
// examples (with their in_rows / in_cols / out_rows and cycle counts), the notes' vector #71, the
// per-type table, the cycle formula, and a negative test per rule.
//
// Sources: the manual's "Transpose Engine" page (Constraints table, Double Buffering table, Cycle
// Calculation, the four examples), notes/engine-semantics.md 3.8, notes/mapping-algebra.md 4.9 and
// test vector #71.
#include "dsl/transpose_engine.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "absl/status/statusor.h"
#include "dsl/axes.h"
#include "dsl/equivalence.h"
#include "dsl/mapping.h"
#include "dsl/mapping_parser.h"
#include "dsl/stream.h"

namespace visa {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

// A transpose written as the manual's signatures write it:
// CollectTensor<D, [1], [1], Slice, Time, Packet> -> TransposeTensor<..., OutTime, OutPacket>.
struct Case {
  std::string axes;
  DType dtype;
  std::string time, packet, out_time, out_packet;
  std::string slice = "1";
};

absl::StatusOr<TransposeStage> Plan(const Case& c) {
  MappingScope s(Axes::Parse(c.axes).value());
  StreamShape in;
  in.dtype = c.dtype;
  in.chip = s.m("1");
  in.cluster = s.m("1");
  in.slice = s.m(c.slice);
  in.time = s.m(c.time);
  in.packet = s.m(c.packet);
  return PlanTranspose(in, s.m(c.out_time), s.m(c.out_packet));
}

// The derived parameters the manual's examples list.
struct Expected {
  int64_t in_rows, packets_per_col, in_cols, out_rows, output_alignment, iterations;
  bool double_buffered;
  int64_t cycles;
};

void ExpectConfig(const Case& c, const Expected& e) {
  absl::StatusOr<TransposeStage> stage = Plan(c);
  ASSERT_TRUE(stage.ok()) << stage.status();
  EXPECT_EQ(stage->in_rows, e.in_rows);
  EXPECT_EQ(stage->packets_per_col, e.packets_per_col);
  EXPECT_EQ(stage->in_cols, e.in_cols);
  EXPECT_EQ(stage->in_cols, stage->packets_per_col * stage->elements_per_packet);
  EXPECT_EQ(stage->out_rows, e.out_rows);
  EXPECT_EQ(stage->output_alignment, e.output_alignment);
  EXPECT_EQ(stage->iterations, e.iterations);
  EXPECT_EQ(stage->double_buffered, e.double_buffered);
  EXPECT_EQ(stage->cycles, e.cycles);
  EXPECT_EQ(stage->out.dtype, c.dtype);
}

std::string ErrorOf(const Case& c) {
  absl::StatusOr<TransposeStage> stage = Plan(c);
  if (stage.ok()) return "accepted: " + stage->Describe();
  EXPECT_EQ(stage.status().code(), absl::StatusCode::kInvalidArgument);
  return std::string(stage.status().message());
}

// ---- The manual's examples ----------------------------------------------------------------------

// "Basic 8x8 Transpose": in_rows 8 (D), in_cols 8 (E), out_rows 8, n 8 (C), 72 cycles.
TEST(TransposeEngineManual, Basic8x8) {
  ExpectConfig({"P=256,C=8,D=8,E=8", DType::kI8, "C, D", "E # 32", "C, E", "D # 32", "P"},
               {8, 1, 8, 8, 32, 8, true, 72});
}

// "Small Matrix Transpose": in_rows 4 (A), in_cols 8 (B padded), out_rows 2 (6 rows trimmed), 6
// cycles.
TEST(TransposeEngineManual, SmallMatrix) {
  ExpectConfig({"P=64,A=4,B=2", DType::kI8, "A", "B # 32", "B", "A # 32", "P"},
               {4, 1, 8, 2, 32, 1, true, 6});
}

// "Large Column Transpose": in_rows 8 (C), packets_per_col 4 (D), in_cols 32, single buffering,
// n 2 (B), cycles_per_iter 64, 128 cycles.
TEST(TransposeEngineManual, LargeColumnSingleBuffering) {
  ExpectConfig({"P=256,B=2,C=8,D=4,E=8", DType::kI8, "B, C, D", "E # 32", "B, D, E", "C # 32", "P"},
               {8, 4, 32, 32, 32, 2, false, 128});
}

// "16-bit Data Type (bf16)": in_rows 4 (D), in_cols 8, out_rows 8, alignment 16, n 8, 68 cycles.
TEST(TransposeEngineManual, Bf16) {
  ExpectConfig({"P=256,C=8,D=4,E=8", DType::kBF16, "C, D", "E # 16", "C, E", "D # 16", "P"},
               {4, 1, 8, 8, 16, 8, true, 68});
}

// The Double Buffering table: in_cols 8 and 16 double-buffer, 32 single-buffers.
TEST(TransposeEngineManual, BufferingModeByInCols) {
  const char* axes = "B=2,C=8,D=4,E=8,D2=2";
  absl::StatusOr<TransposeStage> cols8 =
      Plan({axes, DType::kI8, "B, C", "E # 32", "B, E", "C # 32"});
  absl::StatusOr<TransposeStage> cols16 =
      Plan({axes, DType::kI8, "B, C, D2", "E # 32", "B, D2, E", "C # 32"});
  absl::StatusOr<TransposeStage> cols32 =
      Plan({axes, DType::kI8, "B, C, D", "E # 32", "B, D, E", "C # 32"});
  ASSERT_TRUE(cols8.ok() && cols16.ok() && cols32.ok());
  EXPECT_EQ(cols8->in_cols, 8);
  EXPECT_TRUE(cols8->double_buffered);
  EXPECT_EQ(cols16->in_cols, 16);
  EXPECT_TRUE(cols16->double_buffered);
  EXPECT_EQ(cols32->in_cols, 32);
  EXPECT_FALSE(cols32->double_buffered);
}

// The Constraints table, row by row.
TEST(TransposeEngineManual, ConstraintsTable) {
  struct Row {
    DType type;
    int64_t elements_per_packet, output_alignment, max_in_rows;
    std::vector<int64_t> in_cols;
  };
  for (const Row& row :
       {Row{DType::kI4, 16, 64, 16, {16, 32}}, Row{DType::kI8, 8, 32, 8, {8, 16, 32}},
        Row{DType::kF8E4M3, 8, 32, 8, {8, 16, 32}}, Row{DType::kF8E5M2, 8, 32, 8, {8, 16, 32}},
        Row{DType::kI16, 8, 16, 4, {8, 16, 32}}, Row{DType::kBF16, 8, 16, 4, {8, 16, 32}},
        Row{DType::kF16, 8, 16, 4, {8, 16, 32}}, Row{DType::kI32, 8, 8, 2, {8, 16, 32}},
        Row{DType::kF32, 8, 8, 2, {8, 16, 32}}}) {
    absl::StatusOr<TransposeLimits> limits = TransposeLimitsFor(row.type);
    ASSERT_TRUE(limits.ok()) << Name(row.type);
    EXPECT_EQ(limits->elements_per_packet, row.elements_per_packet) << Name(row.type);
    EXPECT_EQ(limits->output_alignment, row.output_alignment) << Name(row.type);
    EXPECT_EQ(limits->max_in_rows, row.max_in_rows) << Name(row.type);
    EXPECT_EQ(limits->valid_in_cols, row.in_cols) << Name(row.type);
  }
}

// The Cycle Calculation formulas with the examples' numbers.
TEST(TransposeEngineManual, CycleFormula) {
  // Double buffering: input + (n - 1) * max(input, output) + output.
  EXPECT_EQ(TransposeCycles(8, 1, 8, 8, true), 8 + 7 * 8 + 8);  // basic: 72
  EXPECT_EQ(TransposeCycles(4, 1, 2, 1, true), 4 + 0 + 2);      // small: 6
  EXPECT_EQ(TransposeCycles(4, 1, 8, 8, true), 4 + 7 * 8 + 8);  // bf16: 68
  // Single buffering: n * (input + output).
  EXPECT_EQ(TransposeCycles(8, 4, 32, 2, false), 2 * (32 + 32));  // large column: 128
}

// ---- The notes' vector #71 (accepted cases; A=4, B=2, C=8, D=4, E=8, F=8) -----------------------

constexpr char kVectorAxes[] = "A=4,B=2,C=8,D=4,E=8,F=8,BB=4";

TEST(TransposeEngineNotes, Vector71I8SquareWithOuterTime) {
  ExpectConfig({kVectorAxes, DType::kI8, "C, F", "E # 32", "C, E", "F # 32"},
               {8, 1, 8, 8, 32, 8, true, 72});
}

TEST(TransposeEngineNotes, Vector71I8TrimmedAndUntrimmed) {
  ExpectConfig({kVectorAxes, DType::kI8, "A", "B # 32", "B", "A # 32"},
               {4, 1, 8, 2, 32, 1, true, 6});
  // Keeping the 6 padded rows: out_rows 8, 4 + 8 cycles.
  ExpectConfig({kVectorAxes, DType::kI8, "A", "B # 32", "B # 8", "A # 32"},
               {4, 1, 8, 8, 32, 1, true, 12});
}

TEST(TransposeEngineNotes, Vector71I8LargeColumn) {
  ExpectConfig({kVectorAxes, DType::kI8, "B, C, D", "E # 32", "B, D, E", "C # 32"},
               {8, 4, 32, 32, 32, 2, false, 128});
}

TEST(TransposeEngineNotes, Vector71Bf16) {
  ExpectConfig({kVectorAxes, DType::kBF16, "C, D", "E # 16", "C, E", "D # 16"},
               {4, 1, 8, 8, 16, 8, true, 68});
}

TEST(TransposeEngineNotes, Vector71F32) {
  // in_rows 2 (B), in_cols 8 (C), out_rows 8, alignment 8: 2 + 8 cycles.
  ExpectConfig({kVectorAxes, DType::kF32, "B", "C # 8", "C", "B # 8"},
               {2, 1, 8, 8, 8, 1, true, 10});
}

TEST(TransposeEngineNotes, Vector71I4) {
  // elements_per_packet 16: in_rows 4 (A), in_cols 16 (BB padded), out_rows 4, alignment 64.
  ExpectConfig({kVectorAxes, DType::kI4, "A", "BB # 64", "BB", "A # 64"},
               {4, 1, 16, 4, 64, 1, true, 8});
}

TEST(TransposeEngineNotes, Vector71AllPadding) {
  // Only position 0 is live, so several configurations produce this output; the planner picks the
  // fastest (in_rows 1, in_cols 8, n 4: 1 + 3 * 8 + 8 = 33 cycles; in_cols 32 would take 36).
  absl::StatusOr<TransposeStage> stage =
      Plan({kVectorAxes, DType::kI8, "1 # 4", "1 # 32", "1 # 32", "1 # 32"});
  ASSERT_TRUE(stage.ok()) << stage.status();
  EXPECT_EQ(stage->out.time.size(), 32);
  EXPECT_EQ(stage->cycles, 33);
  EXPECT_EQ(stage->in_rows, 1);
  EXPECT_EQ(stage->in_cols, 8);
  EXPECT_EQ(stage->out_rows, 8);
}

// The notes' documented parameters for [B, C, D=2]/[E # 32] -> [B, D, E]/[C # 32] (also
// engine-semantics.md 3.8's example): in_cols 16, in_rows 8, out_rows 16, 48 cycles.
TEST(TransposeEngineNotes, Vector71DocumentedParameters) {
  ExpectConfig({"B=2,C=8,D=2,E=8", DType::kI8, "B, C, D", "E # 32", "B, D, E", "C # 32"},
               {8, 2, 16, 16, 32, 2, true, 48});
}

// ---- Mappings are compared by meaning -----------------------------------------------------------

TEST(TransposeEngineMeaning, EquivalentSpellingsAccepted) {
  const char* axes = "C=8,D=8,E=8";
  for (const char* out_time : {"C, E", "C, E / 2, E % 2", "[C, E] # 64", "C, 1, E"}) {
    for (const char* out_packet : {"D # 32", "1 # 4, D", "D # 16 # 32"}) {
      absl::StatusOr<TransposeStage> stage =
          Plan({axes, DType::kI8, "C, D", "E # 32", out_time, out_packet});
      EXPECT_TRUE(stage.ok()) << out_time << " / " << out_packet << ": " << stage.status();
    }
  }
  // The input may spell the same packet differently too.
  EXPECT_TRUE(Plan({axes, DType::kI8, "C, D / 2, D % 2", "1 # 4, E", "C, E", "D # 32"}).ok());
}

TEST(TransposeEngineMeaning, TimeWithPaddedRows) {
  // Time [C, A # 8]: the rows are A plus 4 padded rows; the output packet may say either.
  const char* axes = "A=4,C=8,E=8";
  absl::StatusOr<TransposeStage> stage =
      Plan({axes, DType::kI8, "C, A # 8", "E # 32", "C, E", "A # 32"});
  ASSERT_TRUE(stage.ok()) << stage.status();
  EXPECT_EQ(stage->in_rows, 8);
  EXPECT_EQ(stage->cycles, 72);
}

// ---- Pass-through levels, description ----------------------------------------------------------

TEST(TransposeEngineShape, SpatialLevelsPassThrough) {
  MappingScope s(Axes::Parse("S=256,C=8,D=8,E=8").value());
  StreamShape in;
  in.dtype = DType::kI8;
  in.chip = s.m("1");
  in.cluster = s.m("1 # 2");
  in.slice = s.m("S");
  in.time = s.m("C, D");
  in.packet = s.m("E # 32");
  absl::StatusOr<TransposeStage> stage = PlanTranspose(in, s.m("C, E"), s.m("D # 32"));
  ASSERT_TRUE(stage.ok()) << stage.status();
  EXPECT_EQ(stage->out.chip, in.chip);
  EXPECT_EQ(stage->out.cluster, in.cluster);
  EXPECT_EQ(stage->out.slice, in.slice);
  EXPECT_EQ(stage->out.time, s.m("C, E"));
  EXPECT_EQ(stage->out.packet, s.m("D # 32"));
}

TEST(TransposeEngineShape, Describe) {
  absl::StatusOr<TransposeStage> stage =
      Plan({"P=256,C=8,D=8,E=8", DType::kI8, "C, D", "E # 32", "C, E", "D # 32", "P"});
  ASSERT_TRUE(stage.ok()) << stage.status();
  EXPECT_EQ(stage->Describe(),
            "Transpose i8: in_rows 8, in_cols 8 (1 packets x 8), out_rows 8, alignment 32, n 8, "
            "double buffering, 72 cycles; time [C, E] packet [D # 32]");
}

// ---- Rule: element types (4/8/16/32-bit storage types; not the i5 / i9 staging types) ----------

TEST(TransposeEngineRules, StagingTypesRefused) {
  for (DType type : {DType::kI5, DType::kI9}) {
    std::string error = ErrorOf({"A=4,B=2", type, "A", "B # 32", "B", "A # 32"});
    EXPECT_THAT(error, HasSubstr("element type " + std::string(Name(type)) + " is not supported"));
    EXPECT_THAT(error, HasSubstr("Constraints"));
  }
}

// ---- Rule: input and output packets are one flit ------------------------------------------------

TEST(TransposeEngineRules, InputPacketNotOneFlit) {
  std::string error = ErrorOf({"A=4,B=2", DType::kI8, "A", "B # 16", "B", "A # 32"});
  EXPECT_THAT(error,
              HasSubstr("Transpose input packet must be 32 bytes (one flit), got 16 elements "
                        "of i8 = 16 bytes (expected 32 elements)"));
}

TEST(TransposeEngineRules, OutputPacketNotOneFlit) {
  std::string error = ErrorOf({"A=4,B=2", DType::kBF16, "A", "B # 16", "B", "A # 32"});
  EXPECT_THAT(error,
              HasSubstr("Transpose output packet must be 32 bytes (one flit), got 32 elements "
                        "of bf16 = 64 bytes (expected 16 elements)"));
}

// ---- Rule: Unpack keeps elements_per_packet elements; the rest must be padding ------------------

TEST(TransposeEngineRules, InputPacketBeyondElementsPerPacket) {
  std::string error = ErrorOf({"C=8,D=8,E=16", DType::kI8, "C, D", "E # 32", "C, E", "D # 32"});
  EXPECT_THAT(error, HasSubstr("input packet beyond elements_per_packet (8) must be padding"));
  EXPECT_THAT(error, HasSubstr("position 8 holds {E=8}"));
}

TEST(TransposeEngineRules, FourBitInputBeyondSixteenElements) {
  std::string error = ErrorOf({"A=4,J=64", DType::kI4, "A", "J", "J", "A # 64"});
  EXPECT_THAT(error, HasSubstr("input packet beyond elements_per_packet (16) must be padding"));
}

// ---- Rule: in_rows <= max in_rows (the output packet beyond it is padding) ----------------------

TEST(TransposeEngineRules, TooManyRowsForEightBit) {
  std::string error = ErrorOf({"C=8,D=16,E=8", DType::kI8, "C, D", "E # 32", "C, E", "D # 32"});
  EXPECT_THAT(error,
              HasSubstr("output packet beyond max in_rows (8 for 8-bit types) must be padding"));
}

TEST(TransposeEngineRules, TooManyRowsForThirtyTwoBit) {
  std::string error = ErrorOf({"A=4,C=8", DType::kF32, "A", "C", "C", "A # 8"});
  EXPECT_THAT(error,
              HasSubstr("output packet beyond max in_rows (2 for 32-bit types) must be padding"));
}

TEST(TransposeEngineRules, TooManyRowsForSixteenBit) {
  std::string error = ErrorOf({"D=8,E=8", DType::kBF16, "D", "E # 16", "E", "D # 16"});
  EXPECT_THAT(error,
              HasSubstr("output packet beyond max in_rows (4 for 16-bit types) must be padding"));
}

// ---- Rule: the output packet is in_rows consecutive Time steps, padded -------------------------

TEST(TransposeEngineRules, OutputPacketNotTheRows) {
  std::string error = ErrorOf({"C=8,D=8,E=8", DType::kI8, "C, D", "E # 32", "E, D", "C # 32"});
  EXPECT_THAT(error, HasSubstr("Transpose row mismatch"));
  EXPECT_THAT(error, HasSubstr("in_rows 8, packets_per_col 1 (in_cols 8) gives [D # 32]"));
}

TEST(TransposeEngineRules, OutputPacketRowsReordered) {
  std::string error = ErrorOf({"A=2,C=4,E=8", DType::kI8, "C, A", "E # 32", "E", "[A, C] # 32"});
  EXPECT_THAT(error, HasSubstr("Transpose row mismatch"));
}

TEST(TransposeEngineRules, OutputAlignmentPaddingOfAnotherKind) {
  std::string error = ErrorOf({"A=4,B=2", DType::kI8, "A", "B # 32", "B", "A #{0} 32"});
  EXPECT_THAT(error, HasSubstr("Transpose row mismatch"));
}

// ---- Rule: out_rows <= in_cols ------------------------------------------------------------------

TEST(TransposeEngineRules, OutRowsBeyondInCols) {
  std::string error = ErrorOf({"A=4,B=2", DType::kI8, "A", "B # 32", "B # 16", "A # 32"});
  EXPECT_THAT(error, HasSubstr("out_rows (16) must be <= in_cols (8)"));
}

// ---- Rule: OutTime = [outer Time, the first out_rows columns] -----------------------------------

TEST(TransposeEngineRules, OutTimeSwapped) {
  std::string error = ErrorOf({"C=8,D=8,E=8", DType::kI8, "C, D", "E # 32", "E, C", "D # 32"});
  EXPECT_THAT(error, HasSubstr("Transpose time mismatch"));
  EXPECT_THAT(error, HasSubstr("Expected: [C, E], got: [E, C]"));
}

TEST(TransposeEngineRules, OutTimeColumnsOutOfOrder) {
  // The columns of one row leave in order: packet by packet, then element by element.
  std::string error =
      ErrorOf({"B=2,C=8,D=4,E=8", DType::kI8, "B, C, D", "E # 32", "B, E, D", "C # 32"});
  EXPECT_THAT(error, HasSubstr("Transpose time mismatch"));
}

// ---- Rule: Trim removes only padded rows
// ---------------------------------------------------------

TEST(TransposeEngineRules, TrimDroppingLiveRows) {
  std::string error = ErrorOf({"A=4,B=2", DType::kI8, "A", "B # 32", "B = 1", "A # 32"});
  EXPECT_THAT(error, HasSubstr("the Trim stage may only remove padded rows"));
  EXPECT_THAT(error, HasSubstr("drops row 1, which holds {B=1}"));
}

// ---- Rule: in_cols is one of the valid values
// ----------------------------------------------------

TEST(TransposeEngineRules, InColsTooWide) {
  // Rows of 8 packets would need in_cols 64.
  std::string error = ErrorOf({"C=8,D=8,E=8", DType::kI8, "C, D", "E # 32", "D, E", "C # 32"});
  EXPECT_THAT(error,
              HasSubstr("in_cols (64 = packets_per_col 8 x elements_per_packet 8) must be one "
                        "of [8, 16, 32] for 8-bit types"));
}

TEST(TransposeEngineRules, InColsNotAValidWidth) {
  // Rows of 3 packets: in_cols 24.
  std::string error = ErrorOf({"C=8,D=3,E=8", DType::kI8, "C, D", "E # 32", "D, E", "C # 32"});
  EXPECT_THAT(error,
              HasSubstr("in_cols (24 = packets_per_col 3 x elements_per_packet 8) must be one "
                        "of [8, 16, 32]"));
}

// ---- Rule: Time splits as [n, in_rows, packets_per_col], OutTime as [n, out_rows] ---------------

TEST(TransposeEngineRules, NoConfigurationFitsTheSizes) {
  // Time of 64 f32 steps (in_rows <= 2) cannot produce an OutTime of 5 steps.
  std::string error = ErrorOf({"G=64,C=8,F=5", DType::kF32, "G", "C", "F", "1 # 8"});
  EXPECT_THAT(error,
              HasSubstr("no configuration fits Time [G] (size 64) and OutTime [F] (size 5)"));
}

// ---- Invalid mappings report their own error
// -----------------------------------------------------

TEST(TransposeEngineRules, InvalidMappingPropagates) {
  std::string error = ErrorOf({"A=4,B=2", DType::kI8, "A", "B # 32", "B", "Z # 32"});
  EXPECT_THAT(error, HasSubstr("Z"));
  EXPECT_THAT(ErrorOf({"A=4,B=2", DType::kI8, "A / 3", "B # 32", "B", "A # 32"}),
              HasSubstr("stride"));
}

}  // namespace
}  // namespace visa
