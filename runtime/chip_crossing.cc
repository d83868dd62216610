// ChipCrossing: a run's chip check, one comparison pair per destination chip it passes through.
#include "runtime/chip_crossing.h"

#include <algorithm>

namespace visa {

bool RunCrossesChips(const MoveRun& run, int64_t src_per_chip, int64_t dst_per_chip) {
  auto src_chip = [&](int64_t i) { return (run.src + i * run.src_stride) / src_per_chip; };
  for (int64_t i = 0; i < run.length;) {
    const int64_t dst_chip = (run.dst + i) / dst_per_chip;
    const int64_t end = std::min(run.length, (dst_chip + 1) * dst_per_chip - run.dst);  // this chip's stretch
    if (src_chip(i) != dst_chip || src_chip(end - 1) != dst_chip) return true;
    i = end;
  }
  return false;
}

}  // namespace visa
