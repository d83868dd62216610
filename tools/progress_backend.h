// ProgressBackend: runs every op on another backend and counts it on a Progress line, so a long
// interpreter run of a big sample shows how far it got.
#pragma once

#include "runtime/backend.h"
#include "tools/progress.h"

namespace visa::cli {

class ProgressBackend : public Backend {
 public:
  ProgressBackend(Backend& inner, Progress& progress) : inner_(inner), progress_(progress) {}

  const char* name() const override { return inner_.name(); }
  bool executes() const override { return inner_.executes(); }
  absl::Status Run(const PipelineOp& op, const PipelineTensors& tensors) override {
    absl::Status status = inner_.Run(op, tensors);
    progress_.Step("pipeline");
    return status;
  }
  absl::Status Run(const DmaOp& op, const DmaTensors& tensors) override {
    absl::Status status = inner_.Run(op, tensors);
    progress_.Step(ContextName(op.context));
    return status;
  }

  // The ops of `program` a backend runs (host transfers are not device ops): the progress total.
  static int64_t DeviceOps(const Program& program);

 private:
  Backend& inner_;
  Progress& progress_;
};

}  // namespace visa::cli
