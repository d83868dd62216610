// The reference backend: a recorded pipeline evaluated stage by stage, element by element by
// tensor index (stages.h); DMA moves through the shared transfer path. Reads of device elements
// nothing wrote are reported as the device's options say (runtime/uninitialized_reads.h).
#pragma once

#include "runtime/backend.h"

namespace visa::interp {

class Interpreter : public Backend {
 public:
  const char* name() const override { return "interp"; }
  absl::Status Run(const PipelineOp& op, const PipelineTensors& tensors) override;
  // The shared transfer path, after checking the source for unwritten elements.
  absl::Status Run(const DmaOp& op, const DmaTensors& tensors) override;
};

}  // namespace visa::interp
