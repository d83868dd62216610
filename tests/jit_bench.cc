// JIT benchmarks (Google Benchmark), each reported next to its reference from the same run:
// - a data-movement kernel over a whole cluster's DM (fetch, collect, a commit that changes the
//   layout, then a DM-to-DM move back): JIT on 1 and 2 threads vs a memcpy of the same bytes vs
//   the interpreter;
// - compile time of every sample's program, first (a fresh JIT) and cached (prepared before),
//   and in a second process whose disk cache (JitOptions::disk_cache) holds what the first stored:
//   the benchmark runs this executable again as a child that prepares the program and reports;
// - the GEMM sample's contraction op (and the i8 matmul's) on the JIT on 1 and 2 threads and on the
//   interpreter, vs Eigen's float GEMM of the same shape at the same thread count, built as a user
//   builds it (this target: -O3 -march=native -fopenmp).
#include <benchmark/benchmark.h>

#include <malloc.h>
#include <sys/resource.h>
#include <time.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>

#include <Eigen/Core>
#include <cstring>
#include <ctime>
#include <utility>

#include "dsl/mapping_parser.h"
#include "interp/interpreter.h"
#include "jit/jit_backend.h"
#include "runtime/launch.h"
#include "runtime/timing_backend.h"
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

// A fresh JIT preparing the program from a disk cache filled before: a second process's work
// without the process's start and LLVM's one-time setup (a loop to profile).
void BM_CompileFromDisk(benchmark::State& state, const samples::Sample* sample) {
  interp::Interpreter interpreter;
  absl::StatusOr<samples::SampleRun> run = sample->Run(interpreter);
  const std::string dir = (std::filesystem::temp_directory_path() /
                           absl::StrCat("visa_jit_bench_disk_", getpid(), "_", sample->name)).string();
  std::filesystem::remove_all(dir);
  const jit::JitOptions options{.threads = 1, .disk_cache = true, .cache_dir = dir};
  auto filler = jit::JitBackend::Create(options);
  if (!run.ok() || !filler.ok() || !(*filler)->Prepare(run->program).ok()) {
    state.SkipWithError("the sample does not prepare");
    return;
  }
  for (auto _ : state) {
    auto fresh = *jit::JitBackend::Create(options);
    benchmark::DoNotOptimize(fresh->Prepare(run->program));
    if (fresh->stats().compiles != 0) state.SkipWithError("a kernel was compiled");
  }
  std::filesystem::remove_all(dir);
}

// ---- Compile in a second process, from the disk cache -------------------------------------------
// The parent starts this executable with VISA_JIT_BENCH_CHILD=<sample> and VISA_CACHE_DIR set; the
// child registers only BM_ChildPrepare, which prepares the sample's program on a fresh JIT with the
// disk cache and prints one line: "visa-child-prepare <wall ms> <cpu ms> <compiles> <disk hits>".
constexpr char kChildVariable[] = "VISA_JIT_BENCH_CHILD";
constexpr char kChildLine[] = "visa-child-prepare";

double ProcessCpuSeconds() {
  timespec now{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &now);
  return static_cast<double>(now.tv_sec) + 1e-9 * static_cast<double>(now.tv_nsec);
}

void BM_ChildPrepare(benchmark::State& state, const samples::Sample* sample) {
  interp::Interpreter interpreter;
  absl::StatusOr<samples::SampleRun> run = sample->Run(interpreter);
  auto jit = jit::JitBackend::Create({.threads = 1, .disk_cache = true});
  if (!run.ok() || !jit.ok()) std::abort();
  for (auto _ : state) {
    const double cpu = ProcessCpuSeconds();
    absl::StatusOr<double> wall = (*jit)->Prepare(run->program);
    if (!wall.ok()) std::abort();
    std::printf("%s %.4f %.4f %lld %lld\n", kChildLine, *wall * 1e3, (ProcessCpuSeconds() - cpu) * 1e3,
                static_cast<long long>((*jit)->stats().compiles), static_cast<long long>((*jit)->stats().disk_hits));
    std::fflush(stdout);
  }
}

struct ChildReport {
  double wall_ms = 0, cpu_ms = 0;
  long long compiles = -1, disk_hits = -1;
};

// Runs the child for `sample` with the disk cache in `dir`; nullopt when it fails.
std::optional<ChildReport> RunChild(const std::string& sample, const std::string& dir) {
  // The shell popen starts has its own /proc/self: name this executable by its path.
  const std::string self = std::filesystem::read_symlink("/proc/self/exe").string();
  const std::string command = absl::StrCat(kChildVariable, "=", sample, " VISA_CACHE_DIR=", dir, " '", self,
                                           "' --benchmark_filter=BM_ChildPrepare 2>/dev/null");
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) return std::nullopt;
  std::optional<ChildReport> report;
  char line[512];
  while (std::fgets(line, sizeof line, pipe) != nullptr) {
    ChildReport r;
    char tag[64];
    if (std::sscanf(line, "%63s %lf %lf %lld %lld", tag, &r.wall_ms, &r.cpu_ms, &r.compiles, &r.disk_hits) == 5 &&
        std::string(tag) == kChildLine) {
      report = r;
    }
  }
  if (pclose(pipe) != 0) return std::nullopt;
  return report;
}

// The compile of a second process: the first child fills a fresh cache directory, every timed one
// loads from it. Manual time: the child's Prepare (wall); counters: its CPU time, what it compiled.
void BM_CompileSecondProcess(benchmark::State& state, const samples::Sample* sample) {
  const std::string dir = (std::filesystem::temp_directory_path() /
                           absl::StrCat("visa_jit_bench_cache_", getpid(), "_", sample->name)).string();
  std::filesystem::remove_all(dir);
  std::optional<ChildReport> first = RunChild(sample->name, dir);
  if (!first) {
    state.SkipWithError("the child process failed");
    return;
  }
  ChildReport last;
  for (auto _ : state) {
    std::optional<ChildReport> report = RunChild(sample->name, dir);
    if (!report) {
      state.SkipWithError("the child process failed");
      break;
    }
    state.SetIterationTime(report->wall_ms * 1e-3);
    last = *report;
  }
  state.counters["first_ms"] = first->wall_ms;
  state.counters["cpu_ms"] = last.cpu_ms;
  state.counters["compiles"] = static_cast<double>(last.compiles);
  state.counters["disk_hits"] = static_cast<double>(last.disk_hits);
  std::filesystem::remove_all(dir);
}


// The process CPU time of every main-context pipeline op (the contraction) run through it: on a
// shared machine wall time counts the other processes too, CPU time only this one's work.
class MainOpCpuTime : public Backend {
 public:
  explicit MainOpCpuTime(Backend& inner) : inner_(inner) {}
  const char* name() const override { return inner_.name(); }
  absl::Status Run(const PipelineOp& op, const PipelineTensors& tensors) override {
    if (op.context != ContextKind::kMain) return inner_.Run(op, tensors);
    const double start = ProcessCpuSeconds();
    const int64_t faults = MinorFaults();
    absl::Status status = inner_.Run(op, tensors);
    seconds_ += ProcessCpuSeconds() - start;
    faults_ += MinorFaults() - faults;
    return status;
  }
  absl::Status Run(const DmaOp& op, const DmaTensors& tensors) override { return inner_.Run(op, tensors); }
  double TakeSeconds() { return std::exchange(seconds_, 0.0); }
  int64_t TakeFaults() { return std::exchange(faults_, 0); }

 private:
  // The process's page faults served without I/O: each run's device is new, so the op's first
  // writes into its output's pages fault them in (part of the op's CPU time, not of its kernels).
  static int64_t MinorFaults() {
    rusage usage{};
    getrusage(RUSAGE_SELF, &usage);
    return usage.ru_minflt;
  }
  Backend& inner_;
  double seconds_ = 0;
  int64_t faults_ = 0;
};

// The time of a sample's main pipeline op (the contraction) on a backend: the sample runs whole on
// a TimingBackend each iteration and the iteration's time is that op's (wall); cpu_ms is the op's
// process CPU time (all threads), the mean over iterations.
void BM_MainOp(benchmark::State& state, const samples::Sample* sample, bool use_jit, int threads) {
  interp::Interpreter interpreter;
  std::unique_ptr<jit::JitBackend> jit;
  if (use_jit) jit = *jit::JitBackend::Create({.threads = threads});
  MainOpCpuTime cpu(use_jit ? static_cast<Backend&>(*jit) : interpreter);
  TimingBackend timed(cpu);
  if (use_jit && !sample->Run(timed).ok()) {  // compiles
    state.SkipWithError("the sample does not run");
    return;
  }
  cpu.TakeSeconds();
  cpu.TakeFaults();
  double cpu_seconds = 0;
  int64_t faults = 0;
  for (auto _ : state) {
    timed.Clear();
    absl::StatusOr<samples::SampleRun> run = sample->Run(timed);
    if (!run.ok()) {
      state.SkipWithError(std::string(run.status().message()).c_str());
      break;
    }
    double main = 0;
    for (const TimingBackend::OpTime& t : timed.times()) {
      if (t.kind == "pipeline main") main += t.seconds;
    }
    state.SetIterationTime(main);
    state.counters["program_ms"] = run->kernel_seconds * 1e3;
    cpu_seconds += cpu.TakeSeconds();
    faults += cpu.TakeFaults();
  }
  state.counters["cpu_ms"] = cpu_seconds * 1e3 / static_cast<double>(std::max<int64_t>(1, state.iterations()));
  state.counters["faults"] = static_cast<double>(faults) / static_cast<double>(std::max<int64_t>(1, state.iterations()));
  if (jit) state.counters["fused"] = static_cast<double>(jit->stats().fused_pipelines > 0);
  // Slices of the last run on the vdpbf16ps pair kernel (the bf16 GEMM's 256 when its values allow).
  if (jit) {
    state.counters["pair_slices"] = static_cast<double>(jit->stats().bf16_pair_slices) /
                                    static_cast<double>(state.iterations() + 1);
  }
}

// Eigen's float GEMM [m x k] x [k x n], built as a user builds it (this file: -O3 -march=native,
// OpenMP) on `threads` threads.
void BM_EigenGemm(benchmark::State& state, int64_t m, int64_t n, int64_t k, int threads) {
  Eigen::setNbThreads(threads);
  Eigen::MatrixXf a = Eigen::MatrixXf::Random(m, k), b = Eigen::MatrixXf::Random(k, n), c(m, n);
  timespec start, end;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &start);
  for (auto _ : state) {
    c.noalias() = a * b;
    benchmark::DoNotOptimize(c.data());
  }
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &end);
  // Process CPU time (every OpenMP thread), like BM_MainOp's.
  state.counters["cpu_ms"] = ((end.tv_sec - start.tv_sec) * 1e3 + (end.tv_nsec - start.tv_nsec) * 1e-6) /
                             static_cast<double>(std::max<int64_t>(1, state.iterations()));
  state.counters["GFLOP/s"] =
      benchmark::Counter(2.0 * m * n * k * state.iterations(), benchmark::Counter::kIsRate, benchmark::Counter::kIs1000);
  Eigen::setNbThreads(0);
}

void RegisterAll() {
  if (const char* child = std::getenv(kChildVariable)) {
    const samples::Sample* sample = samples::FindSample(child);
    if (sample == nullptr) std::abort();
    benchmark::RegisterBenchmark("BM_ChildPrepare", BM_ChildPrepare, sample)->Iterations(1);
    return;
  }
  for (const samples::Sample& sample : samples::AllSamples()) {
    if (sample.slow) continue;
    benchmark::RegisterBenchmark(("BM_CompileFirst/" + sample.name).c_str(), BM_Compile, &sample, false)
        ->Unit(benchmark::kMillisecond);
    benchmark::RegisterBenchmark(("BM_CompileCached/" + sample.name).c_str(), BM_Compile, &sample, true)
        ->Unit(benchmark::kMicrosecond);
    benchmark::RegisterBenchmark(("BM_CompileFromDisk/" + sample.name).c_str(), BM_CompileFromDisk, &sample)
        ->Unit(benchmark::kMillisecond);
    benchmark::RegisterBenchmark(("BM_CompileSecondProcess/" + sample.name).c_str(), BM_CompileSecondProcess, &sample)
        ->UseManualTime()->Unit(benchmark::kMillisecond)->Iterations(3);
  }
  // The GEMM sample (I = J = 512, K = 1024) and its K = 64 variant; the i8 matmul (8 slices of
  // [16 x 256] x [256 x 8]). Each JIT figure next to Eigen at the same thread count.
  struct Shape {
    const char* sample;
    int64_t m, n, k;
    bool interp;
  };
  for (const Shape& shape : {Shape{"gemm", 512, 512, 1024, true}, Shape{"gemm_k64", 512, 512, 64, false},
                             Shape{"gemm_i8", 512, 512, 1024, false}, Shape{"matmul_i8", 128, 8, 256, true}}) {
    const samples::Sample* sample = samples::FindSample(shape.sample);
    if (sample == nullptr) continue;
    const std::string base = std::string("BM_MainOp/") + shape.sample;
    for (int threads : {1, 2}) {
      benchmark::RegisterBenchmark((base + "/jit/threads:" + std::to_string(threads)).c_str(), BM_MainOp, sample, true,
                                   threads)
          ->UseManualTime()->Unit(benchmark::kMillisecond)->Iterations(5);
      benchmark::RegisterBenchmark((base + "/eigen_float/threads:" + std::to_string(threads)).c_str(), BM_EigenGemm,
                                   shape.m, shape.n, shape.k, threads)
          ->Unit(benchmark::kMillisecond);
    }
    if (shape.interp) {
      benchmark::RegisterBenchmark((base + "/interp").c_str(), BM_MainOp, sample, false, 1)
          ->UseManualTime()->Unit(benchmark::kMillisecond)->Iterations(1);
    }
  }
}

// Stream images and staging buffers are tens of megabytes: keep freed ones in the heap instead of
// returning them to the kernel, so every iteration does not page-fault them in again.
const bool registered = (mallopt(M_MMAP_THRESHOLD, 1 << 30), mallopt(M_TRIM_THRESHOLD, 1 << 30), RegisterAll(), true);

}  // namespace
}  // namespace visa
