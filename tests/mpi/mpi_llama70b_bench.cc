// The 70B layer's decode step split over chips, tensor parallel (samples/models/llama70b_chip_split.h),
// under mpirun (docs/multi_process.md, "The 70B layer over 4 chips"): on one process (run without
// mpiexec: no MPI at all) or over MpiBackend on N ranks. Each rank prints its peak RSS and
// Device::resident_bytes (the device pages it committed); rank 0 prints the first launch's time
// (compilation included on the JIT), the later launches' mean (the time per decode token) and the
// output's largest error against the host reference in units of its bound.
// Usage: [mpiexec -np N] mpi_llama70b_bench [full|reduced, default full] [chips, default 4]
//        [launches, default 3] [jit|interp]
#include <sys/resource.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <iostream>
#include <memory>
#include <numeric>
#include <string>
#include <vector>

#include "absl/strings/str_format.h"
#include "dsl/status_macros.h"
#include "interp/interpreter.h"
#include "jit/jit_backend.h"
#include "mpi/mpi_backend.h"
#include "samples/models/llama70b_chip_split.h"
#include "samples/models/llama70b_layer.h"

namespace visa::models {
namespace {

struct Options {
  bool full = true, jit = true;
  int64_t chips = 4, launches = 3;
};

absl::Status Bench(mpi::Session* session, const Options& o) {
  Llama70bConfig c = o.full ? Llama70bConfig{} : ReducedLlama70bOnChips(o.chips);
  c.chips = o.chips;
  const Llama70bWeights w = MakeLlama70bWeights(c);
  interp::Interpreter interpreter;
  std::unique_ptr<jit::JitBackend> compiled;
  if (o.jit) {
    ASSIGN_OR_RETURN(compiled, jit::JitBackend::Create({.threads = 1}));
  }
  Backend& inner = o.jit ? static_cast<Backend&>(*compiled) : interpreter;
  std::unique_ptr<mpi::MpiBackend> spread;
  if (session != nullptr) spread = std::make_unique<mpi::MpiBackend>(inner, *session);
  Backend& backend = spread ? static_cast<Backend&>(*spread) : inner;
  ASSIGN_OR_RETURN(Llama70bRun run, RunLlama70bDecode(c, w, backend, {}, o.launches));
  const int rank = session ? session->rank() : 0, ranks = session ? session->ranks() : 1;
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  std::cerr << absl::StrFormat("rank %d of %d: peak RSS %.2f GB, device pages committed %.2f GB\n", rank, ranks,
                               static_cast<double>(usage.ru_maxrss) / (1024.0 * 1024.0),
                               static_cast<double>(run.device_resident_bytes) / 1e9);
  if (rank != 0) return absl::OkStatus();
  const Llama70bReference want = ReferenceDecode(c, w);
  double worst = 0;
  for (size_t i = 0; i < want.out.size(); ++i) {
    worst = std::max(worst, std::fabs(static_cast<double>(run.out[i]) - want.out[i]) / want.bound[i]);
  }
  const double later = std::accumulate(run.relaunch_seconds.begin(), run.relaunch_seconds.end(), 0.0) /
                       static_cast<double>(std::max<size_t>(1, run.relaunch_seconds.size()));
  std::cout << absl::StrFormat(
      "%s, %d chips, one 70B-shaped layer (D %d, F %d, %d query / %d KV heads, %.2f GB of weights), %s: upload %.1f s, "
      "trace %.1f s, first launch %.2f s, then %.2f s/token over %d launches; max |error| %.3f of the reference's "
      "bound%s\n",
      session ? absl::StrFormat("%d ranks", ranks) : std::string("1 process, no MPI"), c.chips, c.hidden, c.ffn,
      c.kv_heads * c.groups, c.kv_heads, static_cast<double>(w.weight_bytes()) / 1e9, o.jit ? "jit" : "interp",
      run.upload_seconds, run.trace_seconds, run.launch_seconds, later, run.relaunch_seconds.size(), worst,
      worst <= 1.0 ? "" : " (OUTSIDE)");
  return worst <= 1.0 ? absl::OkStatus() : absl::InternalError("the output is outside the reference's bound");
}

}  // namespace
}  // namespace visa::models

int main(int argc, char** argv) {
  visa::models::Options o;
  if (argc > 1) o.full = std::string(argv[1]) != "reduced";
  if (argc > 2) o.chips = std::atoll(argv[2]);
  if (argc > 3) o.launches = std::max<int64_t>(1, std::atoll(argv[3]));
  if (argc > 4) o.jit = std::string(argv[4]) != "interp";
  visa::mpi::Session* session = visa::mpi::Session::Launched();
  absl::Status done = visa::models::Bench(session, o);
  if (!done.ok()) std::cerr << "error: " << done.message() << "\n";
  if (session != nullptr) session->End(done.ok());
  return done.ok() ? 0 : 2;
}
