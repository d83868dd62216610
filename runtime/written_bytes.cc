// WrittenBytes: a page table of bitmaps (dropped once full), range marks and first-unwritten
// searches a whole word at a time.
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

int64_t WrittenBytes::PageLength(int64_t page) const {
  return std::min(kPageBytes, capacity_ - page * kPageBytes);
}

void WrittenBytes::MarkBits(Page& page, int64_t from, int64_t to) {
  uint64_t* bits = page.bits.get();
  uint64_t* summary = bits + kWordsPerPage;
  for (int64_t bit = from; bit < to;) {
    const int64_t word = bit / 64;
    const int64_t stop = std::min<int64_t>(to - word * 64, 64);
    if (bit % 64 == 0 && stop == 64) {
      // Whole words: the common case of a tensor's runs. Words already full are skipped by their
      // summary bits, up to 64 of them per compare.
      const int64_t last = to / 64;
      for (int64_t w = word; w < last;) {
        const int64_t group_end = std::min<int64_t>(last, (w / 64 + 1) * 64);
        const uint64_t wanted = BitsBetween(w % 64, group_end - (w / 64) * 64);
        uint64_t& full = summary[w / 64];
        if ((full & wanted) == wanted) {
          w = group_end;
          continue;
        }
        for (; w < group_end; ++w) {
          const uint64_t old = bits[w];
          if (old == ~uint64_t{0}) continue;
          page.marked += old == 0 ? 64 : 64 - std::popcount(old);
          bits[w] = ~uint64_t{0};
        }
        full |= wanted;
      }
      bit = last * 64;
      continue;
    }
    const uint64_t mask = BitsBetween(bit % 64, stop);
    page.marked += std::popcount(mask & ~bits[word]);
    bits[word] |= mask;
    if (bits[word] == ~uint64_t{0}) summary[word / 64] |= uint64_t{1} << (word % 64);
    bit = word * 64 + stop;
  }
}

void WrittenBytes::MarkPart(Page& page, int64_t from, int64_t to) {
  if (page.bits == nullptr) {
    // The runs with [from, to) merged in: those before it, the merged one, those after it.
    std::array<Run, kMaxRuns + 1> merged;
    int count = 0;
    int64_t start = from, end = to;
    int i = 0;
    for (; i < page.run_count && page.runs[i].end < start; ++i) merged[count++] = page.runs[i];
    for (; i < page.run_count && page.runs[i].start <= end; ++i) {  // overlapping or touching
      start = std::min<int64_t>(start, page.runs[i].start);
      end = std::max<int64_t>(end, page.runs[i].end);
    }
    merged[count++] = Run{static_cast<int32_t>(start), static_cast<int32_t>(end)};
    for (; i < page.run_count; ++i) merged[count++] = page.runs[i];
    if (count <= kMaxRuns) {
      page.marked = 0;
      for (int r = 0; r < count; ++r) {
        page.runs[r] = merged[r];
        page.marked += merged[r].end - merged[r].start;
      }
      page.run_count = count;
      return;
    }
    page.bits = std::make_unique<uint64_t[]>(kWordsPerPage + kSummaryWords);  // zeros: unwritten
    page.marked = 0;
    for (int r = 0; r < page.run_count; ++r) MarkBits(page, page.runs[r].start, page.runs[r].end);
    page.run_count = 0;
  }
  MarkBits(page, from, to);
}

int64_t WrittenBytes::FirstOutsideRuns(const Page& page, int64_t from, int64_t to) {
  for (int r = 0; r < page.run_count && from < to; ++r) {
    const Run& run = page.runs[r];
    if (run.end <= from) continue;
    if (run.start > from) return from;
    from = run.end;  // runs never touch: the byte after a run is unmarked
    return std::min(from, to);
  }
  return from;
}

WrittenBytes::Recent& WrittenBytes::RecentSlot(int64_t address, int64_t size) {
  uint64_t h = static_cast<uint64_t>(address) * 0x9E3779B97F4A7C15u ^ static_cast<uint64_t>(size) * 0xC2B2AE3D27D4EB4Fu;
  return recent_[(h >> 32) % kRecentRanges];
}

void WrittenBytes::Mark(int64_t address, int64_t size) {
  CheckRange(address, size);
  Recent& recent = RecentSlot(address, size);
  if (recent.address == address && recent.size == size) {
    ++repeated_marks_;
    return;
  }
  recent = Recent{address, size};
  for (int64_t at = address, end = address + size; at < end;) {
    const int64_t index = at / kPageBytes;
    const int64_t start = index * kPageBytes;
    const int64_t length = PageLength(index);
    const int64_t page_end = std::min(end, start + length);
    Page& page = pages_[index];
    if (page.marked == length) {
      // Already complete: nothing to mark.
    } else if (at == start && page_end == start + length) {
      page.bits.reset();
      page.marked = length;
      page.run_count = 1;
      page.runs[0] = Run{0, static_cast<int32_t>(length)};
    } else {
      MarkPart(page, at - start, page_end - start);
      if (page.marked == length) {
        page.bits.reset();
        page.run_count = 1;
        page.runs[0] = Run{0, static_cast<int32_t>(length)};
      }
    }
    at = page_end;
  }
}

std::optional<int64_t> WrittenBytes::FirstUnwritten(int64_t address, int64_t size) const {
  CheckRange(address, size);
  for (int64_t at = address, end = address + size; at < end;) {
    const int64_t index = at / kPageBytes;
    const int64_t start = index * kPageBytes;
    const int64_t page_end = std::min(end, start + PageLength(index));
    auto it = pages_.find(index);
    if (it == pages_.end()) return at;
    const Page& page = it->second;
    if (page.bits == nullptr) {  // runs (one, the whole page, once complete)
      const int64_t outside = start + FirstOutsideRuns(page, at - start, page_end - start);
      if (outside < page_end) return outside;
      at = page_end;
      continue;
    }
    const uint64_t* bits = page.bits.get();
    const uint64_t* summary = bits == nullptr ? nullptr : bits + kWordsPerPage;
    for (int64_t bit = at - start, stop = page_end - start; bits != nullptr && bit < stop;) {
      const int64_t word = bit / 64;
      if (bit % 64 == 0) {
        // Skip the words ahead that the summary says are full (a zero bit of `open` each).
        const uint64_t open = ~summary[word / 64] >> (word % 64);
        const int64_t full = open == 0 ? 64 - word % 64 : std::countr_zero(open);
        if (full > 0) {
          bit = std::min(stop, (word + full) * 64);
          continue;
        }
      }
      const int64_t to = std::min<int64_t>(stop - word * 64, 64);
      const uint64_t missing = ~bits[word] & BitsBetween(bit % 64, to);
      if (missing != 0) return start + word * 64 + std::countr_zero(missing);
      bit = word * 64 + to;
    }
    at = page_end;
  }
  return std::nullopt;
}

int64_t WrittenBytes::resident_bytes() const {
  int64_t bitmaps = 0;
  for (const auto& [index, page] : pages_) bitmaps += page.bits != nullptr;
  return bitmaps * (kWordsPerPage + kSummaryWords) * static_cast<int64_t>(sizeof(uint64_t));
}

}  // namespace visa
