// DenseMemory: one contiguous host block for a device memory that kernels address in place (a
// chip's DM with its SPM, its TRF rows, its VRFs), committed page by page on first touch.
#pragma once

#include <cstdint>

#include "absl/status/status.h"
#include "absl/types/span.h"

namespace visa {

// The block is reserved, not allocated: the operating system maps a page when it is first
// written, and unwritten bytes read as zero, so a chip's 256 MB of DM costs only what kernels
// touch. The bytes are at fixed host addresses, so compiled kernels read and
// write them directly (`data()`), with no staging copy.
class DenseMemory {
 public:
  explicit DenseMemory(int64_t capacity);
  ~DenseMemory();
  DenseMemory(const DenseMemory&) = delete;
  DenseMemory& operator=(const DenseMemory&) = delete;

  int64_t capacity() const { return capacity_; }
  uint8_t* data() { return data_; }
  const uint8_t* data() const { return data_; }

  // Both fail with OutOfRange when [address, address + size) leaves [0, capacity).
  absl::Status Read(int64_t address, absl::Span<uint8_t> out) const;
  absl::Status Write(int64_t address, absl::Span<const uint8_t> data);

  // Bytes of the pages the host has committed (touched) so far.
  int64_t resident_bytes() const;

 private:
  absl::Status CheckRange(int64_t address, int64_t size) const;
  bool AnyResident(int64_t address, size_t size) const;

  int64_t capacity_;
  uint8_t* data_;
};

}  // namespace visa
