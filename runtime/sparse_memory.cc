// SparseMemory: page table, zero reads of absent pages, allocation on non-zero writes.
#include "runtime/sparse_memory.h"

#include <algorithm>
#include <cstring>

#include "absl/strings/str_format.h"
#include "dsl/checked_math.h"
#include "dsl/status_macros.h"

namespace visa {
namespace {

bool AllZero(const uint8_t* data, int64_t size) {
  return std::all_of(data, data + size, [](uint8_t b) { return b == 0; });
}

// Splits [address, address + size) at page boundaries: visit(page, offset in page, offset in the
// range, length) for each piece, in order.
template <typename Visit>
void ForEachPagePiece(int64_t address, int64_t size, int page_shift, int64_t page_bytes, Visit visit) {
  for (int64_t done = 0; done < size;) {
    int64_t at = address + done;
    int64_t within = at & (page_bytes - 1);
    int64_t chunk = std::min(page_bytes - within, size - done);
    visit(at >> page_shift, within, done, chunk);
    done += chunk;
  }
}

}  // namespace

SparseMemory::SparseMemory(int64_t capacity, int64_t page_bytes)
    : capacity_(capacity), page_bytes_(page_bytes), page_shift_(0) {
  VISA_CHECK(page_bytes > 0 && (page_bytes & (page_bytes - 1)) == 0, "page size must be a power of two");
  while ((int64_t{1} << page_shift_) < page_bytes) ++page_shift_;
}

absl::Status SparseMemory::CheckRange(int64_t address, int64_t size) const {
  if (!RangeWithin(address, size, capacity_)) {
    return absl::OutOfRangeError(absl::StrFormat(
        "byte range [0x%x, 0x%x) is outside the memory's 0x%x bytes", address, SaturatingAdd(address, size),
        capacity_));
  }
  return absl::OkStatus();
}

absl::Status SparseMemory::Read(int64_t address, absl::Span<uint8_t> out) const {
  RETURN_IF_ERROR(CheckRange(address, static_cast<int64_t>(out.size())));
  ForEachPagePiece(address, static_cast<int64_t>(out.size()), page_shift_, page_bytes_,
                   [&](int64_t page, int64_t within, int64_t done, int64_t chunk) {
                     auto it = pages_.find(page);
                     if (it == pages_.end()) {
                       std::memset(out.data() + done, 0, chunk);
                     } else {
                       std::memcpy(out.data() + done, it->second.get() + within, chunk);
                     }
                   });
  return absl::OkStatus();
}

absl::Status SparseMemory::Write(int64_t address, absl::Span<const uint8_t> data) {
  RETURN_IF_ERROR(CheckRange(address, static_cast<int64_t>(data.size())));
  ForEachPagePiece(address, static_cast<int64_t>(data.size()), page_shift_, page_bytes_,
                   [&](int64_t page, int64_t within, int64_t done, int64_t chunk) {
                     auto it = pages_.find(page);
                     if (it != pages_.end()) {
                       std::memcpy(it->second.get() + within, data.data() + done, chunk);
                     } else if (!AllZero(data.data() + done, chunk)) {
                       // Zero only what the write leaves (a whole-page write zeroes nothing).
                       auto fresh = std::make_unique_for_overwrite<uint8_t[]>(page_bytes_);
                       std::memset(fresh.get(), 0, within);
                       std::memcpy(fresh.get() + within, data.data() + done, chunk);
                       std::memset(fresh.get() + within + chunk, 0, page_bytes_ - within - chunk);
                       pages_.emplace(page, std::move(fresh));
                     }
                   });
  return absl::OkStatus();
}

}  // namespace visa
