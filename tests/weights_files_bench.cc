// Loading weights from a `.safetensors` file: one tensor of 32 MiB (bf16 [4096, 4096]) from the
// mapped file into a host tensor, into HBM in the file's order and transposed, and an F32 -> bf16
// conversion on load, each against memcpy of the same bytes measured in the same run.
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "benchmark/benchmark.h"
#include "dsl/mapping_parser.h"
#include "runtime/device.h"
#include "runtime/dma.h"
#include "runtime/host_tensor.h"
#include "runtime/safetensors.h"

namespace visa {
namespace {

constexpr int64_t kRows = 4096, kCols = 4096;

const MappingScope& Scope() {
  static const MappingScope s = *MappingScope::Parse("R = 4096, C = 4096");
  return s;
}

// Written once per process to the temp directory: `w` bf16 and `w32` f32, both [R, C].
const std::string& WeightsPath() {
  static const std::string path = [] {
    std::string p = "/tmp/visa_weights_bench.safetensors";
    SafetensorsWriter writer;
    (void)writer.Add("w", *HostTensor::Random(DType::kBF16, Scope().m("R, C"), 1), Scope().m("R, C"));
    (void)writer.Add("w32", *HostTensor::Random(DType::kF32, Scope().m("R, C"), 2), Scope().m("R, C"));
    (void)writer.Write(p);
    return p;
  }();
  return path;
}

void BM_Memcpy(benchmark::State& state) {
  std::vector<uint8_t> src(kRows * kCols * 2, 1), dst(src.size());
  for (auto _ : state) {
    std::memcpy(dst.data(), src.data(), src.size());
    benchmark::DoNotOptimize(dst.data());
  }
  state.SetBytesProcessed(state.iterations() * static_cast<int64_t>(src.size()));
}

void BM_SafetensorsToHost(benchmark::State& state) {
  SafetensorsFile file = *SafetensorsFile::Open(WeightsPath());
  for (auto _ : state) {
    absl::StatusOr<HostTensor> t = file.ToHost("w", Scope().m("R, C"));
    if (!t.ok()) return state.SkipWithError(std::string(t.status().message()).c_str());
    benchmark::DoNotOptimize(t->bytes().data());
  }
  state.SetBytesProcessed(state.iterations() * kRows * kCols * 2);
}

void ToHbm(benchmark::State& state, const char* element) {
  SafetensorsFile file = *SafetensorsFile::Open(WeightsPath());
  Device device(1);
  Dma pdma = Dma::Pcie(device);
  for (auto _ : state) {
    absl::StatusOr<HbmTensor> t = file.ToHbm(pdma, "w", Scope().m("R, C"), 0, {.element = Scope().m(element)});
    if (!t.ok()) return state.SkipWithError(std::string(t.status().message()).c_str());
    t->Release();
  }
  state.SetBytesProcessed(state.iterations() * kRows * kCols * 2);
}

void BM_SafetensorsToHbm(benchmark::State& state) { ToHbm(state, "R, C"); }
void BM_SafetensorsToHbmTransposed(benchmark::State& state) { ToHbm(state, "C, R"); }

void BM_SafetensorsToHostF32AsBf16(benchmark::State& state) {
  SafetensorsFile file = *SafetensorsFile::Open(WeightsPath());
  for (auto _ : state) {
    absl::StatusOr<HostTensor> t = file.ToHost("w32", Scope().m("R, C"), {.dtype = DType::kBF16});
    if (!t.ok()) return state.SkipWithError(std::string(t.status().message()).c_str());
    benchmark::DoNotOptimize(t->bytes().data());
  }
  state.SetBytesProcessed(state.iterations() * kRows * kCols * 4);  // bytes read from the file
}

BENCHMARK(BM_Memcpy)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_SafetensorsToHost)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_SafetensorsToHbm)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_SafetensorsToHbmTransposed)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_SafetensorsToHostF32AsBf16)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace visa
