// Data-movement ops on the JIT, one op per program, each against memcpy of the bytes it writes
// measured in the same run: the GEMM sample's three moves (an HBM to DM DMA broadcast over
// slices, a transposing HBM to DM DMA of 2-byte packets, the DM to TRF load), warm (Launch again
// on one device, what a decode loop does) and on a fresh device (a new device every run, what
// `visa run` does; memcpy then writes freshly mapped pages too).
#include <benchmark/benchmark.h>

#include <sys/mman.h>

#include <chrono>
#include <cstring>
#include <functional>
#include <memory>
#include <vector>

#include "absl/strings/str_cat.h"
#include "dsl/axes.h"
#include "dsl/mapping_parser.h"
#include "dsl/status_macros.h"
#include "jit/jit_backend.h"
#include "runtime/launch.h"
#include "runtime/tensor_unit.h"
#include "runtime/transfer.h"

namespace visa {
namespace {

using Clock = std::chrono::steady_clock;

// The GEMM sample's shapes: A [I, K], B [K, J] bf16 in HBM; 256 slices of a 32 x 32 output tile.
constexpr int64_t kK = 1024;

// kRowsToSlices: the GEMV sample's first move, a [256, 2048] bf16 matrix row by row into 256
// slices' DM (1 MiB, one 4 KiB row per slice).
enum class MoveKind { kBroadcast, kTranspose, kToTrf, kRowsToSlices };

const MappingScope& Scope() {
  static const MappingScope* scope = new MappingScope(*Axes::Parse(absl::StrCat("I = 512, J = 512, K = ", kK)));
  return *scope;
}

// The op's inputs on `device`: A and B in HBM as the sample places them, and for the TRF load B
// already in DM.
std::vector<DeviceTensor> Inputs(Device& device, Backend& backend, MoveKind kind) {
  const MappingScope& s = Scope();
  Context ctx(device, backend);
  HostTensor a = *HostTensor::Random(DType::kBF16, s.m("I, K"), 42);
  HostTensor b = *HostTensor::Random(DType::kBF16, s.m("K, J"), 43);
  HbmTensor a_hbm = *a.to_hbm(ctx.pdma, 0, s.m("1"), s.m("I, K"));
  HbmTensor b_hbm = *b.to_hbm(ctx.pdma, 1 << 28, s.m("1"), s.m("K, J"));
  if (kind != MoveKind::kToTrf) return {a_hbm, b_hbm};
  DmTensor b_dm = *b_hbm.to_dm(ctx.tdma, 32 * kK * 2, s.m("1 # 2"), s.m("I / 32, J / 32"), s.m("J % 32, K"));
  return {b_dm};
}

KernelOf KernelFor(MoveKind kind) {
  return [kind](Context& ctx, const std::vector<DeviceTensor>& in) -> absl::StatusOr<std::vector<DeviceTensor>> {
    const MappingScope& s = Scope();
    const Mapping cluster = s.m("1 # 2"), slice = s.m("I / 32, J / 32");
    switch (kind) {
      case MoveKind::kBroadcast: {
        ASSIGN_OR_RETURN(DmTensor a, HbmTensor(in[0]).to_dm(ctx.tdma, 0, cluster, slice, s.m("I % 32, K")));
        return std::vector<DeviceTensor>{a};
      }
      case MoveKind::kTranspose: {
        ASSIGN_OR_RETURN(DmTensor b, HbmTensor(in[1]).to_dm(ctx.tdma, 32 * kK * 2, cluster, slice, s.m("J % 32, K")));
        return std::vector<DeviceTensor>{b};
      }
      case MoveKind::kRowsToSlices: {
        ASSIGN_OR_RETURN(DmTensor rows, HbmTensor(in[0]).to_dm(ctx.tdma, 0, cluster, s.m("I / 2"), s.m("I % 2, K")));
        return std::vector<DeviceTensor>{rows};
      }
      case MoveKind::kToTrf: {
        ASSIGN_OR_RETURN(TrfTensor trf, ctx.sub.begin(DmTensor(in[0]).view())
                                            .fetch(DType::kBF16, s.m("J % 8, J / 8 % 4"), s.m("K"))
                                            .collect(s.m("J % 8, J / 8 % 4, K / 16"), s.m("K % 16"))
                                            .to_trf(s.m("J % 8"), s.m("J / 8 % 4, K"), TrfAddress::kFull));
        return std::vector<DeviceTensor>{trf};
      }
    }
    return absl::InternalError("unknown move kind");
  };
}

// Bytes the op writes: its output's live units times their Element's bytes.
int64_t WrittenBytes(const DeviceTensor& out) {
  const Placement& p = out.placement();
  return static_cast<int64_t>(p.live_prefixes.size()) * StorageBytes(p.dtype, p.levels.back().size());
}

std::unique_ptr<Device> NewDevice() {
  auto device = std::make_unique<Device>(1);
  device->set_dma_packet_rule(false);  // the sample's 2-byte packets (its relaxes_dma_packet_rule)
  return device;
}

// The op on the JIT: warm (one device, relaunched) or fresh (a new device each iteration, the
// device's creation and inputs not timed).
void BM_Move(benchmark::State& state, MoveKind kind, bool fresh) {
  auto jit = *jit::JitBackend::Create({.threads = static_cast<int>(state.range(0))});
  std::unique_ptr<Device> device = NewDevice();
  std::vector<DeviceTensor> inputs = Inputs(*device, *jit, kind);
  absl::StatusOr<Program> program = Trace(KernelFor(kind), inputs);
  if (!program.ok() || !jit->Prepare(*program).ok()) {
    state.SkipWithError("the op does not trace or prepare");
    return;
  }
  int64_t bytes = 0;
  for (auto _ : state) {
    if (fresh) {
      state.PauseTiming();
      inputs.clear();
      device = NewDevice();
      inputs = Inputs(*device, *jit, kind);
      state.ResumeTiming();
    }
    absl::StatusOr<std::vector<DeviceTensor>> out = Launch(*program, *device, *jit, inputs);
    if (!out.ok()) {
      state.SkipWithError(std::string(out.status().message()).c_str());
      return;
    }
    bytes = WrittenBytes(out->front());
  }
  state.SetBytesProcessed(state.iterations() * bytes);
  state.counters["MiB"] = static_cast<double>(bytes) / (1 << 20);
}

// memcpy of `bytes` bytes: warm (the same two buffers every time) or fresh (into a newly mapped
// destination, whose pages fault in as a fresh device's do).
void BM_Memcpy(benchmark::State& state, bool fresh) {
  const size_t bytes = static_cast<size_t>(state.range(0));
  std::vector<uint8_t> from(bytes, 1), warm(bytes, 0);
  for (auto _ : state) {
    uint8_t* to = warm.data();
    if (fresh) {
      state.PauseTiming();
      to = static_cast<uint8_t*>(mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
      state.ResumeTiming();
    }
    std::memcpy(to, from.data(), bytes);
    benchmark::DoNotOptimize(to);
    benchmark::ClobberMemory();
    if (fresh) {
      state.PauseTiming();
      munmap(to, bytes);
      state.ResumeTiming();
    }
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * bytes));
}

// The three GEMM moves each write 16 MiB (A and B broadcast to 256 slices; the TRF rows).
BENCHMARK_CAPTURE(BM_Memcpy, warm, false)->Arg(1 << 20)->Arg(16 << 20)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_Memcpy, fresh, true)->Arg(1 << 20)->Arg(16 << 20)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_Move, broadcast_warm, MoveKind::kBroadcast, false)->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_Move, broadcast_fresh, MoveKind::kBroadcast, true)->Arg(1)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_Move, transpose_warm, MoveKind::kTranspose, false)->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_Move, transpose_fresh, MoveKind::kTranspose, true)->Arg(1)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_Move, rows_to_slices_warm, MoveKind::kRowsToSlices, false)->Arg(1)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_Move, to_trf_warm, MoveKind::kToTrf, false)->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_Move, to_trf_fresh, MoveKind::kToTrf, true)->Arg(1)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace visa
