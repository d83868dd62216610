// HbmMemory (runtime/hbm_memory.h): every chip's HBM as one lazily committed block: unwritten
// bytes read zero and cost nothing, chips lie a fixed stride apart, accesses outside a chip fail
// naming the range, and committed pages are counted where something was written.
#include "runtime/hbm_memory.h"

#include <cstdint>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace visa {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;

constexpr int64_t kPage = 4096;
constexpr int64_t kChip = int64_t{64} << 20;  // small chips: the class does not care

std::string Msg(const absl::Status& status) { return std::string(status.message()); }

TEST(HbmMemory, UnwrittenBytesReadZeroAndCommitNothing) {
  HbmMemory memory(2, kChip);
  std::vector<uint8_t> out(3 * kPage, 0xff);
  ASSERT_TRUE(memory.Read(1, kChip - 3 * kPage, absl::MakeSpan(out)).ok());
  EXPECT_EQ(out, std::vector<uint8_t>(3 * kPage, 0));
  EXPECT_EQ(memory.resident_bytes(), 0);
}

TEST(HbmMemory, WritesAcrossPagesReadBackAndCommitThosePages) {
  HbmMemory memory(1, kChip);
  std::vector<uint8_t> data(10000);
  for (size_t i = 0; i < data.size(); ++i) data[i] = static_cast<uint8_t>(i * 7 + 1);
  ASSERT_TRUE(memory.Write(0, 4000, data).ok());
  std::vector<uint8_t> out(data.size());
  ASSERT_TRUE(memory.Read(0, 4000, absl::MakeSpan(out)).ok());
  EXPECT_EQ(out, data);
  EXPECT_EQ(memory.resident_bytes(), 4 * kPage);  // bytes 4000..13999 touch pages 0..3
}

TEST(HbmMemory, ChipsLieOneStrideApartInOneBlock) {
  HbmMemory memory(3, kChip);
  ASSERT_TRUE(memory.Write(2, 100, std::vector<uint8_t>{5, 6}).ok());
  EXPECT_EQ(memory.data()[2 * kChip + 100], 5);
  EXPECT_EQ(memory.data()[2 * kChip + 101], 6);
  std::vector<uint8_t> other(2, 0xff);
  ASSERT_TRUE(memory.Read(1, 100, absl::MakeSpan(other)).ok());
  EXPECT_EQ(other, std::vector<uint8_t>(2, 0));
}

TEST(HbmMemory, ZeroWritesToUncommittedPagesAreNoOps) {
  HbmMemory memory(1, kChip);
  ASSERT_TRUE(memory.Write(0, 0, std::vector<uint8_t>(3 * kPage, 0)).ok());
  EXPECT_EQ(memory.resident_bytes(), 0);
  // Into a committed page they are stored.
  ASSERT_TRUE(memory.Write(0, 10, std::vector<uint8_t>{1, 2}).ok());
  ASSERT_TRUE(memory.Write(0, 10, std::vector<uint8_t>{0, 0}).ok());
  EXPECT_EQ(memory.data()[10], 0);
  EXPECT_EQ(memory.data()[11], 0);
  EXPECT_EQ(memory.resident_bytes(), kPage);
}

// What a compiled kernel writes in place counts once it told the memory where it writes.
TEST(HbmMemory, InPlaceWritesCountWhereNoted) {
  HbmMemory memory(2, kChip);
  memory.NoteWritten(1, 5 * kPage, 7 * kPage);
  uint8_t* chip1 = memory.data() + kChip;
  chip1[5 * kPage] = 1;
  chip1[6 * kPage + 17] = 1;
  EXPECT_EQ(memory.resident_bytes(), 2 * kPage);
  // Pages far from every noted range are not looked at (an in-place writer must note first).
  chip1[kChip - kPage] = 1;
  EXPECT_EQ(memory.resident_bytes(), 2 * kPage);
  memory.NoteWritten(1, kChip - kPage, kChip);
  EXPECT_EQ(memory.resident_bytes(), 3 * kPage);
}

TEST(HbmMemory, OutOfRangeAccessesFailNamingTheRange) {
  HbmMemory memory(2, kChip);
  std::vector<uint8_t> out(8);
  absl::Status past = memory.Read(1, kChip - 4, absl::MakeSpan(out));
  EXPECT_EQ(past.code(), absl::StatusCode::kOutOfRange);
  EXPECT_THAT(Msg(past), AllOf(HasSubstr("HBM"), HasSubstr("[0x3fffffc, 0x4000004)"), HasSubstr("chip 1"),
                               HasSubstr("0x4000000 bytes")));
  absl::Status negative = memory.Write(0, -1, out);
  EXPECT_EQ(negative.code(), absl::StatusCode::kOutOfRange);
  EXPECT_THAT(Msg(negative), HasSubstr("of chip 0"));
  absl::Status no_chip = memory.Write(2, 0, out);
  EXPECT_EQ(no_chip.code(), absl::StatusCode::kOutOfRange);
  EXPECT_THAT(Msg(no_chip), HasSubstr("no chip 2 of 2"));
  EXPECT_TRUE(memory.Read(1, kChip - 8, absl::MakeSpan(out)).ok());
  EXPECT_EQ(memory.resident_bytes(), 0);  // failed writes commit nothing
}

}  // namespace
}  // namespace visa
