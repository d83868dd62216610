// The DMA Engine's 8-byte rule on the runtime's moves: the packets derived from the two layouts
// obey what `visa seq --dma` checks on a given stream (dsl/dma_packet.h), with the notes' vectors.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "dsl/dma_packet.h"
#include "dsl/mapping_parser.h"
#include "dsl/sequencer.h"
#include "runtime/device.h"
#include "runtime/dma.h"
#include "runtime/tensor.h"

namespace visa {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;

class DmaPacketTest : public ::testing::Test {
 protected:
  void Use(const char* axes) { scope_ = std::make_unique<MappingScope>(*Axes::Parse(axes)); }
  Mapping m(const std::string& text) { return scope_->m(text); }

  // Host -> HBM `[src]`, then HBM -> DM with Slice `slice` and Element `element` (or to SPM).
  absl::StatusOr<DmTensor> HbmToDm(DType dtype, const std::string& src, const std::string& slice,
                                    const std::string& element, Tier tier = Tier::kDm) {
    absl::StatusOr<HostTensor> host = HostTensor::Random(dtype, m(src), 7);
    if (!host.ok()) return host.status();
    absl::StatusOr<HbmTensor> hbm = host->to_hbm(pdma_, 0, m("1"), m(src));
    if (!hbm.ok()) return hbm.status();
    if (tier == Tier::kSpm) return hbm->to_spm(tdma_, 0, m("1 # 2"), m(slice), m(element));
    return hbm->to_dm(tdma_, 0, m("1 # 2"), m(slice), m(element));
  }

  // HBM -> DM as is (one contiguous packet), then DM -> DM as `element`: the write side alone.
  absl::StatusOr<DmTensor> DmToDm(DType dtype, const std::string& src, const std::string& element) {
    absl::StatusOr<DmTensor> dm = HbmToDm(dtype, src, "1 # 256", src);
    if (!dm.ok()) return dm.status();
    return dm->to_dm(tdma_, 0x1000, m("1 # 2"), m("1 # 256"), m(element));
  }

  std::unique_ptr<MappingScope> scope_;
  Device device_{1};
  Dma pdma_ = Dma::Pcie(device_);
  Dma tdma_ = Dma::Tensor(device_);
};

// The case: each DM write of i32 `[A, C]` as `C, A` is one 4-byte element.
TEST_F(DmaPacketTest, ATransposingHbmToDmMoveOfFourByteElementsIsRefused) {
  Use("A = 4, C = 5");
  absl::StatusOr<DmTensor> dm = HbmToDm(DType::kI32, "A, C", "1 # 256", "C, A");
  ASSERT_FALSE(dm.ok());
  EXPECT_THAT(dm.status().message(),
              AllOf(HasSubstr("DMA alignment: a write into DM needs 8-byte packets, but the packet at element "
                              "position 0 of chip 0 cluster 0 slice 0 is 4 bytes"),
                    HasSubstr("`C, A`"), HasSubstr("`A, C`"), HasSubstr("Alignment Constraints")));
  // `visa seq --dma` refuses the same layout under the same rule, whatever the stream.
  absl::StatusOr<DmaConfig> seq = DeriveDma(m("A, C"), MemoryTier::kHbm, m("C, A"), MemoryTier::kDm, m("C"),
                                            m("A"), ElementBits{32});
  EXPECT_FALSE(seq.ok());
  absl::StatusOr<DmaConfig> one = DeriveDma(m("A, C"), MemoryTier::kHbm, m("C, A"), MemoryTier::kDm, m("C, A"),
                                            m("1"), ElementBits{32});
  ASSERT_FALSE(one.ok());
  EXPECT_THAT(one.status().message(), HasSubstr("DMA alignment: a write into DM needs 8-byte packets"));
}

TEST_F(DmaPacketTest, TheNotesVectors) {
  Use("A = 8, B = 3");
  EXPECT_TRUE(DmToDm(DType::kI32, "A, B", "A, B # 8").ok());  // 8 elements = 32 B
  EXPECT_TRUE(DmToDm(DType::kI32, "A, B", "A, B # 4").ok());  // 4 elements (3 live) = 16 B
  EXPECT_THAT(DmToDm(DType::kI32, "A, B", "A, B # 5").status().message(),  // 20 B
              HasSubstr("a write into DM needs 8-byte packets, but the packet at element position 0 of chip 0 "
                        "cluster 0 slice 0 is 20 bytes"));
  EXPECT_THAT(DmToDm(DType::kI8, "A, B", "A, B # 4").status().message(), HasSubstr("is 4 bytes"));
  Use("A = 1");
  EXPECT_THAT(HbmToDm(DType::kI32, "A", "1 # 256", "A").status().message(), HasSubstr("is 4 bytes"));
  Use("A = 3");
  EXPECT_TRUE(HbmToDm(DType::kI32, "A", "1 # 256", "A # 16").ok());
  EXPECT_TRUE(HbmToDm(DType::kI32, "A", "1 # 256", "A # 4 / 2, A # 4 % 2").ok());
  Use("A = 16, B = 8");
  EXPECT_TRUE(HbmToDm(DType::kI8, "A, B", "A / 16 # 256", "A / 8 % 2, A % 8, B").ok());
  Use("A = 8, B = 16");
  absl::StatusOr<DmTensor> transposed = HbmToDm(DType::kI8, "A, B", "B / 4 # 256", "B % 4, A");
  EXPECT_THAT(transposed.status().message(), HasSubstr("is 1 bytes"));
  Use("C = 2, S = 4, A = 8, B = 4");
  EXPECT_TRUE(HbmToDm(DType::kI32, "S, A, B", "S # 256", "A, B").ok());
}

TEST_F(DmaPacketTest, SpmWritesAndDmToDmMovesObeyTheRuleToo) {
  Use("A = 4, C = 5");
  EXPECT_THAT(HbmToDm(DType::kI32, "A, C", "1 # 256", "C, A", Tier::kSpm).status().message(),
              HasSubstr("a write into SPM needs 8-byte packets"));
  EXPECT_THAT(DmToDm(DType::kI32, "A, C", "C, A").status().message(), HasSubstr("DMA alignment: a write into DM"));
  absl::StatusOr<DmTensor> dm = DmToDm(DType::kI32, "A, C", "A, C # 8");
  ASSERT_TRUE(dm.ok()) << dm.status();
  // DM -> HBM writes DRAM: bytes at any alignment.
  EXPECT_TRUE(dm->to_hbm(tdma_, 0x1000, m("C, A")).ok());
}

// A layout with holes (a linear combination of stride 2) moved into the same layout: the holes
// line up on both sides, so the engine copies them along and the packet is the whole run, as the
// notes' tail ("the innermost run the source feeds contiguously") is for identical mappings.
TEST_F(DmaPacketTest, HolesThatLineUpOnBothSidesAreCopiedAlong) {
  Use("W = 14, F = 3");
  EXPECT_TRUE(HbmToDm(DType::kBF16, "$(W: 2, F: 2) # 32", "1 # 256", "$(W: 2, F: 2) # 32").ok());
  // Into a layout whose holes do not line up with the source's, each element is its own packet.
  EXPECT_THAT(HbmToDm(DType::kBF16, "$(W: 2, F: 2) # 32", "1 # 256", "$(W: 1, F: 1) # 32").status().message(),
              HasSubstr("DMA alignment: a write into DM needs 8-byte packets"));
}

// HBM -> DM also reads in 8-byte units: a packet must start on one in the source.
TEST_F(DmaPacketTest, HbmToDmPacketsMustStartOnAnEightByteUnitOfTheSource) {
  Use("A = 4, B = 6");
  // Rows of 6 i8 in HBM become rows of 8 in DM: each packet reads 6 bytes from offset 6 * a.
  absl::StatusOr<DmTensor> dm = HbmToDm(DType::kI8, "A, B", "1 # 256", "A, B # 8");
  ASSERT_FALSE(dm.ok());
  EXPECT_THAT(dm.status().message(),
              HasSubstr("DMA alignment: an HBM-to-DM transfer needs 8-byte aligned addresses, but the packet "
                        "read from source element position 6"));
  // From DM the same move reads SRAM, which reads at any byte.
  EXPECT_TRUE(DmToDm(DType::kI8, "A, B", "A, B # 8").ok());
}

// The scan on its own: runs cut into packets per unit, grown through padding.
TEST(DmaPacketScanTest, CutsRunsIntoPacketsPerUnit) {
  {
    DmaPacketScan scan(/*dst_unit=*/16, /*src_unit=*/16, /*bits=*/8);
    scan.Add({0, 0, 16, 1});
    scan.Add({16, 16, 16, 1});
    scan.Finish();
    EXPECT_FALSE(scan.write());
    EXPECT_FALSE(scan.read());
  }
  {
    // A source unit boundary cuts a run that is contiguous in positions.
    DmaPacketScan scan(/*dst_unit=*/32, /*src_unit=*/12, /*bits=*/8);
    scan.Add({0, 0, 24, 1});
    scan.Finish();
    ASSERT_TRUE(scan.write());
    EXPECT_EQ(scan.write()->position, 0);
    EXPECT_EQ(scan.write()->elements, 12);
  }
  {
    // A broadcast: one element per packet.
    DmaPacketScan scan(/*dst_unit=*/8, /*src_unit=*/1, /*bits=*/32);
    scan.Add({0, 0, 8, 0});
    scan.Finish();
    ASSERT_TRUE(scan.write());
    EXPECT_EQ(scan.write()->elements, 1);
  }
}

}  // namespace
}  // namespace visa
