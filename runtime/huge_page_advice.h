// HugePageAdvice: which 2 MiB regions of a register file's host block (TRF, VRF) are backed by
// huge pages, decided by the first tensor placed in each.
//
// In a region advised MADV_HUGEPAGE the first fault commits and zeroes all 2 MiB; elsewhere each
// 4 KiB page touched faults on its own. Huge pages pay where a tensor touches most pages of a
// region (a VRF load writing a few bytes into every slice: one fault instead of 256) and cost up
// to 16x the zeroing where it touches few (a 1 MiB TRF load writes 4 KiB of each slice's 64 KiB
// of rows: 8 huge faults zero 16 MiB for the 1 MiB written). So a region is advised when the
// first tensor placed in it touches at least half its pages, and left in 4 KiB pages otherwise.
#pragma once

#include <cstdint>
#include <mutex>
#include <vector>

#include "absl/types/span.h"
#include "runtime/address_book.h"
#include "runtime/dense_memory.h"

namespace visa {

inline constexpr int64_t kHugeRegionBytes = int64_t{2} << 20;
inline constexpr int64_t kSmallPageBytes = 4096;

// How many distinct 4 KiB pages of each 2 MiB region of a block the bytes `range` of every unit
// in `units` touch (unit u's bytes start at u * unit_stride): region index -> pages, for the
// regions touched, in increasing region order.
struct RegionPages {
  int64_t region = 0;
  int64_t pages = 0;
  bool operator==(const RegionPages&) const = default;
};
std::vector<RegionPages> PagesTouchedPerRegion(absl::Span<const int64_t> units, ByteRange range, int64_t unit_stride);

// Whether a region whose first tensor touches `pages` of its 512 pages should be huge.
inline bool WorthHugePages(int64_t pages) { return 2 * pages >= kHugeRegionBytes / kSmallPageBytes; }

class HugePageAdvice {
 public:
  // `memory` must outlive this; its start is 2 MiB-aligned (dense_memory.h).
  HugePageAdvice(DenseMemory& memory, int64_t unit_stride);

  // A tensor with these units and per-unit bytes was placed: decides every region it touches
  // that no earlier tensor decided. Cheap once every region of the block is decided.
  void Place(absl::Span<const int64_t> units, ByteRange range);

  int64_t huge_regions() const;     // regions advised so far
  int64_t decided_regions() const;  // regions decided so far (huge or not)

 private:
  bool TouchesOpenRegion(absl::Span<const int64_t> units, ByteRange range) const;  // mu_ held

  DenseMemory& memory_;
  const int64_t unit_stride_;
  mutable std::mutex mu_;          // guards both below
  std::vector<uint8_t> decided_;   // per region: 0 open, 1 small, 2 huge
  int64_t open_ = 0;
};

}  // namespace visa
