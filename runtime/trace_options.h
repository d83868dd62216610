// The device options for a run on the TraceBackend (runtime/trace_backend.h) on a device of its
// own, as `visa explain`, `schedule`, `bench` and the JIT's preparation trace a sample: nothing is
// written, so the run's host read-back (ReadAs) would read memory nothing wrote. Such a run
// computes nothing and checks nothing; it tracks no writes.
#pragma once

#include "runtime/device.h"

namespace visa {

inline DeviceOptions TracingOptions(DeviceOptions options = {}) {
  options.uninitialized_reads = UninitializedReads::kOff;
  return options;
}

}  // namespace visa
