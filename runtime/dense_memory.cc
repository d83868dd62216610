// DenseMemory: an anonymous private mapping, reserved without swap, counted with mincore.
#include "runtime/dense_memory.h"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <vector>

#include "absl/strings/str_format.h"
#include "dsl/checked_math.h"
#include "dsl/status_macros.h"
#include "runtime/huge_page_advice.h"  // kHugeRegionBytes: the block starts on a huge page

namespace visa {
namespace {

bool AllZero(const uint8_t* data, size_t size) {
  return std::all_of(data, data + size, [](uint8_t b) { return b == 0; });
}


int64_t PageBytes() {
  static const int64_t page = sysconf(_SC_PAGESIZE);
  return page;
}

}  // namespace

bool DenseMemory::AnyResident(int64_t address, size_t size) const {
  const int64_t page = PageBytes();
  const int64_t first = address / page * page;
  const int64_t end = address + static_cast<int64_t>(size);
  std::vector<unsigned char> resident(static_cast<size_t>((end - first + page - 1) / page));
  if (mincore(data_ + first, static_cast<size_t>(end - first), resident.data()) != 0) return true;
  for (unsigned char r : resident) {
    if (r & 1) return true;
  }
  return false;
}

DenseMemory::DenseMemory(int64_t capacity) : capacity_(capacity) {
  // Reserved with a huge page's slack and trimmed to a huge-page-aligned start, so a block the
  // device advises huge pages for (device.cc) is made of whole huge pages.
  const size_t huge = static_cast<size_t>(kHugeRegionBytes);
  const size_t slack = static_cast<size_t>(capacity) >= huge ? huge : 0;
  void* block = mmap(nullptr, static_cast<size_t>(capacity) + slack, PROT_READ | PROT_WRITE,
                     MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  VISA_CHECK(block != MAP_FAILED, "DenseMemory: the host refused to reserve device memory");
  const uintptr_t start = reinterpret_cast<uintptr_t>(block);
  const uintptr_t aligned = slack == 0 ? start : (start + slack - 1) / slack * slack;
  if (aligned > start) munmap(block, aligned - start);
  if (slack > aligned - start) munmap(reinterpret_cast<void*>(aligned + capacity), slack - (aligned - start));
  data_ = reinterpret_cast<uint8_t*>(aligned);
}

DenseMemory::~DenseMemory() { munmap(data_, static_cast<size_t>(capacity_)); }

absl::Status DenseMemory::CheckRange(int64_t address, int64_t size) const {
  if (!RangeWithin(address, size, capacity_)) {
    return absl::OutOfRangeError(absl::StrFormat("DenseMemory: access [%d, %d) outside [0, %d)", address,
                                                 SaturatingAdd(address, size), capacity_));
  }
  return absl::OkStatus();
}

absl::Status DenseMemory::Read(int64_t address, absl::Span<uint8_t> out) const {
  RETURN_IF_ERROR(CheckRange(address, static_cast<int64_t>(out.size())));
  if (!out.empty()) std::memcpy(out.data(), data_ + address, out.size());
  return absl::OkStatus();
}

absl::Status DenseMemory::Write(int64_t address, absl::Span<const uint8_t> data) {
  RETURN_IF_ERROR(CheckRange(address, static_cast<int64_t>(data.size())));
  // Zeros over pages never touched would only commit them: skip them. (Reading the bytes to
  // compare would map the pages too, so residency is asked of the kernel instead.)
  if (data.empty() || (AllZero(data.data(), data.size()) && !AnyResident(address, data.size()))) {
    return absl::OkStatus();
  }
  std::memcpy(data_ + address, data.data(), data.size());
  return absl::OkStatus();
}

int64_t DenseMemory::resident_bytes() const {
  const int64_t page = PageBytes();
  std::vector<unsigned char> resident(static_cast<size_t>((capacity_ + page - 1) / page));
  if (mincore(data_, static_cast<size_t>(capacity_), resident.data()) != 0) return 0;
  int64_t pages = 0;
  for (unsigned char r : resident) pages += r & 1;
  return pages * page;
}

}  // namespace visa
