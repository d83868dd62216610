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
