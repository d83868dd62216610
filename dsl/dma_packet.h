// DMA packets and the DMA Engine's 8-byte rule (manual, "DMA Engine" > Alignment Constraints):
// writes into DM / SPM and HBM-to-DM transfers move 8-byte packets at 8-byte aligned addresses.
//
// One rule, two clients: `visa seq --dma` (DeriveDma in sequencer.h), where the user gives the
// stream and the packet is its Packet, and the runtime's moves (runtime/dma.cc), where the packet
// is derived from the two layouts: DmaPacketScan walks the move's runs (layout.h) and cuts the
// destination into packets, each the longest run the source feeds contiguously, grown through the
// destination's padding up to the next packet (notes: "DMA layout check", `dma_tails`).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "dsl/layout.h"
#include "dsl/sequencer.h"

namespace visa {

inline constexpr int64_t kDmaAlignBytes = 8;

// Which sides of a DMA between `src` and `dst` the 8-byte rule binds: the destination when it is
// SRAM (DM or SPM), the source too for HBM -> DM.
struct DmaAlignedSides {
  bool write = false;
  bool read = false;
};
DmaAlignedSides AlignedSides(MemoryTier src, MemoryTier dst);
// "a write into DM", "an HBM-to-DM transfer": how errors name the side.
std::string WriteRuleName(MemoryTier dst);
inline constexpr absl::string_view kReadRuleName = "an HBM-to-DM transfer";

// The packet part of the rule: `what` needs packets of a whole number of 8-byte units. `where`
// (may be empty) says which packet, for the runtime's derived ones.
absl::Status CheckDmaPacketBits(int64_t packet_bits, absl::string_view what, absl::string_view where = {});
// The address part: `step` (a sequencer entry) moves `step_bits` between packets, which must be a
// whole number of 8-byte units.
absl::Status CheckDmaStepBits(int64_t step_bits, absl::string_view what, absl::string_view step);
// The same for a packet that starts `offset_bits` into its unit (the runtime's derived packets).
absl::Status CheckDmaOffsetBits(int64_t offset_bits, absl::string_view what, absl::string_view where);

// Cuts a move's destination into DMA packets from its runs (increasing destination order, as
// ForEachRun / RelayoutPlan give them) and remembers the first packet that breaks the rule.
// Positions are full-mapping positions; a unit (slice, chip) holds `dst_unit` destination and
// `src_unit` source positions, and a packet never crosses a unit of either side.
class DmaPacketScan {
 public:
  DmaPacketScan(int64_t dst_unit, int64_t src_unit, int bits) : dst_unit_(dst_unit), src_unit_(src_unit), bits_(bits) {}

  void Add(const MoveRun& run);
  // Closes the last packet (grown to the end of its unit).
  void Finish();

  struct Violation {
    bool source = false;        // the source offset is unaligned (else the destination packet)
    int64_t dst_unit = 0;       // the destination unit (spatial position) of the packet
    int64_t position = 0;       // the packet's first element inside its unit
    int64_t elements = 0;       // destination packet: its length in elements
    int64_t src_position = 0;   // source packet: its first element inside its unit
  };
  // The first destination packet that is not a whole number of 8-byte units.
  const std::optional<Violation>& write() const { return write_; }
  // The first packet whose source starts off an 8-byte unit.
  const std::optional<Violation>& read() const { return read_; }

 private:
  // A packet starts at destination position d reading source position q.
  void Start(int64_t d, int64_t q);
  void Close(int64_t end_within);

  int64_t dst_unit_, src_unit_;
  int bits_;
  bool open_ = false;
  int64_t unit_ = 0, start_within_ = 0;  // the open packet's unit and first position in it
  int64_t last_dst_ = -1, last_src_ = -1;
  std::optional<Violation> write_, read_;
};

}  // namespace visa
