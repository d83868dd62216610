// Host <-> HBM transfers of one bf16 matrix, 1 MiB ([512, 1024]) and 32 MiB ([4096, 4096]), in
// the host's order and transposed, each against memcpy of the same bytes in the same run (the
// reference: a transfer in the same order should cost at most ~1.5x memcpy), and reads back
// against memcpy into a new buffer (what returning a new image costs at least).
#include <cstring>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "benchmark/benchmark.h"
#include "dsl/axes.h"
#include "dsl/mapping_parser.h"
#include "runtime/device.h"
#include "runtime/dma.h"
#include "runtime/host_tensor.h"

namespace visa {
namespace {

// rows x 1024 columns at 1 MiB, 4096 x 4096 at 32 MiB.
MappingScope ScopeFor(int64_t mib) {
  const int64_t cols = mib == 1 ? 1024 : 4096;
  const int64_t rows = mib * 1024 * 1024 / 2 / cols;
  return MappingScope(*Axes::Parse(absl::StrCat("R = ", rows, ", C = ", cols)));
}

void BM_Memcpy(benchmark::State& state) {
  const size_t bytes = static_cast<size_t>(state.range(0)) << 20;
  std::vector<uint8_t> src(bytes, 1), dst(bytes);
  for (auto _ : state) {
    std::memcpy(dst.data(), src.data(), bytes);
    benchmark::DoNotOptimize(dst.data());
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(state.iterations() * static_cast<int64_t>(bytes));
}

// The reference for reads back to the host, which return a new image: memcpy into a buffer
// allocated for it (its pages are faulted in and zeroed by the kernel on every call).
void BM_MemcpyIntoNewBuffer(benchmark::State& state) {
  const size_t bytes = static_cast<size_t>(state.range(0)) << 20;
  std::vector<uint8_t> src(bytes, 1);
  for (auto _ : state) {
    std::vector<uint8_t> dst(bytes);
    std::memcpy(dst.data(), src.data(), bytes);
    benchmark::DoNotOptimize(dst.data());
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(state.iterations() * static_cast<int64_t>(bytes));
}

void ToHbm(benchmark::State& state, const char* element) {
  const MappingScope s = ScopeFor(state.range(0));
  const HostTensor host = *HostTensor::Random(DType::kBF16, s.m("R, C"), 1);
  Device device(1);
  Dma pdma = Dma::Pcie(device);
  for (auto _ : state) {
    absl::StatusOr<HbmTensor> t = host.to_hbm(pdma, 0, s.m("1"), s.m(element));
    if (!t.ok()) return state.SkipWithError(std::string(t.status().message()).c_str());
    t->Release();
  }
  state.SetBytesProcessed(state.iterations() * static_cast<int64_t>(host.bytes().size()));
}

void ToHost(benchmark::State& state, const char* element) {
  const MappingScope s = ScopeFor(state.range(0));
  const HostTensor host = *HostTensor::Random(DType::kBF16, s.m("R, C"), 1);
  Device device(1);
  Dma pdma = Dma::Pcie(device);
  const HbmTensor hbm = *host.to_hbm(pdma, 0, s.m("1"), s.m(element));
  for (auto _ : state) {
    absl::StatusOr<HostTensor> back = hbm.to_host(pdma, s.m("R, C"));
    if (!back.ok()) return state.SkipWithError(std::string(back.status().message()).c_str());
    benchmark::DoNotOptimize(back->bytes().data());
  }
  state.SetBytesProcessed(state.iterations() * static_cast<int64_t>(host.bytes().size()));
}

void BM_HostToHbm(benchmark::State& state) { ToHbm(state, "R, C"); }
void BM_HostToHbmTransposed(benchmark::State& state) { ToHbm(state, "C, R"); }
void BM_HbmToHost(benchmark::State& state) { ToHost(state, "R, C"); }
void BM_HbmToHostTransposed(benchmark::State& state) { ToHost(state, "C, R"); }

BENCHMARK(BM_Memcpy)->Arg(1)->Arg(32)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_MemcpyIntoNewBuffer)->Arg(1)->Arg(32)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_HostToHbm)->Arg(1)->Arg(32)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_HostToHbmTransposed)->Arg(1)->Arg(32)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_HbmToHost)->Arg(1)->Arg(32)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_HbmToHostTransposed)->Arg(1)->Arg(32)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace visa
