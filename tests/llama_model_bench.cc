// The model figures of issue 28, measured in one run: the time of one Llama 3 70B layer's decode
// step on the JIT against an Eigen f32 host reference on the same weights (this file is built
// -O3 -march=native; 1 and 2 threads), the device's cycles for the layer with each engine's share
// (the cycle model, visa schedule), peak memory against the weights' bytes; and the tiny model's
// time per decode token on the interpreter and the JIT against its host reference.
// VISA_LLAMA70B_REDUCED=1 runs the 70B benchmarks at the reduced configuration (a quick look).
#include <sys/resource.h>

#include <chrono>
#include <cmath>
#include <cstdlib>
#include <map>

#include <Eigen/Dense>
#include <benchmark/benchmark.h>

#include "absl/strings/match.h"
#include "interp/interpreter.h"
#include "jit/jit_backend.h"
#include "runtime/scheduler.h"
#include "samples/models/llama70b_layer.h"
#include "samples/models/llama_check.h"
#include "samples/models/llama_program.h"
#include "samples/models/llama_reference.h"

namespace visa::models {
namespace {

using RowMatrix = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

Llama70bConfig BenchConfig() {
  const char* reduced = std::getenv("VISA_LLAMA70B_REDUCED");
  return reduced != nullptr && std::string(reduced) == "1" ? ReducedLlama70b() : Llama70bConfig{};
}

const Llama70bWeights& Weights70b() {
  static const Llama70bWeights* w = new Llama70bWeights(MakeLlama70bWeights(BenchConfig()));
  return *w;
}

double PeakRssBytes() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<double>(usage.ru_maxrss) * 1024.0;
}

RowMatrix ToFloat(const std::vector<uint16_t>& bits, int64_t rows, int64_t cols) {
  RowMatrix m(rows, cols);
  float* out = m.data();
  for (size_t i = 0; i < bits.size(); ++i) out[i] = Bf16ToFloat(bits[i]);
  return m;
}

// The layer's weights as Eigen f32 matrices (made once; their bytes count in the peak RSS).
struct EigenLayer {
  RowMatrix wq, wk, wv, wo, gate, up, down, rope, k_cache, v_cache;
  Eigen::VectorXf attn_norm, ffn_norm, x;
};
const EigenLayer& Eigen70b() {
  static const EigenLayer* e = [] {
    const Llama70bConfig c = BenchConfig();
    const Llama70bWeights& w = Weights70b();
    auto* l = new EigenLayer;
    l->wq = ToFloat(w.wq, c.q_cols(), c.hidden);
    l->wk = ToFloat(w.wk, c.kv_cols(), c.hidden);
    l->wv = ToFloat(w.wv, c.kv_cols(), c.hidden);
    l->wo = ToFloat(w.wo, c.hidden, c.q_cols());
    l->gate = ToFloat(w.gate, c.ffn, c.hidden);
    l->up = ToFloat(w.up, c.ffn, c.hidden);
    l->down = ToFloat(w.down, c.hidden, c.ffn);
    l->rope = ToFloat(w.rope, c.max_positions * c.head_dim, c.head_dim);
    l->k_cache = ToFloat(w.k_cache, c.kv_heads * c.max_positions, c.head_dim);
    l->v_cache = ToFloat(w.v_cache, c.kv_heads * c.max_positions, c.head_dim);
    l->attn_norm = ToFloat(w.attn_norm, c.hidden, 1);
    l->ffn_norm = ToFloat(w.ffn_norm, c.hidden, 1);
    l->x = Eigen::Map<const Eigen::VectorXf>(w.x.data(), c.hidden);
    return l;
  }();
  return *e;
}

Eigen::VectorXf Rms(const Eigen::VectorXf& x, const Eigen::VectorXf& w, float eps) {
  const float inverse = 1.0f / std::sqrt((x.squaredNorm() + eps * static_cast<float>(x.size())) / static_cast<float>(x.size()));
  return (x * inverse).cwiseProduct(w);
}

// The decode step in Eigen f32 (the cache rows of this step written into copies of the caches'
// head blocks as the device's scatter writes them).
Eigen::VectorXf EigenDecode(const Llama70bConfig& c, const EigenLayer& l, RowMatrix& k_cache, RowMatrix& v_cache) {
  const int64_t E = c.head_dim, G = c.groups, T = c.max_positions, p = c.position;
  const Eigen::VectorXf xn = Rms(l.x, l.attn_norm, c.eps);
  const Eigen::VectorXf q = l.wq * xn, k = l.wk * xn, v = l.wv * xn;
  const auto rot = l.rope.middleRows(p * E, E);
  Eigen::VectorXf attn(c.q_cols());
  const float scale = 1.0f / std::sqrt(static_cast<float>(E));
  for (int64_t h = 0; h < c.kv_heads; ++h) {
    k_cache.row(h * T + p) = (rot * k.segment(h * E, E)).transpose();
    v_cache.row(h * T + p) = v.segment(h * E, E).transpose();
    const auto keys = k_cache.middleRows(h * T, p + 1);
    const auto values = v_cache.middleRows(h * T, p + 1);
    for (int64_t g = 0; g < G; ++g) {
      const Eigen::VectorXf qr = rot * q.segment((h * G + g) * E, E);
      Eigen::VectorXf s = (keys * qr) * scale;
      s = (s.array() - s.maxCoeff()).exp();
      s /= s.sum();
      attn.segment((h * G + g) * E, E) = values.transpose() * s;
    }
  }
  const Eigen::VectorXf x_attn = l.x + l.wo * attn;
  const Eigen::VectorXf xf = Rms(x_attn, l.ffn_norm, c.eps);
  const Eigen::VectorXf gate = l.gate * xf, up = l.up * xf;
  const Eigen::VectorXf act = (gate.array() / (1.0f + (-gate.array()).exp()) * up.array()).matrix();
  return x_attn + l.down * act;
}

void BM_Llama70bLayerDecodeEigen(benchmark::State& state) {
  const Llama70bConfig c = BenchConfig();
  const EigenLayer& l = Eigen70b();
  Eigen::setNbThreads(static_cast<int>(state.range(0)));
  RowMatrix k_cache = l.k_cache, v_cache = l.v_cache;
  Eigen::VectorXf out;
  for (auto _ : state) {
    out = EigenDecode(c, l, k_cache, v_cache);
    benchmark::DoNotOptimize(out.data());
  }
  // The same step as the device's: within the rounding bound of the double-sum reference.
  const Llama70bReference want = ReferenceDecode(c, Weights70b());
  double worst = 0;
  for (size_t i = 0; i < want.out.size(); ++i) {
    worst = std::max(worst, std::fabs(static_cast<double>(out[static_cast<Eigen::Index>(i)]) - want.out[i]) / want.bound[i]);
  }
  state.counters["error_over_bound"] = worst;
  state.counters["weights_GB"] = static_cast<double>(Weights70b().weight_bytes()) / 1e9;
  state.counters["peak_rss_GB"] = PeakRssBytes() / 1e9;
}

// One launch of the traced decode step on the JIT (manual time: the launch only; upload and
// trace reported as counters), the device's cycles and each engine's share from the cycle model.
void BM_Llama70bLayerDecodeJit(benchmark::State& state) {
  const Llama70bConfig c = BenchConfig();
  const Llama70bWeights& w = Weights70b();
  std::unique_ptr<jit::JitBackend> jit = *jit::JitBackend::Create({.threads = static_cast<int>(state.range(0))});
  Llama70bRun run;
  for (auto _ : state) {
    absl::StatusOr<Llama70bRun> r = RunLlama70bDecode(c, w, *jit);
    if (!r.ok()) {
      state.SkipWithError(std::string(r.status().message()).c_str());
      return;
    }
    run = *std::move(r);
    state.SetIterationTime(run.launch_seconds);
  }
  const Llama70bReference want = ReferenceDecode(c, w);
  double worst = 0;
  for (size_t i = 0; i < want.out.size(); ++i) {
    worst = std::max(worst, std::fabs(static_cast<double>(run.out[i]) - want.out[i]) / want.bound[i]);
  }
  state.counters["error_over_bound"] = worst;
  state.counters["upload_s"] = run.upload_seconds;
  state.counters["trace_s"] = run.trace_seconds;
  state.counters["weights_GB"] = static_cast<double>(w.weight_bytes()) / 1e9;
  state.counters["peak_rss_GB"] = PeakRssBytes() / 1e9;
  const Schedule schedule = MakeSchedule(run.program);
  std::map<std::string, double> busy;
  for (const ScheduledOp& op : schedule.ops) {
    std::string engine = op.resource == Resource::kDma   ? "dma"
                         : op.resource == Resource::kSub ? "sub_loads"
                         : absl::StrContains(op.label, "contract")  ? "contraction"
                         : absl::StrContains(op.label, "transpose") ? "transpose"
                                                                    : "vector";
    busy[engine] += static_cast<double>(op.cycles());
  }
  state.counters["device_cycles"] = static_cast<double>(schedule.makespan);
  for (const auto& [engine, cycles] : busy) state.counters[engine + "_share"] = cycles / static_cast<double>(schedule.makespan);
}

// The tiny model (2 layers, D = 256): the steady time per decode token (launches after the first)
// on the backend; the host reference's in the same benchmark.
void TinyDecode(benchmark::State& state, Backend& backend) {
  const LlamaConfig c;
  static const LlamaWeights* w = new LlamaWeights(MakeWeights(c));
  const std::vector<int32_t> prompt = MakePrompt(c, kPromptSeed);
  const int64_t steps = 4;
  for (auto _ : state) {
    absl::StatusOr<Generation> g = Generate(c, *w, backend, prompt, steps);
    if (!g.ok()) {
      state.SkipWithError(std::string(g.status().message()).c_str());
      return;
    }
    double later = 0;
    for (size_t i = 1; i < g->decode_seconds.size(); ++i) later += g->decode_seconds[i];
    state.SetIterationTime(later / static_cast<double>(steps - 1));
  }
  LlamaReference reference(c, *w);
  reference.Forward(prompt, 0);
  const auto start = std::chrono::steady_clock::now();
  reference.Forward({1}, c.prompt);
  state.counters["reference_ms_per_token"] =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() * 1e3;
}

void BM_LlamaTinyDecodeInterp(benchmark::State& state) {
  interp::Interpreter interpreter;
  TinyDecode(state, interpreter);
}

void BM_LlamaTinyDecodeJit(benchmark::State& state) {
  std::unique_ptr<jit::JitBackend> jit = *jit::JitBackend::Create({.threads = 0});
  TinyDecode(state, *jit);
}

BENCHMARK(BM_LlamaTinyDecodeInterp)->UseManualTime()->Iterations(1)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_LlamaTinyDecodeJit)->UseManualTime()->Iterations(1)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Llama70bLayerDecodeEigen)->Arg(1)->Arg(2)->Iterations(3)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Llama70bLayerDecodeJit)->Arg(0)->UseManualTime()->Iterations(1)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace visa::models
