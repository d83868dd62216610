// JIT benchmarks (Google Benchmark), each reported next to its reference from the same run:
// - a data-movement kernel over a whole cluster's DM (fetch, collect, a commit that changes the
//   layout, then a DM-to-DM move back): JIT on 1 and 2 threads vs a memcpy of the same bytes vs
//   the interpreter;
// - compile time of every sample's program, first (a fresh JIT) and cached (prepared before);
// - the GEMM sample on the JIT and on the interpreter vs Eigen's float GEMM of the same shape.
#include <benchmark/benchmark.h>

#include <malloc.h>

#include <Eigen/Core>
#include <cstring>

#include "dsl/mapping_parser.h"
#include "interp/interpreter.h"
#include "jit/jit_backend.h"
#include "runtime/launch.h"
#include "runtime/transfer.h"
#include "samples/sample.h"

namespace visa {
namespace {

// The data-movement kernel on `a` rows of 64 bytes per slice, over all 256 slices of cluster 0.
struct MoveKernel {
  std::unique_ptr<Device> device = std::make_unique<Device>(1);
  std::unique_ptr<MappingScope> scope;
  Program program;
  std::vector<DeviceTensor> inputs;
  int64_t bytes = 0;  // one copy of the tensor

  explicit MoveKernel(int64_t a) {
    scope = std::make_unique<MappingScope>(*Axes::Parse(absl::StrCat("S = 256, A = ", a, ", B = 64")));
    const MappingScope& s = *scope;
    Placement placement = *Place(*device, DType::kI8, Tier::kDm, {s.m("1"), s.m("1 # 2"), s.m("S"), s.m("A, B")},
                                 Address::At(0));
    HostTensor host = *HostTensor::Random(DType::kI8, s.m("S, A, B"), 1);
    inputs = {*WriteAs(host, *device, placement)};
    bytes = 256 * a * 64;
    const int64_t unit = a * 64;
    KernelOf kernel = [&s, unit](Context& ctx, const std::vector<DeviceTensor>& in) -> absl::StatusOr<std::vector<DeviceTensor>> {
      DmTensor dm(in[0]);
      absl::StatusOr<DmTensor> flits = ctx.main.begin(dm.view())
                                           .fetch(DType::kI8, s.m("A"), s.m("B"))
                                           .collect(s.m("A, B / 32"), s.m("B % 32"))
                                           .commit(s.m("B / 32, A, B % 32"), Address::At(unit));
      if (!flits.ok()) return flits.status();
      absl::StatusOr<DmTensor> back = flits->to_dm(ctx.tdma, Address::At(2 * unit), s.m("1 # 2"), s.m("S"), s.m("A, B"));
      if (!back.ok()) return back.status();
      return std::vector<DeviceTensor>{*back};
    };
    absl::StatusOr<Program> traced = Trace(kernel, inputs);
    if (!traced.ok()) std::abort();
    program = *std::move(traced);
  }
};

void BM_DataMovementJit(benchmark::State& state) {
  MoveKernel k(state.range(0));
  auto jit = *jit::JitBackend::Create({.threads = static_cast<int>(state.range(1))});
  if (!jit->Prepare(k.program).ok()) std::abort();
  for (auto _ : state) {
    absl::StatusOr<std::vector<DeviceTensor>> out = Launch(k.program, *k.device, *jit, k.inputs);
    if (!out.ok()) state.SkipWithError(std::string(out.status().message()).c_str());
  }
  state.SetBytesProcessed(state.iterations() * 2 * k.bytes);
  state.counters["threads"] = static_cast<double>(state.range(1));
}
BENCHMARK(BM_DataMovementJit)->Args({128, 1})->Args({128, 2})->Args({2048, 1})->Args({2048, 2})
    ->Unit(benchmark::kMillisecond)->UseRealTime();

// The same bytes copied twice (the pipeline's move and the DMA move), as one plain memcpy each.
void BM_DataMovementMemcpy(benchmark::State& state) {
  const size_t bytes = 256 * state.range(0) * 64;
  std::vector<uint8_t> a(bytes, 1), b(bytes), c(bytes);
  for (auto _ : state) {
    std::memcpy(b.data(), a.data(), bytes);
    std::memcpy(c.data(), b.data(), bytes);
    benchmark::DoNotOptimize(c.data());
  }
  state.SetBytesProcessed(state.iterations() * 2 * bytes);
}
BENCHMARK(BM_DataMovementMemcpy)->Arg(128)->Arg(2048)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_DataMovementInterp(benchmark::State& state) {
  MoveKernel k(state.range(0));
  interp::Interpreter interpreter;
  for (auto _ : state) {
    absl::StatusOr<std::vector<DeviceTensor>> out = Launch(k.program, *k.device, interpreter, k.inputs);
    if (!out.ok()) state.SkipWithError(std::string(out.status().message()).c_str());
  }
  state.SetBytesProcessed(state.iterations() * 2 * k.bytes);
}
BENCHMARK(BM_DataMovementInterp)->Arg(128)->Unit(benchmark::kMillisecond)->UseRealTime();

// Compile time of a sample's program: a fresh JIT (everything compiles) or a prepared one.
void BM_Compile(benchmark::State& state, const samples::Sample* sample, bool cached) {
  interp::Interpreter interpreter;
  absl::StatusOr<samples::SampleRun> run = sample->Run(interpreter);
  if (!run.ok()) {
    state.SkipWithError("the sample does not run");
    return;
  }
  auto warm = *jit::JitBackend::Create();
  if (!warm->Prepare(run->program).ok()) std::abort();
  for (auto _ : state) {
    if (cached) {
      benchmark::DoNotOptimize(warm->Prepare(run->program));
    } else {
      auto fresh = *jit::JitBackend::Create();
      benchmark::DoNotOptimize(fresh->Prepare(run->program));
    }
  }
}

// A sample's kernel time (set-up and checks excluded) on a backend.
void BM_Sample(benchmark::State& state, const samples::Sample* sample, bool use_jit, int threads) {
  interp::Interpreter interpreter;
  std::unique_ptr<jit::JitBackend> jit;
  if (use_jit) jit = *jit::JitBackend::Create({.threads = threads});
  Backend& backend = use_jit ? static_cast<Backend&>(*jit) : interpreter;
  if (use_jit && !sample->Run(backend).ok()) {  // compiles
    state.SkipWithError("the sample does not run");
    return;
  }
  for (auto _ : state) {
    absl::StatusOr<samples::SampleRun> run = sample->Run(backend);
    if (!run.ok()) {
      state.SkipWithError(std::string(run.status().message()).c_str());
      break;
    }
    state.SetIterationTime(run->kernel_seconds);
  }
}

// Eigen's float GEMM of the GEMM sample's shape (I = J = 512, K from the sample's axes).
void BM_GemmEigen(benchmark::State& state) {
  const int64_t n = 512, k = state.range(0);
  Eigen::MatrixXf a = Eigen::MatrixXf::Random(n, k), b = Eigen::MatrixXf::Random(k, n), c(n, n);
  for (auto _ : state) {
    c.noalias() = a * b;
    benchmark::DoNotOptimize(c.data());
  }
  state.counters["GFLOP/s"] =
      benchmark::Counter(2.0 * n * n * k * state.iterations(), benchmark::Counter::kIsRate, benchmark::Counter::kIs1000);
}

int64_t GemmK(const samples::Sample& s) {
  absl::StatusOr<Axes> axes = Axes::Parse(s.axes);
  if (!axes.ok()) return 0;
  return axes->Find("K") ? axes->Find("K")->size : 0;
}

void RegisterAll() {
  for (const samples::Sample& sample : samples::AllSamples()) {
    if (sample.slow) continue;
    benchmark::RegisterBenchmark(("BM_CompileFirst/" + sample.name).c_str(), BM_Compile, &sample, false)
        ->Unit(benchmark::kMillisecond);
    benchmark::RegisterBenchmark(("BM_CompileCached/" + sample.name).c_str(), BM_Compile, &sample, true)
        ->Unit(benchmark::kMicrosecond);
  }
  for (const char* name : {"gemm", "gemm_k64"}) {
    const samples::Sample* gemm = samples::FindSample(name);
    if (gemm == nullptr) continue;
    const std::string base = std::string("BM_Gemm/") + name;
    for (int threads : {1, 2}) {
      benchmark::RegisterBenchmark((base + "/jit/threads:" + std::to_string(threads)).c_str(), BM_Sample, gemm, true,
                                   threads)
          ->UseManualTime()->Unit(benchmark::kMillisecond);
    }
    benchmark::RegisterBenchmark((base + "/interp").c_str(), BM_Sample, gemm, false, 1)
        ->UseManualTime()->Unit(benchmark::kMillisecond)->Iterations(1);
    benchmark::RegisterBenchmark((base + "/eigen_float").c_str(), BM_GemmEigen)
        ->Arg(GemmK(*gemm))->Unit(benchmark::kMillisecond);
  }
}

// Stream images and staging buffers are tens of megabytes: keep freed ones in the heap instead of
// returning them to the kernel, so every iteration does not page-fault them in again.
const bool registered = (mallopt(M_MMAP_THRESHOLD, 1 << 30), mallopt(M_TRIM_THRESHOLD, 1 << 30), RegisterAll(), true);

}  // namespace
}  // namespace visa
