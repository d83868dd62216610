// The JIT's gathers and scatters (the manual's IndirectLoop, dsl/indirect_access.h): compiled moves
// bring the table (or the tensor scattered into) and the rows into dense row-major images, the
// IndirectLoop `(limit, [offset0, offset1, ...])` copies whole rows at the offsets the index tensor
// holds when the op runs, and a compiled move writes the result into its destination. Every
// element is copied, never converted, so the bits are the interpreter's (runtime/indirect_dma.cc);
// the index checks are the same function (IndirectRows). A row of an odd number of 4-bit elements
// is copied nibble by nibble (jit/indirect_positions.h); rows that start inside a byte in memory
// are refused at the call (CheckRowsStartOnBytes).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "jit/kernel_cache.h"
#include "runtime/backend.h"
#include "runtime/program.h"

namespace visa::jit {

absl::Status RunIndirect(KernelCache& kernels, const DmaOp& op, const DmaTensors& tensors);
// Compiles the op's moves ahead of a run (Prepare); the row copies need no code.
absl::Status PrepareIndirect(KernelCache& kernels, const DmaOp& op);

// The row images both indirect paths share (the fetch's IndirectLoop too, jit/indirect_fetch.h):
// `row` outermost, then the tensor's axes other than `row_axis`: rows of `row_elements` elements.
struct RowLayout {
  Mapping layout;
  int64_t row_elements = 1;
};
absl::StatusOr<RowLayout> RowsOf(const Mapping& tensor, const std::string& row_axis, const Axis& row);
// A dense image of `tensor` laid out by `rows` (a compiled move from where it lives).
absl::StatusOr<std::vector<uint8_t>> DenseRows(KernelCache& kernels, const DeviceTensor& tensor, const Mapping& rows);
// Where DenseRows reads `tensor` from: its in-place layout, else its full mapping (staged).
Mapping SourceLayout(const DeviceTensor& tensor);

}  // namespace visa::jit
