// Memset: `ctx.sub.memset(view, value)` fills the live cells of a DM tensor or view with one value
// (the sub context's Generate Mode, dsl/memset_fill.h). Recorded as a DmaOp with `fill` on the
// sub context: it reads nothing and writes the view's bytes.
//
// The placement rules: the target is in DM on the context's device, and the ITOS commands write
// whole aligned 32-bit words, so every word covering the view's live cells may hold only the
// view's cells and the tensor's own padding (never a live cell outside the view, never another
// tensor's bytes).
#pragma once

#include "absl/status/status.h"
#include "dsl/memset_fill.h"
#include "runtime/tensor.h"

namespace visa {

// Checks the placement rules for `view` and completes `fill`'s word counts.
absl::Status CheckMemsetTarget(const DeviceTensor& view, MemsetFill& fill);

// The data path (Backend::Run's default for a DmaOp with `fill`): each live unit's window gets
// `fill.bits` at the view's live positions; every other byte keeps what memory holds.
absl::Status FillView(const MemsetFill& fill, const DeviceTensor& view);

}  // namespace visa
