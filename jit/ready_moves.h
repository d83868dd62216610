// ReadyMoves: the compiled move of a data-movement op (a pipeline run as one move between memories,
// a DMA between dense memories) kept per op and per pair of ends, with everything decided but the
// memories' host addresses. Running a program again (Launch) then costs a lookup, two base
// addresses and the kernel: no layouts, plan keys, loop nests or kernel keys are built again, which
// on a 2 MiB move were a fifth of the run.
//
// An op is known by its serial (program.h: AssignSerial). An end is known by its placement object
// (every run's tensor placed alike shares it: DeviceTensor::ReserveLike), its Element mapping and
// its window offset. Entries hold weak references to the placements, so a placement freed and
// another made at its address never finds the old entry (as in runtime/placement_set.h).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "absl/container/flat_hash_map.h"
#include "jit/kernel_cache.h"
#include "runtime/device.h"
#include "runtime/tensor.h"

namespace visa::jit {

struct ReadyMove {
  ReadyNest nest;
  Tier dst_tier = Tier::kDm;
  Tier src_tier = Tier::kDm;
  int64_t dst_offset = 0;  // bytes from the first unit's data of the memory to the kernel's base
  int64_t src_offset = 0;
  // A DMA run otherwise than from its recorded descriptors: why (JitStats::derived_dma_reasons).
  std::string derived_reason;
  // The device (Device::serial) the move last ran on: run again there, its destination's pages are
  // committed, and a relaunch may stream where a first run does not (streaming_move.h:
  // RelaunchStreamingMinBytes). The relaunch's plan is made on the first such run.
  uint64_t last_device = 0;
  bool relaunch_planned = false;
  std::optional<ReadyNest> relaunch;

  // The move the kernel of `nest` makes between the bases `dst` and `src`, which lie in `device`'s
  // memories of `dst_tier` and `src_tier`; nullopt when either memory has no host block.
  static std::optional<ReadyMove> Of(const Device& device, const ReadyNest& nest, Tier dst_tier, const uint8_t* dst,
                                     Tier src_tier, const uint8_t* src);
  // The destination's first byte on `device`, or nullptr when the memory has no host block there.
  uint8_t* DstOn(const Device& device) const;
  // Runs `kernel` (`nest` or `*relaunch`) on `device`'s memories; false (nothing run) when either
  // has no host block there.
  bool Run(const Device& device, const ReadyNest& kernel) const;
};

class ReadyMoves {
 public:
  // The move op `serial` made from `src` to `dst` on `threads` threads, or nullptr.
  ReadyMove* Find(uint64_t serial, const DeviceTensor& src, const DeviceTensor& dst, int threads);
  void Insert(uint64_t serial, const DeviceTensor& src, const DeviceTensor& dst, int threads, ReadyMove move);
  size_t size() const { return entries_.size(); }

 private:
  struct Key {
    uint64_t serial;
    const Placement* src;
    const Placement* dst;
    int threads;
    bool operator==(const Key&) const = default;
    template <typename H>
    friend H AbslHashValue(H h, const Key& k) {
      return H::combine(std::move(h), k.serial, k.src, k.dst, k.threads);
    }
  };
  // What else an end must match: the placement still alive, the same window.
  struct End {
    std::weak_ptr<const Placement> placement;
    Mapping element;
    int64_t window_offset = 0;
    bool view = false;
    bool Matches(const DeviceTensor& tensor) const;
  };
  struct Entry {
    End src, dst;
    ReadyMove move;
  };
  static End EndOf(const DeviceTensor& tensor);
  void ForgetExpired();

  absl::flat_hash_map<Key, Entry> entries_;
  size_t sweep_at_ = 256;
};

}  // namespace visa::jit
