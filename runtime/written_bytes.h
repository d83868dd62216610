// WrittenBytes: a shadow bitmap over one device memory recording which of its bytes were ever
// written, so that a read of memory nothing wrote can be reported instead of silently seeing zero
// (uninitialized_reads.h says what counts as a write and as a read).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>

#include "absl/container/flat_hash_map.h"

namespace visa {

// One bit per memory byte, allocated a bitmap page at a time on the first mark inside it, so a
// 48 GB HBM whose kernels touch a few megabytes costs a few kilobytes of bitmap. A fresh bitmap
// says nothing was written. Addresses are the memory's linear addresses; ranges must lie inside
// [0, capacity) (callers pass ranges the device has already bounds-checked).
class WrittenBytes {
 public:
  explicit WrittenBytes(int64_t capacity);

  int64_t capacity() const { return capacity_; }

  // Marks [address, address + size) written.
  void Mark(int64_t address, int64_t size);
  // The first byte of [address, address + size) never marked, or nullopt when all were.
  std::optional<int64_t> FirstUnwritten(int64_t address, int64_t size) const;

  // Host bytes the bitmap pages take.
  int64_t resident_bytes() const;

 private:
  // Memory bytes one bitmap page covers (a bit each): 8 KB of bitmap per 64 KB of memory.
  static constexpr int64_t kPageBytes = int64_t{64} * 1024;
  static constexpr int64_t kWordsPerPage = kPageBytes / 64;

  void CheckRange(int64_t address, int64_t size) const;

  int64_t capacity_;
  absl::flat_hash_map<int64_t, std::unique_ptr<uint64_t[]>> pages_;
};

}  // namespace visa
