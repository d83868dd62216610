// TraceBackend: a backend that runs nothing, so a Context over it only plans, checks and records
// (symbolic tracing): `Trace`, `visa explain` and JIT compilation ahead of a run cost what
// planning costs. No byte of the device is read or written.
#pragma once

#include "runtime/backend.h"

namespace visa {

class TraceBackend : public Backend {
 public:
  const char* name() const override { return "trace"; }
  bool executes() const override { return false; }
  absl::Status Run(const PipelineOp&, const PipelineTensors&) override { return absl::OkStatus(); }
  absl::Status Run(const DmaOp&, const DmaTensors&) override { return absl::OkStatus(); }
};

}  // namespace visa
