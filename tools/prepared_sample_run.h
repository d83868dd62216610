// A sample run on the JIT whose kernels are all compiled before the sample's device exists.
//
// A sample records and runs each op as its chain ends (eager), so on a first run the JIT would
// compile and plan op by op while the inputs, the DM tensors and the TRF are already resident;
// LLVM's and the planners' temporaries (the GEMM's epilogue plan: 6 MiB of slot maps) then add
// to the device's pages at the run's peak. Tracing the sample first (TraceBackend: the rules are
// checked, no byte moves) and preparing its Program compiles every kernel while almost nothing
// is resident; the run then finds each one compiled (the GEMM's first run: 103.7 -> 101.0 MB,
// its warm run 92.9 -> 90.4 MB). The trace costs what `visa explain` does (the GEMM's: about
// 0.1 s of the process's 0.16 s); a traced contraction sample checks nothing (it computed nothing).
#pragma once

#include <cstdint>

#include "absl/status/statusor.h"
#include "jit/jit_backend.h"
#include "samples/sample.h"

namespace visa::cli {

struct PreparedSampleRun {
  samples::SampleRun run;
  int64_t compiled_before = 0;  // kernels compiled (or loaded from disk) while preparing
  int64_t compiled_during = 0;  // kernels compiled (or loaded) while the sample ran
};

absl::StatusOr<PreparedSampleRun> RunPrepared(const samples::Sample& sample, jit::JitBackend& jit,
                                              const DeviceOptions& device_options);

}  // namespace visa::cli
