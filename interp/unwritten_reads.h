// The interpreter's uninitialized-read check of engine reads (runtime/uninitialized_reads.h):
// which live positions of the source tensors a stream move reads, and whether nothing wrote one.
#pragma once

#include <optional>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "dsl/mapping.h"
#include "runtime/tensor.h"

namespace visa::interp {

// The read of an engine that moves `sources` by index into `stream` (indices the stream does not
// hold are dropped, as the fetch and the TRF Sequencer allow): one source, or two stacked along
// `interleave` exactly as the fetch's source image. Only the live source positions the move reads
// count; the first read in stream order of an element nothing wrote is reported (per the device's
// mode: an error, or a warning and OK). Nothing when the device does not track.
absl::Status CheckStreamReads(absl::Span<const DeviceTensor> sources, const std::optional<Mapping>& interleave,
                              const Mapping& stream, absl::string_view op);

}  // namespace visa::interp
