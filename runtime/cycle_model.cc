// The cycle model's formulas: DMA requests and commands, HBM channels and rows, the Reducer,
// the inter-slice ring, the Vector Engine and split reduce.
#include "runtime/cycle_model.h"

#include <algorithm>
#include <cmath>

#include "dsl/status_macros.h"

namespace visa::cycles {
namespace {

int64_t CeilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

int Bit(int64_t address, int bit) { return static_cast<int>((address >> bit) & 1); }

}  // namespace

int64_t DmaRequestsPerPacket(int64_t packet_bytes) {
  VISA_CHECK(packet_bytes > 0, "a DMA packet has at least one byte");
  return CeilDiv(packet_bytes, kDmaRequestBytes);
}

int64_t DmaRequests(int64_t time_size, int64_t packet_bytes) {
  return time_size * DmaRequestsPerPacket(packet_bytes);
}

int64_t DmaCommandCycles(const DmaCommand& command, ReadWrite mode) {
  const int64_t transfer = mode == ReadWrite::kOverlapped
                               ? std::max(command.read_cycles, command.write_cycles)
                               : command.read_cycles + command.write_cycles;
  return kDmaCommandStartup + transfer;
}

int64_t SegmentedDmaCycles(const std::vector<DmaCommand>& commands, ReadWrite mode) {
  int64_t total = 0;
  for (const DmaCommand& c : commands) total += DmaCommandCycles(c, mode);
  return total;
}

std::vector<int64_t> DmaRequestAddresses(const std::vector<SequencerEntry>& time, int64_t base,
                                         int64_t packet_bytes) {
  const int64_t per_packet = DmaRequestsPerPacket(packet_bytes);
  std::vector<int64_t> index(time.size(), 0);
  std::vector<int64_t> addresses;
  while (true) {
    int64_t packet = base;
    for (size_t i = 0; i < time.size(); ++i) packet += index[i] * time[i].stride;
    for (int64_t r = 0; r < per_packet; ++r) addresses.push_back(packet + r * kDmaRequestBytes);
    // Odometer over the entries, innermost last.
    int i = static_cast<int>(time.size()) - 1;
    for (; i >= 0; --i) {
      if (++index[i] < time[i].size) break;
      index[i] = 0;
    }
    if (i < 0) break;
  }
  return addresses;
}

HbmLocation LocateHbm(int64_t address) {
  HbmLocation l;
  l.stack = Bit(address, 8);
  for (int k = 0; k < 4; ++k) {
    const int bit = Bit(address, 9 + k) ^ Bit(address, 13 + k) ^ Bit(address, 21 + k) ^ Bit(address, 25 + k);
    l.channel |= bit << k;
  }
  l.bank_group = Bit(address, 13) | (Bit(address, 19) << 1);
  l.bank = Bit(address, 17) | (Bit(address, 18) << 1);
  l.slice = Bit(address, 20) | (Bit(address, 34) << 1);
  l.row = ((address >> 21) & ((int64_t{1} << 13) - 1)) | (int64_t{Bit(address, 35)} << 13);
  return l;
}

HbmChannels::HbmChannels()
    : requests_(kHbmChannels, 0), switches_(kHbmChannels, 0), open_rows_(kHbmChannels * kBanksPerChannel, -1) {}

void HbmChannels::Add(int64_t request_address) {
  const HbmLocation l = LocateHbm(request_address);
  const int channel = l.global_channel();
  ++requests_[channel];
  int64_t& open = open_rows_[channel * kBanksPerChannel + (l.slice * 4 + l.bank_group) * 4 + l.bank];
  if (open >= 0 && open != l.row) ++switches_[channel];
  open = l.row;
}

HbmEstimate HbmChannels::Finish() const {
  HbmEstimate e;
  for (int c = 0; c < kHbmChannels; ++c) {
    if (requests_[c] == 0) continue;
    e.requests += requests_[c];
    ++e.channels;
    const double cycles = static_cast<double>(requests_[c] - switches_[c]) * kHbmCyclesPerRequest +
                          static_cast<double>(switches_[c]) * kHbmRowSwitchCycles;
    if (cycles > e.cycles) {
      e.cycles = cycles;
      e.busiest_channel_requests = requests_[c];
      e.row_switches = switches_[c];
    }
  }
  return e;
}

HbmEstimate EstimateHbm(const std::vector<int64_t>& request_addresses) {
  HbmChannels channels;
  for (int64_t address : request_addresses) channels.Add(address);
  return channels.Finish();
}

int64_t HbmWriteRequestCost(int64_t address, int64_t packet_bytes) {
  int64_t cost = 0;
  for (int64_t at = address; at < address + packet_bytes; at += kDmaRequestBytes) {
    const int64_t size = std::min(kDmaRequestBytes, address + packet_bytes - at);
    const bool whole = at % kDmaRequestBytes == 0 && size == kDmaRequestBytes;
    cost += whole ? 1 : kHbmPartialWriteFactor;
  }
  return cost;
}

int64_t HbmReadRequestCost(int64_t address, int64_t packet_bytes) {
  int64_t cost = 0;
  for (int64_t at = address; at < address + packet_bytes; at += kDmaRequestBytes) {
    const int64_t size = std::min(kDmaRequestBytes, address + packet_bytes - at);
    const bool crosses = at / kDmaRequestBytes != (at + size - 1) / kDmaRequestBytes;
    cost += crosses ? kHbmUnalignedReadFactor : 1;
  }
  return cost;
}

double HbmPeakGBytesPerSecond() {
  return kHbmChannelGhz * static_cast<double>(kHbmChannelBytesPerClock * kHbmChannels);
}

int HbmTccd(HbmCommandRelation relation) {
  switch (relation) {
    case HbmCommandRelation::kSameSliceOtherBankGroup:
      return 2;
    case HbmCommandRelation::kOtherSlice:
      return 3;
    case HbmCommandRelation::kSameSliceSameBankGroup:
      return 4;
  }
  return 4;
}

double HbmRelativeThroughput(HbmCommandRelation relation) {
  return static_cast<double>(HbmTccd(HbmCommandRelation::kSameSliceOtherBankGroup)) / HbmTccd(relation);
}

int64_t DmBytesPerCycle(bool dmn_interleaved) { return dmn_interleaved ? 256 : 128; }

int64_t MaxConsecutiveSameBankAccesses() {
  constexpr int64_t kTdmaIoBytes = 256, kDmnIoBytes = 128, kDmnSize = 32;
  return kNocTimeoutCycles / ((kTdmaIoBytes / kDmnIoBytes) * kDmnSize);
}

int64_t SpatialReduceLatency(int tree_depth) { return tree_depth; }

int64_t TemporalReduceCycles(int64_t time_steps) { return time_steps; }

int64_t InterSliceReduceCycles(int64_t input_stream_cycles, int64_t slices) {
  return input_stream_cycles + slices;
}

int64_t VectorThroughputCycles(int64_t elements, VectorCluster cluster) {
  return CeilDiv(elements, cluster == VectorCluster::kFloat ? 4 : 8);
}

int64_t VectorPipelineLatency(int alus) { return alus; }

int64_t IntraSliceReduceDelay(int64_t reduce_time_steps) { return reduce_time_steps; }

int64_t SplitReduceCycles(int64_t splits, int64_t fetch_cycles_per_tensor, int64_t vector_cycles,
                          int64_t overlap) {
  return splits * fetch_cycles_per_tensor + std::max<int64_t>(0, vector_cycles - overlap);
}

}  // namespace visa::cycles
