// WrittenBytes: page table of bitmaps, range marks and first-unwritten searches word by word.
#include "runtime/written_bytes.h"

#include <algorithm>
#include <bit>

#include "dsl/status_macros.h"

namespace visa {
namespace {

// Bits [from, to) of a 64-bit word (0 <= from < to <= 64).
uint64_t BitsBetween(int64_t from, int64_t to) {
  const uint64_t upper = to == 64 ? ~uint64_t{0} : (uint64_t{1} << to) - 1;
  return upper & ~((uint64_t{1} << from) - 1);
}

}  // namespace

WrittenBytes::WrittenBytes(int64_t capacity) : capacity_(capacity) {
  VISA_CHECK(capacity >= 0, "WrittenBytes: a memory has a non-negative capacity");
}

void WrittenBytes::CheckRange(int64_t address, int64_t size) const {
  VISA_CHECK(address >= 0 && size >= 0 && address <= capacity_ && size <= capacity_ - address,
             "WrittenBytes: a range outside the memory (the device checks ranges first)");
}

void WrittenBytes::Mark(int64_t address, int64_t size) {
  CheckRange(address, size);
  for (int64_t at = address, end = address + size; at < end;) {
    const int64_t page = at / kPageBytes;
    const int64_t page_end = std::min(end, (page + 1) * kPageBytes);
    std::unique_ptr<uint64_t[]>& bits = pages_[page];
    if (!bits) bits = std::make_unique<uint64_t[]>(kWordsPerPage);  // value-initialized: unwritten
    for (int64_t bit = at - page * kPageBytes, stop = page_end - page * kPageBytes; bit < stop;) {
      const int64_t word = bit / 64;
      const int64_t to = std::min<int64_t>(stop - word * 64, 64);
      bits[word] |= BitsBetween(bit % 64, to);
      bit = word * 64 + to;
    }
    at = page_end;
  }
}

std::optional<int64_t> WrittenBytes::FirstUnwritten(int64_t address, int64_t size) const {
  CheckRange(address, size);
  for (int64_t at = address, end = address + size; at < end;) {
    const int64_t page = at / kPageBytes;
    const int64_t page_end = std::min(end, (page + 1) * kPageBytes);
    auto it = pages_.find(page);
    if (it == pages_.end()) return at;
    const uint64_t* bits = it->second.get();
    for (int64_t bit = at - page * kPageBytes, stop = page_end - page * kPageBytes; bit < stop;) {
      const int64_t word = bit / 64;
      const int64_t to = std::min<int64_t>(stop - word * 64, 64);
      const uint64_t missing = ~bits[word] & BitsBetween(bit % 64, to);
      if (missing != 0) return page * kPageBytes + word * 64 + std::countr_zero(missing);
      bit = word * 64 + to;
    }
    at = page_end;
  }
  return std::nullopt;
}

int64_t WrittenBytes::resident_bytes() const {
  return static_cast<int64_t>(pages_.size()) * kWordsPerPage * static_cast<int64_t>(sizeof(uint64_t));
}

}  // namespace visa
