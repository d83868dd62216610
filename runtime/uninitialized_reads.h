// Uninitialized reads: which device bytes hold data someone wrote, and the report of a read of a
// live element whose bytes nothing wrote (the device would return whatever the memory held; this
// project's memory reads zero, so without the report such a kernel looks right by accident).
//
// Tracking is the device's (DeviceOptions::uninitialized_reads, device.h): a shadow bitmap per
// memory (written_bytes.h). What marks, always by tensor position so that padding and the bytes
// outside a view's window stay unwritten:
//  - host writes: a host image transferred into a device tensor (`to_hbm` from the host, WriteAs,
//    WriteInto), which is how Launch inputs are written;
//  - every op a backend ran, whatever the backend (the executor and the Context mark after the
//    run): a DMA move's destination, a pipeline's output (commit on its enabled slices,
//    commit_view on its window, to_trf, to_vrf). Marking after the op, from the op's output
//    tensor, costs the JIT nothing inside its kernels and keeps a device the JIT wrote readable
//    by the host and by the interpreter.
// What checks: the interpreter's reads (a fetch, the TRF weights of a contraction, a DMA move's
// source) and the host read-back (`to_host`). Only live positions count: padding the manual lets
// hardware read (`#` positions of a tensor, packet padding beyond the data) is never reported,
// and an engine read that drops indices is checked only on the positions it reads.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "runtime/device.h"
#include "runtime/program.h"
#include "runtime/tensor.h"

namespace visa {

// "off", "warn", "error" (the `visa run --uninitialized` values).
absl::StatusOr<UninitializedReads> ParseUninitializedReads(absl::string_view text);
absl::string_view UninitializedReadsName(UninitializedReads mode);

// Marks the bytes of the live positions of `tensor` (a whole tensor or a view's window) written
// on every unit whose slice `slices` enables. Nothing when the device does not track.
void MarkWritten(const DeviceTensor& tensor, const SliceBitmap& slices = SliceBitmap::All());
// What a pipeline wrote into `output`: the slices its final stage enables (a commit's bitmap).
void MarkPipelineWritten(const PipelineOp& op, const DeviceTensor& output);

// The live positions of a tensor handle with a byte nothing wrote.
struct UnwrittenElements {
  int64_t count = 0;
  std::optional<int64_t> first;  // the lowest such position of tensor.full_mapping()
  // One byte per position of tensor.full_mapping(), 1 for those positions (only when asked).
  std::vector<uint8_t> mask;
};
// Empty when the device does not track.
UnwrittenElements FindUnwritten(const DeviceTensor& tensor, bool with_mask);

// A read of every live position of `tensor` (a DMA move's source, a host read-back): OK when all
// were written, else ReportUnwrittenRead of the first that was not.
absl::Status CheckAllWritten(const DeviceTensor& tensor, absl::string_view op);

// Reports that `op` reads the unwritten element at `position` of tensor.full_mapping(), one of
// `unwritten` such elements of the tensor: the FailedPrecondition error ("Uninitialized Read:"
// naming the op, tier, chip / cluster / slice, byte range, element and tensor) in kError mode, a
// device warning and OK in kWarn mode.
absl::Status ReportUnwrittenRead(const DeviceTensor& tensor, absl::string_view op, int64_t position,
                                 int64_t unwritten);

}  // namespace visa
