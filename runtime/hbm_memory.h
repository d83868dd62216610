// HbmMemory: the HBM of every chip of a device as one lazily committed host block, so compiled
// moves read and write HBM where it lies (jit/in_place.h), as they do SRAM (dense_memory.h).
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>

#include "absl/status/status.h"
#include "absl/types/span.h"

namespace visa {

// Chip c's bytes are [data() + c * bytes_per_chip(), + bytes_per_chip()). The block is reserved
// without swap (MAP_NORESERVE): the host commits a 4 KiB page when it is first written, and
// unwritten bytes read as zero, so 48 GB per chip cost only what kernels write (64 chips reserve
// 3 TiB of the 128 TiB of x86-64 user addresses, nothing of memory).
//
// Committed bytes are counted only in the 2 MiB granules something was written into (marked by
// Write and by in-place writers through NoteWritten), so the count never walks 48 GB of untouched
// page tables; pages only read (the host's shared zero page) do not count.
class HbmMemory {
 public:
  HbmMemory(int chips, int64_t bytes_per_chip);
  ~HbmMemory();
  HbmMemory(const HbmMemory&) = delete;
  HbmMemory& operator=(const HbmMemory&) = delete;

  int chips() const { return chips_; }
  int64_t bytes_per_chip() const { return bytes_per_chip_; }
  // The first byte of chip 0; compiled kernels address every chip from it.
  uint8_t* data() const { return data_; }

  // Both fail with OutOfRange naming the range when [address, address + size) leaves the chip
  // (or the chip does not exist). Writing zeros over pages never mapped is a no-op: a zero write
  // (a tensor's padding, an interpreter's zero-initialized output) costs no memory.
  absl::Status Read(int chip, int64_t address, absl::Span<uint8_t> out) const;
  absl::Status Write(int chip, int64_t address, absl::Span<const uint8_t> data);

  // An in-place writer (a compiled move) is about to write bytes of [begin, end) of chip `chip`.
  void NoteWritten(int chip, int64_t begin, int64_t end);

  // Bytes of the pages committed (written) so far, over all chips.
  int64_t resident_bytes() const;

 private:
  absl::Status CheckRange(int chip, int64_t address, int64_t size) const;
  uint8_t* ChipData(int chip) const { return data_ + chip * bytes_per_chip_; }

  int chips_;
  int64_t bytes_per_chip_;
  uint8_t* data_;
  static constexpr int64_t kGranuleBytes = int64_t{2} << 20;
  int64_t words_per_chip_;
  // A bit per granule of every chip (chip after chip): set once anything may have been written.
  std::unique_ptr<std::atomic<uint64_t>[]> written_;
};

}  // namespace visa
