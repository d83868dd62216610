// KeptChips (runtime/kept_chips.h): a rank keeps only its own chips' HBM; writes to the others' are
// dropped (their pages never committed) unless a KeepEveryChip scope is open. SRAM is kept whole.
#include <cstdint>
#include <vector>

#include "gtest/gtest.h"
#include "runtime/device.h"
#include "runtime/kept_chips.h"

namespace visa {
namespace {

// Rank 1 of 2 for the test's duration (one process again afterwards).
class AsRankOneOfTwo : public ::testing::Test {
 protected:
  void SetUp() override { KeepOwnChipsOf(1, 2); }
  void TearDown() override { KeepOwnChipsOf(0, 1); }
};

std::vector<uint8_t> ReadHbm(const Device& device, int chip) {
  std::vector<uint8_t> out(4);
  EXPECT_TRUE(device.ReadHbm(chip, 0, absl::MakeSpan(out)).ok());
  return out;
}

TEST_F(AsRankOneOfTwo, WritesToAnotherRanksChipsHbmAreDropped) {
  Device device(4);  // rank 1 of 2 owns chips 2 and 3
  const std::vector<uint8_t> bytes = {1, 2, 3, 4};
  const int64_t before = device.resident_bytes();
  ASSERT_TRUE(device.WriteHbm(0, 0, bytes).ok());
  EXPECT_EQ(ReadHbm(device, 0), std::vector<uint8_t>(4, 0));
  EXPECT_EQ(device.resident_bytes(), before) << "chip 0's page must not be committed";
  ASSERT_TRUE(device.WriteHbm(2, 0, bytes).ok());
  EXPECT_EQ(ReadHbm(device, 2), bytes);
}

TEST_F(AsRankOneOfTwo, KeepEveryChipKeepsTheBytesAnotherRankSent) {
  Device device(4);
  const std::vector<uint8_t> bytes = {5, 6, 7, 8};
  {
    KeepEveryChip received;
    ASSERT_TRUE(device.WriteHbm(1, 0, bytes).ok());
  }
  EXPECT_EQ(ReadHbm(device, 1), bytes);
  ASSERT_TRUE(device.WriteHbm(1, 0, std::vector<uint8_t>(4, 9)).ok());  // the scope closed: dropped again
  EXPECT_EQ(ReadHbm(device, 1), bytes);
}

TEST_F(AsRankOneOfTwo, SramIsKeptOnEveryChip) {
  Device device(4);
  const std::vector<uint8_t> bytes = {1, 2, 3, 4};
  ASSERT_TRUE(device.WriteDm({.chip = 0}, 0, bytes).ok());
  std::vector<uint8_t> out(4);
  ASSERT_TRUE(device.ReadDm({.chip = 0}, 0, absl::MakeSpan(out)).ok());
  EXPECT_EQ(out, bytes);
}

TEST(KeptChips, OneProcessKeepsEveryChip) {
  for (int chip = 0; chip < 8; ++chip) EXPECT_TRUE(KeepsHbmOf(chip, 8));
}

TEST(KeptChips, SharesFollowTheRanks) {
  KeepOwnChipsOf(2, 4);  // of 8 chips: 4 and 5
  std::vector<int> kept;
  for (int chip = 0; chip < 8; ++chip) {
    if (KeepsHbmOf(chip, 8)) kept.push_back(chip);
  }
  KeepOwnChipsOf(0, 1);
  EXPECT_EQ(kept, (std::vector<int>{4, 5}));
}

}  // namespace
}  // namespace visa
