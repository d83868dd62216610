// DMA moves: layout changes across host, HBM, DM, SPM and chips checked element by element against
// the host tensor; the manual's examples; and every rule a move can break.
#include <algorithm>
#include <random>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "dsl/axes.h"
#include "dsl/mapping_parser.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "runtime/device.h"
#include "runtime/dma.h"
#include "runtime/host_tensor.h"
#include "runtime/relayout.h"
#include "runtime/scalar_convert.h"
#include "runtime/tensor.h"

namespace visa {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;

std::string Msg(const absl::Status& status) { return std::string(status.message()); }

MappingScope Scope(absl::string_view axes) { return MappingScope(*Axes::Parse(axes)); }

// The raw bits of element position `e` of the tensor's unit `unit`, read straight from device
// memory: an oracle that does not go through the relayout code.
uint32_t RawElement(const DeviceTensor& t, int64_t unit, int64_t e) {
  const int bits = StorageBits(t.dtype());
  const int64_t byte = t.address() + e * bits / 8;
  std::vector<uint8_t> raw(std::max(1, bits / 8));
  absl::Status s = t.device().Read(t.tier(), unit, byte, absl::MakeSpan(raw));
  EXPECT_TRUE(s.ok()) << s;
  if (bits == 4) return (e % 2 == 0) ? (raw[0] & 0xf) : (raw[0] >> 4);
  uint32_t value = 0;
  for (size_t i = 0; i < raw.size(); ++i) value |= uint32_t{raw[i]} << (8 * i);
  return value;
}

Index Restrict(const Index& index, const Mapping& to) {
  std::vector<std::string> names = to.axis_names();
  Index out;
  for (const auto& [axis, value] : index.coords()) {
    if (std::find(names.begin(), names.end(), axis) != names.end()) out.Set(axis, value);
  }
  return out;
}

// Every `stride`-th position of the tensor, when live, holds the reference's element of the same
// tensor index (restricted to the reference's axes), bit for bit. Uses Mapping::map and
// HostTensor::Get(Index) (Mapping::inverse), not the relayout's digit arithmetic.
void ExpectHolds(const DeviceTensor& t, const HostTensor& reference, int64_t stride = 1) {
  const Mapping full = t.full_mapping();
  const int64_t unit_size = t.element().size();
  int64_t checked = 0;
  for (int64_t p = 0; p < full.size(); p += stride) {
    Cell cell = full.map(p);
    if (!cell.live()) continue;
    const int64_t prefix = p / unit_size;
    const int64_t e = p % unit_size + t.window_offset();
    absl::StatusOr<uint32_t> want = reference.GetBits(Restrict(cell.index, reference.mapping()));
    ASSERT_TRUE(want.ok()) << want.status() << " at " << cell.index.ToString();
    ASSERT_EQ(RawElement(t, t.placement().UnitOf(prefix), e), *want)
        << t.ToString() << " position " << p << " index " << cell.index.ToString();
    ++checked;
  }
  EXPECT_GT(checked, 0);
}

class DmaTest : public ::testing::Test {
 protected:
  void SetUpDevice(int chips) {
    device = std::make_unique<Device>(chips);
    // These tests check what a move writes, on layouts (the manual's examples among them) whose
    // packets break the DMA's 8-byte rule; the rule has its own tests (dma_packet_test.cc).
    device->set_dma_packet_rule(false);
    tdma = std::make_unique<Dma>(Dma::Tensor(*device));
    pdma = std::make_unique<Dma>(Dma::Pcie(*device));
  }
  void SetUp() override { SetUpDevice(1); }

  std::unique_ptr<Device> device;
  std::unique_ptr<Dma> tdma, pdma;
};

// ---- The manual's examples ------------------------------------------------------------------

// "Tensor Functions": hbm.to_dm(&mut ctx.tdma, 1 << 16) from HbmTensor<bf16, m![A], m![B]> to
// DmTensor<bf16, m![A], m![1], m![B / 2], m![B % 2]>. The manual's own Size Constraint makes
// Cluster = m![1] illegal (Cluster::SIZE must be 2); with m![1 # 2] the move works.
TEST_F(DmaTest, TensorFunctionsExampleHbmToDm) {
  SetUpDevice(8);
  MappingScope s = Scope("A = 8, B = 512");
  auto host = HostTensor::Random(DType::kBF16, s.m("A, B"), 1);
  ASSERT_TRUE(host.ok());
  auto hbm = host->to_hbm(*pdma, 0, s.m("A"), s.m("B"));
  ASSERT_TRUE(hbm.ok()) << hbm.status();
  ExpectHolds(*hbm, *host);

  auto as_written = hbm->to_dm(*tdma, 1 << 16, s.m("1"), s.m("B / 2"), s.m("B % 2"));
  EXPECT_THAT(Msg(as_written.status()),
              HasSubstr("Size Constraint: Cluster::SIZE must be 2 (pad with `# 2`), got 1 for mapping `1`"));

  auto dm = hbm->to_dm(*tdma, 1 << 16, s.m("1 # 2"), s.m("B / 2"), s.m("B % 2"));
  ASSERT_TRUE(dm.ok()) << dm.status();
  EXPECT_EQ(dm->address(), 0x10000);
  EXPECT_EQ(dm->chip().ToString(), "A");
  ExpectHolds(*dm, *host);
  // Chip i, cluster 0, slice j holds B = 2j, 2j + 1 of A = i at DM 0x10000.
  std::vector<uint8_t> raw(4);
  ASSERT_TRUE(device->ReadDm({5, 0, 100}, 0x10000, absl::MakeSpan(raw)).ok());
  Index index;
  index.Set("A", 5);
  index.Set("B", 201);
  EXPECT_EQ(uint32_t{raw[2]} | uint32_t{raw[3]} << 8, *host->GetBits(index));
}

// "Quick start" constant addition: the data movement around the kernel.
TEST_F(DmaTest, ConstantAdditionExampleRoundTrip) {
  MappingScope s = Scope("A = 2048");
  auto input = HostTensor::Random(DType::kI32, s.m("A"), 42);
  auto in_hbm = input->to_hbm(*pdma, 0, s.m("1"), s.m("A"));
  ASSERT_TRUE(in_hbm.ok()) << in_hbm.status();
  auto dm = in_hbm->to_dm(*tdma, 0, s.m("1 # 2"), s.m("A / 8 # 256"), s.m("A % 8"));
  ASSERT_TRUE(dm.ok()) << dm.status();
  ExpectHolds(*dm, *input);
  auto out_hbm = dm->to_hbm(*tdma, 1 << 28, s.m("A"));
  ASSERT_TRUE(out_hbm.ok()) << out_hbm.status();
  auto out = out_hbm->to_host(*pdma, s.m("A"));
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_TRUE(*out == *input);
}

// "DMA Engine" > Layout Transformation: HBM NCHW to DM NHWC (Cluster and Slice padded as the Size
// Constraint requires; the manual writes m![1] for both).
TEST_F(DmaTest, LayoutTransformationExampleNchwToNhwc) {
  MappingScope s = Scope("N = 4, C = 3, H = 8, W = 8");
  auto host = HostTensor::Random(DType::kI8, s.m("N, C, H, W"), 3);
  auto hbm = host->to_hbm(*pdma, 0, s.m("1"), s.m("N, C, H, W"));
  ASSERT_TRUE(hbm.ok());
  EXPECT_THAT(Msg(hbm->to_dm(*tdma, 0, s.m("1"), s.m("1"), s.m("N, H, W, C")).status()),
              HasSubstr("Cluster::SIZE must be 2"));
  EXPECT_THAT(Msg(hbm->to_dm(*tdma, 0, s.m("1 # 2"), s.m("1"), s.m("N, H, W, C")).status()),
              HasSubstr("Slice::SIZE must be 256 (pad with `# 256`), got 1 for mapping `1`"));
  auto dm = hbm->to_dm(*tdma, 0, s.m("1 # 2"), s.m("1 # 256"), s.m("N, H, W, C"));
  ASSERT_TRUE(dm.ok()) << dm.status();
  ExpectHolds(*dm, *host);
}

// "DMA Engine" > Basic HBM-to-HBM Layout Transformation: the bytes land where the manual's
// pseudocode writes them (read n*192 + c*64 + h*8 + w at 1024, write h*96 + c*32 + n*8 + w at 2048).
TEST_F(DmaTest, HbmToHbmExampleMatchesTheManualsAddresses) {
  MappingScope s = Scope("N = 4, C = 3, H = 8, W = 8");
  auto host = HostTensor::Random(DType::kI8, s.m("N, C, H, W"), 4);
  auto in = host->to_hbm(*pdma, 1024, s.m("1"), s.m("N, C, H, W"));
  ASSERT_TRUE(in.ok());
  auto out = in->to_hbm(*tdma, 2048, s.m("H, C, N, W"));
  ASSERT_TRUE(out.ok()) << out.status();
  std::vector<uint8_t> src(768), dst(768);
  ASSERT_TRUE(device->ReadHbm(0, 1024, absl::MakeSpan(src)).ok());
  ASSERT_TRUE(device->ReadHbm(0, 2048, absl::MakeSpan(dst)).ok());
  for (int h = 0; h < 8; ++h)
    for (int c = 0; c < 3; ++c)
      for (int n = 0; n < 4; ++n)
        for (int w = 0; w < 8; ++w)
          ASSERT_EQ(dst[h * 96 + c * 32 + n * 8 + w], src[n * 192 + c * 64 + h * 8 + w]);
  ExpectHolds(*out, *host);
}

// "DMA Engine" > Example 1: [A, B, C] at 0 to [B, A, C] at 16384; write address 256a + 2048b + c.
TEST_F(DmaTest, Example1HbmToHbmAddresses) {
  MappingScope s = Scope("A = 8, B = 8, C = 256");
  auto host = HostTensor::Random(DType::kI8, s.m("A, B, C"), 5);
  auto in = host->to_hbm(*pdma, 0, s.m("1"), s.m("A, B, C"));
  auto out = in->to_hbm(*tdma, 16384, s.m("B, A, C"));
  ASSERT_TRUE(out.ok()) << out.status();
  std::vector<uint8_t> src(16384), dst(16384);
  ASSERT_TRUE(device->ReadHbm(0, 0, absl::MakeSpan(src)).ok());
  ASSERT_TRUE(device->ReadHbm(0, 16384, absl::MakeSpan(dst)).ok());
  for (int a = 0; a < 8; ++a)
    for (int b = 0; b < 8; ++b)
      for (int c = 0; c < 256; ++c) ASSERT_EQ(dst[256 * a + 2048 * b + c], src[a * 2048 + b * 256 + c]);
}

// "DMA Engine" > Examples 2 and 3 (16 Mi elements each): HBM [B, A, C] to DM slice A / 4,
// element [A % 4, B, C]; then DM to DM element [B, A % 4, C] at 4 * 256 * 256. The manual's
// Slice = m![A / 4] has 64 positions, so it is padded to 256 here.
TEST_F(DmaTest, Examples2And3HbmToDmToDm) {
  MappingScope s = Scope("A = 256, B = 256, C = 256");
  auto host = HostTensor::Random(DType::kI8, s.m("B, A, C"), 6);
  auto hbm = host->to_hbm(*pdma, 0, s.m("1"), s.m("B, A, C"));
  ASSERT_TRUE(hbm.ok());
  auto dm = hbm->to_dm(*tdma, 0, s.m("1 # 2"), s.m("A / 4 # 256"), s.m("A % 4, B, C"));
  ASSERT_TRUE(dm.ok()) << dm.status();
  auto dm2 = dm->to_dm(*tdma, 4 * 256 * 256, s.m("1 # 2"), s.m("A / 4 # 256"), s.m("B, A % 4, C"));
  ASSERT_TRUE(dm2.ok()) << dm2.status();
  ExpectHolds(*dm, *host, 997);
  ExpectHolds(*dm2, *host, 1009);
  // Slice j's second tensor ends exactly at the end of its 512 KB.
  EXPECT_EQ(dm2->address() + dm2->placement().unit_bytes(), 512 * 1024);
}

// ---- Chains with random data ----------------------------------------------------------------

struct ChainCase {
  DType dtype;
  const char* host;
  const char* hbm;
  const char* cluster;
  const char* slice;
  const char* dm;
  const char* hbm_back;
};

class DmaChain : public DmaTest, public ::testing::WithParamInterface<ChainCase> {};

TEST_P(DmaChain, HostHbmDmHbmHostIsBitForBit) {
  const ChainCase& c = GetParam();
  MappingScope s = Scope("A = 64, B = 96, C = 8");
  auto host = HostTensor::Random(c.dtype, s.m(c.host), 11);
  ASSERT_TRUE(host.ok()) << host.status();
  auto hbm = host->to_hbm(*pdma, Address::Any(), s.m("1"), s.m(c.hbm));
  ASSERT_TRUE(hbm.ok()) << hbm.status();
  ExpectHolds(*hbm, *host);
  auto dm = hbm->to_dm(*tdma, Address::Any(), s.m(c.cluster), s.m(c.slice), s.m(c.dm));
  ASSERT_TRUE(dm.ok()) << dm.status();
  ExpectHolds(*dm, *host);
  auto back = dm->to_hbm(*tdma, Address::Any(), s.m(c.hbm_back));
  ASSERT_TRUE(back.ok()) << back.status();
  ExpectHolds(*back, *host);
  auto out = back->to_host(*pdma, s.m(c.host));
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_TRUE(*out == *host) << out->ToString() << " vs " << host->ToString();
  EXPECT_TRUE(hbm->CheckReadable().ok());  // automatic placement never overlapped
}

INSTANTIATE_TEST_SUITE_P(
    Layouts, DmaChain,
    ::testing::Values(
        ChainCase{DType::kBF16, "A, B", "B, A", "1 # 2", "A / 4 # 256", "B, A % 4", "A, B"},
        ChainCase{DType::kI8, "A, B, C", "C, A, B", "A / 32", "B / 8 # 256", "A % 32, B % 8, C", "B, C, A"},
        ChainCase{DType::kI4, "A, B", "A, B", "B / 48", "A # 256", "B % 48", "B, A"},
        ChainCase{DType::kI4, "A, C # 9", "C, A", "1 # 2", "[A / 2, C / 2] # 256", "C % 2, A % 2 # 3", "A, C"},
        ChainCase{DType::kF32, "A, B", "B / 3, A, B % 3", "1 # 2", "A / 2 # 256", "[B, A % 2] # 200", "A, B"},
        ChainCase{DType::kF8E4M3, "C, B", "B, C", "C / 4", "B # 256", "C % 4", "C, B"},
        ChainCase{DType::kI16, "A, B", "[A, B] # 7000", "1 # 2", "B / 2 # 256", "A, B % 2", "B, A"}));

// ---- Across chips ---------------------------------------------------------------------------

TEST_F(DmaTest, HbmToHbmAcrossChipsChangesTheChipMapping) {
  SetUpDevice(2);
  MappingScope s = Scope("A = 8, B = 64");
  auto host = HostTensor::Random(DType::kBF16, s.m("A, B"), 21);
  auto hbm = host->to_hbm(*pdma, 0, s.m("A / 4"), s.m("A % 4, B"));
  ASSERT_TRUE(hbm.ok()) << hbm.status();
  ExpectHolds(*hbm, *host);
  EXPECT_FALSE(pdma->last().crosses_chips);
  auto moved = hbm->to_hbm(*tdma, 0x10000, s.m("B / 32"), s.m("A, B % 32"));
  ASSERT_TRUE(moved.ok()) << moved.status();
  EXPECT_TRUE(tdma->last().crosses_chips);
  ExpectHolds(*moved, *host);
  // PCIe DMA may move HBM to HBM as well.
  auto again = moved->to_hbm(*pdma, 0x20000, s.m("A / 4"), s.m("B, A % 4"));
  ASSERT_TRUE(again.ok()) << again.status();
  ExpectHolds(*again, *host);
}

TEST_F(DmaTest, HbmToDmAcrossChipsAndBroadcastToEveryChip) {
  SetUpDevice(4);
  MappingScope s = Scope("A = 8, B = 256");
  auto host = HostTensor::Random(DType::kI8, s.m("A, B"), 22);
  auto hbm = host->to_hbm(*pdma, 0, s.m("1 # 4"), s.m("A, B"));  // all on chip 0
  ASSERT_TRUE(hbm.ok()) << hbm.status();
  auto spread = hbm->to_dm(*tdma, 0, s.m("A / 2"), s.m("A % 2"), s.m("B"), s.m("1 # 8"));
  ASSERT_TRUE(spread.ok()) << spread.status();
  EXPECT_TRUE(tdma->last().crosses_chips);
  ExpectHolds(*spread, *host);
  // A broadcast Chip mapping (`4`) puts a copy on every chip.
  auto copies = hbm->to_hbm(*tdma, 0x4000, s.m("4"), s.m("B, A"));
  ASSERT_TRUE(copies.ok()) << copies.status();
  ExpectHolds(*copies, *host);
  std::vector<uint8_t> chip0(2048), chip3(2048);
  ASSERT_TRUE(device->ReadHbm(0, 0x4000, absl::MakeSpan(chip0)).ok());
  ASSERT_TRUE(device->ReadHbm(3, 0x4000, absl::MakeSpan(chip3)).ok());
  EXPECT_EQ(chip0, chip3);
}

// ---- SPM ----------------------------------------------------------------------------------

TEST_F(DmaTest, SpmMovesStayOnTheirChip) {
  SetUpDevice(2);
  MappingScope s = Scope("A = 512, B = 16");
  auto host = HostTensor::Random(DType::kF16, s.m("A, B"), 31);
  auto hbm = host->to_hbm(*pdma, 0, s.m("A / 256"), s.m("A % 256, B"));
  ASSERT_TRUE(hbm.ok());
  auto spm = hbm->to_spm(*tdma, 0, s.m("A % 256 / 128"), s.m("A % 128 / 2 # 256"), s.m("A % 2, B"));
  ASSERT_TRUE(spm.ok()) << spm.status();
  EXPECT_EQ(spm->tier(), Tier::kSpm);
  ExpectHolds(*spm, *host);
  auto dm = spm->to_dm(*tdma, 0, s.m("1 # 2"), s.m("A % 256 # 256"), s.m("B"));
  ASSERT_TRUE(dm.ok()) << dm.status();
  ExpectHolds(*dm, *host);
  auto spm2 = dm->to_spm(*tdma, 0x100, s.m("1 # 2"), s.m("A % 256 # 256"), s.m("B"));
  ASSERT_TRUE(spm2.ok()) << spm2.status();
  ExpectHolds(*spm2, *host);
  auto back = spm2->to_hbm(*tdma, 0x8000, s.m("B, A % 256"));
  ASSERT_TRUE(back.ok()) << back.status();
  ExpectHolds(*back, *host);
  // Swapping the chips of an SPM tensor is an inter-chip transfer: refused.
  auto across = spm->to_dm(*tdma, 0x1000, s.m("B / 8"), s.m("A % 256 / 128"),
                           s.m("A % 128 / 2 # 256"), s.m("A % 2, A / 256, B % 8"));
  EXPECT_THAT(Msg(across.status()), HasSubstr("SPM transfers are restricted to the same chip"));
}

TEST_F(DmaTest, SpmSharesBytesWithTheTopOfDm) {
  MappingScope s = Scope("A = 256, B = 4");
  auto host = HostTensor::Random(DType::kI32, s.m("A, B"), 32);
  auto hbm = host->to_hbm(*pdma, 0, s.m("1"), s.m("A, B"));
  auto spm = hbm->to_spm(*tdma, 0, s.m("1 # 2"), s.m("A"), s.m("B"));
  ASSERT_TRUE(spm.ok()) << spm.status();
  spm->SetName("table");
  auto dm = hbm->to_dm(*tdma, kSpmOffsetInDm, s.m("1 # 2"), s.m("A"), s.m("B"));
  ASSERT_TRUE(dm.ok()) << dm.status();
  dm->SetName("scratch");
  EXPECT_THAT(Msg(spm->to_hbm(*tdma, 0x1000, s.m("A, B")).status()),
              AllOf(HasSubstr("`table` (SPM chip 0 cluster 0 slice 0, bytes [0x0, 0x10))"),
                    HasSubstr("`scratch` (DM chip 0 cluster 0 slice 0, bytes [0x70000, 0x70010))")));
}

// ---- Views and tiles ------------------------------------------------------------------------

TEST_F(DmaTest, TilesMoveTheirWindow) {
  MappingScope s = Scope("A = 8, B = 512");
  auto host = HostTensor::Random(DType::kBF16, s.m("A, B"), 41);
  auto hbm = host->to_hbm(*pdma, 0, s.m("1"), s.m("A, B"));
  ASSERT_TRUE(hbm.ok());
  // The manual writes the window as `A, B = 2 # 4`, which does not keep B's 512 footprint.
  EXPECT_FALSE(hbm->view().tile(s.m("B"), 2, s.m("A, B = 2 # 4"), 2).ok());
  auto tile23 = hbm->view().tile(s.m("B"), 2, s.m("A, B = 2 # 512"), 2);
  ASSERT_TRUE(tile23.ok()) << tile23.status();
  EXPECT_TRUE(tile23->is_view());
  EXPECT_EQ(tile23->window_offset(), 2);
  // Tile-local coordinates: the window's B = 0, 1 are the tensor's B = 2, 3.
  auto expect_window = [&](const HostTensor& out, int start) {
    for (int a = 0; a < 8; ++a) {
      for (int b = 0; b < 2; ++b) {
        Index local, global;
        local.Set("A", a);
        local.Set("B", b);
        global.Set("A", a);
        global.Set("B", b + start);
        EXPECT_EQ(*out.GetBits(local), *host->GetBits(global)) << a << ", " << b;
      }
    }
  };
  auto copy = tile23->to_hbm(*tdma, 0x10000, s.m("A, B = 2"));
  ASSERT_TRUE(copy.ok()) << copy.status();
  expect_window(*copy->to_host(*pdma, s.m("A, B = 2")), 2);
  // HBM -> DM reads must start 8-byte aligned: the window at B = 2 starts at byte 4.
  EXPECT_THAT(Msg(tile23->to_dm(*tdma, 0, s.m("1 # 2"), s.m("A # 256"), s.m("B = 2 # 4")).status()),
              HasSubstr("8-byte aligned read address (manual, \"DMA Engine\" > Alignment "
                        "Constraints), got 0x4"));
  auto tile45 = hbm->tile(s.m("B"), 2, 4);
  ASSERT_TRUE(tile45.ok());
  auto dm = tile45->to_dm(*tdma, 0, s.m("1 # 2"), s.m("A # 256"), s.m("B = 2 # 4"));
  ASSERT_TRUE(dm.ok()) << dm.status();
  auto back = dm->to_hbm(*tdma, 0x20000, s.m("A, B = 2"));
  ASSERT_TRUE(back.ok()) << back.status();
  expect_window(*back->to_host(*pdma, s.m("A, B = 2")), 4);
}

// Notes 5.4 vector: [A=8, H=4] holding 0..31; tile A at 3 then H at 2 (LEN 2) -> [14, 15].
// (Tiled here H first: dsl Tile refuses H after a LEN-1 tile of A, whose window normalizes to
// `H # 32`.)
TEST_F(DmaTest, NestedTilesAccumulateTheirOffsets) {
  MappingScope s = Scope("A = 8, H = 4");
  auto host = HostTensor::Iota(DType::kI32, s.m("A, H"));
  auto hbm = host->to_hbm(*pdma, 0, s.m("1"), s.m("A, H"));
  auto pair = hbm->tile(s.m("H"), 2, 2);
  ASSERT_TRUE(pair.ok()) << pair.status();
  auto cells = pair->tile(s.m("A"), 1, 3);
  ASSERT_TRUE(cells.ok()) << cells.status();
  EXPECT_EQ(cells->window_offset(), 14);
  auto out = cells->to_host(*pdma, s.m("H = 2"));
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(out->ToValues(), (std::vector<double>{14, 15}));
}

// ---- Semantics: broadcast, padding, identity -----------------------------------------------

TEST_F(DmaTest, DestinationAxesTheSourceLacksAreBroadcast) {
  MappingScope s = Scope("A = 4, B = 3");
  auto host = HostTensor::FromValues(DType::kI8, s.m("A"), {1, 2, 3, 4});
  auto hbm = host->to_hbm(*pdma, 0, s.m("1"), s.m("A, B"));
  ASSERT_TRUE(hbm.ok()) << hbm.status();
  auto out = hbm->to_host(*pdma, s.m("A, B"));
  EXPECT_EQ(out->ToValues(), (std::vector<double>{1, 1, 1, 2, 2, 2, 3, 3, 3, 4, 4, 4}));
}

TEST_F(DmaTest, TransposeAndCompositeVectorsOfTheNotes) {
  MappingScope s = Scope("K = 2, N = 3, A = 3, B = 4");
  auto kn = HostTensor::FromValues(DType::kI32, s.m("K, N"), {0, 1, 2, 10, 11, 12});
  auto hbm = kn->to_hbm(*pdma, 0, s.m("1"), s.m("N, K"));
  EXPECT_EQ(hbm->to_host(*pdma, s.m("N, K"))->ToValues(), (std::vector<double>{0, 10, 1, 11, 2, 12}));
  std::vector<double> values(12);
  for (int i = 0; i < 12; ++i) values[i] = i;
  auto ba = HostTensor::FromValues(DType::kI32, s.m("[B, A] # 12"), values);
  auto ab = ba->to_hbm(*pdma, 0x100, s.m("1"), s.m("A, B"));
  ASSERT_TRUE(ab.ok()) << ab.status();
  EXPECT_EQ(ab->to_host(*pdma, s.m("A, B"))->ToValues(),
            (std::vector<double>{0, 3, 6, 9, 1, 4, 7, 10, 2, 5, 8, 11}));
}

TEST_F(DmaTest, DestinationPaddingIsNotWritten) {
  MappingScope s = Scope("A = 8, P = 16");
  auto ones = HostTensor::FromValues(DType::kI8, s.m("P"), std::vector<double>(16, 17));
  auto filler = ones->to_hbm(*pdma, 0, s.m("1"), s.m("P"));
  ASSERT_TRUE(filler.ok());
  auto host = HostTensor::Iota(DType::kI8, s.m("A"));
  auto padded = host->to_hbm(*pdma, 0, s.m("1"), s.m("A # 16"));
  ASSERT_TRUE(padded.ok()) << padded.status();
  std::vector<uint8_t> raw(16);
  ASSERT_TRUE(device->ReadHbm(0, 0, absl::MakeSpan(raw)).ok());
  EXPECT_EQ(raw, (std::vector<uint8_t>{0, 1, 2, 3, 4, 5, 6, 7, 17, 17, 17, 17, 17, 17, 17, 17}));
}

TEST_F(DmaTest, AnIndexTheSourceDoesNotHoldIsAnError) {
  MappingScope s = Scope("A = 8");
  auto host = HostTensor::Iota(DType::kI8, s.m("A % 4"));  // holds A = 0..3 only
  auto hbm = host->to_hbm(*pdma, 0, s.m("1"), s.m("A"));
  EXPECT_THAT(Msg(hbm.status()),
              AllOf(HasSubstr("Tensor Function: destination position 4"), HasSubstr("{A=4}"),
                    HasSubstr("which the source `A % 4` (axes A) does not hold")));
}

TEST_F(DmaTest, DroppingAnIndexIsAnError) {
  MappingScope s = Scope("A = 4, B = 2");
  auto host = HostTensor::Iota(DType::kI8, s.m("A, B"));
  auto hbm = host->to_hbm(*pdma, 0, s.m("1"), s.m("A"));
  EXPECT_THAT(Msg(hbm.status()),
              AllOf(HasSubstr("Tensor Function: the source `A, B` holds tensor index {B=1}"),
                    HasSubstr("the move would drop it")));
  EXPECT_EQ(device->resident_bytes(), 0);  // a failed move writes nothing
}

TEST_F(DmaTest, LinearCombinationsUseTheGeneralPath) {
  // The manual's sliding window: position N + 2F holds (N, F); a buffer of 9 elements.
  MappingScope s = Scope("N = 5, F = 3");
  auto window = s.m("$(N: 1, F: 2)");
  ASSERT_TRUE(window.ok()) << window.status();
  std::vector<double> values(window.size());
  for (size_t i = 0; i < values.size(); ++i) values[i] = static_cast<double>(i);
  auto host = HostTensor::FromValues(DType::kI32, window, values);
  ASSERT_TRUE(host.ok()) << host.status();
  auto hbm = host->to_hbm(*pdma, 0, s.m("1"), s.m("N, F"));
  ASSERT_TRUE(hbm.ok()) << hbm.status();
  auto out = hbm->to_host(*pdma, s.m("N, F"));
  for (int n = 0; n < 5; ++n)
    for (int f = 0; f < 3; ++f) EXPECT_EQ(*out->Get(n * 3 + f), n + 2 * f);
}

// ---- The relayout table against a brute-force oracle ----------------------------------------

// A random layout of A = 6, B = 4, C = 8 (optionally with a D the other side lacks): each axis
// split into digits, the digits shuffled, some padded, sometimes a broadcast digit.
std::string RandomLayout(const MappingScope& s, std::mt19937& rng, bool with_d) {
  std::vector<std::string> terms;
  auto pick = [&](std::vector<std::vector<std::string>> options) {
    for (const std::string& t : options[rng() % options.size()]) terms.push_back(t);
  };
  pick({{"A"}, {"A / 2", "A % 2"}, {"A / 3", "A % 3"}});
  pick({{"B"}, {"B / 2", "B % 2"}});
  pick({{"C"}, {"C / 4", "C % 4"}, {"C / 2 % 2", "C % 2", "C / 4"}});
  if (with_d) terms.push_back("D");
  if (rng() % 3 == 0) terms.push_back("2");
  std::shuffle(terms.begin(), terms.end(), rng);
  for (std::string& t : terms) {
    if (rng() % 4 == 0) t = absl::StrCat("[", t, "] # ", s.m(t).size() + 1 + rng() % 3);
  }
  return absl::StrJoin(terms, ", ");
}

TEST(RelayoutTable, MatchesMapAndInverseOnRandomLayouts) {
  MappingScope s = Scope("A = 6, B = 4, C = 8, D = 3");
  std::mt19937 rng(2024);
  int fast = 0;
  for (int round = 0; round < 400; ++round) {
    Mapping src = s.m(RandomLayout(s, rng, false));
    Mapping dst = s.m(RandomLayout(s, rng, rng() % 2 == 0));
    ASSERT_TRUE(src.ok() && dst.ok()) << src.status() << dst.status();
    auto plan = RelayoutPlan::Make(dst, src);
    ASSERT_TRUE(plan.ok());
    fast += plan->fast();
    auto table = plan->Table();
    ASSERT_TRUE(table.ok()) << table.status() << " for " << dst.ToString() << " <- " << src.ToString();
    std::vector<int64_t> want_dst, want_src;
    for (int64_t p = 0; p < dst.size(); ++p) {
      Cell cell = dst.map(p);
      if (!cell.live()) continue;
      want_dst.push_back(p);
      want_src.push_back(*src.inverse(Restrict(cell.index, src)));
    }
    EXPECT_EQ(table->first, want_dst) << dst.ToString() << " <- " << src.ToString();
    EXPECT_EQ(table->second, want_src) << dst.ToString() << " <- " << src.ToString();
  }
  EXPECT_GT(fast, 300);
}

TEST(RelayoutTable, RunsAreContiguousStridedOrBroadcast) {
  MappingScope s = Scope("R = 4, C = 8, D = 3");
  std::vector<RelayoutRun> runs;
  auto collect = [&](const char* dst, const char* src) {
    runs.clear();
    auto plan = RelayoutPlan::Make(s.m(dst), s.m(src));
    EXPECT_TRUE(plan->Run([&](absl::Span<const RelayoutRun> chunk) {
      runs.insert(runs.end(), chunk.begin(), chunk.end());
    }).ok());
  };
  collect("R, C", "R, C");
  EXPECT_EQ(runs, (std::vector<RelayoutRun>{{0, 0, 32, 1}}));
  collect("C, R", "R, C");  // a transpose: four strided gathers of 8... per C row
  EXPECT_EQ(runs.size(), 8u);
  EXPECT_EQ(runs[1], (RelayoutRun{4, 1, 4, 8}));
  collect("R, D, C", "R, C");  // broadcast D: each row read three times (the third copy of a row
  EXPECT_EQ(runs.size(), 9u);  // and the first of the next read on: they merge)
  collect("R, C, D", "R, C");  // broadcast innermost: stride 0
  EXPECT_EQ(runs[0], (RelayoutRun{0, 0, 3, 0}));
}

// ---- Collisions ----------------------------------------------------------------------------

// The manual's elementwise example writes its result to 1 << 28 where rhs_hbm lives: legal while
// rhs_hbm is dead, an error once it is read again.
TEST_F(DmaTest, ReadingAClobberedTensorNamesBothTensorsAndRanges) {
  MappingScope s = Scope("A = 2048");
  auto lhs = HostTensor::Random(DType::kI32, s.m("A"), 1);
  auto rhs = HostTensor::Random(DType::kI32, s.m("A"), 2);
  auto lhs_hbm = lhs->to_hbm(*pdma, 0, s.m("1"), s.m("A"));
  auto rhs_hbm = rhs->to_hbm(*pdma, 1 << 28, s.m("1"), s.m("A"));
  lhs_hbm->SetName("lhs_hbm");
  rhs_hbm->SetName("rhs_hbm");
  auto lhs_dm = lhs_hbm->to_dm(*tdma, 0, s.m("1 # 2"), s.m("A / 8 # 256"), s.m("A % 8"));
  auto rhs_dm = rhs_hbm->to_dm(*tdma, 1 << 12, s.m("1 # 2"), s.m("A / 8 # 256"), s.m("A % 8"));
  ASSERT_TRUE(lhs_dm.ok() && rhs_dm.ok());
  auto result = lhs_dm->to_hbm(*tdma, (1 << 28) + 0x1000, s.m("A"));
  ASSERT_TRUE(result.ok()) << result.status();
  result->SetName("out_hbm");
  EXPECT_TRUE(lhs_hbm->to_host(*pdma, s.m("A")).ok());
  auto stale = rhs_hbm->to_host(*pdma, s.m("A"));
  EXPECT_THAT(Msg(stale.status()),
              AllOf(HasSubstr("Address Collision: addresses must not collide"),
                    HasSubstr("tensor `rhs_hbm` (HBM chip 0, bytes [0x10000000, 0x10002000))"),
                    HasSubstr("tensor `out_hbm` (HBM chip 0, bytes [0x10001000, 0x10003000))")));
  // A tile of the clobbered tensor that avoids the overwritten bytes is still readable.
  auto intact = rhs_hbm->tile(s.m("A"), 1024, 0);
  ASSERT_TRUE(intact.ok());
  EXPECT_TRUE(intact->to_host(*pdma, s.m("A = 1024")).ok());
}

TEST_F(DmaTest, DmCollisionsArePerSliceAndPerByteRange) {
  MappingScope s = Scope("A = 128, B = 8");
  auto host = HostTensor::Random(DType::kI8, s.m("A, B"), 3);
  auto hbm = host->to_hbm(*pdma, 0, s.m("1"), s.m("A, B"));
  auto first = hbm->to_dm(*tdma, 0x100, s.m("1 # 2"), s.m("A # 256"), s.m("B"));  // slices 0..127
  ASSERT_TRUE(first.ok());
  first->SetName("first");
  // Adjacent bytes of the same slices: no collision.
  auto next = hbm->to_dm(*tdma, 0x108, s.m("1 # 2"), s.m("A # 256"), s.m("B"));
  ASSERT_TRUE(next.ok());
  EXPECT_TRUE(first->CheckReadable().ok());
  // The same bytes of slice 0 only: `first` is clobbered there.
  auto one = host->to_hbm(*pdma, 0x1000, s.m("1"), s.m("B, A"));
  auto second = one->to_dm(*tdma, 0x100, s.m("1 # 2"), s.m("1 # 256"), s.m("A, B"));
  ASSERT_TRUE(second.ok()) << second.status();
  second->SetName("second");
  EXPECT_THAT(Msg(first->to_hbm(*tdma, 0x8000, s.m("A, B")).status()),
              AllOf(HasSubstr("`first` (DM chip 0 cluster 0 slice 0, bytes [0x100, 0x108))"),
                    HasSubstr("`second` (DM chip 0 cluster 0 slice 0, bytes [0x100, 0x500))")));
  // Only slice 0 was overwritten, but a read of the whole tensor covers it.
  EXPECT_THAT(Msg(next->CheckReadable()), HasSubstr("`second`"));
}

// ---- Bad inputs ----------------------------------------------------------------------------

TEST_F(DmaTest, MisalignedAddressesAreRefused) {
  MappingScope s = Scope("A = 2048");
  auto host = HostTensor::Random(DType::kBF16, s.m("A"), 1);
  EXPECT_THAT(Msg(host->to_hbm(*pdma, 0x101, s.m("1"), s.m("A")).status()),
              HasSubstr("Alignment Constraint: the Element start address of a HBM must be a "
                        "multiple of size_of::<bf16>() = 2, got 0x101"));
  auto hbm = host->to_hbm(*pdma, 0x102, s.m("1"), s.m("A"));
  ASSERT_TRUE(hbm.ok());  // HBM is 1-byte aligned for DMA; bf16 needs 2
  EXPECT_THAT(Msg(hbm->to_dm(*tdma, 0, s.m("1 # 2"), s.m("A / 8"), s.m("A % 8")).status()),
              HasSubstr("DMA Alignment: HBM-to-DM transfers need an 8-byte aligned read address"));
  auto aligned = host->to_hbm(*pdma, 0x1000, s.m("1"), s.m("A"));
  EXPECT_THAT(Msg(aligned->to_dm(*tdma, 4, s.m("1 # 2"), s.m("A / 8"), s.m("A % 8")).status()),
              HasSubstr("DMA Alignment: the DM write address must be a multiple of 8 bytes"));
}

TEST_F(DmaTest, OverCapacityIsRefused) {
  MappingScope s = Scope("A = 2048");
  auto host = HostTensor::Random(DType::kI32, s.m("A"), 1);
  auto hbm = host->to_hbm(*pdma, 0, s.m("1"), s.m("A"));
  EXPECT_THAT(Msg(hbm->to_dm(*tdma, 512 * 1024 - 16, s.m("1 # 2"), s.m("A / 8"), s.m("A % 8")).status()),
              HasSubstr("Capacity: the tensor's bytes [0x7fff0, 0x80010) run past the end of the DM"));
  EXPECT_THAT(Msg(host->to_hbm(*pdma, (int64_t{48} << 30) - 4096, s.m("1"), s.m("A")).status()),
              HasSubstr("run past the end of the HBM"));
  EXPECT_THAT(Msg(hbm->to_spm(*tdma, 64 * 1024 - 8, s.m("1 # 2"), s.m("A / 8"), s.m("A % 8")).status()),
              HasSubstr("run past the end of the SPM (64 KB per slice)"));
}

TEST_F(DmaTest, BadLevelSizesAreRefused) {
  MappingScope s = Scope("A = 2048");
  auto host = HostTensor::Random(DType::kI8, s.m("A"), 1);
  auto hbm = host->to_hbm(*pdma, 0, s.m("1"), s.m("A"));
  EXPECT_THAT(Msg(hbm->to_dm(*tdma, 0, s.m("1 # 2"), s.m("A / 16"), s.m("A % 16")).status()),
              HasSubstr("Size Constraint: Slice::SIZE must be 256 (pad with `# 256`), got 128 for "
                        "mapping `A / 16`"));
  EXPECT_THAT(Msg(hbm->to_dm(*tdma, 0, s.m("1 # 4"), s.m("A / 8"), s.m("A % 8")).status()),
              HasSubstr("Size Constraint: Cluster::SIZE must be 2 (pad with `# 2`), got 4"));
  EXPECT_THAT(Msg(host->to_hbm(*pdma, 0, s.m("1 # 2"), s.m("A")).status()),
              HasSubstr("Size Constraint: Chip::SIZE must be 1"));
  EXPECT_THAT(Msg(hbm->to_dm(*tdma, 0, s.m("1 # 2"), s.m("1 # 256"), s.m("A, A / 4")).status()),
              HasSubstr("Size Constraint: DmTensor Element::SIZE * size_of::<i8>() must be <= 512 KB"));
}

TEST_F(DmaTest, WrongContextsAreRefused) {
  MappingScope s = Scope("A = 2048");
  auto host = HostTensor::Random(DType::kI8, s.m("A"), 1);
  EXPECT_THAT(Msg(host->to_hbm(*tdma, 0, s.m("1"), s.m("A")).status()),
              HasSubstr("DMA Context: host -> HBM crosses PCIe between host and device and needs "
                        "the PCIe DMA context (`ctx.pdma`), got `tdma`"));
  auto hbm = host->to_hbm(*pdma, 0, s.m("1"), s.m("A"));
  EXPECT_THAT(Msg(hbm->to_host(*tdma, s.m("A")).status()), HasSubstr("needs the PCIe DMA context"));
  EXPECT_THAT(Msg(hbm->to_dm(*pdma, 0, s.m("1 # 2"), s.m("A / 8"), s.m("A % 8")).status()),
              HasSubstr("DMA Context: HBM -> DM reads or writes on-chip SRAM and needs the Tensor "
                        "DMA context (`ctx.tdma`), got `pdma`"));
  auto dm = hbm->to_dm(*tdma, 0, s.m("1 # 2"), s.m("A / 8"), s.m("A % 8"));
  ASSERT_TRUE(dm.ok());
  EXPECT_THAT(Msg(dm->to_hbm(*pdma, 0x1000, s.m("A")).status()), HasSubstr("needs the Tensor DMA context"));
  EXPECT_THAT(Msg(Move(*tdma, *dm, Destination{Tier::kTrf, 0, {s.m("1"), s.m("1 # 2"), s.m("A / 8"),
                                                               s.m("1"), s.m("A % 8")}})
                      .status()),
              HasSubstr("DMA Context: DM -> TRF is not a DMA move"));
  EXPECT_TRUE(hbm->to_hbm(*pdma, 0x1000, s.m("A")).ok());  // HBM to HBM: either context
  EXPECT_TRUE(hbm->to_hbm(*tdma, 0x2000, s.m("A")).ok());
  EXPECT_EQ(tdma->moves(), 2);
}

TEST_F(DmaTest, MovesKeepTheElementType) {
  MappingScope s = Scope("A = 256");
  auto host = HostTensor::Random(DType::kI8, s.m("A"), 1);
  auto hbm = host->to_hbm(*pdma, 0, s.m("1"), s.m("A"));
  auto placement = Place(*device, DType::kI16, Tier::kHbm, {s.m("1"), s.m("A")}, 0x1000);
  ASSERT_TRUE(placement.ok());
  auto moved = TransferToDevice(*hbm, *device, *placement,
                                [](const TransferReport&) { return absl::OkStatus(); });
  EXPECT_THAT(Msg(moved.status()), HasSubstr("keeps the element type"));
}

}  // namespace
}  // namespace visa
