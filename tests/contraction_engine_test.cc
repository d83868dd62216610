// The Contraction Engine: every example of the Aligner, Stream Adapter, TRF Sequencer and Reducer
// pages (derived collect_flits, reg_read_size, sequencer entries, tree depth, buffer use), every
// rule as a negative test, and values against a host model written from the manual's order.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <bit>
#include <cmath>

#include "dsl/contraction_engine.h"
#include "dsl/mapping_parser.h"
#include "dsl/register_file_load.h"
#include "interp/interpreter.h"
#include "runtime/tensor_unit.h"
#include "runtime/transfer.h"
#include "tests/integer_matmul_reference.h"
#include "tests/common/dm_input.h"

namespace visa {
namespace {

using ::testing::HasSubstr;

// ---------------------------------------------------------------------------------------------
// Planning (no data): the configurations the manual prints.

class AlignPlanTest : public ::testing::Test {
 protected:
  void Use(const std::string& axes) { scope_ = std::make_unique<MappingScope>(*Axes::Parse(axes)); }
  Mapping m(const std::string& text) { return scope_->m(text); }
  StreamShape Collected(DType dtype, const std::string& time, const std::string& packet) {
    return StreamShape{dtype, m("1"), m("1"), m("1"), m(time), m(packet), std::nullopt};
  }
  TrfOperand Trf(DType dtype, const std::string& row, const std::string& element,
                 const std::string& mode = "Full", int64_t base = 0) {
    return TrfOperand{dtype, m("1"), m("1"), m("1"), m(row), m(element), mode, base, "trf"};
  }
  absl::StatusOr<AlignStage> Align(const StreamShape& in, const TrfOperand& trf, const std::string& time,
                                   const std::string& packet) {
    return PlanAlign(in, StreamPosition::kCollect, trf, m(time), m(packet));
  }
  static std::string Entries(const AlignStage& stage) {
    std::string text;
    for (const SequencerEntry& e : stage.trf_entries) text += "(" + std::to_string(e.size) + ":" + std::to_string(e.stride) + ")";
    return text;
  }
  std::unique_ptr<MappingScope> scope_;
};

// Aligner page, "Example: Batched MatMul": collect_flits 2, reg_read_size 32 B broadcast twice,
// Entry 0 { size: 2, stride: 1024 } (O), Entry 1 { size: 32, stride: 32 } (M).
TEST_F(AlignPlanTest, AlignerBatchedMatmul) {
  Use("M = 32, N = 8, K = 16, L = 2, O = 2");
  absl::StatusOr<AlignStage> stage =
      Align(Collected(DType::kBF16, "M, O, L", "K"), Trf(DType::kBF16, "N", "O, M, K", "FirstHalf"), "M, O", "L, K");
  ASSERT_TRUE(stage.ok()) << stage.status();
  EXPECT_EQ(stage->collect_flits, 2);
  EXPECT_EQ(stage->rows, 8);
  EXPECT_EQ(stage->reg_read_size, 32);
  EXPECT_EQ(stage->packet_broadcast, 2);
  EXPECT_EQ(Entries(*stage), "(2:1024)(32:32)");
  EXPECT_THAT(stage->Describe(), HasSubstr("Entry 0: { size: 2, stride: 1024 }"));
  absl::StatusOr<ContractStage> contracted = PlanContract(*stage, m("L"));
  ASSERT_TRUE(contracted.ok()) << contracted.status();
  EXPECT_EQ(contracted->depth, 4);
  EXPECT_EQ(contracted->out.dtype, DType::kF32);
  absl::StatusOr<AccumulateStage> acc =
      PlanAccumulate(*contracted, m("M, O, L"), m("N"), AccumulationKind::kInterleaved);
  ASSERT_TRUE(acc.ok()) << acc.status();
}

// Stream Adapter page, collect_flits = 1: the 32-byte packet zero-padded to 64 bytes.
TEST_F(AlignPlanTest, StreamAdapterCollectFlitsOne) {
  Use("M = 32, N = 8, K = 16");
  absl::StatusOr<AlignStage> stage =
      Align(Collected(DType::kBF16, "M", "K"), Trf(DType::kBF16, "N", "K"), "M", "K # 32");
  ASSERT_TRUE(stage.ok()) << stage.status();
  EXPECT_EQ(stage->collect_flits, 1);
  EXPECT_EQ(stage->reg_read_size, 32);
  EXPECT_EQ(Entries(*stage), "(32:0)");
}

// Stream Adapter page, Time Broadcast: T = 5 is tiled innermost.
TEST_F(AlignPlanTest, StreamAdapterTimeBroadcast) {
  Use("M = 32, N = 8, K = 16, T = 5");
  absl::StatusOr<AlignStage> stage =
      Align(Collected(DType::kBF16, "M", "K"), Trf(DType::kBF16, "N", "T, K"), "M, T", "K # 32");
  ASSERT_TRUE(stage.ok()) << stage.status();
  EXPECT_EQ(stage->collect_flits, 1);
  EXPECT_EQ(stage->time_broadcast, 5);
  EXPECT_EQ(Entries(*stage), "(5:32)(32:0)");
  // A tiling axis that is not innermost is refused.
  absl::StatusOr<AlignStage> outer =
      Align(Collected(DType::kBF16, "M", "K"), Trf(DType::kBF16, "N", "T, K"), "T, M", "K # 32");
  ASSERT_FALSE(outer.ok());
  EXPECT_THAT(outer.status().message(), HasSubstr("OutTime must be the outer Time with broadcast (tiling) axes innermost"));
}

// TRF Sequencer page, Basic Weight Broadcasting: reg_read_size 64 B, Entry 0 { size: 32, stride: 0 }.
TEST_F(AlignPlanTest, TrfSequencerBasicBroadcast) {
  Use("M = 32, N = 8, K = 32");
  absl::StatusOr<AlignStage> stage =
      Align(Collected(DType::kBF16, "M, K / 16", "K % 16"), Trf(DType::kBF16, "N", "K"), "M", "K");
  ASSERT_TRUE(stage.ok()) << stage.status();
  EXPECT_EQ(stage->collect_flits, 2);
  EXPECT_EQ(stage->reg_read_size, 64);
  EXPECT_EQ(stage->packet_broadcast, 1);
  EXPECT_EQ(Entries(*stage), "(32:0)");
}

// TRF Sequencer page, Small reg_read_size: 32 B; Entry 0 { 32, 0 } (M), Entry 1 { 2, 32 } (O).
TEST_F(AlignPlanTest, TrfSequencerSmallReadSize) {
  Use("M = 32, N = 8, K = 16, L = 2, O = 2");
  absl::StatusOr<AlignStage> stage =
      Align(Collected(DType::kBF16, "O, M, L", "K"), Trf(DType::kBF16, "N", "O, K", "FirstHalf"), "O, M", "L, K");
  ASSERT_TRUE(stage.ok()) << stage.status();
  EXPECT_EQ(stage->reg_read_size, 32);
  EXPECT_EQ(Entries(*stage), "(32:0)(2:32)");
}

// Hello TCP GEMM: Slice [I / 32, J / 32], TRF [J / 8 % 4, K]; reg_read_size 64 B and entries
// I % 32 broadcast, J / 8 % 4 every 4096 bytes, K / 32 every 64 bytes.
TEST_F(AlignPlanTest, HelloGemm) {
  Use("I = 512, J = 512, K = 2048");
  StreamShape in{DType::kBF16, m("1"), m("1 # 2"), m("I / 32, J / 32"), m("I % 32, J / 8 % 4, K / 16"), m("K % 16"),
                 std::nullopt};
  TrfOperand trf{DType::kBF16, m("1"), m("1 # 2"), m("I / 32, J / 32"), m("J % 8"), m("J / 8 % 4, K"), "Full", 0, "b_trf"};
  absl::StatusOr<AlignStage> stage = PlanAlign(in, StreamPosition::kCollect, trf, m("I % 32, J / 8 % 4, K / 32"), m("K % 32"));
  ASSERT_TRUE(stage.ok()) << stage.status();
  EXPECT_EQ(stage->collect_flits, 2);
  EXPECT_EQ(stage->reg_read_size, 64);
  EXPECT_EQ(Entries(*stage), "(64:64)(4:4096)(32:0)");
  absl::StatusOr<ContractStage> contracted = PlanContract(*stage, m("1"));
  ASSERT_TRUE(contracted.ok()) << contracted.status();
  EXPECT_EQ(contracted->depth, 5);
  absl::StatusOr<AccumulateStage> acc =
      PlanAccumulate(*contracted, m("I % 32, J / 8 % 4"), m("J % 8"), AccumulationKind::kInterleaved);
  ASSERT_TRUE(acc.ok()) << acc.status();
  EXPECT_EQ(acc->inner_time, 1);  // K / 32 is the innermost Time axis
  EXPECT_EQ(acc->buffer_cells, 8);
}

// Reducer page, Interleaved and Sequential examples: depth 2, inner time 4, 128 and 1024 slots.
TEST_F(AlignPlanTest, ReducerInterleavedAndSequential) {
  Use("M = 4, N = 8, K = 64");
  absl::StatusOr<AlignStage> stage =
      Align(Collected(DType::kBF16, "K / 16, M", "K % 16"), Trf(DType::kBF16, "N", "K"), "K / 16, M", "K % 16 # 32");
  ASSERT_TRUE(stage.ok()) << stage.status();
  absl::StatusOr<ContractStage> contracted = PlanContract(*stage, m("K % 16 / 4"));
  ASSERT_TRUE(contracted.ok()) << contracted.status();
  EXPECT_EQ(contracted->depth, 2);
  absl::StatusOr<AccumulateStage> interleaved =
      PlanAccumulate(*contracted, m("M, K % 16 / 4"), m("N"), AccumulationKind::kInterleaved);
  ASSERT_TRUE(interleaved.ok()) << interleaved.status();
  EXPECT_EQ(interleaved->inner_time, 4);
  EXPECT_EQ(interleaved->buffer_cells, 128);
  absl::StatusOr<AccumulateStage> sequential =
      PlanAccumulate(*contracted, m("M, N"), m("K % 16 / 4 # 8"), AccumulationKind::kSequential);
  ASSERT_TRUE(sequential.ok()) << sequential.status();
  EXPECT_EQ(sequential->buffer_cells, 1024);
}

// Convolution case studies: shift-reuse (collect_flits = 3) over a buffered 64-byte input row.
TEST_F(AlignPlanTest, ShiftReuseForConvolutions) {
  struct Case {
    std::string axes, row, shift, window;
    int64_t shifts, stride, reg_read_size;
  };
  for (const Case& c : {Case{"H = 4, Fh = 3, K = 4, C = 8, W = 30, Fw = 3", "$(W: 1, Fw: 1)", "Fw", "W # 32", 2, 1, 2},
                        Case{"H = 4, Fh = 3, K = 4, C = 8, W = 15, Fw = 4", "$(W: 2, Fw: 1)", "Fw / 2", "W # 16, Fw % 2", 1, 2, 4},
                        Case{"H = 4, Fh = 3, K = 4, C = 8, W = 28, Fw = 3", "$(W: 1, Fw: 2)", "Fw", "W # 32", 2, 2, 2}}) {
    Use(c.axes);
    StreamShape in = Collected(DType::kBF16, "H, Fh, K, [" + c.row + "] / 16", "[" + c.row + "] % 16");
    absl::StatusOr<AlignStage> stage =
        Align(in, Trf(DType::kBF16, "C", "Fh, K, Fw # 4"), "H, Fh, K, " + c.shift, c.window);
    ASSERT_TRUE(stage.ok()) << c.row << ": " << stage.status();
    EXPECT_EQ(stage->collect_flits, 3) << c.row;
    EXPECT_EQ(stage->feed_flits, 2) << c.row;
    EXPECT_EQ(stage->shifts, c.shifts) << c.row;
    EXPECT_EQ(stage->shift_stride, c.stride) << c.row;
    EXPECT_EQ(stage->reg_read_size, c.reg_read_size) << c.row;
  }
  // A window that is not contiguous in the input row cannot be shifted out of it.
  Use("H = 4, Fh = 3, K = 4, C = 8, W = 15, Fw = 2");
  StreamShape in = Collected(DType::kBF16, "H, Fh, K, [$(W: 2, Fw: 1) # 32] / 16", "[$(W: 2, Fw: 1) # 32] % 16");
  absl::StatusOr<AlignStage> strided = Align(in, Trf(DType::kBF16, "C", "Fh, K, Fw"), "H, Fh, K, Fw", "W # 32");
  ASSERT_FALSE(strided.ok());
  EXPECT_THAT(strided.status().message(), HasSubstr("none of the Stream Adapter's packets"));
  EXPECT_THAT(strided.status().message(), HasSubstr("not a contiguous window"));
}

// The listing's GEMM with K = 2048 keeps [J / 8 % 4, K] per TRF row: 16 KB, twice the 8 KB row.
TEST_F(AlignPlanTest, HelloGemmListingOverflowsTheTrf) {
  Use("I = 512, J = 512, K = 2048");
  StreamShape in{DType::kBF16, m("1"), m("1 # 2"), m("I / 32, J / 32"), m("J % 8, J / 8 % 4, K / 16"), m("K % 16"),
                 std::nullopt};
  absl::StatusOr<RegisterLoadStage> load = PlanToTrf(in, StreamPosition::kCollect, ContextKind::kSub, m("J % 8"),
                                                     m("J / 8 % 4, K"), "Full", 8192);
  ASSERT_FALSE(load.ok());
  EXPECT_THAT(load.status().message(), HasSubstr("16384 bytes per row"));
  EXPECT_THAT(load.status().message(), HasSubstr("exceeds the tensor register file capacity (8192 bytes per row"));
}

// Stream Adapter page, collect_flits = 2: L = 2 flits of the innermost Time become the packet.
TEST_F(AlignPlanTest, StreamAdapterCollectFlitsTwo) {
  Use("M = 32, N = 8, K = 16, L = 2, O = 2");
  absl::StatusOr<AlignStage> stage =
      Align(Collected(DType::kBF16, "M, O, L", "K"), Trf(DType::kBF16, "N", "O, K"), "M, O", "L, K");
  ASSERT_TRUE(stage.ok()) << stage.status();
  EXPECT_EQ(stage->collect_flits, 2);
  EXPECT_EQ(stage->rows, 8);
  EXPECT_EQ(stage->reg_read_size, 32);
  EXPECT_EQ(Entries(*stage), "(2:32)(32:0)");
}

// Reducer page, temporal reduction table: Time [B / 4, A % 8], Packet [B % 4]: the accumulator
// keeps 8 slots (one per A % 8) across the B / 4 iterations.
TEST_F(AlignPlanTest, ReducerTemporalTable) {
  Use("A = 2048, B = 8");
  absl::StatusOr<AlignStage> stage =
      Align(Collected(DType::kBF16, "B / 4, A % 8", "B % 4 # 16"), Trf(DType::kBF16, "1", "B"), "B / 4, A % 8", "B % 4 # 32");
  ASSERT_TRUE(stage.ok()) << stage.status();
  absl::StatusOr<ContractStage> contracted = PlanContract(*stage, m("1"));
  ASSERT_TRUE(contracted.ok()) << contracted.status();
  EXPECT_EQ(contracted->depth, 2);
  absl::StatusOr<AccumulateStage> acc = PlanAccumulate(*contracted, m("A % 8"), m("1 # 8"), AccumulationKind::kInterleaved);
  ASSERT_TRUE(acc.ok()) << acc.status();
  EXPECT_EQ(acc->inner_time, 8);
  EXPECT_EQ(acc->reduced, (std::vector<bool>{false, true}));  // innermost first: A % 8 kept, B / 4 reduced
}

// Reducer page, Full Tensor Reduction: A % 32 by the tree (depth 5), A / 32 % 8 by the accumulator,
// A / 256 across slices (left to the Vector Engine).
TEST_F(AlignPlanTest, ReducerFullTensorReduction) {
  Use("A = 65536");
  StreamShape in{DType::kBF16, m("1"), m("1 # 2"), m("A / 256"), m("A / 16 % 16"), m("A % 16"), std::nullopt};
  TrfOperand ones{DType::kBF16, m("1"), m("1 # 2"), m("A / 256"), m("1"), m("A % 256"), "Full", 0, "ones"};
  absl::StatusOr<AlignStage> stage = PlanAlign(in, StreamPosition::kCollect, ones, m("A / 32 % 8"), m("A % 32"));
  ASSERT_TRUE(stage.ok()) << stage.status();
  absl::StatusOr<ContractStage> contracted = PlanContract(*stage, m("1"));
  ASSERT_TRUE(contracted.ok()) << contracted.status();
  EXPECT_EQ(contracted->depth, 5);
  absl::StatusOr<AccumulateStage> acc = PlanAccumulate(*contracted, m("1"), m("1 # 8"), AccumulationKind::kInterleaved);
  ASSERT_TRUE(acc.ok()) << acc.status();
  EXPECT_EQ(acc->reduced, (std::vector<bool>{true}));
}

// The Stream Adapter's flit buffer holds 3 flits (96 bytes): a 4-flit input row cannot be shifted.
TEST_F(AlignPlanTest, ShiftReuseNeedsTheRowInThreeFlits) {
  Use("H = 4, K = 4, C = 8, W = 62, Fw = 3");  // the row $(W + Fw) is 64 elements: 4 flits
  StreamShape in = Collected(DType::kBF16, "H, K, [$(W: 1, Fw: 1)] / 16", "[$(W: 1, Fw: 1)] % 16");
  absl::StatusOr<AlignStage> stage = Align(in, Trf(DType::kBF16, "C", "K, Fw # 4"), "H, K, Fw", "W # 64 % 32");
  ASSERT_FALSE(stage.ok());
  EXPECT_THAT(stage.status().message(), HasSubstr("none of the Stream Adapter's packets"));
}

// The manual's tree depths and widening.
TEST(ReducerTypes, DepthAndWidening) {
  EXPECT_EQ(TreeDepth(DType::kI4), 7);
  EXPECT_EQ(TreeDepth(DType::kI8), 6);
  EXPECT_EQ(TreeDepth(DType::kF8E4M3), 6);
  EXPECT_EQ(TreeDepth(DType::kBF16), 5);
  EXPECT_EQ(AccumulatorType(DType::kI8), DType::kI32);
  EXPECT_EQ(AccumulatorType(DType::kF8E5M2), DType::kF32);
}

// ---------------------------------------------------------------------------------------------
// Every rule that refuses something.

TEST_F(AlignPlanTest, AlignRules) {
  Use("M = 32, N = 8, K = 16, R = 3, L = 2");
  StreamShape in = Collected(DType::kBF16, "M, L", "K");
  auto error = [&](absl::StatusOr<AlignStage> s) { return std::string(s.status().message()); };
  EXPECT_THAT(error(Align(in, Trf(DType::kBF16, "N", "K"), "M", "L, K / 2")), HasSubstr("OutPacket is always 64 bytes"));
  EXPECT_THAT(error(Align(in, Trf(DType::kBF16, "R", "K"), "M", "L, K")), HasSubstr("Row count"));
  EXPECT_THAT(error(Align(in, Trf(DType::kI8, "N", "K"), "M", "L, K")), HasSubstr("Data types"));
  EXPECT_THAT(error(Align(Collected(DType::kF32, "M, L", "K % 8"), Trf(DType::kF32, "N", "K"), "M", "L, K")),
              HasSubstr("Data types: the Contraction Engine takes i4, i8, f8 or bf16"));
  EXPECT_THAT(error(Align(in, Trf(DType::kBF16, "M / 4", "K"), "M", "L, K")), HasSubstr("Rows broadcast"));
  EXPECT_THAT(error(Align(in, Trf(DType::kBF16, "N", "K"), "M", "K, L")), HasSubstr("none of the Stream Adapter's packets"));
  EXPECT_THAT(error(Align(in, Trf(DType::kBF16, "N", "R, K"), "M", "L, K")),
              HasSubstr("the two computation mappings must match"));
  EXPECT_THAT(error(PlanAlign(in, StreamPosition::kFetch, Trf(DType::kBF16, "N", "K"), m("M"), m("L, K"))),
              HasSubstr("align takes the Collect Engine's stream"));
}

TEST_F(AlignPlanTest, SixtyFourByteAlignmentRule) {
  Use("M = 4, N = 8, K = 32, O = 2");
  // reg_read_size = 64 B (K) but O steps by 96 bytes in the TRF Element [O, K # 48].
  absl::StatusOr<AlignStage> stage =
      Align(Collected(DType::kBF16, "M, O, K / 16", "K % 16"), Trf(DType::kBF16, "N", "O, K # 48"), "M, O", "K");
  ASSERT_FALSE(stage.ok());
  EXPECT_THAT(stage.status().message(), HasSubstr("64-byte alignment rule"));
  EXPECT_THAT(stage.status().message(), HasSubstr("stride 96"));
  // The same read from a 64-byte-aligned layout is fine.
  EXPECT_TRUE(Align(Collected(DType::kBF16, "M, O, K / 16", "K % 16"), Trf(DType::kBF16, "N", "O, K"), "M, O", "K").ok());
}

TEST_F(AlignPlanTest, ContractAndAccumulateRules) {
  Use("M = 4, N = 8, K = 64, B = 8");
  absl::StatusOr<AlignStage> stage =
      Align(Collected(DType::kBF16, "K / 16, M", "K % 16"), Trf(DType::kBF16, "N", "K"), "K / 16, M", "K % 16 # 32");
  ASSERT_TRUE(stage.ok()) << stage.status();
  auto contract_error = [&](const std::string& packet, ReduceOp op = ReduceOp::kAdd) {
    return std::string(PlanContract(*stage, m(packet), op).status().message());
  };
  EXPECT_THAT(contract_error("K % 16 / 4 # 6"), HasSubstr("OutPacket::SIZE must be a power of two"));
  EXPECT_THAT(contract_error("K % 16 / 2, B"), HasSubstr("OutPacket::SIZE must be at most 32"));
  EXPECT_THAT(contract_error("K % 4"), HasSubstr("is not a valid contraction of Packet"));
  EXPECT_THAT(contract_error("1", ReduceOp::kMax), HasSubstr("Reduce-max: only supports a single Row"));

  absl::StatusOr<ContractStage> contracted = PlanContract(*stage, m("K % 16 / 4"));
  ASSERT_TRUE(contracted.ok());
  auto acc_error = [&](const std::string& time, const std::string& packet, AccumulationKind kind) {
    return std::string(PlanAccumulate(*contracted, m(time), m(packet), kind).status().message());
  };
  EXPECT_THAT(acc_error("M, K % 16 / 4", "N # 16", AccumulationKind::kInterleaved), HasSubstr("OutPacket mismatch"));
  EXPECT_THAT(acc_error("M", "N", AccumulationKind::kInterleaved), HasSubstr("OutTime mismatch"));
  EXPECT_THAT(acc_error("M, N", "K % 16 / 4", AccumulationKind::kSequential), HasSubstr("OutPacket mismatch"));
  // Reordering retained axes is not a reduction.
  absl::StatusOr<AlignStage> two =
      Align(Collected(DType::kBF16, "M, K / 16", "K % 16"), Trf(DType::kBF16, "N", "K"), "M, K / 16", "K % 16 # 32");
  ASSERT_TRUE(two.ok()) << two.status();
  absl::StatusOr<ContractStage> c2 = PlanContract(*two, m("K % 16 / 4"));
  ASSERT_TRUE(c2.ok());
  EXPECT_THAT(PlanAccumulate(*c2, m("K / 16, M, K % 16 / 4"), m("N"), AccumulationKind::kInterleaved).status().message(),
              HasSubstr("cannot become"));
}

TEST_F(AlignPlanTest, AccumulatorBufferRules) {
  // Reduce the outer axis with 64 retained positions inside: Interleaved holds 64 * 4 = 256 > 128.
  Use("M = 64, N = 8, K = 64");
  absl::StatusOr<AlignStage> stage =
      Align(Collected(DType::kBF16, "K / 16, M", "K % 16"), Trf(DType::kBF16, "N", "K"), "K / 16, M", "K % 16 # 32");
  ASSERT_TRUE(stage.ok()) << stage.status();
  absl::StatusOr<ContractStage> contracted = PlanContract(*stage, m("K % 16 / 4"));
  ASSERT_TRUE(contracted.ok());
  absl::StatusOr<AccumulateStage> interleaved =
      PlanAccumulate(*contracted, m("M, K % 16 / 4"), m("N"), AccumulationKind::kInterleaved);
  ASSERT_FALSE(interleaved.ok());
  EXPECT_THAT(interleaved.status().message(), HasSubstr("Interleaved buffer constraint"));
  absl::StatusOr<AccumulateStage> sequential =
      PlanAccumulate(*contracted, m("M, N"), m("K % 16 / 4 # 8"), AccumulationKind::kSequential);
  ASSERT_FALSE(sequential.ok());
  EXPECT_THAT(sequential.status().message(), HasSubstr("Sequential buffer constraint"));
}

// ---------------------------------------------------------------------------------------------
// Values: kernels through the Context on the interpreter against a host model of the manual's
// order (products in f32 / i32, the pairwise tree, accumulation in time order).

class ContractionValuesTest : public ::testing::Test {
 protected:
  void Use(const std::string& axes) { scope_ = std::make_unique<MappingScope>(*Axes::Parse(axes)); }
  Mapping m(const std::string& text) { return scope_->m(text); }
  DmTensor Dm(const HostTensor& host, const std::string& element, int64_t address) {
    return test::WriteDm(*device_, host, m(element), address);
  }
  // The manual's weight path: fetch, collect, to_trf.
  TrfTensor Weights(const HostTensor& host, const std::string& time, const std::string& packet, const std::string& row,
                    const std::string& element, TrfAddress mode = TrfAddress::kFull) {
    DmTensor dm = Dm(host, host.mapping().ToString(), 1 << 16);
    absl::StatusOr<TrfTensor> trf =
        ctx_.sub.begin(dm.view()).fetch(host.dtype(), m(time), m(packet)).collect(m(time), m(packet)).to_trf(m(row), m(element), mode);
    EXPECT_TRUE(trf.ok()) << trf.status();
    return *trf;
  }
  std::unique_ptr<Device> device_ = std::make_unique<Device>(1);
  interp::Interpreter interp_;
  Context ctx_{*device_, interp_};
  std::unique_ptr<MappingScope> scope_;
};

float Widen(double value) { return static_cast<float>(value); }  // bf16 / f8 are exact in f32

// Pairwise sum of `v` (size a power of two) in f32, level by level.
float TreeSum(std::vector<float> v) {
  for (size_t width = v.size(); width > 1; width /= 2) {
    for (size_t k = 0; k < width / 2; ++k) v[k] = v[2 * k] + v[2 * k + 1];
  }
  return v[0];
}

// Reducer page, Matrix Multiplication: out[a, c] = tree over B of x[a, b] * w[c, b] (depth 5).
TEST_F(ContractionValuesTest, ReducerMatmulBf16) {
  Use("A = 32, B = 32, C = 8");
  HostTensor x = *HostTensor::Random(DType::kBF16, m("A, B"), 1);
  HostTensor w = *HostTensor::Random(DType::kBF16, m("C, B"), 2);
  TrfTensor trf = Weights(w, "C, B / 16", "B % 16", "C", "B");
  DmTensor dm = Dm(x, "A, B", 0);
  absl::StatusOr<DmTensor> out = ctx_.main.begin(dm.view())
                                     .fetch(DType::kBF16, m("A, B / 16"), m("B % 16"))
                                     .collect(m("A, B / 16"), m("B % 16"))
                                     .align(m("A"), m("B"), trf)
                                     .contract(m("1"))
                                     .accumulate(m("A"), m("C"), AccumulationKind::kInterleaved)
                                     .commit(m("A, C"), 1 << 12);
  ASSERT_TRUE(out.ok()) << out.status();
  HostTensor got = *ReadAs(*out, m("A, C"));
  std::vector<double> xv = x.ToValues(), wv = w.ToValues();
  for (int a = 0; a < 32; ++a) {
    for (int c = 0; c < 8; ++c) {
      std::vector<float> products(32);
      for (int b = 0; b < 32; ++b) products[b] = Widen(xv[a * 32 + b]) * Widen(wv[c * 32 + b]);
      ASSERT_EQ(std::bit_cast<uint32_t>(static_cast<float>(*got.Get(a * 8 + c))),
                std::bit_cast<uint32_t>(TreeSum(products)))
          << "a=" << a << " c=" << c;
    }
  }
  EXPECT_THAT(ctx_.program().ToText(), HasSubstr("reg_read_size 64 B"));
  EXPECT_THAT(ctx_.program().ToText(), HasSubstr("tree depth 5 of 5"));
}

// Reducer page, Interleaved / Sequential: K % 4 summed by the tree (depth 2), K / 16 in time
// order, K % 16 / 4 survives. Both layouts hold the same numbers.
TEST_F(ContractionValuesTest, ReducerInterleavedAndSequentialLayouts) {
  Use("M = 4, N = 8, K = 64");
  HostTensor x = *HostTensor::Random(DType::kBF16, m("K / 16, M, K % 16"), 3);
  HostTensor w = *HostTensor::Random(DType::kBF16, m("N, K"), 4);
  TrfTensor trf = Weights(w, "N, K / 16", "K % 16", "N", "K");
  DmTensor dm = Dm(x, "K / 16, M, K % 16", 0);
  auto run = [&](AccumulationKind kind, const std::string& time, const std::string& packet, const std::string& element) {
    return ctx_.main.begin(dm.view())
        .fetch(DType::kBF16, m("K / 16, M"), m("K % 16"))
        .collect(m("K / 16, M"), m("K % 16"))
        .align(m("K / 16, M"), m("K % 16 # 32"), trf)
        .contract(m("K % 16 / 4"))
        .accumulate(m(time), m(packet), kind)
        .commit(m(element), 1 << 12);
  };
  absl::StatusOr<DmTensor> interleaved = run(AccumulationKind::kInterleaved, "M, K % 16 / 4", "N", "M, K % 16 / 4, N");
  ASSERT_TRUE(interleaved.ok()) << interleaved.status();
  HostTensor a = *ReadAs(*interleaved, m("M, N, K % 16 / 4"));
  absl::StatusOr<DmTensor> sequential = run(AccumulationKind::kSequential, "M, N", "K % 16 / 4 # 8", "M, N, K % 16 / 4 # 8");
  ASSERT_TRUE(sequential.ok()) << sequential.status();
  HostTensor b = *ReadAs(*sequential, m("M, N, K % 16 / 4"));
  EXPECT_EQ(a.ToBits(), b.ToBits());
  // out[m, n, q] = sum over K / 16 (in order) of tree over K % 4 of x * w.
  std::vector<double> xv = x.ToValues(), wv = w.ToValues();
  for (int mm = 0; mm < 4; ++mm) {
    for (int n = 0; n < 8; ++n) {
      for (int q = 0; q < 4; ++q) {
        float acc = 0;
        for (int t = 0; t < 4; ++t) {
          std::vector<float> products(4);
          for (int k = 0; k < 4; ++k) {
            const int kk = t * 16 + q * 4 + k;
            products[k] = static_cast<float>(xv[((kk / 16) * 4 + mm) * 16 + kk % 16]) * static_cast<float>(wv[n * 64 + kk]);
          }
          const float tree = TreeSum(products);
          acc = t == 0 ? tree : acc + tree;
        }
        ASSERT_EQ(std::bit_cast<uint32_t>(static_cast<float>(*a.Get((mm * 8 + n) * 4 + q))), std::bit_cast<uint32_t>(acc))
            << mm << " " << n << " " << q;
      }
    }
  }
}

// i8 contraction: exact i32 results (Hello TCP's pipeline example in the notes: out = x . w).
TEST_F(ContractionValuesTest, I8IsExact) {
  Use("A = 8, K = 64, R = 8");
  HostTensor x = *HostTensor::Random(DType::kI8, m("A, K"), 5);
  HostTensor w = *HostTensor::Random(DType::kI8, m("R, K"), 6);
  TrfTensor trf = Weights(w, "R, K / 32", "K % 32", "R", "K");
  DmTensor dm = Dm(x, "A, K", 0);
  absl::StatusOr<DmTensor> out = ctx_.main.begin(dm.view())
                                     .fetch(DType::kI8, m("A, K / 32"), m("K % 32"))
                                     .collect(m("A, K / 32"), m("K % 32"))
                                     .align(m("A"), m("K"), trf)
                                     .contract(m("1"))
                                     .accumulate(m("A"), m("R"), AccumulationKind::kInterleaved)
                                     .commit(m("A, R"), 1 << 12);
  ASSERT_TRUE(out.ok()) << out.status();
  HostTensor got = *ReadAs(*out, m("A, R"));
  EXPECT_EQ(IntegerValues(got), IntegerMatmulReference(x, w, 8, 8, 64));
}

// Fetch Adapter zero point (asymmetric quantization): i8 input minus its zero point widens to the
// i9 staging type, which the Contraction Engine multiplies by i8 weights: out = sum (x - zp) * w,
// exact in i32.
TEST_F(ContractionValuesTest, ZeroPointI8ToI9IsExact) {
  Use("A = 8, K = 64, R = 8");
  const int32_t zero_point = -7;
  HostTensor x = *HostTensor::Random(DType::kI8, m("A, K"), 15);
  HostTensor w = *HostTensor::Random(DType::kI8, m("R, K"), 16);
  TrfTensor trf = Weights(w, "R, K / 32", "K % 32", "R", "K");
  DmTensor dm = Dm(x, "A, K", 0);
  absl::StatusOr<DmTensor> out = ctx_.main.begin(dm.view())
                                     .fetch_with_zero_point(DType::kI9, zero_point, m("A, K / 32"), m("K % 32"))
                                     .collect(m("A, K / 32"), m("K % 32"))
                                     .align(m("A"), m("K"), trf)
                                     .contract(m("1"))
                                     .accumulate(m("A"), m("R"), AccumulationKind::kInterleaved)
                                     .commit(m("A, R"), 1 << 12);
  ASSERT_TRUE(out.ok()) << out.status();
  HostTensor got = *ReadAs(*out, m("A, R"));
  EXPECT_EQ(IntegerValues(got), IntegerMatmulReference(x, w, 8, 8, 64, zero_point));
}

// Reduce-max on Row 0: the largest product along K.
TEST_F(ContractionValuesTest, ReduceMaxSingleRow) {
  Use("A = 8, K = 64");
  HostTensor x = *HostTensor::Random(DType::kI8, m("A, K"), 7);
  HostTensor w = *HostTensor::Random(DType::kI8, m("K"), 8);
  TrfTensor trf = Weights(w, "K / 32", "K % 32", "1", "K");
  DmTensor dm = Dm(x, "A, K", 0);
  absl::StatusOr<DmTensor> out = ctx_.main.begin(dm.view())
                                     .fetch(DType::kI8, m("A, K / 32"), m("K % 32"))
                                     .collect(m("A, K / 32"), m("K % 32"))
                                     .align(m("A"), m("K"), trf)
                                     .contract(m("1"), ReduceOp::kMax)
                                     .accumulate(m("A"), m("1 # 8"), AccumulationKind::kInterleaved)
                                     .commit(m("A, 1 # 8"), 1 << 12);
  ASSERT_TRUE(out.ok()) << out.status();
  HostTensor got = *ReadAs(*out, m("A"));
  std::vector<double> xv = x.ToValues(), wv = w.ToValues();
  for (int a = 0; a < 8; ++a) {
    double best = -1e9;
    for (int k = 0; k < 64; ++k) best = std::max(best, xv[a * 64 + k] * wv[k]);
    EXPECT_EQ(*got.Get(a), best) << a;
  }
}

TEST_F(ContractionValuesTest, PositionRules) {
  Use("A = 8, K = 64");
  HostTensor x = *HostTensor::Random(DType::kI8, m("A, K"), 7);
  TrfTensor trf = Weights(*HostTensor::Random(DType::kI8, m("K"), 8), "K / 32", "K % 32", "1", "K");
  DmTensor dm = Dm(x, "A, K", 0);
  absl::StatusOr<DmTensor> early =
      ctx_.main.begin(dm.view()).fetch(DType::kI8, m("A, K / 32"), m("K % 32")).align(m("A"), m("K"), trf).contract(m("1"))
          .accumulate(m("A"), m("1 # 8"), AccumulationKind::kInterleaved).commit(m("A, 1 # 8"), 1 << 12);
  ASSERT_FALSE(early.ok());
  EXPECT_THAT(early.status().message(), HasSubstr("`align` is not allowed after Fetch"));
  absl::StatusOr<DmTensor> unreduced = ctx_.main.begin(dm.view())
                                           .fetch(DType::kI8, m("A, K / 32"), m("K % 32"))
                                           .collect(m("A, K / 32"), m("K % 32"))
                                           .align(m("A"), m("K"), trf)
                                           .commit(m("A, K"), 1 << 12);
  ASSERT_FALSE(unreduced.ok());
  EXPECT_THAT(unreduced.status().message(), HasSubstr("`commit` is not allowed after AlignedPair"));
}

}  // namespace
}  // namespace visa
