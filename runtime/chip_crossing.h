// ChipCrossing: whether a run of a move (dsl/layout.h's MoveRun: `length` destination positions
// from `dst`, read from `src` every `src_stride`) puts an element on another chip than the one it
// is read from, when a chip holds a fixed number of positions on each side. A transfer's plan
// (runtime/transfer.h, PlanTransfer's `crosses_chips`) asks it of every run; a distributed run
// (mpi/) decides from it which moves cross ranks.
#pragma once

#include <cstdint>

#include "dsl/layout.h"

namespace visa {

// `src_per_chip` and `dst_per_chip`: the source and destination positions one chip holds.
// A check per chip the run passes through, not per element: along a run both chip numbers are
// monotonic (the source stride keeps one sign), so each stretch on one destination chip needs its
// first and last element compared.
bool RunCrossesChips(const MoveRun& run, int64_t src_per_chip, int64_t dst_per_chip);

}  // namespace visa
