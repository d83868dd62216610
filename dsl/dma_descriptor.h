// DMA descriptors: the read / write sequencer pairs a tensor move between HBM, DM and SPM runs
// from (manual, "DMA Engine" > DMA Command Syntax, DMA Sequencer Internals).
//
// A move names only its two layouts; the stream (Time, Packet) that couples the read and the
// write sequencer is chosen here, as the manual's compiler does ("Stream shapes are often
// inferred"): the destination's live digits, outermost first, refined to the source's digit
// boundaries (dsl/layout.h, Project), so that every stream term is one entry on both sides; the
// Packet is the longest run of innermost terms that both sides hold contiguously, at most 4,096
// bytes (the AXI limit; a term is split to fit), and the pair comes from DeriveDma's derivation, the
// one `visa seq --dma` runs on a stream the user gives. One descriptor (a DmaSequencer of paired
// strides and bases) addresses one chip per side and has at most 8 entries, so the entries it
// cannot hold are unrolled into a sequence of descriptors, each loop saying why: a chip entry,
// a destination broadcast digit (copies no stream term names), the entry limit.
//
// Addresses are chip-level: HBM from the chip's first byte, DM / SPM with the slice in the
// address (a slice's 512 KB one after another, cluster 0's 256 slices first), as the device lays
// its memory out. Strides are in elements, as the sequencer's entries are.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "dsl/layout.h"
#include "dsl/mapping.h"
#include "dsl/sequencer.h"

namespace visa {

// One end of a move: its layout over a tier's positions, chip after chip.
struct DmaSide {
  MemoryTier tier = MemoryTier::kHbm;
  Mapping layout;          // position p: element p from the side's first element
  int64_t chip_span = 1;   // positions per chip (a chip's address space in elements)
  int64_t base_bytes = 0;  // chip-level byte address of position 0
  // Positions of the tier before position 0: whole chips a left-padded Chip level skips.
  int64_t first_position = 0;
};

// A side from its Chip level and the levels below it (`below`, spanning one chip's positions).
// A Chip level with a left pad, `# c + E + # m` (a chip view, runtime/chip_view.h), has no digit
// form; the pad is where the side starts instead: c chips in (first_position), the layout `E # ...`
// from there, so the move's descriptors address chip c and up as any others address chip 0 and up.
absl::StatusOr<DmaSide> MakeDmaSide(MemoryTier tier, const Mapping& chip, const Mapping& below, int64_t base_bytes);

// An entry no single descriptor can hold: the descriptors repeat over its values.
struct DmaLoop {
  int64_t size = 1;
  int64_t read_stride = 0;   // source positions per value (0: every value reads the same)
  int64_t write_stride = 0;  // destination positions per value
  std::string label;         // the stream term it came from
  std::string why;
};

struct DmaDescriptors {
  MemoryTier src_tier = MemoryTier::kHbm, dst_tier = MemoryTier::kHbm;
  int bits = 8;
  int64_t src_chip_span = 1, dst_chip_span = 1;
  int64_t src_base_bytes = 0, dst_base_bytes = 0;
  int64_t src_first_position = 0, dst_first_position = 0;  // DmaSide::first_position of each end
  std::string time, packet;  // the chosen stream
  // One descriptor's pair: the same entry sizes on both sides; its bases are those of the first
  // descriptor (the others move them by the loops).
  DmaConfig body;
  std::vector<DmaLoop> loops;      // outermost first
  std::vector<std::string> notes;  // what the configuration does not say by itself

  int64_t count() const;  // descriptors: the product of the loops' sizes
  // The whole move as loop levels over the two sides' positions from their first positions,
  // innermost first:
  // (count, destination stride, source stride), the body's entries then the loops.
  std::vector<MoveLevel> Levels() const;
  // Indented lines for `visa explain`: the stream, the first descriptor's read and write
  // configurations with media and bases, the loops and notes.
  std::string ToText(const std::string& indent) const;
};

// The descriptors of the move `dst <- src` (matched by axis, as DMA moves are). Errors say why no
// descriptor expresses the move (a layout without a digit form, a digit the sides split unevenly).
absl::StatusOr<DmaDescriptors> DeriveMoveDescriptors(const DmaSide& src, const DmaSide& dst, ElementBits element);

}  // namespace visa
