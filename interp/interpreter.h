// The reference backend: a recorded pipeline evaluated stage by stage, element by element by
// tensor index (stages.h); DMA moves through the shared transfer path.
#pragma once

#include "runtime/backend.h"

namespace visa::interp {

class Interpreter : public Backend {
 public:
  const char* name() const override { return "interp"; }
  absl::Status Run(const PipelineOp& op, const PipelineTensors& tensors) override;
};

}  // namespace visa::interp
