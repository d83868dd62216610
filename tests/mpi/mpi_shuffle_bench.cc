// Chip shuffle exchange bandwidth under mpirun (docs/multi_process.md): ChipShuffle(1, 2, 3, 0) of
// an HBM tensor of `MiB` MiB per chip on a 4-chip device, over MpiBackend on the JIT (or the
// interpreter), and MPI's own point-to-point bandwidth for the same message size measured in the
// same run.
// Each rank also prints its peak RSS: the device's HBM is 2 x 4 x MiB (the input and a shuffle's
// output), which each rank keeps only for its own chips (runtime/kept_chips.h).
// Usage: mpiexec -np 2 mpi_shuffle_bench [MiB per chip, default 16] [shuffles, default 5] [jit|interp] [hbm|dm]
// (-np 1 gives the memory of one process holding every chip, without the MPI figures; 0 shuffles
// gives the memory of the input alone.)
#include <sys/resource.h>

#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "dsl/mapping_parser.h"
#include "dsl/status_macros.h"
#include "interp/interpreter.h"
#include "jit/jit_backend.h"
#include "mpi/mpi_backend.h"
#include "runtime/chip_shuffle.h"
#include "runtime/device.h"
#include "runtime/host_tensor.h"
#include "runtime/tensor_unit.h"

namespace visa::mpi {
namespace {

absl::Status Bench(Session& session, int64_t mib, int shuffles, bool jit, bool in_dm) {
  ASSIGN_OR_RETURN(MappingScope m, MappingScope::Parse(absl::StrCat("A = 4, B = ", mib * 1024 * 1024)));
  ASSIGN_OR_RETURN(std::unique_ptr<Device> device, Device::Create(4, {.uninitialized_reads = UninitializedReads::kOff}));
  interp::Interpreter interpreter;
  std::unique_ptr<jit::JitBackend> compiled;
  if (jit) {
    ASSIGN_OR_RETURN(compiled, jit::JitBackend::Create({.threads = 1}));
  }
  MpiBackend spread(jit ? static_cast<Backend&>(*compiled) : interpreter, session);
  Context ctx(*device, spread);
  // Bytes of a fixed pattern (HostTensor::Random goes through doubles: 8 bytes a position of peak RSS).
  std::vector<uint8_t> pattern(static_cast<size_t>(4 * mib * 1024 * 1024));
  for (size_t i = 0; i < pattern.size(); ++i) pattern[i] = static_cast<uint8_t>(i * 131 + i / 4099);
  ASSIGN_OR_RETURN(HostTensor host, HostTensor::FromBytes(DType::kI8, m.m("A, B"), std::move(pattern)));
  ASSIGN_OR_RETURN(HbmTensor hbm, host.to_hbm(ctx.pdma, 0, m.m("A"), m.m("B")));
  // `dm`: the rows staged into DM (256 slices of one cluster per chip) and shuffled there (through
  // HBM: runtime/chip_shuffle.h), so the SRAM pages a rank commits show.
  std::optional<DmTensor> dm;
  if (in_dm) {
    const int64_t per_slice = mib * 4096;  // B = slice * per_slice + element
    ASSIGN_OR_RETURN(dm, hbm.to_dm(ctx.tdma, 0, m.m("A"), m.m("1 # 2"), m.m(absl::StrCat("B / ", per_slice)),
                                   m.m(absl::StrCat("B % ", per_slice))));
  }
  auto shuffle = [&]() -> absl::Status {
    if (dm) {
      ASSIGN_OR_RETURN(DmTensor out, ChipShuffle(ctx.tdma, *dm, {1, 2, 3, 0}, Address::Any()));
      out.Release();
      return absl::OkStatus();
    }
    ASSIGN_OR_RETURN(HbmTensor out, ChipShuffle(ctx.tdma, hbm, {1, 2, 3, 0}, Address::Any()));
    out.Release();
    return absl::OkStatus();
  };
  // One shuffle not counted: the first large message between two ranks sets up Open MPI's
  // shared-memory path (MPI's own references warm up likewise).
  if (shuffles > 0) RETURN_IF_ERROR(shuffle());
  const ExchangeStats before = session.stats();
  const auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < shuffles; ++i) RETURN_IF_ERROR(shuffle());
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const ExchangeStats& after = session.stats();
  const int64_t exchanges = after.received - before.received;
  const int64_t bytes = after.bytes - before.bytes;
  const double seconds = after.seconds - before.seconds;
  const int64_t message = exchanges > 0 ? bytes / exchanges : 1;
  struct rusage usage {};
  getrusage(RUSAGE_SELF, &usage);
  std::cerr << absl::StrFormat("rank %d of %d: peak RSS %.1f MB, device pages committed %.1f MB, moves run for its own "
                               "chips alone %d\n", session.rank(), session.ranks(), usage.ru_maxrss / 1024.0,
                               device->resident_bytes() / 1e6, session.stats().split);
  if (session.ranks() == 1) return absl::OkStatus();
  ASSIGN_OR_RETURN(double reference, session.PointToPointBandwidth(message, 10));
  ASSIGN_OR_RETURN(double single, session.SingleMessageBandwidth(message));
  if (session.rank() != 0) return absl::OkStatus();
  std::cout << absl::StrFormat("MPI one message at a time (Iprobe, then MPI_Recv timed), same size, same run: %.0f MB/s\n",
                               single / 1e6);
  std::cout << absl::StrFormat(
      "%d ranks, %s, %d MiB per chip, %d shuffles after one not counted, in %.3f s (each rank its own chips' moves)\n"
      "rank 0: received %d chip moves of %d bytes, %.4f s from arrival to end: %.0f MB/s\n"
      "MPI point-to-point, same size, same run: %.0f MB/s; exchange / MPI = %.0f %%\n",
      session.ranks(), jit ? "jit" : "interp", mib, shuffles, wall, exchanges, message, seconds, bytes / seconds / 1e6, reference / 1e6,
      100 * (bytes / seconds) / reference);
  return absl::OkStatus();
}

}  // namespace
}  // namespace visa::mpi

int main(int argc, char** argv) {
  visa::mpi::Session* session = visa::mpi::Session::Launched();
  if (session == nullptr) {
    std::cerr << "error: run under mpiexec (-np 1 for memory alone, 2 or more for the exchange)\n";
    if (session != nullptr) session->End(/*clean=*/true);
    return 2;
  }
  const int64_t mib = argc > 1 ? std::atoll(argv[1]) : 16;
  const int shuffles = argc > 2 ? std::atoi(argv[2]) : 5;
  const bool jit = argc <= 3 || std::string(argv[3]) != "interp";
  const bool in_dm = argc > 4 && std::string(argv[4]) == "dm";
  absl::Status done = visa::mpi::Bench(*session, mib, shuffles, jit, in_dm);
  if (!done.ok()) std::cerr << "error: rank " << session->rank() << ": " << done.message() << "\n";
  session->End(done.ok());
  return done.ok() ? 0 : 2;
}
