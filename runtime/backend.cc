// Backend: the shared DMA data path.
#include "runtime/backend.h"

#include "runtime/transfer.h"

namespace visa {

absl::Status Backend::Run(const DmaOp&, const DmaTensors& tensors) { return TransferInto(tensors.src, tensors.dst); }

}  // namespace visa
