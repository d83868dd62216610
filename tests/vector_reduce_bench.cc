// The row softmax sample (samples/vector_reduce_samples.cc: three passes, two reductions) timed in
// one run on the JIT (kernels compiled before timing), on the interpreter, and as a plain host loop
// over the same 256 x 32 f32 values built -O3 -march=native. The kernel time is the sample's
// (its passes, DMA and VRF loads included; set-up and the check excluded). The softmax's reduce step
// alone (256 slices x 32 f32, reduce Add over Time and Packet with the Valid Count Generator) is
// timed compiled (jit/vector_reduce_stage.h), through the interpreter's block functions, and as a
// host loop over the same lanes in the same order.
#include <benchmark/benchmark.h>

#include <bit>
#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "dsl/mapping_parser.h"
#include "dsl/vector_reduce.h"
#include "interp/interpreter.h"
#include "interp/vector_reduce_stage.h"
#include "jit/jit_backend.h"
#include "jit/kernel_cache.h"
#include "jit/vector_reduce_stage.h"
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

// The softmax's row reduce as one step: [M] slices of N = 32 as Time [N / 4] x Packet [N % 4].
struct RowReduce {
  MappingScope scope{*Axes::Parse("M = 256, N = 32")};
  IntraSliceReduceStage stage;
  VeStep step;
  std::vector<uint32_t> lanes;
  RowReduce() {
    const auto shape = [&](const std::string& packet) {
      return StreamShape{DType::kF32, scope.m("1"), scope.m("1 # 2"), scope.m("M"), scope.m("N / 4"), scope.m(packet),
                         std::nullopt};
    };
    stage = *PlanIntraSliceReduce(shape("N % 4 # 8"), Narrowing::kTrim, shape("N % 4"), "N", scope.m("1"),
                                  scope.m("1 # 4"), VeReduceOp::kAdd);
    step.kind = VeStep::Kind::kIntraReduce;
    step.out = stage.out;
    step.intra_reduce = std::make_shared<IntraSliceReduceStage>(stage);
    lanes.resize(static_cast<size_t>(stage.in.Full().size()));
    std::mt19937 rng(1);
    std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
    for (uint32_t& lane : lanes) lane = std::bit_cast<uint32_t>(dist(rng));
  }
};

void BM_RowReduceStepJit(benchmark::State& state) {
  RowReduce r;
  std::unique_ptr<jit::KernelCache> kernels = *jit::KernelCache::Create(static_cast<int>(state.range(0)));
  std::vector<uint8_t> bytes(4 * r.lanes.size());
  std::memcpy(bytes.data(), r.lanes.data(), bytes.size());
  if (!jit::RunReduceStep(*kernels, r.step, bytes).ok()) state.SkipWithError("the compiled reduce fails");
  for (auto _ : state) benchmark::DoNotOptimize(jit::RunReduceStep(*kernels, r.step, bytes));
}
BENCHMARK(BM_RowReduceStepJit)->Arg(1)->Arg(2)->Unit(benchmark::kMicrosecond);

void BM_RowReduceStepInterpreter(benchmark::State& state) {
  RowReduce r;
  for (auto _ : state) benchmark::DoNotOptimize(interp::IntraSliceReduceStream(r.stage, r.lanes));
}
BENCHMARK(BM_RowReduceStepInterpreter)->Unit(benchmark::kMicrosecond);

// The same sums by a host loop: per slice, the tree of each flit, then the flits in order.
void BM_RowReduceStepHostLoop(benchmark::State& state) {
  RowReduce r;
  const int64_t blocks = static_cast<int64_t>(r.lanes.size()) / 32;
  std::vector<float> in(r.lanes.size()), out(static_cast<size_t>(blocks) * 4);
  std::memcpy(in.data(), r.lanes.data(), 4 * in.size());
  for (auto _ : state) {
    for (int64_t b = 0; b < blocks; ++b) {
      const float* x = &in[b * 32];
      float acc = (x[0] + x[1]) + (x[2] + x[3]);
      for (int t = 1; t < 8; ++t) acc += (x[4 * t] + x[4 * t + 1]) + (x[4 * t + 2] + x[4 * t + 3]);
      out[b * 4] = acc;
    }
    benchmark::DoNotOptimize(out.data());
    benchmark::ClobberMemory();
  }
}
BENCHMARK(BM_RowReduceStepHostLoop)->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace visa
