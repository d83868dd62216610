// VRF addresses handed out in order (samples/models/vrf_arena.h): consecutive, 32-byte aligned,
// and refused past the 8 KB of a slice's VRF with a message naming the operand.
#include "samples/models/vrf_arena.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace visa::models {
namespace {

using ::testing::HasSubstr;

TEST(VrfArenaTest, HandsOutConsecutiveAlignedAddresses) {
  VrfArena vrf;
  EXPECT_EQ(*vrf.Take(4096, "weights"), 0);
  EXPECT_EQ(*vrf.Take(4, "scalar"), 4096);   // a scalar takes a whole 32-byte row
  EXPECT_EQ(*vrf.Take(128, "tile"), 4128);
  EXPECT_EQ(vrf.used(), 4256);
}

TEST(VrfArenaTest, MoreThanTheVrfHoldsIsRefused) {
  VrfArena vrf;
  ASSERT_TRUE(vrf.Take(8192 - 32, "weights").ok());
  absl::StatusOr<int64_t> over = vrf.Take(64, "row max");
  ASSERT_FALSE(over.ok());
  EXPECT_THAT(over.status().message(), HasSubstr("VRF: row max needs 64 bytes at 8160"));
  EXPECT_THAT(over.status().message(), HasSubstr("8192 bytes of a slice's VRF"));
  EXPECT_FALSE(vrf.Take(0, "nothing").ok());
  EXPECT_TRUE(vrf.Take(32, "the last row").ok());
}

}  // namespace
}  // namespace visa::models
