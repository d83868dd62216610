// WrittenBytes' table of recently marked ranges: a range marked again does nothing more, and
// whatever ranges share or evict table slots, the marks agree with a byte model.
#include <gtest/gtest.h>

#include <random>
#include <vector>

#include "runtime/written_bytes.h"

namespace visa {
namespace {

TEST(WrittenBytesRecent, ARangeMarkedAgainIsFoundAmongTheRecentOnes) {
  WrittenBytes bytes(int64_t{1} << 20);
  for (int64_t unit = 0; unit < 256; ++unit) bytes.Mark(unit * 4096 + 64, 2048);
  EXPECT_EQ(bytes.repeated_marks(), 0);
  for (int64_t unit = 0; unit < 256; ++unit) bytes.Mark(unit * 4096 + 64, 2048);
  EXPECT_GE(bytes.repeated_marks(), 200);  // a few may have shared a slot
  EXPECT_EQ(bytes.FirstUnwritten(64, 2048), std::nullopt);
  EXPECT_EQ(bytes.FirstUnwritten(0, 4096), 0);
  EXPECT_EQ(bytes.FirstUnwritten(64, 2049), 64 + 2048);
  // The same address with another size is another range.
  bytes.Mark(64, 4000);
  EXPECT_EQ(bytes.FirstUnwritten(64, 4000), std::nullopt);
}

TEST(WrittenBytesRecent, ManyRangesRepeatedInAnyOrderAgreeWithAByteModel) {
  const int64_t size = int64_t{1} << 18;
  WrittenBytes bytes(size);
  std::vector<uint8_t> model(size, 0);
  std::mt19937_64 random(7);
  std::vector<std::pair<int64_t, int64_t>> ranges;
  for (int k = 0; k < 3000; ++k) {
    const int64_t address = static_cast<int64_t>(random() % size);
    ranges.emplace_back(address, static_cast<int64_t>(random() % std::min<int64_t>(300, size - address)));
  }
  for (int round = 0; round < 3; ++round) {
    for (int k = 0; k < 2000; ++k) {
      const auto [address, length] = ranges[random() % ranges.size()];
      bytes.Mark(address, length);
      std::fill(model.begin() + address, model.begin() + address + length, 1);
    }
    for (int64_t at = 0; at < size; at += 997) {
      const int64_t length = std::min<int64_t>(997, size - at);
      std::optional<int64_t> expected;
      for (int64_t b = at; b < at + length; ++b) {
        if (model[b] == 0) {
          expected = b;
          break;
        }
      }
      ASSERT_EQ(bytes.FirstUnwritten(at, length), expected) << "round " << round << " at " << at;
    }
  }
  EXPECT_GT(bytes.repeated_marks(), 0);
}

}  // namespace
}  // namespace visa
