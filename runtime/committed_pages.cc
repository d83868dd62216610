// CommittedPages: /proc/self/pagemap entries read in chunks, mincore where it is unreadable.
#include "runtime/committed_pages.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <mutex>

namespace visa {
namespace {

int64_t PageBytes() {
  static const int64_t page = sysconf(_SC_PAGESIZE);
  return page;
}

// Opened once per process (a forked child opens its own: "self" is resolved at open); -1 where
// /proc is not readable.
int PagemapFd() {
  static std::mutex mutex;
  static pid_t owner = -1;
  static int fd = -1;
  std::lock_guard<std::mutex> lock(mutex);
  if (owner != getpid()) {
    owner = getpid();
    fd = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
  }
  return fd;
}

// pagemap entry bits (the kernel's Documentation/admin-guide/mm/pagemap.rst): 63 present,
// 62 swapped, 56 mapped by this process alone. The zero page a read maps is present but shared.
bool Committed(uint64_t entry) { return (entry >> 63) & 1 && (entry >> 56) & 1; }
bool Mapped(uint64_t entry) { return (entry >> 62) != 0; }

enum class Count { kCommitted, kMapped };

constexpr int64_t kChunkPages = 4096;

// Visits the committed state of each page of [first_page, first_page + pages) (page numbers of
// the address space) until `visit` returns false.
template <typename Visit>
void ForEachPage(int64_t first_page, int64_t pages, Count count, Visit visit) {
  int64_t done = 0;
  if (const int fd = PagemapFd(); fd >= 0) {
    std::array<uint64_t, kChunkPages> entries;
    while (done < pages) {
      const int64_t n = std::min(kChunkPages, pages - done);
      const ssize_t got = pread(fd, entries.data(), static_cast<size_t>(n) * 8, (first_page + done) * 8);
      if (got != n * 8) break;  // unreadable after all: the rest from mincore
      for (int64_t i = 0; i < n; ++i) {
        if (!visit(count == Count::kCommitted ? Committed(entries[i]) : Mapped(entries[i]))) return;
      }
      done += n;
    }
  }
  std::array<unsigned char, kChunkPages> resident;
  while (done < pages) {
    const int64_t n = std::min(kChunkPages, pages - done);
    void* at = reinterpret_cast<void*>((first_page + done) * PageBytes());
    if (mincore(at, static_cast<size_t>(n * PageBytes()), resident.data()) != 0) return;
    for (int64_t i = 0; i < n; ++i) {
      if (!visit((resident[i] & 1) != 0)) return;
    }
    done += n;
  }
}

template <typename Visit>
void ForEachPageOf(const uint8_t* begin, int64_t size, Count count, Visit visit) {
  if (size <= 0) return;
  const int64_t page = PageBytes();
  const auto address = static_cast<int64_t>(reinterpret_cast<uintptr_t>(begin));
  const int64_t first = address / page;
  const int64_t last = (address + size - 1) / page;
  ForEachPage(first, last - first + 1, count, visit);
}

}  // namespace

int64_t CommittedBytes(const uint8_t* begin, int64_t size) {
  int64_t pages = 0;
  ForEachPageOf(begin, size, Count::kCommitted, [&](bool committed) {
    pages += committed;
    return true;
  });
  return pages * PageBytes();
}

bool AnyMapped(const uint8_t* begin, int64_t size) {
  bool any = false;
  ForEachPageOf(begin, size, Count::kMapped, [&](bool mapped) {
    any = mapped;
    return !mapped;
  });
  return any;
}

}  // namespace visa
