// The check a Launch makes before it writes anything: no op of the program may write bytes a live
// tensor outside the launch holds (a user's tensor, or an output a caller kept from an earlier
// launch). The program's outputs sit at their traced addresses, so such a launch is refused,
// naming both tensors, instead of overwriting the live one (issue 30, item 4).
#pragma once

#include <vector>

#include "absl/status/status.h"
#include "runtime/device.h"
#include "runtime/program.h"
#include "runtime/tensor.h"

namespace visa {

// OK unless an op's output range (a new tensor's placement, or the tensor a view writes into)
// holds, in one of its units, a live tensor other than the launch's inputs and the placeholders a
// Trace made: then an "Address Collision" error naming the op's output and the live tensor.
absl::Status CheckLaunchWritesNoLiveTensor(const Program& program, const Device& device,
                                           const std::vector<DeviceTensor>& inputs);

// After tracing, the tensors the kernel made (not its inputs) hold no data: they are marked as
// placeholders (AddressBook::MarkTraced), which a launch may write over. They keep their ranges,
// so that Address::Any places nothing new where a launch of the program writes.
void MarkTracedTensors(const Program& program);

}  // namespace visa
