// Host -> HBM -> DM -> HBM -> host round trips through the DMA moves, against memcpy of the same
// bytes measured in the same run.
#include <cstring>
#include <memory>
#include <vector>

#include "absl/strings/str_cat.h"
#include "benchmark/benchmark.h"
#include "dsl/axes.h"
#include "dsl/mapping_parser.h"
#include "runtime/device.h"
#include "runtime/dma.h"
#include "runtime/host_tensor.h"
#include "runtime/tensor.h"

namespace visa {
namespace {

// A round trip of `bytes` bytes of bf16. Contiguous: DM keeps the host order split over 2 clusters
// x 256 slices. Transposed: the host is [R, C] and every hop swaps the two axes' order.
void RoundTrip(benchmark::State& state, bool transposed) {
  const int64_t bytes = state.range(0);
  const int64_t n = bytes / 2;
  const int64_t per_slice = n / 512;
  MappingScope s(*Axes::Parse(absl::StrCat("A = ", n, ", R = ", n / 256, ", C = 256")));
  Mapping host_map = transposed ? s.m("R, C") : s.m("A");
  Mapping hbm_map = transposed ? s.m("C, R") : s.m("A");
  Mapping cluster = transposed ? s.m("R / " + std::to_string(n / 512)) : s.m("A / " + std::to_string(n / 2));
  Mapping slice = transposed ? s.m("R / " + std::to_string(per_slice / 256) + " % 256")
                             : s.m("A / " + std::to_string(per_slice) + " % 256");
  Mapping element = transposed ? s.m("C, R % " + std::to_string(per_slice / 256))
                               : s.m("A % " + std::to_string(per_slice));
  Device device(1);
  Dma tdma = Dma::Tensor(device), pdma = Dma::Pcie(device);
  auto host = HostTensor::Random(DType::kBF16, host_map, 1);
  if (!host.ok()) {
    state.SkipWithError(std::string(host.status().message()).c_str());
    return;
  }
  for (auto _ : state) {
    auto hbm = host->to_hbm(pdma, 0, s.m("1"), hbm_map);
    auto dm = hbm->to_dm(tdma, 0, cluster, slice, element);
    auto back = dm->to_hbm(tdma, 1 << 30, host_map);
    auto out = back->to_host(pdma, host_map);
    if (!out.ok()) {
      state.SkipWithError(std::string(out.status().message()).c_str());
      return;
    }
    benchmark::DoNotOptimize(out->bytes().data());
    hbm->Release();
    dm->Release();
    back->Release();
  }
  state.SetBytesProcessed(state.iterations() * bytes);
  state.SetLabel("4 moves per round trip");
}

void BM_RoundTripContiguous(benchmark::State& state) { RoundTrip(state, false); }
void BM_RoundTripTransposed(benchmark::State& state) { RoundTrip(state, true); }

// The reference: one memcpy of the same number of bytes.
void BM_Memcpy(benchmark::State& state) {
  const int64_t bytes = state.range(0);
  std::vector<uint8_t> from(bytes, 1), to(bytes);
  for (auto _ : state) {
    std::memcpy(to.data(), from.data(), bytes);
    benchmark::DoNotOptimize(to.data());
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(state.iterations() * bytes);
}

BENCHMARK(BM_Memcpy)->Arg(256 << 10)->Arg(4 << 20)->Arg(16 << 20);
BENCHMARK(BM_RoundTripContiguous)->Arg(256 << 10)->Arg(4 << 20)->Arg(16 << 20)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_RoundTripTransposed)->Arg(256 << 10)->Arg(4 << 20)->Arg(16 << 20)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace visa
