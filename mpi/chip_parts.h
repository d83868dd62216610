// Chip parts of a device tensor: which chips its live positions lie on, and the bytes of one
// chip's part in its full image (the image of full_mapping(), whose outermost level is the Chip
// level, so chip c's positions are one contiguous block).
#pragma once

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "runtime/tensor.h"

namespace visa::mpi {

// The device chips holding a live position of `tensor`, in order; empty for host memory.
std::vector<int> ChipsOf(const DeviceTensor& tensor);

// Bytes of one chip's block in the full image of `tensor`; an error when a chip's part does not
// start on a byte (sub-byte types with an odd count per chip).
absl::StatusOr<int64_t> ChipBlockBytes(const DeviceTensor& tensor);

}  // namespace visa::mpi
