// DmaStreamCycles: the cycle estimate of a DMA given as an explicit stream (`visa seq --dma
// --cycles`): its 256-byte requests, each side's cycles (one request per cycle; an HBM side also
// through its channels in the stream's order, with row switches: "Memory Performance" > HBM), and
// the command's total with its start-up (manual, "DMA Engine" > Performance, Detailed Examples).
// One command on one DMA Engine; both sides are taken to be on one chip and cluster, so two sides
// in the same memory take turns ("reads and writes must proceed sequentially").
#pragma once

#include <cstdint>
#include <string>

#include "dsl/sequencer.h"
#include "runtime/cycle_model.h"

namespace visa {

struct DmaStreamCycles {
  int64_t packets = 0;
  int64_t requests = 0;
  int64_t read_cycles = 0, write_cycles = 0;
  cycles::HbmEstimate hbm_read, hbm_write;  // requests 0: that side is not HBM
  bool sequential = false;                  // both sides in one memory
  int64_t cycles = 0;                       // start-up + max or sum of the sides
  // "requests: ...", "read_cycles: ...", "write_cycles: ...", "cycles: ..." lines.
  std::string ToText(MemoryTier src, MemoryTier dst) const;
};

// `element_bits` converts the configurations' element strides to bytes.
DmaStreamCycles EstimateDmaStream(const DmaConfig& dma, MemoryTier src, MemoryTier dst, int element_bits);

}  // namespace visa
