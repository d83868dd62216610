// ChipRangeMove: a DMA move between two tensors spread over every chip, in which each chip's part
// stays on its chip, run for a range of chips alone: one move per chip of the range between the
// chip views (runtime/chip_view.h) of the source and the destination. A rank of an mpirun launch
// (mpi/mpi_backend.h) runs only its own chips' parts of such a move (staging HBM into DM on every
// chip, DM back to HBM), so its time and the SRAM pages it writes divide by the ranks.
//
// Rules (SplitsByChip, and RunChipRange refuses otherwise): a plain move (no memset, no gather or
// scatter), neither end a view, both ends with the same single axis as their Chip level, over every
// chip of the device, and no element landing on another chip than it was read from.
#pragma once

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "runtime/backend.h"
#include "runtime/program.h"

namespace visa::mpi {

// Whether the move splits into per-chip moves (the rules above); OK false when it does not.
absl::StatusOr<bool> SplitsByChip(const DmaOp& op, const DmaTensors& tensors);

// The parts on chips [first, first + count) of a move that splits by chip, on `backend`; the other
// chips' bytes of the destination are not written. An error naming the rule when the move does not
// split or the range leaves the device's chips.
absl::Status RunChipRange(Backend& backend, const DmaOp& op, const DmaTensors& tensors, int first, int count);

}  // namespace visa::mpi
