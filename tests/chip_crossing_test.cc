// RunCrossesChips (runtime/chip_crossing.h) against the element-by-element definition, on every
// small run and chip size, and on the long runs a 4-chip layer's moves have.
#include "runtime/chip_crossing.h"

#include <cstdint>

#include "gtest/gtest.h"

namespace visa {
namespace {

bool CrossesByElement(const MoveRun& r, int64_t src_per_chip, int64_t dst_per_chip) {
  for (int64_t i = 0; i < r.length; ++i) {
    if ((r.src + i * r.src_stride) / src_per_chip != (r.dst + i) / dst_per_chip) return true;
  }
  return false;
}

TEST(ChipCrossing, AgreesWithEveryElementsChipOnAllSmallRuns) {
  int64_t runs = 0, crossing = 0;
  for (int64_t src_per_chip : {1, 3, 4, 8}) {
    for (int64_t dst_per_chip : {1, 2, 4, 8}) {
      for (int64_t dst = 0; dst < 24; ++dst) {
        for (int64_t src = 0; src < 24; ++src) {
          for (int64_t stride : {0, 1, 2, 3}) {
            for (int64_t length = 1; length <= 20; ++length) {
              const MoveRun run{.dst = dst, .src = src, .length = length, .src_stride = stride};
              const bool expected = CrossesByElement(run, src_per_chip, dst_per_chip);
              ASSERT_EQ(RunCrossesChips(run, src_per_chip, dst_per_chip), expected)
                  << "dst " << dst << " src " << src << " stride " << stride << " length " << length
                  << " per chip " << src_per_chip << " / " << dst_per_chip;
              ++runs;
              crossing += expected;
            }
          }
        }
      }
    }
  }
  // Both answers occur thousands of times: the sweep is not one-sided.
  EXPECT_GT(crossing, 1000);
  EXPECT_GT(runs - crossing, 1000);
}

TEST(ChipCrossing, ALongRunOnEachChipStaysAndOneShiftedByAnElementCrosses) {
  const int64_t per_chip = int64_t{1} << 20;
  EXPECT_FALSE(RunCrossesChips({.dst = 0, .src = 0, .length = 4 * per_chip, .src_stride = 1}, per_chip, per_chip));
  EXPECT_TRUE(RunCrossesChips({.dst = 0, .src = 1, .length = 4 * per_chip, .src_stride = 1}, per_chip, per_chip));
  // Destination chips of half the size: the source's stride 2 keeps each element on its chip.
  EXPECT_FALSE(RunCrossesChips({.dst = 0, .src = 0, .length = 2 * per_chip, .src_stride = 2}, per_chip, per_chip / 2));
}

}  // namespace
}  // namespace visa
