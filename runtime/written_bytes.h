// WrittenBytes: a shadow bitmap over one device memory recording which of its bytes were ever
// written, so that a read of memory nothing wrote can be reported instead of silently seeing zero
// (uninitialized_reads.h says what counts as a write and as a read).
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <optional>

#include "absl/container/flat_hash_map.h"

namespace visa {

// One bit per memory byte, kept a page (64 KiB of memory) at a time: a page nothing marked costs
// nothing, a page marked in at most kMaxRuns disjoint runs costs only its entry (the runs' ends),
// a page marked in more runs costs an 8 KiB bitmap (and a 128-byte summary with a bit per full
// bitmap word), and a page marked completely (what whole tensors written unit by unit leave) drops
// its bitmap and costs only its entry. (A few runs per page is what small tensors in every slice
// leave, e.g. a kernel's inputs and outputs of 32 bytes in each of 256 slices: with a bitmap from
// the second run on, 2 MiB of bitmaps per tensor, whose first touch was 40 % of a fresh run's page
// faults.) So a 48 GB HBM whose kernels touch a few megabytes costs a few kilobytes, and a run
// writing 50 MB of DM in whole units costs almost nothing. A fresh shadow says nothing was
// written. Addresses are the memory's linear addresses; ranges must lie inside [0, capacity)
// (callers pass ranges the device has already bounds-checked).
class WrittenBytes {
 public:
  explicit WrittenBytes(int64_t capacity);

  int64_t capacity() const { return capacity_; }

  // Marks [address, address + size) written.
  void Mark(int64_t address, int64_t size);
  // The first byte of [address, address + size) never marked, or nullopt when all were.
  std::optional<int64_t> FirstUnwritten(int64_t address, int64_t size) const;

  // Host bytes the bitmaps of partly marked pages take.
  int64_t resident_bytes() const;

  // Marks that found their range among the recently completed ones and did nothing more.
  int64_t repeated_marks() const { return repeated_marks_; }

 private:
  // Memory bytes one bitmap page covers (a bit each): 8 KB of bitmap per 64 KB of memory.
  static constexpr int64_t kPageBytes = int64_t{64} * 1024;
  static constexpr int64_t kWordsPerPage = kPageBytes / 64;
  // Summary words after the bitmap: bit w of the summary is set when bitmap word w is full, so a
  // range marked again (a program's every later run re-marks its outputs) is checked 4 KiB of
  // memory per compare instead of 64 bytes.
  static constexpr int64_t kSummaryWords = kWordsPerPage / 64;

  // Disjoint runs a page may hold before it takes a bitmap.
  static constexpr int kMaxRuns = 8;
  // Bytes [start, end) of a page (offsets from the page's first byte).
  struct Run {
    int32_t start = 0;
    int32_t end = 0;
  };
  struct Page {
    int64_t marked = 0;               // bytes of the page marked so far
    // Bitmap then summary; null while the marked bytes are at most kMaxRuns runs (one, the whole
    // page, once complete).
    std::unique_ptr<uint64_t[]> bits;
    int run_count = 0;                // without a bitmap: runs[0, run_count), sorted, disjoint,
    std::array<Run, kMaxRuns> runs{};  // never touching
  };

  void CheckRange(int64_t address, int64_t size) const;
  // Bytes of memory page `page` (the last page may be short).
  int64_t PageLength(int64_t page) const;
  // Marks bits [from, to) of a partly marked page, counting the newly marked ones.
  static void MarkBits(Page& page, int64_t from, int64_t to);
  // Marks [from, to) of a page that is not complete: merges it into its runs, or gives it a
  // bitmap when they would be more than kMaxRuns.
  static void MarkPart(Page& page, int64_t from, int64_t to);
  // Without a bitmap: the first byte of [from, to) (page offsets) no run holds, or `to`.
  static int64_t FirstOutsideRuns(const Page& page, int64_t from, int64_t to);

  // Ranges marked before, remembered in a small direct-mapped table: marks are never undone, so
  // a range found there is still marked, and the same range marked again (every later run of a
  // program marks the outputs of every op on every unit) costs a compare instead of a page lookup
  // and a bitmap walk.
  static constexpr int64_t kRecentRanges = 1024;
  struct Recent {
    int64_t address = -1;
    int64_t size = 0;
  };
  Recent& RecentSlot(int64_t address, int64_t size);

  int64_t capacity_;
  absl::flat_hash_map<int64_t, Page> pages_;
  std::array<Recent, kRecentRanges> recent_{};
  int64_t repeated_marks_ = 0;
};

}  // namespace visa
