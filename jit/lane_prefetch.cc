// LanePrefetch: the lines a slice's packing reads, from the kernel's offset tables.
#include "jit/lane_prefetch.h"

#include <algorithm>

namespace visa::jit {
namespace {

// The lines of elements `first + offsets[p]` for every first in `firsts` (negative: none), each
// element `bits` wide.
std::vector<int64_t> LinesOf(const std::vector<int64_t>& firsts, const std::vector<int64_t>& offsets, int bits) {
  std::vector<int64_t> lines;
  for (int64_t first : firsts) {
    if (first < 0) continue;
    for (int64_t offset : offsets) lines.push_back((first + offset) * bits / 8 / kCacheLine * kCacheLine);
    // Sorted and deduplicated as it grows, so a long table stays small in memory.
    if (static_cast<int64_t>(lines.size()) > 4 * kMaxPrefetchLines) {
      std::sort(lines.begin(), lines.end());
      lines.erase(std::unique(lines.begin(), lines.end()), lines.end());
      if (static_cast<int64_t>(lines.size()) >= kMaxPrefetchLines) break;
    }
  }
  std::sort(lines.begin(), lines.end());
  lines.erase(std::unique(lines.begin(), lines.end()), lines.end());
  if (static_cast<int64_t>(lines.size()) > kMaxPrefetchLines) lines.resize(kMaxPrefetchLines);
  return lines;
}

}  // namespace

std::vector<int64_t> OperandLines(const LaneContractionSpec& spec) {
  return LinesOf(spec.x_lane, spec.x_packet, StorageBits(spec.dm_type));
}

std::vector<int64_t> WeightLines(const LaneContractionSpec& spec) {
  return LinesOf(spec.w_offset, spec.w_packet, StorageBits(spec.w_type));
}

}  // namespace visa::jit
