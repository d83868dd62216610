// The sequencer: nested-loop configurations that turn a buffer into a packet stream and back.
//
// From a buffer mapping and a stream (Time, Packet) the derivation walks the stream's terms in
// order (Time's terms, then Packet's), and for every digit of every term emits an entry
// `size : stride`: the size is the digit's extent and the stride is the number of buffer positions
// between consecutive values of that digit in the buffer ("the volume the term occupies within
// Buf"), or 0 for an axis the buffer does not hold (broadcast). A digit that crosses buffer digits
// emits one entry per piece. The strides come from the layout algebra (dsl/layout.h): the digit
// projected onto the buffer's layout by axis, then composed with it. When a configuration has more
// than 8 entries, adjacent entries `(n1 : s1)(n2 : s2)` with `s1 == n2 * s2` merge into
// `n1 * n2 : s2`. This is the manual's "Sequencer" page; Fetch, Commit and DMA derive their access
// sizes from it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "dsl/context_kind.h"
#include "dsl/mapping.h"

namespace visa {

inline constexpr int kMaxSequencerEntries = 8;
inline constexpr int64_t kMaxSequencerIterations = 65536;

enum class SequencerMode {
  kRead,    // buffer -> stream (fetch, the read side of a DMA); stream padding may over-read
  kWrite,   // stream -> buffer (the write side of a DMA)
  kCommit,  // stream -> buffer through the commit adapter, which truncates the packet to the
            // leading elements the buffer's innermost dimension holds (commit_in_size)
};

struct SequencerEntry {
  int64_t size = 1;
  int64_t stride = 0;  // in buffer elements; 0 repeats the same address (broadcast)
  std::string label;   // the stream digit it came from, e.g. "A % 2" (for explain output)
  bool operator==(const SequencerEntry& o) const { return size == o.size && stride == o.stride; }
};

struct SequencerConfig {
  std::vector<SequencerEntry> entries;  // outermost first
  int packet_entries = 0;               // how many of the innermost entries form the packet
  int64_t packet_size = 1;              // elements per packet
  // Buffer positions the base address moves (<= 0): a left-padded stream (`# n + A`) starts n
  // steps of A before the buffer (manual: `@ base_addr = -2`); see dsl/left_padding.h.
  int64_t base_offset = 0;

  int64_t time_size() const;   // iterations of the time entries
  int64_t stream_size() const; // product of all entry sizes
  // Elements reachable without a stride discontinuity, from the innermost entry outwards: an
  // outer (n1 : s1) continues an inner (n2 : s2) when s1 == n2 * s2. An innermost stride of 0 or
  // 1 is contiguous (a broadcast packet reads one element and repeats it).
  int64_t contiguous_elements() const;
  // Buffer offset of every stream position, in stream order (for tests and the interpreter).
  std::vector<int64_t> Offsets() const;
  // "[8 : 32, 8 : 256, 16 : 1] : 16", then " @ base_addr = -2" when the base moves
  std::string ToString() const;
  // "[B -> 8 : 32, A -> 8 : 256, C # 16 -> 16 : 1] : 16"
  std::string ToLabeledString() const;
};

// Derives the configuration for streaming `buffer` as (time, packet). Errors name the manual's
// failure: "Insufficient Input" (the stream reads a coordinate the buffer does not hold),
// "Incompatible Shapes" (it holds them in digits no entries can follow, e.g. digits of one axis
// whose sum carries between buffer digits), "Entry limit", "Iteration limit", "Packet fetch".
// In kCommit mode the innermost packet digit keeps its live values rounded up to a multiple of
// `commit_granule` elements (the 8-byte write unit), as far as the buffer digit reaches.
// `max_entries` above the sequencer's 8 keeps every entry unmerged up to that many (the DMA
// descriptors of dsl/dma_descriptor.h merge and split both sides together).
absl::StatusOr<SequencerConfig> DeriveSequencer(const Mapping& buffer, const Mapping& time,
                                                const Mapping& packet, SequencerMode mode,
                                                int64_t commit_granule = 1,
                                                int max_entries = kMaxSequencerEntries);

// Byte sizes of one element type, in bits so that 4-bit types need no special case.
struct ElementBits {
  int bits = 8;
};

// Fetch and Commit access sizes (the manual's Fetch Sequencer / Batching / Commit Sequencer).
struct AccessPlan {
  int64_t contiguous_bytes = 0;  // contiguous_sram_access_size in bytes (rounded down)
  int64_t packet_bytes = 0;
  int64_t access_bytes = 0;      // fetch_size or commit_size
  int64_t accesses_per_packet = 0;  // fetches_per_packet (the batching factor) or writes per step
  int64_t cycles = 0;            // Time::SIZE x ceil(packet bytes / access bytes)
};

absl::StatusOr<AccessPlan> PlanFetch(const SequencerConfig& config, ElementBits element,
                                     ContextKind context);
absl::StatusOr<AccessPlan> PlanCommit(const SequencerConfig& config, ElementBits element,
                                      ContextKind context);

enum class MemoryTier { kHbm, kDm, kSpm };
const char* MemoryTierName(MemoryTier tier);

// A DMA's paired sequencers: one stream (time, packet) read from `src` and written to `dst`.
struct DmaConfig {
  SequencerConfig read;
  SequencerConfig write;
  int64_t packet_bytes = 0;  // stride0
  int64_t packet_elements = 0;  // Packet::SIZE (padding included)
};

inline constexpr int64_t kMaxDmaPacketBytes = 4096;

// Checks the DMA Engine's alignment rules (8-byte DM writes, 8-byte HBM-to-DM transfers, packets
// of at most 4,096 bytes) on top of the two derivations.
absl::StatusOr<DmaConfig> DeriveDma(const Mapping& src, MemoryTier src_tier, const Mapping& dst,
                                    MemoryTier dst_tier, const Mapping& time, const Mapping& packet,
                                    ElementBits element);
// DeriveDma's two halves: the pair with the packet rules (one contiguous run on both sides, at most
// 4,096 bytes), entries kept up to `max_entries`; then the 8-byte alignment rule on a derived pair.
absl::StatusOr<DmaConfig> DeriveDmaPair(const Mapping& src, const Mapping& dst, const Mapping& time,
                                        const Mapping& packet, ElementBits element,
                                        int max_entries = kMaxSequencerEntries);
absl::Status CheckDmaAlignment(const DmaConfig& dma, MemoryTier src_tier, MemoryTier dst_tier,
                               ElementBits element);

}  // namespace visa
