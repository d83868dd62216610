// Backend: the shared DMA data path.
#include "runtime/backend.h"

#include "runtime/indirect_dma.h"
#include "runtime/memset.h"
#include "runtime/transfer.h"

namespace visa {

absl::Status Backend::Run(const DmaOp& op, const DmaTensors& tensors) {
  if (op.fill) return FillView(*op.fill, tensors.dst);
  if (op.indirect) return op.indirect->scatter ? ScatterInto(*op.indirect, tensors) : GatherInto(*op.indirect, tensors);
  return TransferInto(tensors.src, tensors.dst);
}

}  // namespace visa
