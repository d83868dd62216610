// Device memory: lazily committed HBM / DM / SPM / TRF / VRF access and bounds, ownership and collisions,
// the manual's placement rules for device tensors, and host tensors.
#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "dsl/axes.h"
#include "dsl/mapping_parser.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "runtime/address_book.h"
#include "runtime/device.h"
#include "runtime/host_tensor.h"
#include "runtime/tensor.h"
#include "runtime/tensor_rules.h"

namespace visa {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;
using ::testing::Not;

MappingScope Scope(absl::string_view axes) { return MappingScope(*Axes::Parse(axes)); }

// Status text as std::string, so failures print readably.
std::string Msg(const absl::Status& status) { return std::string(status.message()); }

std::vector<uint8_t> Bytes(std::initializer_list<int> values) {
  return std::vector<uint8_t>(values.begin(), values.end());
}

// ---- Device ---------------------------------------------------------------------------------

TEST(Device, HasTheManualsGeometry) {
  Device device(4);
  EXPECT_EQ(device.chips(), 4);
  EXPECT_EQ(device.Units(Tier::kHbm), 4);
  EXPECT_EQ(device.Units(Tier::kDm), 4 * 512);
  EXPECT_EQ(device.Units(Tier::kTrf), 4 * 512 * 8);
  EXPECT_EQ(TierUnitBytes(Tier::kHbm), int64_t{48} << 30);
  EXPECT_EQ(TierUnitBytes(Tier::kDm), 512 * 1024);
  EXPECT_EQ(TierUnitBytes(Tier::kTrf), 8 * 1024);
  EXPECT_EQ(TierUnitBytes(Tier::kVrf), 8 * 1024);
  // 256 MB of SRAM per chip: 2 clusters x 256 slices x 512 KB.
  EXPECT_EQ(kClustersPerChip * kSlicesPerCluster * kDmBytesPerSlice, int64_t{256} << 20);
}

TEST(Device, CreateRefusesBadChipCounts) {
  EXPECT_THAT(Msg(Device::Create(0).status()), HasSubstr("1 to 64 chips"));
  EXPECT_TRUE(Device::Create(8).ok());
}

TEST(Device, HbmIsSparseAndReadsZeroWhereUnwritten) {
  Device device(2);
  const int64_t end = int64_t{48} << 30;
  ASSERT_TRUE(device.WriteHbm(1, end - 4, Bytes({1, 2, 3, 4})).ok());
  std::vector<uint8_t> out(4);
  ASSERT_TRUE(device.ReadHbm(1, end - 4, absl::MakeSpan(out)).ok());
  EXPECT_EQ(out, Bytes({1, 2, 3, 4}));
  ASSERT_TRUE(device.ReadHbm(0, end - 4, absl::MakeSpan(out)).ok());  // the other chip
  EXPECT_EQ(out, Bytes({0, 0, 0, 0}));
  EXPECT_EQ(device.resident_bytes(), 4096);  // one host page of chip 1's HBM
}

TEST(Device, BoundsAreCheckedPerUnit) {
  Device device(1);
  std::vector<uint8_t> four(4, 1);
  EXPECT_THAT(Msg(device.WriteHbm(0, (int64_t{48} << 30) - 2, four)), HasSubstr("Capacity"));
  EXPECT_EQ(device.WriteHbm(1, 0, four).code(), absl::StatusCode::kOutOfRange);  // no chip 1
  EXPECT_THAT(Msg(device.WriteDm({0, 1, 255}, 512 * 1024 - 2, four)), HasSubstr("Capacity"));
  EXPECT_TRUE(device.WriteDm({0, 1, 255}, 512 * 1024 - 4, four).ok());
  EXPECT_EQ(device.WriteDm({0, 2, 0}, 0, four).code(), absl::StatusCode::kOutOfRange);
  EXPECT_EQ(device.WriteDm({0, 0, 256}, 0, four).code(), absl::StatusCode::kOutOfRange);
  EXPECT_EQ(device.WriteSpm({0, 0, 0}, 64 * 1024 - 2, four).code(), absl::StatusCode::kOutOfRange);
  EXPECT_EQ(device.WriteTrf({0, 0, 0}, 8, 0, four).code(), absl::StatusCode::kOutOfRange);
  EXPECT_EQ(device.WriteTrf({0, 0, 0}, 7, 8 * 1024 - 2, four).code(), absl::StatusCode::kOutOfRange);
  EXPECT_EQ(device.WriteVrf({0, 0, 0}, 8 * 1024 - 2, four).code(), absl::StatusCode::kOutOfRange);
  EXPECT_TRUE(device.WriteVrf({0, 0, 0}, 8 * 1024 - 4, four).ok());
}

TEST(Device, SpmIsTheTopOfEachSlicesDm) {
  Device device(1);
  ASSERT_TRUE(device.WriteSpm({0, 1, 7}, 0, Bytes({9, 8})).ok());
  std::vector<uint8_t> out(2);
  ASSERT_TRUE(device.ReadDm({0, 1, 7}, kSpmOffsetInDm, absl::MakeSpan(out)).ok());
  EXPECT_EQ(out, Bytes({9, 8}));
}

TEST(Device, TiersAndSlicesAreSeparate) {
  Device device(1);
  ASSERT_TRUE(device.WriteDm({0, 0, 3}, 100, Bytes({5})).ok());
  ASSERT_TRUE(device.WriteTrf({0, 0, 3}, 2, 100, Bytes({6})).ok());
  ASSERT_TRUE(device.WriteVrf({0, 0, 3}, 100, Bytes({7})).ok());
  std::vector<uint8_t> out(1);
  ASSERT_TRUE(device.ReadDm({0, 0, 4}, 100, absl::MakeSpan(out)).ok());
  EXPECT_EQ(out[0], 0);
  ASSERT_TRUE(device.ReadTrf({0, 0, 3}, 1, 100, absl::MakeSpan(out)).ok());
  EXPECT_EQ(out[0], 0);
  ASSERT_TRUE(device.ReadTrf({0, 0, 3}, 2, 100, absl::MakeSpan(out)).ok());
  EXPECT_EQ(out[0], 6);
  ASSERT_TRUE(device.ReadVrf({0, 0, 3}, 100, absl::MakeSpan(out)).ok());
  EXPECT_EQ(out[0], 7);
}

// ---- AddressBook ----------------------------------------------------------------------------

TEST(AddressBook, OverwritingClobbersAndALaterReadNamesBothTensors) {
  AddressBook book;
  int64_t a = book.Add("a", Tier::kDm);
  int64_t b = book.Add("b", Tier::kDm);
  book.Claim(a, {0, 1}, {0x100, 0x200});
  book.Claim(b, {1}, {0x180, 0x280});
  EXPECT_TRUE(book.CheckReadable(a, {0}, {0x100, 0x200}).ok());         // slice 0 untouched
  EXPECT_TRUE(book.CheckReadable(a, {1}, {0x100, 0x180}).ok());         // the intact part
  absl::Status s = book.CheckReadable(a, {0, 1}, {0x100, 0x200});
  EXPECT_THAT(Msg(s), AllOf(HasSubstr("addresses must not collide"), HasSubstr("`a`"),
                                 HasSubstr("`b`"), HasSubstr("[0x100, 0x200)"),
                                 HasSubstr("[0x180, 0x280)"), HasSubstr("slice 1")));
  EXPECT_TRUE(book.CheckReadable(b, {1}, {0x180, 0x280}).ok());
}

TEST(AddressBook, AClaimOfTheSameRangeInManyUnitsClobbersEachUnitByName) {
  // What a program run again does: a new tensor claims exactly the previous one's range in every
  // unit. Every unit is clobbered, and a read names the first unit read that was overwritten.
  AddressBook book;
  int64_t a = book.Add("a", Tier::kDm);
  int64_t b = book.Add("b", Tier::kDm);
  int64_t c = book.Add("c", Tier::kDm);
  book.Claim(a, {2, 3, 4, 5, 9}, {0x100, 0x200});
  book.Claim(b, {3, 4, 5}, {0x100, 0x200});  // exactly a's range in three consecutive units
  book.Claim(c, {9}, {0x100, 0x200});
  EXPECT_TRUE(book.CheckReadable(a, {2}, {0x100, 0x200}).ok());
  EXPECT_THAT(Msg(book.CheckReadable(a, {2, 4}, {0x100, 0x200})),
              AllOf(HasSubstr("`a`"), HasSubstr("`b`"), HasSubstr("slice 4,"), Not(HasSubstr("slice 3,"))));
  EXPECT_THAT(Msg(book.CheckReadable(a, {5, 3}, {0x100, 0x200})), HasSubstr("slice 3,"));
  EXPECT_THAT(Msg(book.CheckReadable(a, {9}, {0x100, 0x200})), AllOf(HasSubstr("`c`"), HasSubstr("slice 9,")));
  EXPECT_TRUE(book.CheckReadable(b, {3, 4, 5}, {0x100, 0x200}).ok());
  // b's range is free of a: a claim of b's own range again clobbers nothing.
  book.Claim(b, {3, 4, 5}, {0x100, 0x200});
  EXPECT_TRUE(book.CheckReadable(b, {3, 4, 5}, {0x100, 0x200}).ok());
  // Releasing b frees its units for a search.
  book.Release(b);
  book.Release(c);
  EXPECT_EQ(book.FindFree(Tier::kDm, {3, 4, 5}, 0x100, 0x100, 1 << 20), 0);
  EXPECT_EQ(book.FindFree(Tier::kDm, {2}, 0x100, 0x100, 1 << 20), 0);
  EXPECT_EQ(book.FindFree(Tier::kDm, {2}, 0x200, 0x100, 1 << 20), 0x200);
}

TEST(AddressBook, FindFreeSkipsOwnedRangesAndReleaseFreesThem) {
  AddressBook book;
  int64_t a = book.Add("a", Tier::kHbm);
  book.Claim(a, {0}, {0, 300});
  EXPECT_EQ(book.FindFree(Tier::kHbm, {0}, 100, 256, 1 << 20), 512);
  EXPECT_EQ(book.FindFree(Tier::kHbm, {1}, 100, 256, 1 << 20), 0);  // another chip
  EXPECT_EQ(book.FindFree(Tier::kHbm, {0}, 1 << 20, 256, 1 << 20), std::nullopt);
  book.Release(a);
  EXPECT_EQ(book.FindFree(Tier::kHbm, {0}, 100, 256, 1 << 20), 0);
  EXPECT_THAT(Msg(book.CheckReadable(a, {0}, {0, 300})), HasSubstr("released"));
}

TEST(AddressBook, SpmAndDmShareBytes) {
  AddressBook book;
  int64_t spm = book.Add("s", Tier::kSpm);
  int64_t dm = book.Add("d", Tier::kDm);
  book.Claim(spm, {0}, {0, 64});
  book.Claim(dm, {0}, {kSpmOffsetInDm, kSpmOffsetInDm + 8});
  EXPECT_THAT(Msg(book.CheckReadable(spm, {0}, {0, 64})),
              AllOf(HasSubstr("SPM chip 0 cluster 0 slice 0, bytes [0x0, 0x40)"),
                    HasSubstr("DM chip 0 cluster 0 slice 0, bytes [0x70000, 0x70008)")));
}

// ---- Placement rules ------------------------------------------------------------------------

class PlacementRules : public ::testing::Test {
 protected:
  Device device{1};
  MappingScope s = Scope("A = 2048, B = 512, R = 8");
};

TEST_F(PlacementRules, SliceMustBe256) {
  auto t = DmTensor::Create(device, DType::kBF16, s.m("1"), s.m("1 # 2"), s.m("A / 16"),
                            s.m("A % 16"), 0);
  EXPECT_THAT(Msg(t.status()),
              HasSubstr("Size Constraint: Slice::SIZE must be 256 (pad with `# 256`), got 128 for "
                        "mapping `A / 16`"));
}

TEST_F(PlacementRules, ClusterMustBe2) {
  auto t = DmTensor::Create(device, DType::kBF16, s.m("1"), s.m("1"), s.m("A / 8"), s.m("A % 8"), 0);
  EXPECT_THAT(Msg(t.status()),
              HasSubstr("Size Constraint: Cluster::SIZE must be 2 (pad with `# 2`), got 1"));
}

TEST_F(PlacementRules, ChipMustBeTheChipCount) {
  auto t = HbmTensor::Create(device, DType::kI8, s.m("A / 1024"), s.m("A % 1024"), 0);
  EXPECT_THAT(Msg(t.status()), AllOf(HasSubstr("Size Constraint: Chip::SIZE must be 1"),
                                          HasSubstr("got 2")));
}

TEST_F(PlacementRules, ElementMustFitTheTier) {
  // 2048 x 512 bf16 = 2 MB per slice > 512 KB.
  auto dm = DmTensor::Create(device, DType::kBF16, s.m("1"), s.m("1 # 2"), s.m("1 # 256"),
                             s.m("A, B"), 0);
  EXPECT_THAT(Msg(dm.status()),
              AllOf(HasSubstr("Size Constraint: DmTensor Element::SIZE * size_of::<bf16>() must be "
                              "<= 512 KB per slice"),
                    HasSubstr("2048 KB")));
  auto vrf = VrfTensor::Create(device, DType::kI32, s.m("1"), s.m("1 # 2"), s.m("1 # 256"),
                               s.m("A # 2049"), 0);
  EXPECT_THAT(Msg(vrf.status()), HasSubstr("VrfTensor Element::SIZE * size_of::<i32>() must be <= 8 KB"));
  auto trf = TrfTensor::Create(device, DType::kBF16, s.m("1"), s.m("1 # 2"), s.m("1 # 256"),
                               s.m("R"), s.m("A # 4097"), TrfAddress::kFull);
  EXPECT_THAT(Msg(trf.status()),
              HasSubstr("TrfTensor Element::SIZE * size_of::<bf16>() must be <= 8 KB per Row "
                        "(TrfAddress::Full), got 4097 elements = 8194 bytes"));
  auto spm = DmTensor::Create(device, DType::kI8, s.m("1"), s.m("1 # 2"), s.m("1 # 256"),
                              s.m("A, B / 8"), 0, Tier::kSpm);
  EXPECT_THAT(Msg(spm.status()), HasSubstr("<= 64 KB per slice"));
}

TEST_F(PlacementRules, TrfHalvesHoldHalfARowEach) {
  // 2048 bf16 = 4 KB per row: fits a half.
  auto first = TrfTensor::Create(device, DType::kBF16, s.m("1"), s.m("1 # 2"), s.m("1 # 256"),
                                 s.m("R"), s.m("A"), TrfAddress::kFirstHalf);
  ASSERT_TRUE(first.ok()) << first.status();
  auto second = TrfTensor::Create(device, DType::kBF16, s.m("1"), s.m("1 # 2"), s.m("1 # 256"),
                                  s.m("R"), s.m("A"), TrfAddress::kSecondHalf);
  ASSERT_TRUE(second.ok()) << second.status();
  EXPECT_EQ(second->address(), 4096);
  EXPECT_TRUE(first->CheckReadable().ok());  // the halves do not collide
  auto big = TrfTensor::Create(device, DType::kF32, s.m("1"), s.m("1 # 2"), s.m("1 # 256"),
                               s.m("R"), s.m("A"), TrfAddress::kSecondHalf);
  EXPECT_THAT(Msg(big.status()), HasSubstr("<= 4 KB per Row (TrfAddress::SecondHalf)"));
  auto full = TrfTensor::Create(device, DType::kI8, s.m("1"), s.m("1 # 2"), s.m("1 # 256"),
                                s.m("R / 2"), s.m("A # 8192"), TrfAddress::kFull);
  ASSERT_TRUE(full.ok()) << full.status();
  // Full overlaps both halves in rows 0..3.
  EXPECT_THAT(Msg(first->CheckReadable()), HasSubstr("addresses must not collide"));
  EXPECT_THAT(Msg(second->CheckReadable()), HasSubstr("row 0"));
}

TEST_F(PlacementRules, RowAtMost8) {
  auto t = TrfTensor::Create(device, DType::kI8, s.m("1"), s.m("1 # 2"), s.m("1 # 256"),
                             s.m("A / 128"), s.m("A % 128"), TrfAddress::kFull);
  EXPECT_THAT(Msg(t.status()), HasSubstr("Size Constraint: Row::SIZE must be <= 8 (one Row per MAC row), got 16"));
}

TEST_F(PlacementRules, AlignmentIsTheElementSize) {
  auto t = HbmTensor::Create(device, DType::kF32, s.m("1"), s.m("B"), 0x1002);
  EXPECT_THAT(Msg(t.status()),
              HasSubstr("Alignment Constraint: the Element start address of a HBM must be a "
                        "multiple of size_of::<f32>() = 4, got 0x1002"));
  EXPECT_TRUE(HbmTensor::Create(device, DType::kBF16, s.m("1"), s.m("B"), 0x1002).ok());
  EXPECT_TRUE(HbmTensor::Create(device, DType::kI4, s.m("1"), s.m("B"), 0x1001).ok());
}

TEST_F(PlacementRules, OverCapacityIsRefused) {
  auto t = DmTensor::Create(device, DType::kI32, s.m("1"), s.m("1 # 2"), s.m("A / 8"), s.m("A % 8"),
                            512 * 1024 - 16);
  EXPECT_THAT(Msg(t.status()),
              HasSubstr("Capacity: the tensor's bytes [0x7fff0, 0x80010) run past the end of the DM "
                        "(512 KB per slice)"));
  auto h = HbmTensor::Create(device, DType::kI8, s.m("1"), s.m("B"), (int64_t{48} << 30) - 256);
  EXPECT_THAT(Msg(h.status()), HasSubstr("run past the end of the HBM (50331648 KB per chip)"));
}

TEST_F(PlacementRules, StagingTypesCannotBeStored) {
  auto t = HbmTensor::Create(device, DType::kI9, s.m("1"), s.m("B"), 0);
  EXPECT_THAT(Msg(t.status()), HasSubstr("Scalar Type: i9 is a staging type"));
}

// A host stream image may hold the staging types (the interpreter keeps the Fetch Adapter's
// zero-point output between stages): sign-extended values in i5's range round-trip.
TEST_F(PlacementRules, HostImagesHoldStagingTypes) {
  absl::StatusOr<HostTensor> host = HostTensor::FromValues(DType::kI5, s.m("B"), std::vector<double>(s.m("B").size(), -16));
  ASSERT_TRUE(host.ok()) << host.status();
  EXPECT_EQ(*host->Get(0), -16);
}

TEST_F(PlacementRules, AnyAddressPicksFreeAlignedRanges) {
  auto a = DmTensor::Create(device, DType::kI8, s.m("1"), s.m("1 # 2"), s.m("A / 8"), s.m("A % 8"),
                            Address::Any());
  ASSERT_TRUE(a.ok()) << a.status();
  EXPECT_EQ(a->address(), 0);
  auto b = DmTensor::Create(device, DType::kI8, s.m("1"), s.m("1 # 2"), s.m("A / 8"), s.m("A % 4"),
                            Address::Any());
  ASSERT_TRUE(b.ok()) << b.status();
  EXPECT_EQ(b->address(), 8);
  auto c = DmTensor::Create(device, DType::kI8, s.m("1"), s.m("1 # 2"), s.m("A / 8"), s.m("A % 8"),
                            Address::Any());
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->address(), 16);  // 8-aligned after b's 4 bytes
  EXPECT_TRUE(a->CheckReadable().ok());
  EXPECT_TRUE(b->CheckReadable().ok());
  a->Release();
  auto e = HbmTensor::Create(device, DType::kI8, s.m("1"), s.m("B"), Address::Any());
  ASSERT_TRUE(e.ok());
  EXPECT_EQ(e->address(), 0);
  auto f = HbmTensor::Create(device, DType::kI8, s.m("1"), s.m("B"), Address::Any());
  ASSERT_TRUE(f.ok());
  EXPECT_EQ(f->address(), 512);  // HBM placements are 256-byte aligned
}

TEST_F(PlacementRules, TensorsPrintTheirType) {
  auto t = DmTensor::Create(device, DType::kBF16, s.m("1"), s.m("1 # 2"), s.m("A / 8"),
                            s.m("A % 8"), 0x40);
  ASSERT_TRUE(t.ok());
  t->SetName("lhs");
  EXPECT_EQ(t->ToString(), "DmTensor<bf16, [1], [1 # 2], [A / 8], [A % 8]> `lhs` at DM 0x40");
}

// ---- HostTensor -----------------------------------------------------------------------------

TEST(HostTensor, FromValuesAndGetByPositionAndIndex) {
  MappingScope s = Scope("K = 2, N = 3");
  auto t = HostTensor::FromValues(DType::kI32, s.m("K, N"), {0, 1, 2, 10, 11, 12});
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(*t->Get(4), 11);
  Index index;
  index.Set("K", 1);
  index.Set("N", 2);
  EXPECT_EQ(*t->Get(index), 12);
  EXPECT_EQ(t->ToValues(), (std::vector<double>{0, 1, 2, 10, 11, 12}));
  EXPECT_THAT(Msg(HostTensor::FromValues(DType::kI32, s.m("K, N"), {1, 2}).status()),
              HasSubstr("has 6 positions (padding included), got 2 values"));
  EXPECT_THAT(Msg(HostTensor::FromValues(DType::kI8, s.m("K"), {1, 300}).status()),
              HasSubstr("300"));
  Index outside;
  outside.Set("K", 5);
  EXPECT_EQ(t->Get(outside).status().code(), absl::StatusCode::kNotFound);
}

TEST(HostTensor, RandomIsDeterministicValidAndLeavesPaddingZero) {
  MappingScope s = Scope("A = 100");
  for (DType dtype : {DType::kI4, DType::kI8, DType::kI16, DType::kI32, DType::kF8E4M3,
                      DType::kF8E5M2, DType::kBF16, DType::kF16, DType::kF32}) {
    auto a = HostTensor::Random(dtype, s.m("A # 128"), 7);
    auto b = HostTensor::Random(dtype, s.m("A # 128"), 7);
    auto c = HostTensor::Random(dtype, s.m("A # 128"), 8);
    ASSERT_TRUE(a.ok() && b.ok() && c.ok());
    EXPECT_TRUE(*a == *b) << dtype;
    EXPECT_FALSE(*a == *c) << dtype;
    std::vector<double> values = a->ToValues();
    for (int i = 0; i < 100; ++i) {
      EXPECT_TRUE(std::isfinite(values[i])) << dtype;
      if (IsFloat(dtype)) {
        EXPECT_GE(values[i], -1.0);
        EXPECT_LE(values[i], 1.0);
      } else {
        EXPECT_GE(values[i], IntMin(dtype));
        EXPECT_LE(values[i], IntMax(dtype));
      }
    }
    for (int i = 100; i < 128; ++i) EXPECT_EQ(values[i], 0) << dtype;
  }
}

TEST(HostTensor, IotaCountsLivePositionsAndPrintsShortly) {
  MappingScope s = Scope("A = 4, B = 2048");
  auto t = HostTensor::Iota(DType::kI32, s.m("B"));
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(t->ToString(), "HostTensor<i32, [B]> 2048 elements: [0, 1, 2, 3, 4, 5, 6, 7, ..., 2046, 2047]");
  auto padded = HostTensor::Iota(DType::kI8, s.m("A # 6"));
  ASSERT_TRUE(padded.ok());
  EXPECT_EQ(padded->ToString(), "HostTensor<i8, [A # 6]> 6 elements: [0, 1, 2, 3, _, _]");
  auto wraps = HostTensor::Iota(DType::kI4, s.m("B"));
  EXPECT_EQ(*wraps->Get(9), -7);
  auto bf = HostTensor::Iota(DType::kBF16, s.m("B"));
  EXPECT_EQ(*bf->Get(257), 1);
}

}  // namespace
}  // namespace visa

namespace visa {
namespace {

TEST(Device, SramUnitsAreContiguousBlocksAddressableInPlace) {
  Device device(1);
  ASSERT_TRUE(device.WriteDm({0, 1, 3}, 100, std::vector<uint8_t>{7, 8, 9}).ok());
  const uint8_t* unit = device.UnitData(Tier::kDm, SliceId{0, 1, 3}.unit());
  ASSERT_NE(unit, nullptr);
  EXPECT_EQ(unit[100], 7);
  EXPECT_EQ(unit[102], 9);
  // The next slice's DM starts one unit later: one block per chip.
  EXPECT_EQ(device.UnitData(Tier::kDm, SliceId{0, 1, 4}.unit()), unit + 512 * 1024);
  // The SPM is the top 64 KB of the same block; TRF rows are 8 KB apart.
  EXPECT_EQ(device.UnitData(Tier::kSpm, SliceId{0, 1, 3}.unit()), unit + 448 * 1024);
  EXPECT_EQ(device.UnitData(Tier::kTrf, 9) - device.UnitData(Tier::kTrf, 8), 8 * 1024);
  // No unit past the device.
  EXPECT_EQ(device.UnitData(Tier::kDm, 512), nullptr);
  EXPECT_EQ(device.UnitData(Tier::kHbm, 1), nullptr);
}

// The register files are advised 2 MiB pages (a load fills most of each 2 MiB it touches): their
// blocks must start on a 2 MiB boundary for the host to use whole huge pages.
TEST(Device, RegisterFileBlocksStartOnAHugePageBoundary) {
  Device device(2);
  constexpr uintptr_t kHuge = uintptr_t{2} << 20;
  EXPECT_EQ(reinterpret_cast<uintptr_t>(device.UnitData(Tier::kTrf, 0)) % kHuge, 0u);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(device.UnitData(Tier::kVrf, 0)) % kHuge, 0u);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(device.UnitData(Tier::kDm, 0)) % kHuge, 0u);
  // The last unit is still inside its block: the trimmed reservation keeps the whole capacity.
  const int64_t last_vrf = device.Units(Tier::kVrf) - 1;
  ASSERT_TRUE(device.WriteVrf({1, 1, 255}, Device::UnitStride(Tier::kVrf) - 4, std::vector<uint8_t>(4, 7)).ok());
  EXPECT_EQ(device.UnitData(Tier::kVrf, last_vrf)[Device::UnitStride(Tier::kVrf) - 1], 7);
}

TEST(Device, SramCostsOnlyTheTouchedPages) {
  Device device(1);
  ASSERT_TRUE(device.WriteDm({0, 0, 0}, 0, std::vector<uint8_t>(3 * 4096, 0)).ok());  // zeros: nothing
  EXPECT_EQ(device.resident_bytes(), 0);
  ASSERT_TRUE(device.WriteDm({0, 0, 0}, 0, std::vector<uint8_t>(3 * 4096, 1)).ok());
  EXPECT_GE(device.resident_bytes(), 3 * 4096);
  EXPECT_LE(device.resident_bytes(), 4 * 4096);
}

// HBM is one block too: chip c's bytes start 48 GB after chip c - 1's, so compiled moves address
// every chip from chip 0's first byte.
TEST(Device, HbmChipsAreOneBlockAddressableInPlace) {
  Device device(3);
  const int64_t stride = int64_t{48} << 30;
  EXPECT_EQ(Device::UnitStride(Tier::kHbm), stride);
  ASSERT_TRUE(device.WriteHbm(2, 12345, Bytes({4, 5, 6})).ok());
  const uint8_t* chip0 = device.UnitData(Tier::kHbm, 0);
  ASSERT_NE(chip0, nullptr);
  EXPECT_EQ(device.UnitData(Tier::kHbm, 2), chip0 + 2 * stride);
  EXPECT_EQ(chip0[2 * stride + 12345], 4);
  EXPECT_EQ(chip0[2 * stride + 12347], 6);
  EXPECT_EQ(device.UnitData(Tier::kHbm, 3), nullptr);
}

// A compiled kernel writes HBM past Device::Write, after NoteInPlaceWrite: its pages count.
TEST(Device, InPlaceHbmWritesCountOnceNoted) {
  Device device(2);
  EXPECT_EQ(device.resident_bytes(), 0);
  device.NoteInPlaceWrite(Tier::kHbm, 1, 0, 3 * 4096);
  uint8_t* chip1 = device.UnitData(Tier::kHbm, 1);
  chip1[0] = 1;
  chip1[2 * 4096] = 1;
  EXPECT_EQ(device.resident_bytes(), 2 * 4096);
}

// The zero writes an interpreter makes (a zero-initialized output, a tensor's padding) commit no
// HBM, and reading never-written HBM commits nothing either.
TEST(Device, HbmCostsOnlyTheWrittenPages) {
  Device device(1);
  ASSERT_TRUE(device.WriteHbm(0, 0, std::vector<uint8_t>(3 * 4096, 0)).ok());
  std::vector<uint8_t> out(8 * 4096, 0xff);
  ASSERT_TRUE(device.ReadHbm(0, 1 << 20, absl::MakeSpan(out)).ok());
  EXPECT_EQ(out, std::vector<uint8_t>(8 * 4096, 0));
  EXPECT_EQ(device.resident_bytes(), 0);
  ASSERT_TRUE(device.WriteHbm(0, 4096, Bytes({1})).ok());
  EXPECT_EQ(device.resident_bytes(), 4096);
  // Zeros over a committed page are stored (they overwrite what it held).
  ASSERT_TRUE(device.WriteHbm(0, 4096, Bytes({0})).ok());
  std::vector<uint8_t> one(1, 0xff);
  ASSERT_TRUE(device.ReadHbm(0, 4096, absl::MakeSpan(one)).ok());
  EXPECT_EQ(one[0], 0);
}

// The largest device reserves 64 x 48 GB of addresses (3 TiB of x86-64's 128 TiB), never memory.
TEST(Device, TheLargestDeviceReservesItsHbm) {
  Device device(kMaxChips);
  const int64_t end = int64_t{48} << 30;
  ASSERT_TRUE(device.WriteHbm(kMaxChips - 1, end - 4, Bytes({9, 8, 7, 6})).ok());
  std::vector<uint8_t> out(4);
  ASSERT_TRUE(device.ReadHbm(kMaxChips - 1, end - 4, absl::MakeSpan(out)).ok());
  EXPECT_EQ(out, Bytes({9, 8, 7, 6}));
  EXPECT_EQ(device.resident_bytes(), 4096);
}

}  // namespace
}  // namespace visa
