// Launch: a fresh Context per kernel run, its Program returned with the kernel's outputs.
#include "runtime/launch.h"

#include "dsl/status_macros.h"

namespace visa {

absl::StatusOr<LaunchResult> Launch(Device& device, Backend& backend, const Kernel& kernel) {
  if (!kernel) return absl::InvalidArgumentError("Launch: the kernel is empty");
  Context ctx(device, backend);
  ASSIGN_OR_RETURN(std::vector<DeviceTensor> outputs, kernel(ctx));
  return LaunchResult{std::move(outputs), ctx.program()};
}

}  // namespace visa
