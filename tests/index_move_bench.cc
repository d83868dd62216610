// MoveByIndex (compiled) against MoveByIndexReference on large moves: a fetch-like relayout
// [A / 16, B, A % 16] -> [B, A] and a broadcast [A] -> [B, A]. Each benchmark reports elements/s;
// the *_Speedup benchmarks time one reference and one compiled move per iteration and report their
// ratio as the `speedup` counter. Times are wall-clock (the compiled move runs on several threads).
#include <chrono>
#include <string>

#include "absl/strings/str_cat.h"
#include "benchmark/benchmark.h"
#include "dsl/axes.h"
#include "dsl/mapping_parser.h"
#include "runtime/host_tensor.h"
// Benchmarks link only visa_runtime (tests/CMakeLists.txt); the move depends on nothing more, so
// its implementation is compiled in here rather than linking the interpreter library.
#include "interp/index_move.cc"

namespace visa::interp {
namespace {

struct Move {
  HostTensor src;
  Mapping dst;
};

Mapping Parse(const std::string& text, const Axes& axes) { return *ParseMapping(text, axes); }

// [A / 16, B, A % 16] -> [B, A] with A * B = 4M positions (i8).
Move Relayout() {
  Axes axes = *Axes::Parse("A = 4096, B = 1024");
  return {*HostTensor::Iota(DType::kI8, Parse("A / 16, B, A % 16", axes)), Parse("B, A", axes)};
}

// [A] -> [B, A]: every element read B times (bf16, 4M positions).
Move Broadcast() {
  Axes axes = *Axes::Parse("A = 16384, B = 256");
  return {*HostTensor::Iota(DType::kBF16, Parse("A", axes)), Parse("B, A", axes)};
}

void Run(benchmark::State& state, const Move& move, bool compiled) {
  for (auto _ : state) {
    auto out = compiled ? MoveByIndex(move.src, move.dst) : MoveByIndexReference(move.src, move.dst);
    if (!out.ok()) state.SkipWithError(std::string(out.status().message()).c_str());
    benchmark::DoNotOptimize(out);
  }
  state.SetItemsProcessed(state.iterations() * move.dst.size());
}

double Seconds(const Move& move, bool compiled) {
  const auto start = std::chrono::steady_clock::now();
  auto out = compiled ? MoveByIndex(move.src, move.dst) : MoveByIndexReference(move.src, move.dst);
  benchmark::DoNotOptimize(out);
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

void Speedup(benchmark::State& state, const Move& move) {
  double reference = 0, compiled = 0;
  for (auto _ : state) {
    reference += Seconds(move, false);
    compiled += Seconds(move, true);
  }
  state.counters["speedup"] = reference / compiled;
  state.counters["reference_s"] = reference / static_cast<double>(state.iterations());
  state.counters["compiled_s"] = compiled / static_cast<double>(state.iterations());
}

void BM_Relayout_Reference(benchmark::State& state) { Run(state, Relayout(), false); }
void BM_Relayout_Compiled(benchmark::State& state) { Run(state, Relayout(), true); }
void BM_Relayout_Speedup(benchmark::State& state) { Speedup(state, Relayout()); }
void BM_Broadcast_Reference(benchmark::State& state) { Run(state, Broadcast(), false); }
void BM_Broadcast_Compiled(benchmark::State& state) { Run(state, Broadcast(), true); }
void BM_Broadcast_Speedup(benchmark::State& state) { Speedup(state, Broadcast()); }

// The reference takes seconds per move: one iteration is enough to measure it.
BENCHMARK(BM_Relayout_Reference)->Iterations(1)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_Relayout_Compiled)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_Relayout_Speedup)->Iterations(1)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_Broadcast_Reference)->Iterations(1)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_Broadcast_Compiled)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_Broadcast_Speedup)->Iterations(1)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace
}  // namespace visa::interp
