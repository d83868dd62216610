// Launch and Trace: a fresh Context per kernel run, executing on a backend or recording only.
#include "runtime/launch.h"

#include "dsl/status_macros.h"
#include "runtime/launch_collisions.h"
#include "runtime/trace_backend.h"

namespace visa {

absl::StatusOr<LaunchResult> Launch(Device& device, Backend& backend, const Kernel& kernel) {
  if (!kernel) return absl::InvalidArgumentError("Launch: the kernel is empty");
  Context ctx(device, backend);
  ASSIGN_OR_RETURN(std::vector<DeviceTensor> outputs, kernel(ctx));
  return LaunchResult{std::move(outputs), ctx.program()};
}

absl::StatusOr<Program> Trace(const Kernel& kernel, int chips) {
  ASSIGN_OR_RETURN(std::unique_ptr<Device> device, Device::Create(chips));
  TraceBackend trace;
  ASSIGN_OR_RETURN(LaunchResult result, Launch(*device, trace, kernel));
  return std::move(result.program);
}

absl::StatusOr<Program> Trace(const KernelOf& kernel, const std::vector<DeviceTensor>& inputs) {
  if (inputs.empty()) return absl::InvalidArgumentError("Trace: a kernel of inputs needs at least one input");
  TraceBackend trace;
  ASSIGN_OR_RETURN(LaunchResult result,
                   Launch(inputs[0].device(), trace, [&](Context& ctx) { return kernel(ctx, inputs); }));
  for (const DeviceTensor& input : inputs) result.program.inputs.push_back({input.ToString(), input.id(), input});
  for (const DeviceTensor& output : result.outputs) {
    result.program.outputs.push_back({output.ToString(), output.id(), output});
  }
  MarkTracedTensors(result.program);
  return std::move(result.program);
}

}  // namespace visa
