// The DMA descriptors of a recorded move between two device tensors: each end as the DMA Engine
// addresses it (dsl/dma_descriptor.h), then the one derivation. Recorded in the DmaOp at record
// time, printed by `visa explain`, walked by the JIT (jit/dma_nest.h).
#pragma once

#include "absl/status/statusor.h"
#include "dsl/dma_descriptor.h"
#include "runtime/tensor.h"

namespace visa {

// A tensor (or view) as one end of a DMA: its levels over its tier's chip-level addresses (the
// Element padded to its unit: a DM / SPM slice or an HBM chip), positions from its first element.
absl::StatusOr<DmaSide> DmaSideOf(const DeviceTensor& tensor);

// DeriveMoveDescriptors of `dst <- src`.
absl::StatusOr<DmaDescriptors> MoveDescriptors(const DeviceTensor& src, const DeviceTensor& dst);

}  // namespace visa
