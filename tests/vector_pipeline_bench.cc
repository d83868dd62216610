// Vector Engine and indirect-fetch pipelines timed whole (Google Benchmark), each kind next to a
// host loop doing the same math over the same bytes, measured in the same run:
//   - elementwise (f32 x * 2 over [S = 256] x [T = 32, A = 8]),
//   - intra-slice reduce (the f32 sum of each slice's 256 values),
//   - inter-slice reduce (f32 Add over R = 4 slices, [W = 64, R] -> [W, X = 4]),
//   - branch (Comparison ids x > 0, Clip Min 0.5, filter: min(relu(x), 0.5)),
//   - two-group (two tensors interleaved, unzipped, clip_zip Add),
//   - indirect fetch (32 rows of 64 f32 of a [W = 64] table in every slice, by an index in DM),
//   - tiny: 16 pipelines of one 8-lane add each on one slice (a warm op's fixed cost).
// Each pipeline runs as a program prepared once: `warm` relaunches it on one device (what a decode
// loop does), `fresh` on a new device each iteration (what `visa run` does; the device's creation
// and the inputs' writes are outside the timing). The time is the whole Launch; `op_us` counts the
// pipeline ops alone (TimingBackend). The host loop is built as a user builds it (-O3 -march=native).
#include <benchmark/benchmark.h>

#include <malloc.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>

#include "dsl/mapping_parser.h"
#include "interp/interpreter.h"
#include "jit/jit_backend.h"
#include "runtime/launch.h"
#include "runtime/timing_backend.h"
#include "runtime/transfer.h"

namespace visa {
namespace {

enum class Kind { kElementwise, kIntraReduce, kInterReduce, kBranch, kTwoGroup, kIndirect, kTiny };
const char* KindName(Kind k) {
  static constexpr const char* kNames[] = {"elementwise", "intra_reduce", "inter_reduce", "branch",
                                           "two_group",   "indirect_fetch", "tiny_ops"};
  return kNames[static_cast<int>(k)];
}

constexpr int kTinyOps = 16;

// An input: its layout on the device and in the host loop's array (the same index order).
struct Input {
  std::vector<Mapping> levels;  // chip, cluster, slice, element
  Mapping host;
  DType dtype = DType::kF32;
  int64_t address = 0;
};

struct Pipeline {
  std::unique_ptr<MappingScope> scope;
  std::vector<Input> inputs;
  KernelOf body;
  Program program;
  std::vector<HostTensor> host;  // the inputs' values
};

template <typename T>
T Check(absl::StatusOr<T> value) {
  if (!value.ok()) {
    std::fprintf(stderr, "vector_pipeline_bench: %s\n", value.status().ToString().c_str());
    std::abort();
  }
  return *std::move(value);
}

absl::StatusOr<std::vector<DeviceTensor>> One(absl::StatusOr<DmTensor> out) {
  if (!out.ok()) return out.status();
  return std::vector<DeviceTensor>{*out};
}

Pipeline MakePipeline(Kind kind) {
  Pipeline p;
  auto scope = [&](const char* axes) { p.scope = std::make_unique<MappingScope>(Check(Axes::Parse(axes))); };
  auto dm = [&](const char* slice, const char* element, int64_t address, DType dtype = DType::kF32) {
    const MappingScope& s = *p.scope;
    p.inputs.push_back(Input{{s.m("1"), s.m("1 # 2"), s.m(slice), s.m(element)},
                             Pair({s.m(slice), s.m(element)}), dtype, address});
  };
  switch (kind) {
    case Kind::kElementwise:
      scope("S = 256, T = 32, A = 8");
      dm("S", "T, A", 0);
      p.body = [&s = *p.scope](Context& ctx, const std::vector<DeviceTensor>& in) {
        return One(ctx.main.begin(DmTensor(in[0]).view())
                       .fetch(DType::kF32, s.m("T"), s.m("A"))
                       .collect(s.m("T"), s.m("A"))
                       .vector_init()
                       .vector_intra_slice_branch(BranchMode::Unconditional())
                       .vector_split(s.m("T, A / 4"), s.m("A % 4"))
                       .vector_fp_binary(FpBinaryOp::MulF(FpMulAlu::kMul0), 2.0f)
                       .vector_concat(s.m("T"), s.m("A"))
                       .vector_final()
                       .commit(s.m("T, A"), 1 << 16));
      };
      break;
    case Kind::kIntraReduce:
      scope("S = 256, N = 256");
      dm("S", "N", 0);
      p.body = [&s = *p.scope](Context& ctx, const std::vector<DeviceTensor>& in) {
        return One(ctx.main.begin(DmTensor(in[0]).view())
                       .fetch(DType::kF32, s.m("N / 8"), s.m("N % 8"))
                       .collect(s.m("N / 8"), s.m("N % 8"))
                       .vector_init()
                       .vector_intra_slice_branch(BranchMode::Unconditional())
                       .vector_split(s.m("N / 4"), s.m("N % 4"))
                       .vector_intra_slice_reduce("N", s.m("1"), s.m("1 # 4"), IntraSliceReduceOpF32::kAdd)
                       .vector_pad_way8(s.m("1 # 8"))
                       .vector_final()
                       .commit(s.m("1 # 2"), 1 << 16));
      };
      break;
    case Kind::kInterReduce:
      scope("W = 64, R = 4, X = 4, T = 32, P = 8");
      dm("W, R", "T, P", 0);
      p.body = [&s = *p.scope](Context& ctx, const std::vector<DeviceTensor>& in) {
        return One(ctx.main.begin(DmTensor(in[0]).view())
                       .fetch(DType::kF32, s.m("T"), s.m("P"))
                       .collect(s.m("T"), s.m("P"))
                       .vector_init()
                       .vector_inter_slice_reduce(s.m("W, X"), s.m("T"), InterSliceReduceOpF32::kAdd)
                       .vector_final()
                       .commit(s.m("T, P"), 1 << 16));
      };
      break;
    case Kind::kBranch:
      scope("S = 256, T = 32, A = 8");
      dm("S", "T, A", 0);
      p.body = [&s = *p.scope](Context& ctx, const std::vector<DeviceTensor>& in) {
        constexpr BitReq kOne = BitReq::kOne, kAny = BitReq::kIgnore;
        return One(ctx.main.begin(DmTensor(in[0]).view())
                       .fetch(DType::kF32, s.m("T"), s.m("A"))
                       .collect(s.m("T"), s.m("A"))
                       .vector_init()
                       .vector_intra_slice_branch(BranchMode::Comparison(
                           {InputCmp::Greater(0.0f), InputCmp::False(), InputCmp::False(), InputCmp::False()}))
                       .vector_clip(ClipBinaryOpF32::kMin, 0.5f)
                       .vector_filter(TagGuard::Matches({kOne, kAny, kAny, kAny}))
                       .vector_final()
                       .commit(s.m("T, A"), 1 << 16));
      };
      break;
    case Kind::kTwoGroup:
      scope("S = 256, T = 32, A = 8, I = 2");
      dm("S", "T, A", 0);
      dm("S", "T, A", 1 << 15);
      p.body = [&s = *p.scope](Context& ctx, const std::vector<DeviceTensor>& in) {
        return One(ctx.main.begin_interleaved(s.m("I"), DmTensor(in[0]).view(), DmTensor(in[1]).view())
                       .fetch(DType::kF32, s.m("T, I"), s.m("A"))
                       .collect(s.m("T, I"), s.m("A"))
                       .vector_init()
                       .vector_intra_slice_unzip("I", s.m("1 # 2"), s.m("T"))
                       .vector_clip_zip(ClipBinaryOpF32::kAdd)
                       .vector_final()
                       .commit(s.m("T, A"), 1 << 16));
      };
      break;
    case Kind::kIndirect:
      scope("S = 256, W = 64, V = 64, K = 32");
      dm("S", "W, V", 0);
      // The index broadcast to every slice: each slice's Fetch Sequencer reads its offsets from its DM.
      p.inputs.push_back(Input{{p.scope->m("1"), p.scope->m("1 # 2"), p.scope->m("256"), p.scope->m("K")},
                               p.scope->m("K"), DType::kI32, 1 << 15});
      p.body = [&s = *p.scope](Context& ctx, const std::vector<DeviceTensor>& in) {
        return One(ctx.main.begin(DmTensor(in[0]).view())
                       .fetch_indirect(DType::kF32, DmTensor(in[1]), "W", s.m("K, V / 8"), s.m("V % 8"))
                       .collect(s.m("K, V / 8"), s.m("V % 8"))
                       .commit(s.m("K, V"), 1 << 16));
      };
      break;
    case Kind::kTiny:
      scope("A = 8");
      p.inputs.push_back(Input{{p.scope->m("1"), p.scope->m("1 # 2"), p.scope->m("1 # 256"), p.scope->m("A")},
                               p.scope->m("A"), DType::kF32, 0});
      p.body = [&s = *p.scope](Context& ctx, const std::vector<DeviceTensor>& in) -> absl::StatusOr<std::vector<DeviceTensor>> {
        std::vector<DeviceTensor> outs;
        for (int i = 0; i < kTinyOps; ++i) {
          absl::StatusOr<DmTensor> out = ctx.main.begin(DmTensor(in[0]).view())
                                             .fetch(DType::kF32, s.m("1"), s.m("A"))
                                             .collect(s.m("1"), s.m("A"))
                                             .vector_init()
                                             .vector_intra_slice_branch(BranchMode::Unconditional())
                                             .vector_split(s.m("A / 4"), s.m("A % 4"))
                                             .vector_fp_binary(FpBinaryOp::AddF(), 1.0f)
                                             .vector_concat(s.m("1"), s.m("A"))
                                             .vector_final()
                                             .commit(s.m("A"), (1 << 16) + 64 * i);
          if (!out.ok()) return out.status();
          outs.push_back(*out);
        }
        return outs;
      };
      break;
  }
  for (size_t i = 0; i < p.inputs.size(); ++i) {
    const Input& input = p.inputs[i];
    HostTensor values = Check(HostTensor::Random(input.dtype, input.host, 7 + static_cast<int>(i)));
    if (input.dtype == DType::kI32) {  // the indirect fetch's rows: valid and spread
      std::vector<double> rows;
      for (int64_t q = 0; q < input.host.size(); ++q) rows.push_back(static_cast<double>((q * 37 + 5) % 64));
      values = Check(HostTensor::FromValues(DType::kI32, input.host, rows));
    }
    p.host.push_back(std::move(values));
  }
  Device scratch(1);
  p.program = Check(Trace(p.body, [&] {
    std::vector<DeviceTensor> placed;
    for (size_t i = 0; i < p.inputs.size(); ++i) {
      const Input& in = p.inputs[i];
      Placement placement = Check(Place(scratch, in.dtype, Tier::kDm, in.levels, Address::At(in.address)));
      placed.push_back(Check(WriteAs(p.host[i], scratch, placement)));
    }
    return placed;
  }()));
  return p;
}

std::vector<DeviceTensor> PlaceInputs(const Pipeline& p, Device& device) {
  std::vector<DeviceTensor> placed;
  for (size_t i = 0; i < p.inputs.size(); ++i) {
    const Input& in = p.inputs[i];
    Placement placement = Check(Place(device, in.dtype, Tier::kDm, in.levels, Address::At(in.address)));
    placed.push_back(Check(WriteAs(p.host[i], device, placement)));
  }
  return placed;
}

// The pipeline on the JIT (threads > 0) or the interpreter (threads = 0), warm or on a fresh device.
void BM_Pipeline(benchmark::State& state, Kind kind, int threads, bool fresh) {
  Pipeline p = MakePipeline(kind);
  interp::Interpreter interpreter;
  std::unique_ptr<jit::JitBackend> jit;
  if (threads > 0) {
    jit = Check(jit::JitBackend::Create({.threads = threads}));
    if (!jit->Prepare(p.program).ok()) std::abort();
  }
  TimingBackend timed(threads > 0 ? static_cast<Backend&>(*jit) : interpreter);
  auto device = std::make_unique<Device>(1);
  std::vector<DeviceTensor> inputs = PlaceInputs(p, *device);
  if (!Launch(p.program, *device, timed, inputs).ok()) std::abort();  // the first run of a warm loop
  double op_seconds = 0;
  for (auto _ : state) {
    if (fresh) {
      state.PauseTiming();
      inputs.clear();
      device = std::make_unique<Device>(1);
      inputs = PlaceInputs(p, *device);
      state.ResumeTiming();
    }
    timed.Clear();
    absl::StatusOr<std::vector<DeviceTensor>> out = Launch(p.program, *device, timed, inputs);
    if (!out.ok()) {
      state.SkipWithError(std::string(out.status().message()).c_str());
      break;
    }
    for (const TimingBackend::OpTime& t : timed.times()) {
      if (t.kind.rfind("pipeline", 0) == 0) op_seconds += t.seconds;
    }
  }
  state.counters["op_us"] = benchmark::Counter(op_seconds * 1e6 / std::max<int64_t>(state.iterations(), 1));
  if (kind == Kind::kTiny) {
    state.counters["per_op_us"] = benchmark::Counter(op_seconds * 1e6 / std::max<int64_t>(state.iterations(), 1) / kTinyOps);
  }
}

// The same math over the same bytes as a plain loop (inputs and output in host arrays).
void BM_HostLoop(benchmark::State& state, Kind kind) {
  Pipeline p = MakePipeline(kind);
  std::vector<std::vector<float>> in;
  for (const HostTensor& h : p.host) {
    std::vector<float> v(static_cast<size_t>(h.size()));
    std::memcpy(v.data(), h.bytes().data(), 4 * v.size());
    in.push_back(std::move(v));
  }
  // Room for the largest output: four times the input (inter-slice reduce), 16 x 8 lanes (tiny).
  std::vector<float> out(std::max<size_t>(in[0].size() * 4, 8 * kTinyOps));
  const float* x = in[0].data();
  float* y = out.data();
  for (auto _ : state) {
    switch (kind) {
      case Kind::kElementwise:
        for (size_t i = 0; i < in[0].size(); ++i) y[i] = x[i] * 2.0f;
        break;
      case Kind::kIntraReduce:
        for (int s = 0; s < 256; ++s) {
          float acc = 0;
          for (int n = 0; n < 256; ++n) acc += x[s * 256 + n];
          y[s] = acc;
        }
        break;
      case Kind::kInterReduce:  // [W, R, T, P] -> [W, X, T, P]
        for (int w = 0; w < 64; ++w) {
          for (int e = 0; e < 256; ++e) {
            const float sum = ((x[(w * 4) * 256 + e] + x[(w * 4 + 1) * 256 + e]) + x[(w * 4 + 2) * 256 + e]) +
                              x[(w * 4 + 3) * 256 + e];
            for (int r = 0; r < 4; ++r) y[(w * 4 + r) * 256 + e] = sum;
          }
        }
        break;
      case Kind::kBranch:
        for (size_t i = 0; i < in[0].size(); ++i) y[i] = x[i] > 0.0f ? std::min(x[i], 0.5f) : 0.0f;
        break;
      case Kind::kTwoGroup: {
        const float* x1 = in[1].data();
        for (size_t i = 0; i < in[0].size(); ++i) y[i] = x[i] + x1[i];
        break;
      }
      case Kind::kIndirect: {
        const int32_t* rows = reinterpret_cast<const int32_t*>(in[1].data());
        for (int s = 0; s < 256; ++s) {
          for (int k = 0; k < 32; ++k) {
            std::memcpy(y + (s * 32 + k) * 64, x + s * 64 * 64 + rows[k] * 64, 64 * sizeof(float));
          }
        }
        break;
      }
      case Kind::kTiny:
        for (int i = 0; i < kTinyOps; ++i) {
          for (int a = 0; a < 8; ++a) y[8 * i + a] = x[a] + 1.0f;
        }
        break;
    }
    benchmark::DoNotOptimize(out.data());
    benchmark::ClobberMemory();
  }
}

void RegisterAll() {
  for (Kind kind : {Kind::kElementwise, Kind::kIntraReduce, Kind::kInterReduce, Kind::kBranch, Kind::kTwoGroup,
                    Kind::kIndirect, Kind::kTiny}) {
    const std::string name = std::string("BM_VectorPipeline/") + KindName(kind);
    for (int threads : {1, 2}) {
      for (bool fresh : {false, true}) {
        benchmark::RegisterBenchmark((name + "/jit/threads:" + std::to_string(threads) + (fresh ? "/fresh" : "/warm")).c_str(),
                                     BM_Pipeline, kind, threads, fresh)
            ->Unit(benchmark::kMicrosecond);
      }
    }
    benchmark::RegisterBenchmark((name + "/interp/warm").c_str(), BM_Pipeline, kind, 0, false)
        ->Unit(benchmark::kMicrosecond)->Iterations(3);
    benchmark::RegisterBenchmark((name + "/host_loop").c_str(), BM_HostLoop, kind)->Unit(benchmark::kMicrosecond);
  }
}

const bool registered = (mallopt(M_MMAP_THRESHOLD, 1 << 30), mallopt(M_TRIM_THRESHOLD, 1 << 30), RegisterAll(), true);

}  // namespace
}  // namespace visa
