// The tiling figures of issue 31, measured in one run (this file is built -O3 -march=native):
// the tiled GEMM at the manual's size (M = N = 8192, K = 2048) on the JIT against the Eigen
// float product of the same inputs (the sample's host reference, one thread and the host's
// threads), its device cycles (the cycle model) against one cluster's peak; the tiled attention
// over 8192 keys on the interpreter and the JIT against its host reference. Each backend figure is
// the sample's kernel time (SampleRun::kernel_seconds: the kernel alone, not its set-up or check).
#include <sys/resource.h>

#include <Eigen/Core>
#include <benchmark/benchmark.h>

#include "interp/interpreter.h"
#include "jit/jit_backend.h"
#include "runtime/scheduler.h"
#include "runtime/trace_backend.h"
#include "runtime/trace_options.h"
#include "samples/sample.h"

namespace visa::samples {
namespace {

double PeakRssBytes() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<double>(usage.ru_maxrss) * 1024.0;
}

void RunOn(benchmark::State& state, const std::string& name, Backend& backend) {
  const Sample* sample = FindSample(name);
  if (sample == nullptr) return state.SkipWithError("no sample");
  for (auto _ : state) {
    absl::StatusOr<SampleRun> run = sample->Run(backend);
    if (!run.ok()) return state.SkipWithError(std::string(run.status().message()).c_str());
    if (run->mismatch) return state.SkipWithError(run->mismatch->c_str());
    state.SetIterationTime(run->kernel_seconds);
  }
  state.counters["peak_rss_GiB"] = PeakRssBytes() / (1 << 30);
}

void Jit(benchmark::State& state, const std::string& name) {
  absl::StatusOr<std::unique_ptr<jit::JitBackend>> jit =
      jit::JitBackend::Create({.threads = static_cast<int>(state.range(0))});
  if (!jit.ok()) return state.SkipWithError("no JIT");
  RunOn(state, name, **jit);
}

void Interpreter(benchmark::State& state, const std::string& name) {
  interp::Interpreter interpreter;
  RunOn(state, name, interpreter);
}

void HostReference(benchmark::State& state, const std::string& name) {
  Eigen::setNbThreads(static_cast<int>(state.range(0)));
  const Sample* sample = FindSample(name);
  for (auto _ : state) {
    absl::StatusOr<double> seconds = sample->TimeHostReference();
    if (!seconds.ok()) return state.SkipWithError(std::string(seconds.status().message()).c_str());
    state.SetIterationTime(*seconds);
  }
}

// The cycle model's makespan of the kernel (after the host's uploads), against one cluster's
// peak: 256 slices x 8 rows x 16 bf16 MACs a cycle (a 32-byte flit fetched per cycle).
void DeviceCycles(benchmark::State& state) {
  const Sample* sample = FindSample("tiled_gemm");
  for (auto _ : state) {
    TraceBackend trace;
    absl::StatusOr<SampleRun> run = sample->Run(trace, TracingOptions());
    if (!run.ok()) return state.SkipWithError(std::string(run.status().message()).c_str());
    const Schedule schedule = MakeSchedule(run->program);
    int64_t uploads_end = 0, main_busy = 0, dma_busy = 0;
    for (const ScheduledOp& op : schedule.ops) {
      if (op.label.rfind("pdma", 0) == 0) {
        uploads_end = std::max(uploads_end, op.end);
        continue;
      }
      if (op.resource == Resource::kMain) main_busy += op.cycles();
      if (op.resource == Resource::kDma) dma_busy += op.cycles();
    }
    const double kernel = static_cast<double>(schedule.makespan - uploads_end);
    const double peak = 8192.0 * 8192 * 2048 / (256.0 * 8 * 16);
    state.counters["kernel_cycles"] = kernel;
    state.counters["peak_cycles"] = peak;
    state.counters["peak_over_kernel"] = peak / kernel;
    state.counters["main_busy"] = static_cast<double>(main_busy);
    state.counters["dma_busy"] = static_cast<double>(dma_busy);
  }
}

BENCHMARK_CAPTURE(HostReference, tiled_gemm_eigen, std::string("tiled_gemm"))->Arg(1)->Arg(2)->UseManualTime()
    ->Iterations(1)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(Jit, tiled_gemm, std::string("tiled_gemm"))->Arg(2)->UseManualTime()->Iterations(1)
    ->Unit(benchmark::kMillisecond);
BENCHMARK(DeviceCycles)->Iterations(1)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(HostReference, tiled_attention_reference, std::string("tiled_attention"))->Arg(1)
    ->UseManualTime()->Iterations(3)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(Jit, tiled_attention, std::string("tiled_attention"))->Arg(2)->UseManualTime()->Iterations(3)
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(Interpreter, tiled_attention, std::string("tiled_attention"))->UseManualTime()->Iterations(1)
    ->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace visa::samples
