// The loop nest a DMA's recorded descriptors walk, as the JIT executes them.
//
// The tracer records, for every move between device memories, its DMA descriptors
// (runtime/move_descriptors.h): read / write sequencer entries with paired strides over each end's
// chip-level addresses, and the loops that repeat a descriptor. The JIT does not re-derive the move
// from the mappings: every entry becomes one level of its loop nest (destination stride: the write
// entry's, source stride: the read entry's), so agreement with the interpreter, which moves data by
// tensor index, checks the descriptors `visa explain` prints. An end the JIT addresses in place has
// the descriptor's positions (its Element padded to the unit); a staged end packs each unit's
// Element, so a stride of whole units is rescaled to the staged unit.
#pragma once

#include <cstdint>
#include <optional>

#include "dsl/dma_descriptor.h"
#include "jit/in_place.h"
#include "jit/move_nest.h"
#include "runtime/tensor.h"

namespace visa::jit {

// How the JIT's buffer for one end lays out the descriptor's positions.
struct DmaEnd {
  int64_t unit_span = 1;       // descriptor positions per unit (a DM / SPM slice, an HBM chip)
  int64_t unit_positions = 1;  // buffer positions per unit (in place: unit_span; staged: the Element)
  int64_t element_size = 1;    // positions of the handle's Element (a view's window)
};

// The end of `tensor` addressed in place (its memory) or staged (staging.h).
DmaEnd DmaEndOf(const DeviceTensor& tensor, bool in_place);

// The nest of the descriptors over the two ends; nullopt when a staged end would need a stride
// that is neither whole units nor inside one Element.
std::optional<MoveNest> DmaNestOf(const DmaDescriptors& descriptors, const DmaEnd& src, const DmaEnd& dst);

// Where the descriptors' first position of an end (DmaSide::first_position: a chip view starts at
// its chip) lies in the JIT's buffer for it: whole units rescaled as strides are.
int64_t FirstPositionOf(int64_t first_position, const DmaEnd& end);
// The buffer `end` from position `first` on.
InPlace FromFirstPosition(InPlace end, int64_t first, int bits);

}  // namespace visa::jit
