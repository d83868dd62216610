// RunPrepared: trace, prepare, then run, counting the kernels each step compiled.
#include "tools/prepared_sample_run.h"

#include "dsl/status_macros.h"
#include "runtime/trace_backend.h"
#include "runtime/trace_options.h"

namespace visa::cli {
namespace {

int64_t KernelsMade(const jit::JitStats& stats) { return stats.compiles + stats.disk_hits; }

}  // namespace

absl::StatusOr<PreparedSampleRun> RunPrepared(const samples::Sample& sample, jit::JitBackend& jit,
                                              const DeviceOptions& device_options) {
  PreparedSampleRun result;
  const int64_t start = KernelsMade(jit.stats());
  {
    TraceBackend trace;
    ASSIGN_OR_RETURN(samples::SampleRun planned, sample.Run(trace, TracingOptions(device_options)));
    RETURN_IF_ERROR(jit.Prepare(planned.program).status());
  }
  result.compiled_before = KernelsMade(jit.stats()) - start;
  ASSIGN_OR_RETURN(result.run, sample.Run(jit, device_options));
  result.compiled_during = KernelsMade(jit.stats()) - start - result.compiled_before;
  return result;
}

}  // namespace visa::cli
