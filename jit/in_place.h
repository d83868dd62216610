// InPlace: a device tensor's bytes as the JIT's compiled moves address them where they live, with
// no staging copy: a layout whose positions are element offsets from the first unit's data.
//
// Every memory is one block for all chips (device.h), unit after unit at a fixed stride (HBM: a
// chip's 48 GB), and a placement's spatial positions are its units (TRF: 8 rows per slice). So
// the tensor's full mapping with its Row level padded to 8 and its Element padded to the unit
// stride is the memory itself: position p is element p of the block from the tensor's address (a
// view's from its window). Padding positions are never written by a move, so bytes outside the
// tensor keep what they hold. HBM is in place only in a process that keeps every chip's HBM
// (runtime/kept_chips.h); a rank of several stages it (staging.h), so that Device::Write drops
// what other ranks' chips would receive.
#pragma once

#include <cstdint>
#include <optional>

#include "dsl/mapping.h"
#include "runtime/tensor.h"

namespace visa::jit {

struct InPlace {
  Mapping layout;         // positions = elements from `data`
  uint8_t* data = nullptr;
  int64_t positions = 0;  // elements addressable from `data` (to the memory's end)
};

// nullopt for host, HBM in a rank of several, and a 4-bit view whose window starts inside a byte.
// For an HBM tensor it also tells the device that its bytes may be written (NoteInPlaceWrites).
std::optional<InPlace> InPlaceOf(const DeviceTensor& tensor);
// Tells the tensor's device that a compiled kernel is about to write its units' bytes in place
// (Device::NoteInPlaceWrite: HBM counts committed pages where something was written); nothing
// for SRAM. For a kept move run again without InPlaceOf (ready_moves.h).
void NoteInPlaceWrites(const DeviceTensor& tensor);
// The same layout without touching the tensor's device (a traced handle's device may be gone):
// what compiling ahead of a run needs.
std::optional<Mapping> InPlaceLayout(const DeviceTensor& tensor);
// Elements addressable from the tensor's first element to the end of its last unit (what
// InPlaceOf reports as `positions`), also without touching the device.
int64_t InPlacePositions(const DeviceTensor& tensor);

// Whether a walk over the tensor's first `prefixes` spatial positions in place (a Fetch
// Sequencer's read nest) stays on chips where the tensor holds data. A chip view of chip c > 0
// (`# c + Chip + # n`, what mpi/chip_range_pipeline.h runs a rank's part on) is no live prefix, so
// its walk spans every chip's units: read in place it would map other chips' pages (an mpirun rank
// then commits DM of chips another rank owns); staged (staging.h) only its live units are read.
bool InPlaceWalkStaysOnItsChips(const DeviceTensor& tensor, int64_t prefixes);

// Whether two tensors' bytes may overlap (same memory, some unit in common, overlapping ranges):
// a move between them must read its source completely before writing.
bool MayOverlap(const DeviceTensor& a, const DeviceTensor& b);

}  // namespace visa::jit
