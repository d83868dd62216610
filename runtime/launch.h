// Launch and Trace: running a kernel (a function of a Context) on a device and backend, or only
// to obtain the Program it records.
#pragma once

#include <functional>
#include <vector>

#include "absl/status/statusor.h"
#include "runtime/backend.h"
#include "runtime/device.h"
#include "runtime/program.h"
#include "runtime/tensor.h"
#include "runtime/tensor_unit.h"

namespace visa {

// A kernel: issues DMA moves and Tensor Unit pipelines through the Context and returns its outputs.
using Kernel = std::function<absl::StatusOr<std::vector<DeviceTensor>>(Context&)>;

struct LaunchResult {
  std::vector<DeviceTensor> outputs;
  Program program;  // every op the kernel ran, in order
};

// Runs `kernel` with a fresh Context on `device` and `backend`; the kernel's error is returned as is.
absl::StatusOr<LaunchResult> Launch(Device& device, Backend& backend, const Kernel& kernel);

// A kernel over input tensors the caller placed (HBM or DM tensors), returning its outputs.
using KernelOf =
    std::function<absl::StatusOr<std::vector<DeviceTensor>>(Context&, const std::vector<DeviceTensor>&)>;

// Runs a traced Program (see Trace below) on `device` with `backend` (executor.h): `inputs` are
// bound to the program's inputs in order (same dtypes and placements as traced, data may differ),
// every op runs from its recorded configuration, and the program's outputs are returned.
absl::StatusOr<std::vector<DeviceTensor>> Launch(const Program& program, Device& device,
                                                 Backend& backend, const std::vector<DeviceTensor>& inputs);

// Records `kernel` once on `inputs` without executing anything (symbolic: every rule is checked and
// every configuration derived, no byte is moved) and returns the Program with its inputs and
// outputs, ready for Launch. The outputs are reserved on the inputs' device.
absl::StatusOr<Program> Trace(const KernelOf& kernel, const std::vector<DeviceTensor>& inputs);

// The same for a kernel of no inputs, on a scratch device of `chips` chips.
absl::StatusOr<Program> Trace(const Kernel& kernel, int chips = 1);

}  // namespace visa
