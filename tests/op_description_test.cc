// Op descriptions: resource, memory ranges (tensors, views, slice bitmaps) and the cycle figures
// the manual works out, on programs recorded through the Context. Every expected cycle count is
// the manual's (its worked examples or its formula applied to the example's sizes).
#include "runtime/op_description.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "dsl/mapping_parser.h"
#include "interp/interpreter.h"
#include "runtime/tensor_unit.h"
#include "runtime/trace_backend.h"
#include "runtime/transfer.h"
#include "tests/common/dm_input.h"

namespace visa {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

// The term of `stage`, failing the test when there is none.
const CycleTerm& TermOf(const OpDescription& d, const std::string& stage) {
  for (const CycleTerm& t : d.terms) {
    if (t.stage == stage) return t;
  }
  ADD_FAILURE() << "no term " << stage << " in\n" << d.ToString();
  static const CycleTerm kNone;
  return kNone;
}

class OpDescriptionTest : public ::testing::Test {
 protected:
  void Use(const std::string& axes) { scope_ = std::make_unique<MappingScope>(*Axes::Parse(axes)); }
  Mapping m(const std::string& text) { return scope_->m(text); }

  // A DM tensor holding random data of `element` on the slices `slice` names.
  DmTensor Dm(DType dtype, const std::string& slice, const std::string& element, int64_t address,
              Tier tier = Tier::kDm) {
    return test::WriteDm(*device_, *HostTensor::Random(dtype, m(element), 7), m("1 # 2"), m(slice), m(element),
                         address, tier);
  }
  // An HBM tensor on chip 0 at `address` (`from_addr`) holding random data (a move reads it, and
  // reading bytes nothing wrote is an error).
  HbmTensor Hbm(DType dtype, const std::string& element, int64_t address) {
    absl::StatusOr<HbmTensor> t = HbmTensor::Create(*device_, dtype, m("1"), m(element), address);
    EXPECT_TRUE(t.ok()) << t.status();
    EXPECT_TRUE(WriteInto(*HostTensor::Random(dtype, m(element), 7), *t).ok());
    return *t;
  }
  const Op& LastOp() { return ctx_.program().ops.back(); }

  std::unique_ptr<Device> device_ = std::make_unique<Device>(1);
  interp::Interpreter interp_;
  Context ctx_{*device_, interp_};
  std::unique_ptr<MappingScope> scope_;
};

// ---- Tensor Unit pipelines ----------------------------------------------------------------------

// Kernel Examples > Fetch and Commit Engine, Example 1: Time [A, B] "iterates through 15 cycles",
// 8-byte fetches, and the permuting commit writes one 8-byte unit per step (15 cycles, "3 cycles
// vs 15 in Example 1").
TEST_F(OpDescriptionTest, PermutingFetchCommitTakesFifteenCycles) {
  Use("A = 3, B = 5, C = 2");
  DmTensor in = Dm(DType::kF8E4M3, "1 # 256", "A, B, C", 0);
  absl::StatusOr<DmTensor> out = ctx_.main.begin(in.view())
                                     .fetch(DType::kF8E4M3, m("A, B"), m("C # 8"))
                                     .collect(m("A, B"), m("C # 32"))
                                     .commit(m("B, A, C # 8"), 1024);
  ASSERT_TRUE(out.ok()) << out.status();
  OpDescription d = Describe(LastOp());
  EXPECT_EQ(d.resource, Resource::kMain);
  EXPECT_EQ(TermOf(d, "fetch").cycles, 15);
  EXPECT_EQ(TermOf(d, "commit").cycles, 15);
  EXPECT_EQ(TermOf(d, "collect").cycles, std::nullopt);
  EXPECT_EQ(d.cycles, 15);
  // Reads the 30 input bytes of slice 0, writes 15 x 8 bytes at 1024.
  ASSERT_EQ(d.reads.size(), 1u);
  EXPECT_EQ(d.reads[0].tier, Tier::kDm);
  EXPECT_THAT(d.reads[0].units, ElementsAre(Interval{0, 1}));
  EXPECT_THAT(d.reads[0].bytes, ElementsAre(Interval{0, 30}));
  EXPECT_EQ(d.reads[0].tensor, in.name());
  ASSERT_EQ(d.writes.size(), 1u);
  EXPECT_THAT(d.writes[0].units, ElementsAre(Interval{0, 1}));
  EXPECT_THAT(d.writes[0].bytes, ElementsAre(Interval{1024, 1024 + 120}));
  EXPECT_EQ(d.writes[0].tensor, out->name());
  EXPECT_THAT(d.ToString(), HasSubstr("main pipeline: 15 cycles"));
}

// Example 2, full-flit commit: "Fetch size: 32 bytes per cycle", "Time: Only 3 cycles".
TEST_F(OpDescriptionTest, FullFlitCommitTakesThreeCycles) {
  Use("A = 3, B = 5, C = 2");
  DmTensor in = Dm(DType::kF8E4M3, "1 # 256", "A, B, C", 0);
  absl::StatusOr<DmTensor> out = ctx_.main.begin(in.view())
                                     .fetch(DType::kF8E4M3, m("A"), m("[B, C] # 32"))
                                     .collect(m("A"), m("[B, C] # 32"))
                                     .commit(m("A, [B, C] # 32"), 1024);
  ASSERT_TRUE(out.ok()) << out.status();
  OpDescription d = Describe(LastOp());
  EXPECT_EQ(TermOf(d, "commit").cycles, 3);
  EXPECT_EQ(d.cycles, 3);
  EXPECT_THAT(d.writes[0].bytes, ElementsAre(Interval{1024, 1024 + 96}));
}

// Fetch Engine > Masking Configuration, case 1: "Cycles: Time::SIZE = m![A, B' / 32]::SIZE = 32 *
// 3 = 96"; a 32-byte commit per step takes as many.
TEST_F(OpDescriptionTest, MaskedFetchTakesNinetySixCycles) {
  Use("A = 32, B = 90");
  DmTensor in = Dm(DType::kI8, "1 # 256", "A, B # 96", 0);
  absl::StatusOr<DmTensor> out = ctx_.main.begin(in.view())
                                     .fetch(DType::kI8, m("A, B # 96 / 32"), m("B # 96 % 32"))
                                     .collect(m("A, B # 96 / 32"), m("B # 96 % 32"))
                                     .commit(m("A, B # 96"), 4096);
  ASSERT_TRUE(out.ok()) << out.status();
  OpDescription d = Describe(LastOp());
  EXPECT_EQ(TermOf(d, "fetch").cycles, 96);
  EXPECT_EQ(d.cycles, 96);
  // The whole tensor, padding included: 32 rows of 96 bytes.
  EXPECT_THAT(d.reads[0].bytes, ElementsAre(Interval{0, 32 * 96}));
}

// Transpose Engine, first example: "cycles = input_flits_per_iter + (n - 1) * cycles_per_iter +
// output_flits_per_iter = 72"; fetch and commit move 64 eight-byte packets, so the transpose bounds
// the pipeline.
TEST_F(OpDescriptionTest, TransposeBoundsThePipeline) {
  Use("C = 8, E = 8, F = 8");
  DmTensor in = Dm(DType::kI8, "1 # 256", "C, F, E", 0);
  absl::StatusOr<DmTensor> out = ctx_.main.begin(in.view())
                                     .fetch(DType::kI8, m("C, F"), m("E"))
                                     .collect(m("C, F"), m("E # 32"))
                                     .transpose(m("C, E"), m("F # 32"))
                                     .commit(m("C, E, F"), 0x2000);
  ASSERT_TRUE(out.ok()) << out.status();
  OpDescription d = Describe(LastOp());
  EXPECT_EQ(TermOf(d, "transpose").cycles, 72);
  EXPECT_THAT(TermOf(d, "transpose").formula, HasSubstr("double buffering"));
  EXPECT_EQ(TermOf(d, "fetch").cycles, 64);  // Time::SIZE 64 x ceil(8 B / 8 B)
  EXPECT_EQ(d.cycles, 72);
}

// Switch Engine, CustomBroadcast Example 3: "#cycles = ring_size x input_time x cycles_per_packet
// = 4 x 8 x 2" (ring 4, input Time [C] = 8, 64-byte packets). The manual prints the product as
// 128; 4 x 8 x 2 is 64 (its other examples, 32 x 8 x 2 = 512 and 4 x 64 x 2 = 512, multiply out).
// The example slices B % 4 to 3 values, which drops data and so cannot be committed here; moving
// all of B % 4 keeps the ring, the input time and the packet.
TEST_F(OpDescriptionTest, SwitchRingTimesTimeTimesFlits) {
  Use("A = 16, B = 16, C = 8, D = 8, E = 8");
  DmTensor in = Dm(DType::kI8, "A, B", "C, D, E", 0);
  absl::StatusOr<DmTensor> out = ctx_.main.begin(in.view())
                                     .fetch(DType::kI8, m("C"), m("D, E"))
                                     .switch_engine(SwitchConfig::CustomBroadcast(4), m("A, B / 4, 4"),
                                                    m("C, B % 4"))
                                     .collect(m("C, B % 4, D / 4"), m("D % 4, E"))
                                     .commit(m("C, B % 4, D, E"), 0x4000);
  ASSERT_TRUE(out.ok()) << out.status();
  OpDescription d = Describe(LastOp());
  EXPECT_EQ(TermOf(d, "switch").cycles, 4 * 8 * 2);
  EXPECT_THAT(TermOf(d, "switch").formula, HasSubstr("4 x 8 x 2"));
  // Fetch 8 x ceil(64 B / 32 B) = 16 and commit Time [C, B % 4, D / 4] = 64 flits of 32 B.
  EXPECT_EQ(TermOf(d, "commit").cycles, 64);
  EXPECT_EQ(d.cycles, 64);
  EXPECT_THAT(d.reads[0].units, ElementsAre(Interval{0, 256}));
}

// Reducer > Matrix Multiplication (bf16): the spatial tree adds "bf16 depth 5 (32 elements in 5
// cycles)" to the slowest stage, the fetch of Time [A, B / 16] = 64 packets of 32 bytes; the
// accumulator takes one packet per cycle over Time [A] = 32, the commit 32 flits.
TEST_F(OpDescriptionTest, ContractionAddsTreeDepthToTheSlowestStage) {
  Use("A = 32, B = 32, C = 8");
  DmTensor wdm = Dm(DType::kBF16, "1 # 256", "C, B", 1 << 16);
  absl::StatusOr<TrfTensor> trf = ctx_.sub.begin(wdm.view())
                                      .fetch(DType::kBF16, m("C, B / 16"), m("B % 16"))
                                      .collect(m("C, B / 16"), m("B % 16"))
                                      .to_trf(m("C"), m("B"));
  ASSERT_TRUE(trf.ok()) << trf.status();
  OpDescription load = Describe(LastOp());
  EXPECT_EQ(load.resource, Resource::kSub);
  EXPECT_EQ(TermOf(load, "to_trf").cycles, std::nullopt);
  // The fetch: Time [C, B / 16] = 16 x ceil(32 B / 8 B), "The sub-context supports a fetch_size of
  // ... 8 bytes" (Fetch Engine > Constraints).
  EXPECT_EQ(load.cycles, 64);
  ASSERT_EQ(load.writes.size(), 1u);
  EXPECT_EQ(load.writes[0].tier, Tier::kTrf);
  EXPECT_THAT(load.writes[0].units, ElementsAre(Interval{0, 8}));  // rows 0-7 of slice 0
  EXPECT_THAT(load.writes[0].bytes, ElementsAre(Interval{0, 64}));  // B = 32 bf16 per row

  DmTensor x = Dm(DType::kBF16, "1 # 256", "A, B", 0);
  absl::StatusOr<DmTensor> out = ctx_.main.begin(x.view())
                                     .fetch(DType::kBF16, m("A, B / 16"), m("B % 16"))
                                     .collect(m("A, B / 16"), m("B % 16"))
                                     .align(m("A"), m("B"), *trf)
                                     .contract(m("1"))
                                     .accumulate(m("A"), m("C"), AccumulationKind::kInterleaved)
                                     .commit(m("A, C"), 1 << 12);
  ASSERT_TRUE(out.ok()) << out.status();
  OpDescription d = Describe(LastOp());
  EXPECT_EQ(TermOf(d, "fetch").cycles, 64);
  EXPECT_EQ(TermOf(d, "contract").cycles, 5);
  EXPECT_EQ(TermOf(d, "contract").kind, CycleTerm::Kind::kLatency);
  EXPECT_EQ(TermOf(d, "accumulate").cycles, 32);
  EXPECT_EQ(TermOf(d, "align").cycles, std::nullopt);
  EXPECT_EQ(TermOf(d, "commit").cycles, 32);
  EXPECT_EQ(d.cycles, 64 + 5);
  // Reads the activations and the weights; writes 32 x 8 f32.
  ASSERT_EQ(d.reads.size(), 2u);
  EXPECT_EQ(d.reads[1].tier, Tier::kTrf);
  EXPECT_EQ(d.reads[1].tensor, trf->name());
  EXPECT_THAT(d.writes[0].bytes, ElementsAre(Interval{1 << 12, (1 << 12) + 32 * 8 * 4}));
}

// ---- Ranges: views, slice bitmaps ---------------------------------------------------------------

TEST_F(OpDescriptionTest, ViewsCoverExactlyTheirWindow) {
  Use("A = 8, B = 8");
  DmTensor t = Dm(DType::kI8, "1 # 256", "A, B", 0x100);
  // Rows 4..7: one interval.
  MemoryRange rows = RangeOf(*t.tile(m("A"), 4, 4), "t");
  EXPECT_THAT(rows.bytes, ElementsAre(Interval{0x100 + 32, 0x100 + 64}));
  // Columns 2..4 of every row: eight 3-byte intervals.
  MemoryRange cols = RangeOf(*t.tile(m("B"), 3, 2), "t");
  ASSERT_EQ(cols.bytes.size(), 8u);
  EXPECT_EQ(cols.bytes[0], (Interval{0x102, 0x105}));
  EXPECT_EQ(cols.bytes[7], (Interval{0x100 + 56 + 2, 0x100 + 56 + 5}));
  EXPECT_EQ(cols.total_bytes(), 24);
  // A whole view is the tensor.
  EXPECT_THAT(RangeOf(t.view(), "t").bytes, ElementsAre(Interval{0x100, 0x140}));
  EXPECT_FALSE(Overlaps(rows, RangeOf(*t.tile(m("A"), 4, 0), "t")));
  EXPECT_TRUE(Overlaps(cols, rows));
}

TEST_F(OpDescriptionTest, FourBitWindowsRoundOutwardToBytes) {
  Use("A = 4, B = 8");
  DmTensor t = Dm(DType::kI4, "1 # 256", "A, B", 0);  // 4 bytes a row
  // Columns 1..3 of each row: nibbles 1-3 lie in bytes 0-1 of the row.
  MemoryRange cols = RangeOf(*t.tile(m("B"), 3, 1), "t");
  ASSERT_EQ(cols.bytes.size(), 4u);
  EXPECT_EQ(cols.bytes[0], (Interval{0, 2}));
  EXPECT_EQ(cols.bytes[3], (Interval{12, 14}));
}

TEST_F(OpDescriptionTest, CommitViewWritesOnlyTheWindow) {
  Use("A = 8, B = 8");
  DmTensor whole = Dm(DType::kI8, "1 # 256", "A, B", 0x2000);
  DmTensor src = Dm(DType::kI8, "1 # 256", "A = 4, B", 0);
  absl::Status wrote = ctx_.main.begin(src.view())
                           .fetch(DType::kI8, m("A = 4"), m("B"))
                           .collect(m("A = 4"), m("B # 32"))
                           .commit_view(*whole.tile(m("A"), 4, 4));
  ASSERT_TRUE(wrote.ok()) << wrote;
  OpDescription d = Describe(LastOp());
  ASSERT_EQ(d.writes.size(), 1u);
  EXPECT_THAT(d.writes[0].bytes, ElementsAre(Interval{0x2000 + 32, 0x2000 + 64}));
  EXPECT_EQ(d.writes[0].tensor, whole.name());
}

TEST_F(OpDescriptionTest, CommitWithSliceBitmapWritesEnabledSlices) {
  Use("A = 4, B = 32");
  DmTensor in = Dm(DType::kI8, "A # 256", "B", 0);
  absl::StatusOr<DmTensor> out = ctx_.main.begin(in.view())
                                     .fetch(DType::kI8, m("1"), m("B"))
                                     .collect(m("1"), m("B"))
                                     .commit(m("B"), 0x400, SliceBitmap::Only({0, 2, 3}));
  ASSERT_TRUE(out.ok()) << out.status();
  OpDescription d = Describe(LastOp());
  EXPECT_THAT(d.reads[0].units, ElementsAre(Interval{0, 4}));
  EXPECT_THAT(d.writes[0].units, ElementsAre(Interval{0, 1}, Interval{2, 4}));
  EXPECT_THAT(d.writes[0].bytes, ElementsAre(Interval{0x400, 0x420}));
}

// ---- DMA ----------------------------------------------------------------------------------------

// DMA Engine > Example 1 (HBM to HBM, 8 x 8 x 256 i8): "approximately 128 cycles (64 read requests
// + 64 write requests) plus approximately 500 cycles of initial latency".
TEST_F(OpDescriptionTest, DmaHbmToHbmReadsThenWrites) {
  Use("A = 8, B = 8, C = 256");
  HbmTensor src = Hbm(DType::kI8, "A, B, C", 0);
  absl::StatusOr<HbmTensor> dst = src.to_hbm(ctx_.tdma, 16384, m("B, A, C"));
  ASSERT_TRUE(dst.ok()) << dst.status();
  OpDescription d = Describe(LastOp());
  EXPECT_EQ(d.resource, Resource::kDma);
  EXPECT_EQ(d.cycles, 128 + 500);
  EXPECT_EQ(TermOf(d, "dma startup").cycles, 500);
  EXPECT_EQ(d.reads[0].tier, Tier::kHbm);
  EXPECT_THAT(d.reads[0].units, ElementsAre(Interval{0, 1}));
  EXPECT_THAT(d.reads[0].bytes, ElementsAre(Interval{0, 16384}));
  EXPECT_THAT(d.writes[0].bytes, ElementsAre(Interval{16384, 32768}));
  EXPECT_THAT(d.ToString(), HasSubstr("dma move: 628 cycles"));
}

// Example 2 (HBM to DM, 256^3 i8): "max(65536, 65536) + 500 = 66036 cycles".
TEST_F(OpDescriptionTest, DmaHbmToDmOverlapsReadsAndWrites) {
  Use("A = 256, B = 256, C = 256");
  HbmTensor src = Hbm(DType::kI8, "B, A, C", 0);
  absl::StatusOr<DmTensor> dst = src.to_dm(ctx_.tdma, 0, m("1 # 2"), m("A / 4 # 256"), m("A % 4, B, C"));
  ASSERT_TRUE(dst.ok()) << dst.status();
  OpDescription d = Describe(LastOp());
  EXPECT_EQ(d.cycles, 66036);
  EXPECT_THAT(d.writes[0].units, ElementsAre(Interval{0, 64}));
  EXPECT_THAT(d.writes[0].bytes, ElementsAre(Interval{0, 4 * 256 * 256}));
}

// Example 3 (DM to DM in one cluster): "131072 cycles (since reads and writes must proceed
// sequentially ...) + 500 cycles".
TEST_F(OpDescriptionTest, DmaDmToDmInOneClusterIsSequential) {
  Use("A = 256, B = 256, C = 256");
  absl::StatusOr<DmTensor> src =
      DmTensor::Create(*device_, DType::kI8, m("1"), m("1 # 2"), m("A / 4 # 256"), m("A % 4, B, C"), 0);
  ASSERT_TRUE(src.ok()) << src.status();
  ASSERT_TRUE(WriteInto(*HostTensor::Random(DType::kI8, m("A, B, C"), 7), *src).ok());
  absl::StatusOr<DmTensor> dst = src->to_dm(ctx_.tdma, 4 * 256 * 256, m("1 # 2"), m("A / 4 # 256"), m("B, A % 4, C"));
  ASSERT_TRUE(dst.ok()) << dst.status();
  OpDescription d = Describe(LastOp());
  EXPECT_EQ(d.cycles, 131072 + 500);
}

// DMA Engine > Inter-Chip Transfers: "30 B/cycle for both reads and writes", plus the start-up: a
// 3000-byte tensor of chip 0 broadcast to both chips writes 6000 bytes.
TEST_F(OpDescriptionTest, DmaAcrossChipsGoesOverPcie) {
  Device two(2);
  TraceBackend trace;
  Context ctx(two, trace);
  Use("A = 3000");
  absl::StatusOr<HbmTensor> src = HbmTensor::Create(two, DType::kI8, m("1 # 2"), m("A"), 0);
  ASSERT_TRUE(src.ok()) << src.status();
  absl::StatusOr<HbmTensor> dst = src->to_hbm(ctx.tdma, 4096, m("2"), m("A"));
  ASSERT_TRUE(dst.ok()) << dst.status();
  ASSERT_EQ(ctx.program().ops.size(), 1u);
  OpDescription d = Describe(ctx.program().ops[0]);
  EXPECT_EQ(d.cycles, 6000 / 30 + 500);
  EXPECT_THAT(d.reads[0].units, ElementsAre(Interval{0, 1}));
  EXPECT_THAT(d.writes[0].units, ElementsAre(Interval{0, 2}));
}

// Host moves: the manual gives no host-link rate, so only the start-up is counted and the
// transfer term says why it is missing; the host side has no device range.
TEST_F(OpDescriptionTest, HostMovesHaveNoHostRangeAndNoHostRate) {
  Use("A = 4, B = 8");
  HostTensor in = *HostTensor::Random(DType::kI8, m("A, B"), 5);
  absl::StatusOr<HbmTensor> hbm = in.to_hbm(ctx_.pdma, 0, m("1"), m("A, B"));
  ASSERT_TRUE(hbm.ok()) << hbm.status();
  OpDescription d = Describe(LastOp());
  EXPECT_EQ(d.resource, Resource::kDma);
  EXPECT_TRUE(d.reads.empty());
  ASSERT_EQ(d.writes.size(), 1u);
  EXPECT_THAT(d.writes[0].bytes, ElementsAre(Interval{0, 32}));
  EXPECT_EQ(TermOf(d, "dma read").cycles, std::nullopt);
  EXPECT_THAT(TermOf(d, "dma read").formula, HasSubstr("no host-link bandwidth"));
  EXPECT_EQ(d.cycles, 500 + 1);  // start-up + 32 B at 256 B/cycle on the HBM side
}

// ---- Overlaps ------------------------------------------------------------------------------------

MemoryRange Range(Tier tier, std::vector<Interval> units, std::vector<Interval> bytes) {
  return MemoryRange{tier, std::move(units), std::move(bytes), "t"};
}

TEST(OverlapsTest, DisjointAdjacentAndOverlappingBytes) {
  const MemoryRange a = Range(Tier::kDm, {{0, 256}}, {{0, 64}});
  EXPECT_FALSE(Overlaps(a, Range(Tier::kDm, {{0, 256}}, {{128, 192}})));  // disjoint
  EXPECT_FALSE(Overlaps(a, Range(Tier::kDm, {{0, 256}}, {{64, 128}})));   // adjacent
  EXPECT_TRUE(Overlaps(a, Range(Tier::kDm, {{0, 256}}, {{63, 128}})));    // one byte
  EXPECT_TRUE(Overlaps(Range(Tier::kDm, {{0, 256}}, {{8, 16}}), a));      // inside
}

TEST(OverlapsTest, NeedsACommonUnitAndTheSameSpace) {
  const MemoryRange a = Range(Tier::kDm, {{0, 4}, {8, 12}}, {{0, 64}});
  EXPECT_FALSE(Overlaps(a, Range(Tier::kDm, {{4, 8}}, {{0, 64}})));
  EXPECT_TRUE(Overlaps(a, Range(Tier::kDm, {{11, 20}}, {{0, 64}})));
  EXPECT_FALSE(Overlaps(a, Range(Tier::kHbm, {{0, 1}}, {{0, 64}})));
  EXPECT_FALSE(Overlaps(a, Range(Tier::kVrf, {{0, 4}}, {{0, 64}})));
  // SPM address 0 is DM byte kSpmOffsetInDm of the same slice.
  const MemoryRange spm = Range(Tier::kSpm, {{0, 1}}, {{0, 16}});
  EXPECT_TRUE(Overlaps(spm, Range(Tier::kDm, {{0, 1}}, {{kSpmOffsetInDm, kSpmOffsetInDm + 8}})));
  EXPECT_FALSE(Overlaps(spm, Range(Tier::kDm, {{0, 1}}, {{0, 16}})));
}

TEST(OverlapsTest, ScatteredIntervalsInterleave) {
  const MemoryRange even = Range(Tier::kDm, {{0, 1}}, {{0, 4}, {8, 12}, {16, 20}});
  const MemoryRange odd = Range(Tier::kDm, {{0, 1}}, {{4, 8}, {12, 16}, {20, 24}});
  EXPECT_FALSE(Overlaps(even, odd));
  EXPECT_TRUE(Overlaps(even, Range(Tier::kDm, {{0, 1}}, {{4, 9}})));
}

TEST(CombineCycleTermsTest, SlowestStreamPlusLatencies) {
  using K = CycleTerm::Kind;
  EXPECT_EQ(CombineCycleTerms({{"a", K::kStream, 10, ""}, {"b", K::kStream, 30, ""},
                               {"c", K::kLatency, 5, ""}, {"d", K::kStream, std::nullopt, ""}}),
            35);
  EXPECT_EQ(CombineCycleTerms({{"a", K::kStream, std::nullopt, ""}}), std::nullopt);
}

}  // namespace
}  // namespace visa
