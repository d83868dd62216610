// Vector Engine benchmarks (Google Benchmark), each kernel's main pipeline op next to references
// from the same run: the manual's element-wise kernels at a size worth timing (S = 256 slices x
// T = 256 steps x A = 8 lanes, 2 MiB of 32-bit data) as the samples write them (constant addition,
// element-wise multiplication with its operand loaded into the VRF on the sub context, sigmoid,
// and gemm_bias_silu's vector part: + bias from the VRF, stash, sigmoid, x stash):
//   - the JIT on 1 and 2 threads (the main op only: fetch, collect, the Vector Engine, commit);
//   - the interpreter;
//   - the JIT's compiled element loop alone, over the same number of elements (no fetch / commit);
//   - a plain host loop computing the same values over the same bytes, built as a user builds it
//     (this target: -O3 -march=native).
#include <benchmark/benchmark.h>

#include <malloc.h>

#include <cmath>
#include <cstring>

#include "dsl/mapping_parser.h"
#include "interp/interpreter.h"
#include "jit/jit_backend.h"
#include "jit/kernel_cache.h"
#include "jit/vector_kernel.h"
#include "runtime/launch.h"
#include "runtime/timing_backend.h"
#include "runtime/transfer.h"

namespace visa {
namespace {

constexpr int64_t kSteps = 256, kElements = 256 * kSteps * 8;

enum class Kernel { kConstantAdd, kElementwiseMul, kSigmoid, kBiasSilu };
const char* KernelName(Kernel k) {
  static constexpr const char* kNames[] = {"constant_add", "elementwise_mul", "sigmoid", "bias_silu"};
  return kNames[static_cast<int>(k)];
}
DType TypeOf(Kernel k) { return k == Kernel::kConstantAdd || k == Kernel::kElementwiseMul ? DType::kI32 : DType::kF32; }
bool HasVrf(Kernel k) { return k == Kernel::kElementwiseMul || k == Kernel::kBiasSilu; }

// The kernel's program over [S] [T, A] inputs in DM (x at 0, the VRF operand's source at 32 KiB).
struct VectorKernel {
  std::unique_ptr<Device> device = std::make_unique<Device>(1);
  std::unique_ptr<MappingScope> scope;
  Program program;
  std::vector<DeviceTensor> inputs;

  explicit VectorKernel(Kernel kernel) {
    scope = std::make_unique<MappingScope>(*Axes::Parse(absl::StrCat("S = 256, T = ", kSteps, ", A = 8")));
    const MappingScope& s = *scope;
    const DType type = TypeOf(kernel);
    for (int i = 0; i < (HasVrf(kernel) ? 2 : 1); ++i) {
      Placement placement = *Place(*device, type, Tier::kDm, {s.m("1"), s.m("1 # 2"), s.m("S"), s.m("T, A")},
                                   Address::At(i * 32768));
      HostTensor host = *HostTensor::Random(type, s.m("S, T, A"), 1 + i);
      inputs.push_back(*WriteAs(host, *device, placement));
    }
    KernelOf body = [&s, kernel, type](Context& ctx,
                                        const std::vector<DeviceTensor>& in) -> absl::StatusOr<std::vector<DeviceTensor>> {
      std::optional<VrfTensor> vrf;
      if (in.size() > 1) {
        absl::StatusOr<VrfTensor> loaded = ctx.sub.begin(DmTensor(in[1]).view())
                                               .fetch(type, s.m("T"), s.m("A"))
                                               .collect(s.m("T"), s.m("A"))
                                               .to_vrf(s.m("T, A"), 0);
        if (!loaded.ok()) return loaded.status();
        vrf = *loaded;
      }
      Stream stream = ctx.main.begin(DmTensor(in[0]).view())
                          .fetch(type, s.m("T"), s.m("A"))
                          .collect(s.m("T"), s.m("A"))
                          .vector_init()
                          .vector_intra_slice_branch(BranchMode::Unconditional());
      switch (kernel) {
        case Kernel::kConstantAdd: stream = std::move(stream).vector_fxp(FxpBinaryOp::kAddFxp, 1); break;
        case Kernel::kElementwiseMul: stream = std::move(stream).vector_fxp(FxpBinaryOp::kMulInt, *vrf); break;
        case Kernel::kSigmoid:
          stream = std::move(stream)
                       .vector_split(s.m("T, A / 4"), s.m("A % 4"))
                       .vector_fp_unary(FpUnaryOp::kSigmoid)
                       .vector_concat(s.m("T"), s.m("A"));
          break;
        case Kernel::kBiasSilu:
          stream = std::move(stream)
                       .vector_split(s.m("T, A / 4"), s.m("A % 4"))
                       .vector_fp_binary(FpBinaryOp::AddF(), *vrf)
                       .vector_stash()
                       .vector_fp_unary(FpUnaryOp::kSigmoid)
                       .vector_fp_binary(FpBinaryOp::MulF(FpMulAlu::kMul0), Stash)
                       .vector_concat(s.m("T"), s.m("A"));
          break;
      }
      absl::StatusOr<DmTensor> out = std::move(stream).vector_final().commit(s.m("T, A"), Address::At(65536));
      if (!out.ok()) return out.status();
      return std::vector<DeviceTensor>{*out};
    };
    absl::StatusOr<Program> traced = Trace(body, inputs);
    if (!traced.ok()) {
      std::fprintf(stderr, "%s\n", traced.status().ToString().c_str());
      std::abort();
    }
    program = *std::move(traced);
  }
};

// The kernel's main pipeline op on the JIT (threads > 0) or the interpreter (threads = 0).
void BM_VectorMainOp(benchmark::State& state, Kernel kernel, int threads) {
  VectorKernel k(kernel);
  interp::Interpreter interpreter;
  std::unique_ptr<jit::JitBackend> jit;
  if (threads > 0) {
    jit = *jit::JitBackend::Create({.threads = threads});
    if (!jit->Prepare(k.program).ok()) std::abort();
  }
  TimingBackend timed(threads > 0 ? static_cast<Backend&>(*jit) : interpreter);
  for (auto _ : state) {
    timed.Clear();
    absl::StatusOr<std::vector<DeviceTensor>> out = Launch(k.program, *k.device, timed, k.inputs);
    if (!out.ok()) {
      state.SkipWithError(std::string(out.status().message()).c_str());
      break;
    }
    double main = 0;
    for (const TimingBackend::OpTime& t : timed.times()) {
      if (t.kind == "pipeline main") main += t.seconds;
    }
    state.SetIterationTime(main);
  }
  state.SetBytesProcessed(state.iterations() * kElements * 4);
}

// The same values by a plain loop over the same number of elements.
void BM_VectorHostLoop(benchmark::State& state, Kernel kernel) {
  std::vector<uint32_t> x(kElements), y(kElements), out(kElements);
  for (int64_t i = 0; i < kElements; ++i) {
    x[i] = static_cast<uint32_t>(i * 2654435761u);
    y[i] = static_cast<uint32_t>(i * 40503u + 7);
  }
  std::vector<float> fx(kElements), fy(kElements), fout(kElements);
  for (int64_t i = 0; i < kElements; ++i) {
    fx[i] = static_cast<float>(static_cast<int32_t>(x[i] % 2001) - 1000) / 100.0f;
    fy[i] = static_cast<float>(static_cast<int32_t>(y[i] % 2001) - 1000) / 100.0f;
  }
  for (auto _ : state) {
    switch (kernel) {
      case Kernel::kConstantAdd:
        for (int64_t i = 0; i < kElements; ++i) out[i] = x[i] + 1u;
        break;
      case Kernel::kElementwiseMul:
        for (int64_t i = 0; i < kElements; ++i) out[i] = x[i] * y[i];
        break;
      case Kernel::kSigmoid:
        for (int64_t i = 0; i < kElements; ++i) fout[i] = 1.0f / (1.0f + std::exp(-fx[i]));
        break;
      case Kernel::kBiasSilu:
        for (int64_t i = 0; i < kElements; ++i) {
          const float v = fx[i] + fy[i];
          fout[i] = v * (1.0f / (1.0f + std::exp(-v)));
        }
        break;
    }
    benchmark::DoNotOptimize(out.data());
    benchmark::DoNotOptimize(fout.data());
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(state.iterations() * kElements * 4);
}

// The JIT's compiled element loop alone (jit/vector_kernel.h) over the same number of elements, one
// thread: what the Vector Engine costs inside the main op, next to the host loop.
void BM_VectorKernelOnly(benchmark::State& state, Kernel kernel) {
  auto cache = *jit::KernelCache::Create(1);
  jit::VectorKernelSpec spec;
  auto op = [](VeFn fn, std::optional<uint32_t> constant, int image) {
    jit::VectorKernelSpec::Op o;
    o.fn = fn;
    o.symbol = Info(fn).symbol;
    o.arity = Info(fn).arity;
    if (o.arity > 1) o.slots.push_back({0xffff, constant, image, 0});
    return o;
  };
  switch (kernel) {
    case Kernel::kConstantAdd: spec.ops = {op(VeFn::kAddFxp, 1u, -1)}; break;
    case Kernel::kElementwiseMul: spec.ops = {op(VeFn::kMulInt, std::nullopt, 0)}; break;
    case Kernel::kSigmoid: spec.ops = {op(VeFn::kSigmoid, std::nullopt, -1)}; break;
    case Kernel::kBiasSilu:
      spec.ops = {op(VeFn::kAddF, std::nullopt, 0), op(VeFn::kSigmoid, std::nullopt, -1),
                  op(VeFn::kMulF, std::nullopt, 1)};
      break;
  }
  jit::VectorFn fn = *cache->Vector(spec);
  std::vector<uint32_t> data(kElements), image(kElements, 0x3f000000u);
  std::vector<uint8_t> tags(kElements, 0);
  for (int64_t i = 0; i < kElements; ++i) data[i] = 0x3f800000u + static_cast<uint32_t>(i % 4096);
  const uint32_t* images[2] = {image.data(), image.data()};
  for (auto _ : state) {
    fn(data.data(), tags.data(), images, 0, kElements);
    benchmark::DoNotOptimize(data.data());
  }
  state.SetBytesProcessed(state.iterations() * kElements * 4);
}

void RegisterAll() {
  for (Kernel kernel : {Kernel::kConstantAdd, Kernel::kElementwiseMul, Kernel::kSigmoid, Kernel::kBiasSilu}) {
    const std::string name = KernelName(kernel);
    for (int threads : {1, 2}) {
      benchmark::RegisterBenchmark(("BM_Vector/" + name + "/jit/threads:" + std::to_string(threads)).c_str(),
                                   BM_VectorMainOp, kernel, threads)
          ->UseManualTime()->Unit(benchmark::kMillisecond);
    }
    benchmark::RegisterBenchmark(("BM_Vector/" + name + "/interp").c_str(), BM_VectorMainOp, kernel, 0)
        ->UseManualTime()->Unit(benchmark::kMillisecond)->Iterations(2);
    benchmark::RegisterBenchmark(("BM_Vector/" + name + "/jit_kernel_only").c_str(), BM_VectorKernelOnly, kernel)
        ->Unit(benchmark::kMillisecond);
    benchmark::RegisterBenchmark(("BM_Vector/" + name + "/host_loop").c_str(), BM_VectorHostLoop, kernel)
        ->Unit(benchmark::kMillisecond);
  }
}

const bool registered = (mallopt(M_MMAP_THRESHOLD, 1 << 30), mallopt(M_TRIM_THRESHOLD, 1 << 30), RegisterAll(), true);

}  // namespace
}  // namespace visa
