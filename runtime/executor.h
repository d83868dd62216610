// Executor: runs a recorded Program on a device, op by op, handing each whole op to a backend.
//
// A Program refers to tensors by the handles it was traced with (TensorRef). The executor binds
// the program's inputs to the caller's tensors, resolves every later reference to the tensor an
// earlier op produced (a view keeps its traced window), reserves each new output at its recorded
// placement, runs the op on the backend and only then lets the output claim its ranges (so an op
// may read what it overwrites). `Launch(program, ...)` in launch.h is this loop.
#pragma once

#include <cstdint>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "runtime/backend.h"
#include "runtime/device.h"
#include "runtime/program.h"

namespace visa {

class Executor {
 public:
  Executor(Device& device, Backend& backend) : device_(device), backend_(backend) {}

  // Binds a traced tensor to the tensor it stands for in this run (same dtype, tier, address and
  // levels; the data may differ).
  absl::Status Bind(const TensorRef& traced, const DeviceTensor& actual);
  // The tensor a traced reference denotes in this run.
  absl::StatusOr<DeviceTensor> Resolve(const TensorRef& traced) const;

  absl::Status Run(const Op& op);
  absl::Status Run(const PipelineOp& op);
  absl::Status Run(const DmaOp& op);

 private:
  // The output of an op: an existing target (a view written in place) or a new tensor reserved at
  // the traced placement. A view of a tensor no input binds and no earlier op produced (made by
  // the kernel outside every op, as the outputs of an asymmetric slice or a chip shuffle are) is
  // written into that tensor, made again at its traced placement.
  absl::StatusOr<DeviceTensor> Output(const TensorRef& traced);
  // Claims a new output's ranges after its op ran and binds it for later ops.
  void Produced(const TensorRef& traced, const DeviceTensor& output);

  Device& device_;
  Backend& backend_;
  absl::flat_hash_map<int64_t, DeviceTensor> bound_;
};

}  // namespace visa
