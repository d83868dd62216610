// SparseMemory: a large byte-addressed memory whose pages are allocated on first (non-zero) write.
#pragma once

#include <cstdint>
#include <memory>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/types/span.h"

namespace visa {

// Unwritten bytes read as zero, so a page is only allocated when a write stores a non-zero byte
// into it: writing zeros into untouched memory is a no-op that costs nothing. This keeps a 48 GB
// HBM cheap when kernels touch a few megabytes of it.
class SparseMemory {
 public:
  // `page_bytes` must be a power of two.
  SparseMemory(int64_t capacity, int64_t page_bytes);

  int64_t capacity() const { return capacity_; }

  // Both fail with OutOfRange when [address, address + size) leaves [0, capacity).
  absl::Status Read(int64_t address, absl::Span<uint8_t> out) const;
  absl::Status Write(int64_t address, absl::Span<const uint8_t> data);

  // Bytes of the pages allocated so far.
  int64_t resident_bytes() const { return static_cast<int64_t>(pages_.size()) * page_bytes_; }

 private:
  absl::Status CheckRange(int64_t address, int64_t size) const;

  int64_t capacity_;
  int64_t page_bytes_;
  int page_shift_;
  absl::flat_hash_map<int64_t, std::unique_ptr<uint8_t[]>> pages_;
};

}  // namespace visa
