// Which register-file regions get huge pages: page counts per region, the first tensor's
// decision, and the host memory a sparse TRF load commits.
#include "runtime/huge_page_advice.h"

#include <cstdint>
#include <vector>

#include "dsl/axes.h"
#include "dsl/mapping_parser.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "runtime/device.h"
#include "runtime/tensor.h"

namespace visa {
namespace {

using ::testing::ElementsAre;

MappingScope Scope(absl::string_view axes) { return MappingScope(*Axes::Parse(axes)); }

constexpr int64_t kPagesPerRegion = kHugeRegionBytes / kSmallPageBytes;

std::vector<int64_t> Iota(int64_t n, int64_t step = 1, int64_t first = 0) {
  std::vector<int64_t> out;
  for (int64_t i = 0; i < n; ++i) out.push_back(first + i * step);
  return out;
}

TEST(PagesTouchedPerRegion, ASmallTrfLoadTouchesOnePageInSixteen) {
  // Row 0 of 256 slices (8 rows of 8 KiB each), 4 KiB per row: 32 slices per 2 MiB region.
  const auto regions = PagesTouchedPerRegion(Iota(256, 8), {0, 4096}, kTrfRowBytes);
  ASSERT_EQ(regions.size(), 8u);
  for (const RegionPages& r : regions) EXPECT_EQ(r.pages, 32) << "region " << r.region;
  EXPECT_FALSE(WorthHugePages(32));
}

TEST(PagesTouchedPerRegion, FullRowsTouchEveryPage) {
  const auto regions = PagesTouchedPerRegion(Iota(256 * 8), {0, kTrfRowBytes}, kTrfRowBytes);
  ASSERT_EQ(regions.size(), 8u);
  for (const RegionPages& r : regions) EXPECT_EQ(r.pages, kPagesPerRegion);
  EXPECT_TRUE(WorthHugePages(kPagesPerRegion));
}

TEST(PagesTouchedPerRegion, AFewVrfBytesPerSliceTouchHalfTheRegion) {
  // 16 bytes at the start of each slice's 8 KiB: one page of two, so huge pages pay.
  const auto regions = PagesTouchedPerRegion(Iota(512), {0, 16}, kVrfBytesPerSlice);
  EXPECT_THAT(regions, ElementsAre(RegionPages{0, 256}, RegionPages{1, 256}));
  EXPECT_TRUE(WorthHugePages(256));
  EXPECT_FALSE(WorthHugePages(255));
}

TEST(PagesTouchedPerRegion, UnitsSharingAPageCountItOnce) {
  EXPECT_THAT(PagesTouchedPerRegion({0, 1, 2, 3}, {0, 16}, 1024), ElementsAre(RegionPages{0, 1}));
  EXPECT_THAT(PagesTouchedPerRegion({0}, {4090, 4100}, 8192), ElementsAre(RegionPages{0, 2}));
  EXPECT_TRUE(PagesTouchedPerRegion({0, 1}, {8, 8}, 8192).empty());
}

class RegisterFilePages : public ::testing::Test {
 protected:
  Device device{1};
  MappingScope s = Scope("S = 256, E = 4096, F = 8192, R = 8, V = 16");
};

TEST_F(RegisterFilePages, ASmallTrfLoadStaysInSmallPages) {
  auto trf = TrfTensor::Create(device, DType::kI8, s.m("1"), s.m("1 # 2"), s.m("S"), s.m("1"), s.m("E"),
                               TrfAddress::kFull);
  ASSERT_TRUE(trf.ok()) << trf.status();
  EXPECT_GT(device.trf_huge_pages().decided_regions(), 0);
  EXPECT_EQ(device.trf_huge_pages().huge_regions(), 0);
  // Writing every byte of it commits what it writes (1 MiB), not the 2 MiB pages around it.
  const std::vector<uint8_t> row(4096, 7);
  for (int slice = 0; slice < 256; ++slice) ASSERT_TRUE(device.WriteTrf({0, 0, slice}, 0, 0, row).ok());
  EXPECT_LE(device.resident_bytes(), (1 << 20) + (64 << 10));
}

TEST_F(RegisterFilePages, FullTrfRowsAndVrfColumnsAreHuge) {
  auto trf = TrfTensor::Create(device, DType::kI8, s.m("1"), s.m("1 # 2"), s.m("S"), s.m("R"), s.m("F"),
                               TrfAddress::kFull);
  ASSERT_TRUE(trf.ok()) << trf.status();
  EXPECT_EQ(device.trf_huge_pages().huge_regions(), 8);  // 256 slices x 64 KiB
  auto vrf = VrfTensor::Create(device, DType::kI32, s.m("1"), s.m("1 # 2"), s.m("S"), s.m("V"), 0);
  ASSERT_TRUE(vrf.ok()) << vrf.status();
  EXPECT_EQ(device.vrf_huge_pages().huge_regions(), 1);  // the 256 slices' 8 KiB of cluster 0
}

TEST_F(RegisterFilePages, TheFirstTensorInARegionDecides) {
  auto small = TrfTensor::Create(device, DType::kI8, s.m("1"), s.m("1 # 2"), s.m("S"), s.m("1"), s.m("E"),
                                 TrfAddress::kFull);
  ASSERT_TRUE(small.ok()) << small.status();
  const int64_t decided = device.trf_huge_pages().decided_regions();
  auto full = TrfTensor::Create(device, DType::kI8, s.m("1"), s.m("1 # 2"), s.m("S"), s.m("R"), s.m("F"),
                                TrfAddress::kFull);
  ASSERT_TRUE(full.ok()) << full.status();
  EXPECT_EQ(device.trf_huge_pages().decided_regions(), decided);
  EXPECT_EQ(device.trf_huge_pages().huge_regions(), 0);
}

}  // namespace
}  // namespace visa
