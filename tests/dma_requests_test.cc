// DMA packets and requests of recorded moves, and the request-bound DMA cycle terms they give
// (manual, "DMA Engine" > Performance: "an n-byte packet becomes ceil(n / 256) DMA requests", "the
// number of DMA requests determines execution time"; "Memory Performance" > Misaligned Access).
// Every expected count is derived by hand from the two layouts.
#include "runtime/dma_requests.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "dsl/mapping_parser.h"
#include "runtime/op_description.h"
#include "runtime/tensor_unit.h"
#include "runtime/trace_backend.h"
#include "runtime/transfer.h"

namespace visa {
namespace {

using ::testing::HasSubstr;

class DmaRequestsTest : public ::testing::Test {
 protected:
  void Use(const std::string& axes) { scope_ = std::make_unique<MappingScope>(*Axes::Parse(axes)); }
  Mapping m(const std::string& text) { return scope_->m(text); }
  HbmTensor Hbm(const std::string& element, int64_t address) {
    absl::StatusOr<HbmTensor> t = HbmTensor::Create(device_, DType::kI8, m("1"), m(element), address);
    EXPECT_TRUE(t.ok()) << t.status();
    return *t;
  }
  const DmaOp& LastDma() { return std::get<DmaOp>(ctx_.program().ops.back().body); }
  const CycleTerm* TermOf(const OpDescription& d, const std::string& stage) {
    for (const CycleTerm& t : d.terms) {
      if (t.stage == stage) return &t;
    }
    ADD_FAILURE() << "no term " << stage << " in\n" << d.ToString();
    return nullptr;
  }

  Device device_{1};
  TraceBackend trace_;
  Context ctx_{device_, trace_};
  std::unique_ptr<MappingScope> scope_;
};

TEST_F(DmaRequestsTest, WholeRowsAreOnePacketEach) {
  // [A, B, C] -> [B, A, C] with C = 256 i8: each C row is contiguous on both sides (Example 1).
  Use("A = 8, B = 8, C = 256");
  ASSERT_TRUE(Hbm("A, B, C", 0).to_hbm(ctx_.tdma, 16384, m("B, A, C")).ok());
  std::optional<DmaRequests> r = CountDmaRequests(LastDma());
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->packets, 64);
  EXPECT_EQ(r->requests, 64);
  EXPECT_EQ(r->read_cost, 64);
  EXPECT_EQ(r->write_cost, 64);
  EXPECT_EQ(r->partial_hbm_writes, 0);
  EXPECT_EQ(Describe(ctx_.program().ops.back()).cycles, 628);  // unchanged: 64 + 64 + 500
}

TEST_F(DmaRequestsTest, ContiguousTensorIsOnePacketPerUnitSplitInRequests) {
  // 1000 contiguous bytes HBM -> HBM: one packet, ceil(1000 / 256) = 4 requests; the last one
  // writes 232 bytes: a partial write (read-modify-write).
  Use("A = 1000");
  ASSERT_TRUE(Hbm("A", 0).to_hbm(ctx_.tdma, 4096, m("A")).ok());
  std::optional<DmaRequests> r = CountDmaRequests(LastDma());
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->packets, 1);
  EXPECT_EQ(r->requests, 4);
  EXPECT_EQ(r->partial_hbm_writes, 1);
  EXPECT_EQ(r->write_cost, 3 + 50);
  EXPECT_EQ(r->read_cost, 4);
}

TEST_F(DmaRequestsTest, SmallPacketsCostARequestEach) {
  // HBM [A, B, C] -> DM [B, A, C] (A = 64, B = 8, C = 8, i8): each C row of 8 bytes is contiguous
  // on both sides, the next one is not: 512 packets of 8 bytes, a request each.
  Use("A = 64, B = 8, C = 8");
  ASSERT_TRUE(Hbm("A, B, C", 0).to_dm(ctx_.tdma, 0, m("1 # 2"), m("1 # 256"), m("B, A, C")).ok());
  std::optional<DmaRequests> r = CountDmaRequests(LastDma());
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->packets, 512);
  EXPECT_EQ(r->requests, 512);
  OpDescription d = Describe(ctx_.program().ops.back());
  // HBM -> DM overlaps reads and writes: max(512, 512) + 500, where 4096 bytes alone would be 16.
  EXPECT_EQ(d.cycles, 512 + 500);
  const CycleTerm* read = TermOf(d, "dma read");
  ASSERT_NE(read, nullptr);
  EXPECT_THAT(read->formula, HasSubstr("512 requests of <= 256 B"));
  EXPECT_THAT(read->formula, HasSubstr("512 packets"));
}

TEST_F(DmaRequestsTest, PacketsNeverCrossASlice) {
  // DM [A = 4 slices] x [B = 64] -> HBM [A, B]: the HBM side is contiguous, but each slice's 64
  // bytes are a packet of their own: 4 packets, each a partial HBM write (x 50) at 0, 64, 128, 192.
  Use("A = 4, B = 64");
  absl::StatusOr<DmTensor> dm = DmTensor::Create(device_, DType::kI8, m("1"), m("1 # 2"), m("A # 256"), m("B"), 0);
  ASSERT_TRUE(dm.ok()) << dm.status();
  ASSERT_TRUE(WriteInto(*HostTensor::Random(DType::kI8, m("A, B"), 3), *dm).ok());
  ASSERT_TRUE(dm->to_hbm(ctx_.tdma, 0, m("A, B")).ok());
  std::optional<DmaRequests> r = CountDmaRequests(LastDma());
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->packets, 4);
  EXPECT_EQ(r->partial_hbm_writes, 4);
  EXPECT_EQ(r->write_cost, 200);
  EXPECT_EQ(r->read_cost, 4);
  // DM -> HBM overlaps: max(4, 200) + 500.
  EXPECT_EQ(Describe(ctx_.program().ops.back()).cycles, 700);
}

TEST_F(DmaRequestsTest, MisalignedHbmReadsCountTwice) {
  // 512 contiguous HBM bytes from 128: two requests, each crossing a 256-byte boundary.
  Use("A = 640");
  HbmTensor whole = Hbm("A", 0);
  absl::StatusOr<HbmTensor> window = whole.tile(m("A"), 512, 128);
  ASSERT_TRUE(window.ok()) << window.status();
  ASSERT_TRUE(window->to_hbm(ctx_.tdma, 4096, m("A = 512")).ok());
  std::optional<DmaRequests> r = CountDmaRequests(LastDma());
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->packets, 1);
  EXPECT_EQ(r->requests, 2);
  EXPECT_EQ(r->split_hbm_reads, 2);
  EXPECT_EQ(r->read_cost, 4);
}

TEST_F(DmaRequestsTest, TransposingHbmMoveWritesByteByByte) {
  // HBM [A, B] -> HBM [B, A] (i8): every element its own packet; each 1-byte HBM write is a
  // partial write (x 50), and one memory serves both sides: 512 + 512 x 50 + 500.
  Use("A = 64, B = 8");
  ASSERT_TRUE(Hbm("A, B", 0).to_hbm(ctx_.tdma, 4096, m("B, A")).ok());
  std::optional<DmaRequests> r = CountDmaRequests(LastDma());
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->packets, 512);
  EXPECT_EQ(r->partial_hbm_writes, 512);
  EXPECT_EQ(Describe(ctx_.program().ops.back()).cycles, 512 + 512 * 50 + 500);
}

TEST_F(DmaRequestsTest, HostMovesHaveNoPackets) {
  Use("A = 64");
  HostTensor host = *HostTensor::Random(DType::kI8, m("A"), 1);
  ASSERT_TRUE(host.to_hbm(ctx_.pdma, 0, m("1"), m("A")).ok());
  EXPECT_FALSE(CountDmaRequests(LastDma()).has_value());
}

}  // namespace
}  // namespace visa
