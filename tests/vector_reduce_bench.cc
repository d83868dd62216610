// The row softmax sample (samples/vector_reduce_samples.cc: three passes, two reductions) timed in
// one run on the JIT (kernels compiled before timing), on the interpreter, and as a plain host loop
// over the same 256 x 32 f32 values built -O3 -march=native. The kernel time is the sample's
// (its passes, DMA and VRF loads included; set-up and the check excluded).
#include <benchmark/benchmark.h>

#include <cmath>
#include <random>
#include <vector>

#include "interp/interpreter.h"
#include "jit/jit_backend.h"
#include "samples/sample.h"

namespace visa {
namespace {

void RunSample(benchmark::State& state, Backend& backend) {
  const samples::Sample* sample = samples::FindSample("vector_row_softmax");
  if (sample == nullptr || !sample->Run(backend).ok()) {  // warm-up: the JIT compiles here
    state.SkipWithError("vector_row_softmax does not run");
    return;
  }
  for (auto _ : state) {
    absl::StatusOr<samples::SampleRun> run = sample->Run(backend);
    if (!run.ok() || run->mismatch) {
      state.SkipWithError("vector_row_softmax failed");
      return;
    }
    state.SetIterationTime(run->kernel_seconds);
  }
}

void BM_RowSoftmaxJit(benchmark::State& state) {
  std::unique_ptr<jit::JitBackend> jit = *jit::JitBackend::Create({.threads = static_cast<int>(state.range(0))});
  RunSample(state, *jit);
}
BENCHMARK(BM_RowSoftmaxJit)->Arg(1)->Arg(2)->UseManualTime()->Unit(benchmark::kMicrosecond);

void BM_RowSoftmaxInterpreter(benchmark::State& state) {
  interp::Interpreter interpreter;
  RunSample(state, interpreter);
}
BENCHMARK(BM_RowSoftmaxInterpreter)->UseManualTime()->Unit(benchmark::kMicrosecond);

// The same computation as a host loop: max, sum of exp(x - max), exp(x - max) / sum per row.
void BM_RowSoftmaxHostLoop(benchmark::State& state) {
  constexpr int kRows = 256, kCols = 32;
  std::vector<float> x(kRows * kCols), y(kRows * kCols);
  std::mt19937 rng(1);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  for (float& v : x) v = dist(rng);
  for (auto _ : state) {
    for (int r = 0; r < kRows; ++r) {
      const float* row = &x[r * kCols];
      float max = -INFINITY, sum = 0;
      for (int c = 0; c < kCols; ++c) max = std::max(max, row[c]);
      for (int c = 0; c < kCols; ++c) sum += std::exp(row[c] - max);
      for (int c = 0; c < kCols; ++c) y[r * kCols + c] = std::exp(row[c] - max) / sum;
    }
    benchmark::DoNotOptimize(y.data());
    benchmark::ClobberMemory();
  }
}
BENCHMARK(BM_RowSoftmaxHostLoop)->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace visa
