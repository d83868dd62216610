// Streaming moves: when a compiled move writes its destination with non-temporal (streaming)
// stores, which skip the read-for-ownership of each destination line and leave the cache alone.
//
// Ordinary stores first read every destination line into the cache; for a move larger than a good
// part of the last-level cache that read is pure waste (the line is overwritten whole) and the
// destination evicts the data around it, so such moves stream, as glibc's memcpy does above its
// non-temporal threshold. Below the threshold the next op usually reads the destination back from
// the cache, which streaming would have bypassed, so small moves keep ordinary stores.
//
// x86 streams only aligned vector stores (vmovntdq / vmovntps), so a move streams only when every
// store it makes is one whole vector at a vector-aligned address: checked from the nest (the
// shape, at compile time) and from the destination's base address (when the move runs).
#pragma once

#include <cstdint>
#include <optional>

#include "absl/strings/string_view.h"

#include "jit/element_op.h"
#include "jit/move_nest.h"

namespace visa::jit {

// The bytes of one streamed store: a 256-bit vector (vmovntdq ymm; two xmm stores without AVX).
inline constexpr int64_t kStreamVectorBytes = 32;

enum class StreamingChoice {
  kStream,      // every store is a whole aligned vector and the move is large: stream
  kTooSmall,    // below the threshold: the destination is likely read back from the cache
  kShape,       // some store would not be a whole vector at a multiple of its size (the nest)
  kMisaligned,  // the shape streams, but the destination's base address is not vector-aligned
};

const char* ToString(StreamingChoice choice);

// Whether `nest` (already simplified) with `op` streams at a vector-aligned base address: the
// destination's elements are whole bytes (a 4-bit store rewrites a shared byte),
// the innermost level is contiguous in the destination and holds whole vectors, and every other
// level steps the destination by whole vectors.
bool HasStreamingShape(const MoveNest& nest, const ElementOp& op);

// The choice for a move of `nest` writing at `dst_base`, streaming from `min_bytes` destination
// bytes on. Pure: the caller supplies the threshold (StreamingMinBytes) and the address.
StreamingChoice ChooseStreaming(const MoveNest& nest, const ElementOp& op, const void* dst_base, int64_t min_bytes);

// The nest a streaming kernel runs: the innermost level cut into whole vectors, so that the
// innermost level is exactly one vector store ([64 : 1 <- 2] of i8 -> [32 : 1 <- 2, 2 : 32 <- 64]),
// with at least one level around it. Requires HasStreamingShape.
MoveNest StreamingNest(const MoveNest& nest, const ElementOp& op);

// The threshold for a last-level cache of `llc_bytes`: a quarter of it, glibc's (2.38 on) rule for
// its non-temporal threshold. A move's source and destination together are twice its destination,
// and the cache also holds the rest of the program's data and other processes' (the cache is shared
// by every core), so a destination of a quarter of the cache already evicts what the next op reads.
int64_t StreamingMinBytes(int64_t llc_bytes);

// The host's last-level cache in bytes, read once: the kernel's view of the L3 (sysfs, what lscpu
// prints), else sysconf(_SC_LEVEL3_CACHE_SIZE), else 32 MiB. sysfs comes first because under a
// hypervisor glibc's CPUID reading can report the whole physical package (384 MiB on the 32 MiB
// guest this was measured on), which would make no move stream.
int64_t HostLastLevelCacheBytes();

// The threshold a new KernelCache starts with: VISA_JIT_STREAMING_MIN_BYTES when set (a byte
// count, or "off" for never; anything else is ignored with a warning), else StreamingMinBytes of
// the host's last-level cache. The variable is for measuring and for hosts whose cache size reads
// wrong.
int64_t DefaultStreamingMinBytes();
// The variable's value: a non-negative byte count, "off" (never), else nullopt.
std::optional<int64_t> ParseStreamingMinBytes(absl::string_view text);

// The threshold for a kept move run again on the device whose memory it wrote before
// (ready_moves.h: a relaunch): twice the core's level-2 cache, or the first-run threshold when that
// is lower ("off" stays off). A relaunch's destination lines are committed and were written a
// whole program ago: past twice the level-2 cache the next op does not find them in the core's
// caches either way, and ordinary stores first read each line from the level-3 cache or DRAM,
// which streaming skips. A first run keeps the first-run threshold: its destination pages are
// fresh, and the kernel's zeroing of each faulted page leaves it in the cache, where ordinary
// stores find it and streaming stores would write it to DRAM twice.
int64_t RelaunchStreamingMinBytes(int64_t first_run_min_bytes, int64_t level2_bytes);

// The core's level-2 cache in bytes, read once: sysfs, else sysconf(_SC_LEVEL2_CACHE_SIZE), else
// 1 MiB.
int64_t HostLevel2CacheBytes();

// The relaunch threshold a new KernelCache starts with: VISA_JIT_RELAUNCH_STREAMING_MIN_BYTES when
// set (a byte count, or "off"), else RelaunchStreamingMinBytes of DefaultStreamingMinBytes() and
// the host's level-2 cache.
int64_t DefaultRelaunchStreamingMinBytes();

// Orders this thread's streaming stores before its later stores (sfence): every thread that ran
// a streaming kernel calls it before it reports its part done.
void FenceStreamingStores();

}  // namespace visa::jit
