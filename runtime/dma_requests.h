// DmaRequests: the packets a recorded DMA move is made of and the 256-byte requests they become
// (manual, "DMA Engine" > Performance: "an n-byte packet becomes ceil(n / 256) DMA requests";
// "the number of DMA requests determines execution time"), with the HBM penalties of misaligned
// access ("Memory Performance" > Misaligned Access). A packet is a run of destination positions
// the source feeds contiguously, inside one unit (slice, chip) of each side: what one sequencer
// step can move. Packets do not depend on the order the move issues them; HBM channel and row
// behaviour does (cycle_model.h: HbmChannels), and a recorded move has no stream to say that order
// (the manual's Example 2 issues B outermost, so each HBM row stays open, where the destination's
// order would switch rows at every A), so the channel model is left to explicit sequencers.
#pragma once

#include <cstdint>
#include <optional>

#include "runtime/program.h"

namespace visa {

struct DmaRequests {
  int64_t packets = 0;
  int64_t requests = 0;            // 256-byte requests, ceil(packet / 256) each
  int64_t read_cost = 0;           // requests, an HBM read crossing a 256-byte boundary counted twice
  int64_t write_cost = 0;          // requests, a partial HBM write counted as its ~50x read-modify-write
  int64_t split_hbm_reads = 0;     // HBM read requests that cross a 256-byte boundary
  int64_t partial_hbm_writes = 0;  // HBM write requests that are not one whole aligned 256-byte unit
};

// nullopt when a side is host memory (no device layout) or the move has more than `max_runs`
// runs (the byte-rate model stands in then).
std::optional<DmaRequests> CountDmaRequests(const DmaOp& op, int64_t max_runs = int64_t{1} << 22);

}  // namespace visa
