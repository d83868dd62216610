// HugePageAdvice: page counts per region and the one madvise per region worth huge pages.
#include "runtime/huge_page_advice.h"

#include <sys/mman.h>

#include <algorithm>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"

namespace visa {

std::vector<RegionPages> PagesTouchedPerRegion(absl::Span<const int64_t> units, ByteRange range, int64_t unit_stride) {
  if (range.end <= range.begin) return {};
  // Units may share a page (strides under 4 KiB), so pages are counted once each.
  absl::flat_hash_set<int64_t> pages;
  for (int64_t unit : units) {
    const int64_t first = (unit * unit_stride + range.begin) / kSmallPageBytes;
    const int64_t last = (unit * unit_stride + range.end - 1) / kSmallPageBytes;
    for (int64_t page = first; page <= last; ++page) pages.insert(page);
  }
  absl::flat_hash_map<int64_t, int64_t> per_region;
  constexpr int64_t kPagesPerRegion = kHugeRegionBytes / kSmallPageBytes;
  for (int64_t page : pages) ++per_region[page / kPagesPerRegion];
  std::vector<RegionPages> out;
  out.reserve(per_region.size());
  for (const auto& [region, count] : per_region) out.push_back({region, count});
  std::sort(out.begin(), out.end(), [](const RegionPages& a, const RegionPages& b) { return a.region < b.region; });
  return out;
}

HugePageAdvice::HugePageAdvice(DenseMemory& memory, int64_t unit_stride)
    : memory_(memory), unit_stride_(unit_stride) {
  const int64_t regions = (memory.capacity() + kHugeRegionBytes - 1) / kHugeRegionBytes;
  std::lock_guard lock(mu_);
  decided_.assign(static_cast<size_t>(regions), 0);
  open_ = regions;
}

void HugePageAdvice::Place(absl::Span<const int64_t> units, ByteRange range) {
  std::lock_guard lock(mu_);
  if (open_ == 0 || !TouchesOpenRegion(units, range)) return;
  for (const RegionPages& touched : PagesTouchedPerRegion(units, range, unit_stride_)) {
    if (touched.region >= static_cast<int64_t>(decided_.size())) continue;  // outside the block: not ours to judge
    uint8_t& decision = decided_[static_cast<size_t>(touched.region)];
    if (decision != 0) continue;
    const bool huge = WorthHugePages(touched.pages);
    decision = huge ? 2 : 1;
    --open_;
    if (!huge) continue;
    const int64_t begin = touched.region * kHugeRegionBytes;
    const int64_t size = std::min(kHugeRegionBytes, memory_.capacity() - begin);
    // Advice only: a host without transparent huge pages keeps 4 KiB pages, which is correct.
    madvise(memory_.data() + begin, static_cast<size_t>(size), MADV_HUGEPAGE);
  }
}

// A relaunch places the same tensors again: this pass (no page sets) lets it through quickly.
bool HugePageAdvice::TouchesOpenRegion(absl::Span<const int64_t> units, ByteRange range) const {
  if (range.end <= range.begin) return false;
  const auto open = [&](int64_t region) {
    return region < static_cast<int64_t>(decided_.size()) && decided_[static_cast<size_t>(region)] == 0;
  };
  for (int64_t unit : units) {
    const int64_t first = unit * unit_stride_ + range.begin;
    const int64_t last = unit * unit_stride_ + range.end - 1;
    for (int64_t region = first / kHugeRegionBytes; region <= last / kHugeRegionBytes; ++region) {
      if (open(region)) return true;
    }
  }
  return false;
}

int64_t HugePageAdvice::huge_regions() const {
  std::lock_guard lock(mu_);
  return std::count(decided_.begin(), decided_.end(), 2);
}

int64_t HugePageAdvice::decided_regions() const {
  std::lock_guard lock(mu_);
  return static_cast<int64_t>(decided_.size()) - open_;
}

}  // namespace visa
