// ReadyMoves: base offsets from a device's memories, and entries validated by weak placements.
#include "jit/ready_moves.h"

#include <algorithm>
#include <cstdint>

#include "jit/streaming_move.h"

namespace visa::jit {

std::optional<ReadyMove> ReadyMove::Of(const Device& device, const ReadyNest& nest, Tier dst_tier, const uint8_t* dst,
                                       Tier src_tier, const uint8_t* src) {
  const uint8_t* dst_memory = device.UnitData(dst_tier, 0);
  const uint8_t* src_memory = device.UnitData(src_tier, 0);
  if (dst_memory == nullptr || src_memory == nullptr) return std::nullopt;
  ReadyMove move;
  move.nest = nest;
  move.dst_tier = dst_tier;
  move.src_tier = src_tier;
  move.dst_offset = dst - dst_memory;
  move.src_offset = src - src_memory;
  move.last_device = device.serial();
  return move;
}

uint8_t* ReadyMove::DstOn(const Device& device) const {
  uint8_t* dst_memory = device.UnitData(dst_tier, 0);
  return dst_memory == nullptr ? nullptr : dst_memory + dst_offset;
}

bool ReadyMove::Run(const Device& device, const ReadyNest& kernel) const {
  uint8_t* dst_memory = device.UnitData(dst_tier, 0);
  const uint8_t* src_memory = device.UnitData(src_tier, 0);
  if (dst_memory == nullptr || src_memory == nullptr) return false;
  // Streaming stores were chosen for the first run's base alignment; another device's memory
  // could in principle be aligned otherwise (device memories are page-aligned, so it never is).
  auto misaligned = [&](bool streaming, int64_t offset) {
    return streaming && reinterpret_cast<uintptr_t>(dst_memory + dst_offset + offset) % kStreamVectorBytes != 0;
  };
  if (misaligned(kernel.streaming, 0)) return false;
  for (const ReadyCopy& copy : kernel.copies) {
    if (misaligned(copy.streaming, copy.dst_offset_bytes)) return false;
  }
  kernel.Run(dst_memory + dst_offset, src_memory + src_offset);
  return true;
}

bool ReadyMoves::End::Matches(const DeviceTensor& tensor) const {
  // Unexpired, the placement is alive, so it is the one at the key's address.
  return !placement.expired() && view == tensor.is_view() && window_offset == tensor.window_offset() &&
         element == tensor.element();
}

ReadyMoves::End ReadyMoves::EndOf(const DeviceTensor& tensor) {
  return End{tensor.shared_placement(), tensor.element(), tensor.window_offset(), tensor.is_view()};
}

ReadyMove* ReadyMoves::Find(uint64_t serial, const DeviceTensor& src, const DeviceTensor& dst, int threads) {
  if (serial == 0) return nullptr;
  auto it = entries_.find(Key{serial, &src.placement(), &dst.placement(), threads});
  if (it == entries_.end() || !it->second.src.Matches(src) || !it->second.dst.Matches(dst)) return nullptr;
  return &it->second.move;
}

void ReadyMoves::Insert(uint64_t serial, const DeviceTensor& src, const DeviceTensor& dst, int threads,
                        ReadyMove move) {
  if (serial == 0) return;
  entries_.insert_or_assign(Key{serial, &src.placement(), &dst.placement(), threads},
                            Entry{EndOf(src), EndOf(dst), move});
  if (entries_.size() >= sweep_at_) {
    ForgetExpired();
    sweep_at_ = std::max<size_t>(256, 2 * entries_.size());
  }
}

void ReadyMoves::ForgetExpired() {
  absl::erase_if(entries_, [](const auto& entry) {
    return entry.second.src.placement.expired() || entry.second.dst.placement.expired();
  });
}

}  // namespace visa::jit
