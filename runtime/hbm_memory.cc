// HbmMemory: one anonymous private mapping reserved without swap, a bitmap of written granules.
#include "runtime/hbm_memory.h"

#include <sys/mman.h>

#include <algorithm>
#include <cstring>

#include "absl/strings/str_format.h"
#include "dsl/checked_math.h"
#include "dsl/status_macros.h"
#include "runtime/committed_pages.h"

namespace visa {
namespace {

bool AllZero(const uint8_t* data, size_t size) {
  return std::all_of(data, data + size, [](uint8_t b) { return b == 0; });
}


}  // namespace

HbmMemory::HbmMemory(int chips, int64_t bytes_per_chip)
    : chips_(chips), bytes_per_chip_(bytes_per_chip) {
  VISA_CHECK(chips >= 1 && bytes_per_chip > 0, "HbmMemory needs chips and bytes");
  // Never advised huge pages: a 2 MiB page per first touch would commit (and count) far more than
  // a kernel writes into 48 GB.
  void* block = mmap(nullptr, static_cast<size_t>(chips * bytes_per_chip), PROT_READ | PROT_WRITE,
                     MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  VISA_CHECK(block != MAP_FAILED, "HbmMemory: the host refused to reserve the HBM's addresses");
  data_ = static_cast<uint8_t*>(block);
  words_per_chip_ = ((bytes_per_chip + kGranuleBytes - 1) / kGranuleBytes + 63) / 64;
  written_.reset(new std::atomic<uint64_t>[static_cast<size_t>(chips * words_per_chip_)]);
  for (int64_t w = 0; w < chips * words_per_chip_; ++w) written_[w].store(0, std::memory_order_relaxed);
}

HbmMemory::~HbmMemory() { munmap(data_, static_cast<size_t>(chips_ * bytes_per_chip_)); }

absl::Status HbmMemory::CheckRange(int chip, int64_t address, int64_t size) const {
  if (chip < 0 || chip >= chips_) {
    return absl::OutOfRangeError(absl::StrFormat("HBM: no chip %d of %d", chip, chips_));
  }
  if (!RangeWithin(address, size, bytes_per_chip_)) {
    return absl::OutOfRangeError(absl::StrFormat("HBM: byte range [0x%x, 0x%x) of chip %d leaves its 0x%x bytes",
                                                 address, SaturatingAdd(address, size), chip, bytes_per_chip_));
  }
  return absl::OkStatus();
}

absl::Status HbmMemory::Read(int chip, int64_t address, absl::Span<uint8_t> out) const {
  RETURN_IF_ERROR(CheckRange(chip, address, static_cast<int64_t>(out.size())));
  if (!out.empty()) std::memcpy(out.data(), ChipData(chip) + address, out.size());
  return absl::OkStatus();
}

absl::Status HbmMemory::Write(int chip, int64_t address, absl::Span<const uint8_t> data) {
  RETURN_IF_ERROR(CheckRange(chip, address, static_cast<int64_t>(data.size())));
  if (data.empty()) return absl::OkStatus();
  uint8_t* at = ChipData(chip) + address;
  // Zeros over pages never mapped would only commit them (the pages read as zero already).
  if (AllZero(data.data(), data.size()) && !AnyMapped(at, static_cast<int64_t>(data.size()))) {
    return absl::OkStatus();
  }
  NoteWritten(chip, address, address + static_cast<int64_t>(data.size()));
  std::memcpy(at, data.data(), data.size());
  return absl::OkStatus();
}

void HbmMemory::NoteWritten(int chip, int64_t begin, int64_t end) {
  VISA_CHECK(chip >= 0 && chip < chips_ && 0 <= begin && begin <= end && end <= bytes_per_chip_,
             "HbmMemory::NoteWritten outside the HBM");
  if (begin == end) return;
  std::atomic<uint64_t>* words = written_.get() + chip * words_per_chip_;
  for (int64_t g = begin / kGranuleBytes; g <= (end - 1) / kGranuleBytes; ++g) {
    const uint64_t bit = uint64_t{1} << (g % 64);
    // Read first: a granule marked once is never written to again (no cache line ping-pong).
    if ((words[g / 64].load(std::memory_order_relaxed) & bit) == 0) words[g / 64].fetch_or(bit, std::memory_order_relaxed);
  }
}

int64_t HbmMemory::resident_bytes() const {
  int64_t total = 0;
  const int64_t granules = (bytes_per_chip_ + kGranuleBytes - 1) / kGranuleBytes;
  for (int c = 0; c < chips_; ++c) {
    const std::atomic<uint64_t>* words = written_.get() + c * words_per_chip_;
    auto marked = [&](int64_t g) { return (words[g / 64].load(std::memory_order_relaxed) >> (g % 64)) & 1; };
    // Runs of marked granules, one count each.
    for (int64_t g = 0; g < granules;) {
      if (words[g / 64].load(std::memory_order_relaxed) == 0 && g % 64 == 0) {
        g += 64;
        continue;
      }
      if (!marked(g)) {
        ++g;
        continue;
      }
      int64_t end = g + 1;
      while (end < granules && marked(end)) ++end;
      const int64_t begin_byte = g * kGranuleBytes;
      const int64_t end_byte = std::min(end * kGranuleBytes, bytes_per_chip_);
      total += CommittedBytes(ChipData(c) + begin_byte, end_byte - begin_byte);
      g = end;
    }
  }
  return total;
}

}  // namespace visa
