// Trace (declared in runtime/launch.h): a kernel run on a scratch device with the interpreter.
#include "dsl/status_macros.h"
#include "interp/interpreter.h"
#include "runtime/launch.h"

namespace visa {

absl::StatusOr<Program> Trace(const Kernel& kernel, int chips) {
  ASSIGN_OR_RETURN(std::unique_ptr<Device> device, Device::Create(chips));
  interp::Interpreter interpreter;
  ASSIGN_OR_RETURN(LaunchResult result, Launch(*device, interpreter, kernel));
  return std::move(result.program);
}

}  // namespace visa

namespace visa {

absl::StatusOr<Program> Trace(const KernelOf& kernel, const std::vector<DeviceTensor>& inputs) {
  if (inputs.empty()) return absl::InvalidArgumentError("Trace: a kernel of inputs needs at least one input");
  interp::Interpreter interpreter;
  ASSIGN_OR_RETURN(LaunchResult result,
                   Launch(inputs[0].device(), interpreter,
                          [&](Context& ctx) { return kernel(ctx, inputs); }));
  for (const DeviceTensor& input : inputs) result.program.inputs.push_back({input.ToString(), input.id(), input});
  for (const DeviceTensor& output : result.outputs) {
    result.program.outputs.push_back({output.ToString(), output.id(), output});
  }
  return std::move(result.program);
}

}  // namespace visa
