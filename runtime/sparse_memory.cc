// SparseMemory: page table, zero reads of absent pages, allocation on non-zero writes.
#include "runtime/sparse_memory.h"

#include <algorithm>
#include <cstring>

#include "absl/strings/str_format.h"
#include "dsl/status_macros.h"

namespace visa {
namespace {

bool AllZero(const uint8_t* data, int64_t size) {
  return std::all_of(data, data + size, [](uint8_t b) { return b == 0; });
}

}  // namespace

SparseMemory::SparseMemory(int64_t capacity, int64_t page_bytes)
    : capacity_(capacity), page_bytes_(page_bytes), page_shift_(0) {
  VISA_CHECK(page_bytes > 0 && (page_bytes & (page_bytes - 1)) == 0, "page size must be a power of two");
  while ((int64_t{1} << page_shift_) < page_bytes) ++page_shift_;
}

absl::Status SparseMemory::CheckRange(int64_t address, int64_t size) const {
  if (address < 0 || size < 0 || address > capacity_ || size > capacity_ - address) {
    return absl::OutOfRangeError(absl::StrFormat(
        "byte range [0x%x, 0x%x) is outside the memory's 0x%x bytes", address, address + size,
        capacity_));
  }
  return absl::OkStatus();
}

absl::Status SparseMemory::Read(int64_t address, absl::Span<uint8_t> out) const {
  RETURN_IF_ERROR(CheckRange(address, static_cast<int64_t>(out.size())));
  int64_t done = 0;
  const int64_t size = static_cast<int64_t>(out.size());
  while (done < size) {
    int64_t at = address + done;
    int64_t page = at >> page_shift_;
    int64_t within = at & (page_bytes_ - 1);
    int64_t chunk = std::min(page_bytes_ - within, size - done);
    auto it = pages_.find(page);
    if (it == pages_.end()) {
      std::memset(out.data() + done, 0, chunk);
    } else {
      std::memcpy(out.data() + done, it->second.get() + within, chunk);
    }
    done += chunk;
  }
  return absl::OkStatus();
}

absl::Status SparseMemory::Write(int64_t address, absl::Span<const uint8_t> data) {
  RETURN_IF_ERROR(CheckRange(address, static_cast<int64_t>(data.size())));
  int64_t done = 0;
  const int64_t size = static_cast<int64_t>(data.size());
  while (done < size) {
    int64_t at = address + done;
    int64_t page = at >> page_shift_;
    int64_t within = at & (page_bytes_ - 1);
    int64_t chunk = std::min(page_bytes_ - within, size - done);
    auto it = pages_.find(page);
    if (it == pages_.end()) {
      if (!AllZero(data.data() + done, chunk)) {
        auto fresh = std::make_unique<uint8_t[]>(page_bytes_);  // value-initialized: zero
        std::memcpy(fresh.get() + within, data.data() + done, chunk);
        pages_.emplace(page, std::move(fresh));
      }
    } else {
      std::memcpy(it->second.get() + within, data.data() + done, chunk);
    }
    done += chunk;
  }
  return absl::OkStatus();
}

}  // namespace visa
