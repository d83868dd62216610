// The kernel API as a user outside the repository writes it: a checked MappingScope::Parse, named
// levels for Create and every move, DM read-back with to_host, DMA into an existing tensor or tile
// view (pieces assembled on both backends), SPM moves with a Chip, the JIT's library defaults and
// Prepare of a kernel. Expected values are the host inputs themselves or index arithmetic.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "dsl/mapping_parser.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "interp/interpreter.h"
#include "jit/jit_backend.h"
#include "runtime/device.h"
#include "runtime/dma.h"
#include "runtime/host_tensor.h"
#include "runtime/launch.h"
#include "runtime/tensor.h"
#include "runtime/tensor_unit.h"

namespace visa {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;

std::string Msg(const absl::Status& status) { return std::string(status.message()); }

TEST(MappingScopeParseTest, ParsesTheManualsAxes) {
  absl::StatusOr<MappingScope> s = MappingScope::Parse("A = 8, B = 4");
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(s->m("A, B").size(), 32);
  EXPECT_EQ(s->m("B / 2").size(), 2);
}

TEST(MappingScopeParseTest, ATypoIsAnErrorNamingTheCall) {
  for (const char* text : {"A = 8, B =", "A = 8, A = 4", "A 8", "A = x"}) {
    absl::StatusOr<MappingScope> s = MappingScope::Parse(text);
    ASSERT_FALSE(s.ok()) << text;
    EXPECT_EQ(s.status().code(), absl::StatusCode::kInvalidArgument) << text;
    EXPECT_THAT(Msg(s.status()), HasSubstr("MappingScope::Parse")) << text;
  }
}

class KernelApiTest : public ::testing::Test {
 protected:
  MappingScope s = *MappingScope::Parse("A = 2048");
  Device device{1};
  interp::Interpreter interp;
  Context ctx{device, interp};
  HostTensor input = *HostTensor::Iota(DType::kI32, s.m("A"));
};

TEST_F(KernelApiTest, NamedLevelsRoundTripThroughDmAndBack) {
  absl::StatusOr<HbmTensor> hbm = input.to_hbm(ctx.pdma, 0, {.element = s.m("A")});
  ASSERT_TRUE(hbm.ok()) << hbm.status();
  EXPECT_TRUE(hbm->chip().is_identity());  // one chip when left out
  absl::StatusOr<DmTensor> dm = hbm->to_dm(ctx.tdma, 0x1000, {.cluster = s.m("1 # 2"),
                                                              .slice = s.m("A / 8 # 256"),
                                                              .element = s.m("A % 8")});
  ASSERT_TRUE(dm.ok()) << dm.status();
  EXPECT_EQ(dm->slice().ToString(), "A / 8 # 256");
  EXPECT_EQ(dm->element().ToString(), "A % 8");
  EXPECT_EQ(dm->address(), 0x1000);
  // The manual's read-back, from DM: a scratch HBM tensor in between, both moves recorded.
  const size_t ops = ctx.program().ops.size();
  absl::StatusOr<HostTensor> back = dm->to_host(ctx, s.m("A"));
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->ToBits(), input.ToBits());
  ASSERT_EQ(ctx.program().ops.size(), ops + 2);
  // The scratch was freed: reading back again reuses its range and still gives the input.
  absl::StatusOr<HostTensor> again = dm->to_host(ctx, s.m("A % 8, A / 8"));
  ASSERT_TRUE(again.ok()) << again.status();
  Index a;
  a.Set("A", 1234);
  EXPECT_EQ(*again->Get(a), 1234);
}

TEST_F(KernelApiTest, NamedCreateEqualsThePositionalForm) {
  absl::StatusOr<DmTensor> named = DmTensor::Create(device, DType::kI8, {.cluster = s.m("1 # 2"),
                                                                          .slice = s.m("A / 8 # 256"),
                                                                          .element = s.m("A % 8")},
                                                    0x2000);
  ASSERT_TRUE(named.ok()) << named.status();
  absl::StatusOr<DmTensor> positional = DmTensor::Create(device, DType::kI8, s.m("1"), s.m("1 # 2"),
                                                         s.m("A / 8 # 256"), s.m("A % 8"), 0x3000);
  ASSERT_TRUE(positional.ok()) << positional.status();
  EXPECT_TRUE(Pair(named->levels()) == Pair(positional->levels()));
  absl::StatusOr<HbmTensor> hbm = HbmTensor::Create(device, DType::kI8, {.element = s.m("A")}, 0);
  ASSERT_TRUE(hbm.ok()) << hbm.status();
  absl::StatusOr<VrfTensor> vrf = VrfTensor::Create(device, DType::kI8, {.cluster = s.m("1 # 2"),
                                                                          .slice = s.m("A / 8 # 256"),
                                                                          .element = s.m("A % 8")},
                                                    0);
  EXPECT_TRUE(vrf.ok()) << vrf.status();
}

TEST(NamedTrfTest, NamedRowAndElementPlaceLikeThePositionalForm) {
  MappingScope s = *MappingScope::Parse("A = 2048, R = 8, B = 2");
  Device device(1);
  absl::StatusOr<TrfTensor> named = TrfTensor::Create(
      device, DType::kBF16, {.cluster = s.m("1 # 2"), .slice = s.m("1 # 256"), .row = s.m("R"), .element = s.m("A")},
      TrfAddress::kFirstHalf);
  ASSERT_TRUE(named.ok()) << named.status();
  EXPECT_EQ(named->row().ToString(), "R");
  EXPECT_EQ(named->element().ToString(), "A");
  absl::StatusOr<TrfTensor> second = TrfTensor::Create(device, DType::kBF16, s.m("1"), s.m("1 # 2"), s.m("1 # 256"),
                                                       s.m("R"), s.m("A"), TrfAddress::kSecondHalf);
  ASSERT_TRUE(second.ok()) << second.status();
  EXPECT_TRUE(Pair(named->levels()) == Pair(second->levels()));
  // The named form keeps the placement rules: a row holds 8 KB.
  EXPECT_THAT(Msg(TrfTensor::Create(device, DType::kF32, {.row = s.m("R"), .element = s.m("B, A")},
                                    TrfAddress::kFull).status()),
              HasSubstr("must be <= 8 KB per Row"));
  EXPECT_THAT(Msg(TrfTensor::Create(device, DType::kBF16, {.element = s.m("A")}, TrfAddress::kFull).status()),
              AllOf(HasSubstr("Layout: TrfTensor::Create"), HasSubstr(".row")));
}

TEST(NamedDefaultsTest, LeftOutLevelsAreChipClusterSliceZeroOrTheSources) {
  MappingScope s = *MappingScope::Parse("A = 64");
  Device two_chips(2);
  absl::StatusOr<DmTensor> fresh = DmTensor::Create(two_chips, DType::kI8, {.element = s.m("A")}, 0);
  ASSERT_TRUE(fresh.ok()) << fresh.status();
  EXPECT_EQ(fresh->chip().ToString(), "1 # 2");
  EXPECT_EQ(fresh->cluster().ToString(), "1 # 2");
  EXPECT_EQ(fresh->slice().ToString(), "1 # 256");
  interp::Interpreter interp;
  Context ctx(two_chips, interp);
  HostTensor input = *HostTensor::Iota(DType::kI8, s.m("A"));
  HbmTensor hbm = *input.to_hbm(ctx.pdma, 0, {.chip = s.m("A / 32"), .element = s.m("A % 32")});
  DmTensor spread = *hbm.to_dm(ctx.tdma, 0, {.slice = s.m("A % 32 / 8 # 256"), .element = s.m("A % 8")});
  EXPECT_EQ(spread.chip().ToString(), "A / 32");  // the source's Chip
  EXPECT_EQ(spread.cluster().ToString(), "1 # 2");
  // DM -> DM keeps the source's Chip, Cluster and Slice; only the Element changes.
  absl::StatusOr<DmTensor> moved = spread.to_dm(ctx.tdma, 0x100, {.element = s.m("A % 8 # 16")});
  ASSERT_TRUE(moved.ok()) << moved.status();
  EXPECT_EQ(moved->slice().ToString(), "A % 32 / 8 # 256");
  EXPECT_EQ(moved->to_host(ctx, s.m("A"))->ToBits(), input.ToBits());
}

TEST_F(KernelApiTest, ALayoutWithoutElementIsAnError) {
  HbmTensor hbm = *input.to_hbm(ctx.pdma, 0, {.element = s.m("A")});
  absl::StatusOr<DmTensor> dm = hbm.to_dm(ctx.tdma, 0x1000, {.cluster = s.m("1 # 2"), .slice = s.m("A / 8 # 256")});
  ASSERT_FALSE(dm.ok());
  EXPECT_THAT(Msg(dm.status()), AllOf(HasSubstr("Layout:"), HasSubstr("HbmTensor::to_dm"), HasSubstr(".element")));
  EXPECT_THAT(Msg(HbmTensor::Create(device, DType::kI8, HbmLayout{}, 0).status()), HasSubstr("HbmTensor::Create"));
}

TEST_F(KernelApiTest, DmReadBackFollowsTheContextTable) {
  // A to_host through a context whose pdma belongs to another device is refused, not crashed.
  Device other(1);
  interp::Interpreter other_interp;
  Context other_ctx(other, other_interp);
  DmTensor dm = *input.to_hbm(ctx.pdma, 0, {.element = s.m("A")})->to_dm(
      ctx.tdma, 0x1000, {.cluster = s.m("1 # 2"), .slice = s.m("A / 8 # 256"), .element = s.m("A % 8")});
  EXPECT_THAT(Msg(dm.to_host(other_ctx, s.m("A")).status()), HasSubstr("DMA Context"));
  EXPECT_FALSE(dm.to_host(ctx, s.m("A / 0")).ok());
}

TEST(SpmChipTest, ToSpmWithAChipKeepsOrCrossesChips) {
  MappingScope s = *MappingScope::Parse("A = 64");
  Device device(2);
  interp::Interpreter interp;
  Context ctx(device, interp);
  HostTensor input = *HostTensor::Iota(DType::kI32, s.m("A"));
  HbmTensor hbm = *input.to_hbm(ctx.pdma, 0, {.chip = s.m("A / 32"), .element = s.m("A % 32")});
  DmLayout same_chip{.chip = s.m("A / 32"), .cluster = s.m("1 # 2"), .slice = s.m("1 # 256"), .element = s.m("A % 32")};
  absl::StatusOr<DmTensor> spm = hbm.to_spm(ctx.tdma, 0, same_chip);
  ASSERT_TRUE(spm.ok()) << spm.status();
  EXPECT_EQ(spm->tier(), Tier::kSpm);
  absl::StatusOr<DmTensor> positional =
      hbm.to_spm(ctx.tdma, 0x100, s.m("A / 32"), s.m("1 # 2"), s.m("1 # 256"), s.m("A % 32"));
  ASSERT_TRUE(positional.ok()) << positional.status();
  absl::StatusOr<DmTensor> spm_to_spm = spm->to_spm(ctx.tdma, 0x200, same_chip);
  ASSERT_TRUE(spm_to_spm.ok()) << spm_to_spm.status();
  EXPECT_EQ(spm_to_spm->to_host(ctx, s.m("A"))->ToBits(), input.ToBits());
  // The manual restricts SPM transfers to their chip: a Chip that moves elements is refused.
  DmLayout crossing = same_chip;
  crossing.chip = s.m("A / 16 % 2");  // A = 16 .. 31 move to chip 1
  crossing.element = s.m("A / 32, A % 16");
  EXPECT_THAT(Msg(hbm.to_spm(ctx.tdma, 0x300, crossing).status()), HasSubstr("SPM:"));
  EXPECT_THAT(Msg(spm->to_spm(ctx.tdma, 0x300, crossing).status()), HasSubstr("SPM:"));
}

// ---- DMA into an existing tensor or view ----------------------------------------------------

// The value piece k carries at tile-local position i: its own number and the position.
int32_t PieceValue(int64_t k, int64_t i) { return static_cast<int32_t>(1000 * (k + 1) + i); }

HostTensor Piece(const MappingScope& s, int64_t k) {
  std::vector<double> values;
  for (int64_t i = 0; i < 16; ++i) values.push_back(PieceValue(k, i));
  return *HostTensor::FromValues(DType::kI32, s.m("A = 16"), values);
}

// Assembles A = 64 from four pieces of 16 written into the whole tensor's tile views; the whole
// tensor lives in `tier` (HBM, DM or SPM).
void AssembleFromPieces(Backend& backend, Tier tier) {
  SCOPED_TRACE(TierName(tier));
  MappingScope s = *MappingScope::Parse("A = 64");
  Device device(1);
  Context ctx(device, backend);
  absl::StatusOr<DeviceTensor> whole;
  if (tier == Tier::kHbm) {
    whole = HbmTensor::Create(device, DType::kI32, {.element = s.m("A")}, 0x4000);
  } else {
    whole = DmTensor::Create(device, DType::kI32, {.cluster = s.m("1 # 2"), .slice = s.m("1 # 256"), .element = s.m("A")},
                             0x400, tier);
  }
  ASSERT_TRUE(whole.ok()) << whole.status();
  for (int64_t k = 0; k < 4; ++k) {
    absl::StatusOr<HbmTensor> piece = Piece(s, k).to_hbm(ctx.pdma, Address::Any(), {.element = s.m("A = 16")});
    ASSERT_TRUE(piece.ok()) << piece.status();
    absl::Status moved;
    if (tier == Tier::kHbm) {
      absl::StatusOr<HbmTensor> tile = HbmTensor(*whole).tile(s.m("A"), 16, 16 * k);
      ASSERT_TRUE(tile.ok()) << tile.status();
      // Half of the pieces come straight from the host.
      moved = k % 2 == 0 ? MoveInto(ctx.pdma, *piece, *tile) : MoveInto(ctx.pdma, Piece(s, k), *tile);
    } else {
      absl::StatusOr<DmTensor> tile = DmTensor(*whole).tile(s.m("A"), 16, 16 * k);
      ASSERT_TRUE(tile.ok()) << tile.status();
      moved = MoveInto(ctx.tdma, *piece, *tile);
    }
    ASSERT_TRUE(moved.ok()) << moved;
  }
  absl::StatusOr<HostTensor> back = tier == Tier::kHbm ? HbmTensor(*whole).to_host(ctx.pdma, s.m("A"))
                                                       : DmTensor(*whole).to_host(ctx, s.m("A"));
  ASSERT_TRUE(back.ok()) << back.status();
  for (int64_t a = 0; a < 64; ++a) ASSERT_EQ(*back->Get(a), PieceValue(a / 16, a % 16)) << "A = " << a;
}

TEST(MoveIntoTest, PiecesAssembleOneTensorOnTheInterpreter) {
  interp::Interpreter interp;
  for (Tier tier : {Tier::kHbm, Tier::kDm, Tier::kSpm}) AssembleFromPieces(interp, tier);
}

TEST(MoveIntoTest, PiecesAssembleOneTensorOnTheJit) {
  std::unique_ptr<jit::JitBackend> jit = *jit::JitBackend::Create();
  for (Tier tier : {Tier::kHbm, Tier::kDm, Tier::kSpm}) AssembleFromPieces(*jit, tier);
}

TEST(MoveIntoTest, AWholeTensorIsOverwrittenInPlace) {
  MappingScope s = *MappingScope::Parse("A = 64");
  Device device(1);
  interp::Interpreter interp;
  Context ctx(device, interp);
  HostTensor input = *HostTensor::Iota(DType::kI32, s.m("A"));
  HbmTensor src = *input.to_hbm(ctx.pdma, 0, {.element = s.m("A")});
  HbmTensor dst = *HbmTensor::Create(device, DType::kI32, {.element = s.m("A % 8, A / 8")}, 0x1000);
  ASSERT_TRUE(MoveInto(ctx.tdma, src, dst).ok());
  EXPECT_EQ(dst.address(), 0x1000);  // no new tensor: the existing one holds the data
  EXPECT_EQ(dst.to_host(ctx.pdma, s.m("A"))->ToBits(), input.ToBits());
}

TEST(MoveIntoTest, RulesOfAMoveApply) {
  MappingScope s = *MappingScope::Parse("A = 64");
  Device device(1);
  interp::Interpreter interp;
  Context ctx(device, interp);
  HbmTensor i32 = *HostTensor::Iota(DType::kI32, s.m("A"))->to_hbm(ctx.pdma, 0, {.element = s.m("A")});
  HbmTensor i8 = *HostTensor::Iota(DType::kI8, s.m("A"))->to_hbm(ctx.pdma, 0x1000, {.element = s.m("A")});
  DmTensor dm = *DmTensor::Create(device, DType::kI32, {.cluster = s.m("1 # 2"), .slice = s.m("1 # 256"),
                                                        .element = s.m("A")}, 0x400);
  EXPECT_THAT(Msg(MoveInto(ctx.tdma, i32, i8)), HasSubstr("keeps the element type"));
  EXPECT_THAT(Msg(MoveInto(ctx.pdma, i32, dm)), HasSubstr("DMA Context"));
  // A view starting off the 8-byte grid of DM (A = 1 is 4 bytes in).
  DmTensor odd = *dm.tile(s.m("A"), 16, 1);
  HbmTensor piece = *HostTensor::Iota(DType::kI32, s.m("A = 16"))->to_hbm(ctx.pdma, 0x2000, {.element = s.m("A = 16")});
  EXPECT_THAT(Msg(MoveInto(ctx.tdma, piece, odd)), HasSubstr("DMA Alignment"));
  // Indices the view does not hold.
  HbmTensor wide = *HostTensor::Iota(DType::kI32, s.m("A = 32"))->to_hbm(ctx.pdma, 0x3000, {.element = s.m("A = 32")});
  EXPECT_FALSE(MoveInto(ctx.tdma, wide, *dm.tile(s.m("A"), 16, 16)).ok());
  // A released destination.
  HbmTensor gone = *HbmTensor::Create(device, DType::kI32, {.element = s.m("A")}, 0x5000);
  gone.Release();
  EXPECT_FALSE(MoveInto(ctx.tdma, i32, gone).ok());
}

TEST(MoveIntoTest, ATracedMoveIntoAViewReplaysOnTheJit) {
  MappingScope s = *MappingScope::Parse("A = 64");
  Device device(1);
  interp::Interpreter interp;
  Context setup(device, interp);
  HbmTensor whole = *HbmTensor::Create(device, DType::kI32, {.element = s.m("A")}, 0x4000);
  HbmTensor piece = *Piece(s, 2).to_hbm(setup.pdma, 0x8000, {.element = s.m("A = 16")});
  KernelOf kernel = [&](Context& ctx, const std::vector<DeviceTensor>& in) -> absl::StatusOr<std::vector<DeviceTensor>> {
    HbmTensor target(in[0]);
    absl::StatusOr<HbmTensor> tile = target.tile(s.m("A"), 16, 32);
    if (!tile.ok()) return tile.status();
    absl::Status moved = MoveInto(ctx.tdma, in[1], *tile);
    if (!moved.ok()) return moved;
    return std::vector<DeviceTensor>{target};
  };
  std::unique_ptr<jit::JitBackend> jit = *jit::JitBackend::Create();
  absl::StatusOr<Program> program = jit->Prepare(kernel, {whole, piece});
  ASSERT_TRUE(program.ok()) << program.status();
  // The zeros elsewhere are written first (uninitialized reads are errors by default).
  ASSERT_TRUE(MoveInto(setup.pdma, *HostTensor::Zeros(DType::kI32, s.m("A")), whole).ok());
  absl::StatusOr<std::vector<DeviceTensor>> out = Launch(*program, device, *jit, {whole, piece});
  ASSERT_TRUE(out.ok()) << out.status();
  HostTensor back = *HbmTensor((*out)[0]).to_host(setup.pdma, s.m("A"));
  for (int64_t a = 0; a < 64; ++a) {
    ASSERT_EQ(*back.Get(a), a / 16 == 2 ? PieceValue(2, a % 16) : 0) << "A = " << a;
  }
}

TEST(JitDefaultsTest, ALibraryJitStartsOneThreadUnlessAsked) {
  std::unique_ptr<jit::JitBackend> jit = *jit::JitBackend::Create();
  EXPECT_EQ(jit->threads(), 1);
}

}  // namespace
}  // namespace visa
