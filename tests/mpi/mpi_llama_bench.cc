// The tensor-parallel Llama model under mpirun (docs/multi_process.md, "The multi-chip layer"):
// memory per rank and time per prefill and decode token of the tiny model's configuration split
// over 4 chips (samples/models/llama_chip_split.h), with `layers` layers, on one process (run
// without mpiexec: no MPI at all) or over MpiBackend on N ranks. Each rank prints its peak RSS and
// Device::resident_bytes (the device pages it committed); rank 0 prints the times it measured and
// whether the greedy tokens are the host reference's.
// Usage: [mpiexec -np N] mpi_llama_bench [layers, default 2] [decode steps, default 4] [jit|interp]
//        [chips, default 4]
#include <sys/resource.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <memory>
#include <numeric>
#include <string>
#include <vector>

#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "dsl/status_macros.h"
#include "interp/interpreter.h"
#include "jit/jit_backend.h"
#include "mpi/mpi_backend.h"
#include "samples/models/llama_check.h"
#include "samples/models/llama_program.h"
#include "samples/models/llama_reference.h"

namespace visa::models {
namespace {

struct Options {
  int64_t layers = 2, steps = 4, chips = 4;
  bool jit = true;
};

absl::Status Bench(mpi::Session* session, const Options& o) {
  LlamaConfig c;
  c.layers = o.layers;
  c.chips = o.chips;
  const LlamaWeights weights = MakeWeights(c);
  interp::Interpreter interpreter;
  std::unique_ptr<jit::JitBackend> compiled;
  if (o.jit) {
    ASSIGN_OR_RETURN(compiled, jit::JitBackend::Create({.threads = 1}));
  }
  Backend& inner = o.jit ? static_cast<Backend&>(*compiled) : interpreter;
  std::unique_ptr<mpi::MpiBackend> spread;
  if (session != nullptr) spread = std::make_unique<mpi::MpiBackend>(inner, *session);
  Backend& backend = spread ? static_cast<Backend&>(*spread) : inner;
  const std::vector<int32_t> prompt = MakePrompt(c, kPromptSeed);
  // The exchanges of each launch (the prefill's, then each decode step's): counts, not times, so
  // a change to the protocol shows as a count (tests/mpi/decode_counts.sh checks the last launch's).
  std::vector<mpi::ExchangeStats> after;
  ASSIGN_OR_RETURN(Generation g, Generate(c, weights, backend, prompt, o.steps, {}, [&] {
                     if (session != nullptr) after.push_back(session->stats());
                     if (std::getenv("VISA_BENCH_RSS") != nullptr) {
                       std::ifstream status("/proc/self/status");
                       std::string line, out;
                       while (std::getline(status, line)) {
                         if (line.rfind("VmHWM", 0) == 0 || line.rfind("VmRSS", 0) == 0) out += " " + line;
                       }
                       std::cerr << "rank " << (session ? session->rank() : 0) << " after launch:" << out << "\n";
                     }
                   }));
  const int rank = session ? session->rank() : 0, ranks = session ? session->ranks() : 1;
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  std::cerr << absl::StrFormat("rank %d of %d: peak RSS %.1f MB, device pages committed %.2f MB\n", rank, ranks,
                               static_cast<double>(usage.ru_maxrss) / 1024.0,
                               static_cast<double>(g.device_resident_bytes) / 1e6);
  if (after.size() >= 2) {
    const mpi::ExchangeStats& a = after[after.size() - 2];
    const mpi::ExchangeStats& b = after.back();
    std::cerr << absl::StrFormat(
        "rank %d of %d, last decode launch: %d ops agreed, %d round trips, %d chip moves sent, %d received, %d "
        "tensors gathered (%d bytes received), %d pipelines split, %d parts made, %d parts kept and run again\n",
        rank, ranks, b.agreements - a.agreements, b.round_trips - a.round_trips, b.sent - a.sent,
        b.received - a.received, b.gathers - a.gathers, b.gathered_bytes - a.gathered_bytes,
        b.split_pipelines - a.split_pipelines, b.pipeline_parts_made - a.pipeline_parts_made,
        b.pipeline_parts_reused - a.pipeline_parts_reused);
  }
  if (compiled && std::getenv("VISA_BENCH_JIT_STATS") != nullptr) {
    // How the JIT ran the rank's ops (a rank's per-chip parts take other paths than whole ops).
    const jit::JitStats& j = compiled->stats();
    std::cerr << absl::StrFormat(
        "rank %d jit: pipelines fused %d, direct %d, staged %d; moves kept and run again %d, from descriptors %d, "
        "derived %d; nest moves %d, run-list moves %d; kernels compiled %d\n",
        rank, j.fused_pipelines, j.direct_pipelines, j.staged_pipelines, j.ready_moves, j.descriptor_dmas,
        j.derived_dmas, j.nest_moves, j.run_moves, j.compiles);
  }
  if (rank != 0) return absl::OkStatus();
  LlamaReference reference(c, weights);
  std::vector<int32_t> want = {Argmax(reference.Forward(prompt, 0))};
  for (int64_t s = 0; s < o.steps; ++s) want.push_back(Argmax(reference.Forward({want.back()}, c.prompt + s)));
  const double later = std::accumulate(g.decode_seconds.begin() + 1, g.decode_seconds.end(), 0.0);
  std::cout << absl::StrFormat(
      "%s, %d chips, %d layers (D %d, F %d, %d query / %d KV heads), %s: prefill of %d tokens %.3f s, first decode "
      "launch %.3f s, then %.4f s/token over %d tokens; tokens [%s] %s the host reference's\n",
      session ? absl::StrFormat("%d ranks", ranks) : std::string("1 process, no MPI"), c.chips, c.layers, c.hidden,
      c.ffn, c.q_heads(), c.kv_heads, o.jit ? "jit" : "interp", c.prompt, g.prefill_seconds, g.decode_seconds[0],
      later / static_cast<double>(std::max<int64_t>(1, o.steps - 1)), o.steps - 1, absl::StrJoin(g.tokens, " "),
      g.tokens == want ? "=" : "DIFFER FROM");
  return absl::OkStatus();
}

}  // namespace
}  // namespace visa::models

int main(int argc, char** argv) {
  visa::models::Options o;
  if (argc > 1) o.layers = std::atoll(argv[1]);
  if (argc > 2) o.steps = std::max<int64_t>(2, std::atoll(argv[2]));
  if (argc > 3) o.jit = std::string(argv[3]) != "interp";
  if (argc > 4) o.chips = std::atoll(argv[4]);
  visa::mpi::Session* session = visa::mpi::Session::Launched();
  absl::Status done = visa::models::Bench(session, o);
  if (!done.ok()) std::cerr << "error: " << done.message() << "\n";
  if (session != nullptr) session->End(done.ok());
  return done.ok() ? 0 : 2;
}
