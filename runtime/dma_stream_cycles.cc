// DmaStreamCycles: requests, HBM channels and the command total of an explicit DMA stream.
#include "runtime/dma_stream_cycles.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "absl/strings/str_format.h"

namespace visa {
namespace {

// The time entries of one side with byte strides.
std::vector<SequencerEntry> TimeEntriesInBytes(const SequencerConfig& config, int element_bits) {
  const size_t time = config.entries.size() - static_cast<size_t>(config.packet_entries);
  std::vector<SequencerEntry> entries(config.entries.begin(), config.entries.begin() + time);
  for (SequencerEntry& e : entries) e.stride = e.stride * element_bits / 8;
  return entries;
}

// A side's cycles: its requests at one per cycle (SPM moves 128 B per cycle, so a full request
// takes two), or its busiest HBM channel when that is slower.
int64_t SideCycles(MemoryTier tier, int64_t requests, int64_t packet_bytes, const cycles::HbmEstimate& hbm) {
  if (tier == MemoryTier::kHbm) return std::max<int64_t>(requests, static_cast<int64_t>(std::ceil(hbm.cycles)));
  if (tier == MemoryTier::kSpm) return requests * ((std::min<int64_t>(packet_bytes, cycles::kDmaRequestBytes) + 127) / 128);
  return requests;
}

std::string SideText(MemoryTier tier, int64_t cycles, int64_t requests, const cycles::HbmEstimate& hbm) {
  std::string text = absl::StrFormat("%d (%s: %d requests", cycles, MemoryTierName(tier), requests);
  if (tier == MemoryTier::kHbm) {
    absl::StrAppendFormat(&text, "; %d of 32 channels, busiest %d requests with %d row switches = %.0f cycles",
                          hbm.channels, hbm.busiest_channel_requests, hbm.row_switches, hbm.cycles);
  }
  return text + ")";
}

}  // namespace

DmaStreamCycles EstimateDmaStream(const DmaConfig& dma, MemoryTier src, MemoryTier dst, int element_bits) {
  DmaStreamCycles e;
  e.packets = dma.read.time_size();
  e.requests = cycles::DmaRequests(e.packets, dma.packet_bytes);
  if (src == MemoryTier::kHbm) {
    e.hbm_read = cycles::EstimateHbm(
        cycles::DmaRequestAddresses(TimeEntriesInBytes(dma.read, element_bits), 0, dma.packet_bytes));
  }
  if (dst == MemoryTier::kHbm) {
    e.hbm_write = cycles::EstimateHbm(
        cycles::DmaRequestAddresses(TimeEntriesInBytes(dma.write, element_bits), 0, dma.packet_bytes));
  }
  e.read_cycles = SideCycles(src, e.requests, dma.packet_bytes, e.hbm_read);
  e.write_cycles = SideCycles(dst, e.requests, dma.packet_bytes, e.hbm_write);
  e.sequential = src == dst;
  e.cycles = cycles::DmaCommandCycles({e.read_cycles, e.write_cycles},
                                      e.sequential ? cycles::ReadWrite::kSequential : cycles::ReadWrite::kOverlapped);
  return e;
}

std::string DmaStreamCycles::ToText(MemoryTier src, MemoryTier dst) const {
  return absl::StrFormat(
      "requests: %d (%d packets, ceil(packet / 256 B) each)\nread_cycles: %s\nwrite_cycles: %s\n"
      "cycles: %d (%d start-up + %s)\n",
      requests, packets, SideText(src, read_cycles, requests, hbm_read),
      SideText(dst, write_cycles, requests, hbm_write), cycles, cycles::kDmaCommandStartup,
      sequential ? "read + write: one memory serves both" : "max(read, write): the sides overlap");
}

}  // namespace visa
