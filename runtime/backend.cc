// Backend: the shared DMA data path.
#include "runtime/backend.h"

#include "runtime/indirect_dma.h"
#include "runtime/memset.h"
#include "runtime/transfer.h"

namespace visa {

absl::Status Backend::Run(const DmaOp& op, const DmaTensors& tensors) {
  if (const MemsetFill* fill = op.fill()) return FillView(*fill, tensors.dst);
  if (const IndirectLoop* loop = op.indirect()) return loop->scatter ? ScatterInto(*loop, tensors) : GatherInto(*loop, tensors);
  return TransferInto(tensors.src, tensors.dst);
}

}  // namespace visa
