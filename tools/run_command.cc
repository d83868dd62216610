// `visa run SAMPLE`, `visa run --list` and `visa explain SAMPLE`.
#include "tools/run_command.h"

#include <iostream>
#include <optional>
#include <utility>

#include "absl/strings/str_format.h"
#include "dsl/status_macros.h"
#include "dsl/text_excerpt.h"
#include "interp/interpreter.h"
#include "jit/jit_backend.h"
#include "mpi/mpi_backend.h"
#include "absl/strings/str_replace.h"
#include "runtime/op_description.h"
#include "runtime/trace_backend.h"
#include "runtime/uninitialized_reads.h"
#include "samples/sample.h"
#include "tools/json_output.h"
#include "tools/large_block_release.h"
#include "tools/prepared_sample_run.h"
#include "tools/progress.h"
#include "tools/progress_backend.h"
#include "runtime/trace_options.h"

namespace visa::cli {
namespace {

const samples::Sample* Find(const std::string& name, std::ostream& err) {
  const samples::Sample* sample = samples::FindSample(name);
  if (sample == nullptr) err << "error: unknown sample `" << Excerpt(name, 0) << "` (see `visa run --list`)\n";
  return sample;
}

// The interpreter op by op on a Progress line (when stderr is a terminal and the run lasts):
// the total comes from planning the sample first, which computes nothing.
absl::StatusOr<samples::SampleRun> RunWithProgress(const samples::Sample& sample, Backend& backend,
                                                   const DeviceOptions& device_options, std::ostream& err) {
  if (!Progress::StderrIsTerminal()) return sample.Run(backend, device_options);
  TraceBackend trace;
  ASSIGN_OR_RETURN(samples::SampleRun planned, sample.Run(trace, TracingOptions(device_options)));
  Progress progress(sample.name, ProgressBackend::DeviceOps(planned.program), err, /*enabled=*/true,
                    /*quiet_seconds=*/0.5);
  ProgressBackend counted(backend, progress);
  return sample.Run(counted, device_options);
}

// `kernels`: on the JIT, how many kernels were compiled before the sample ran and while it ran.
absl::StatusOr<samples::SampleRun> RunOn(const samples::Sample& sample, const std::string& backend,
                                         bool jit_disk_cache, const DeviceOptions& device_options,
                                         std::ostream& err, std::optional<std::pair<int64_t, int64_t>>& kernels) {
  mpi::Session* launched = mpi::Session::Launched();  // under mpirun: every op agreed on, moves exchanged
  if (backend == "jit") {
    jit::JitOptions jit_options;
    jit_options.threads = 0;  // the host's
    jit_options.disk_cache = jit_disk_cache;
    ASSIGN_OR_RETURN(std::unique_ptr<jit::JitBackend> jit, jit::JitBackend::Create(jit_options));
    if (launched != nullptr) {
      mpi::MpiBackend spread(*jit, *launched);
      return sample.Run(spread, device_options);
    }
    // Compiled before the device's memory exists (tools/prepared_sample_run.h: the peak memory).
    ASSIGN_OR_RETURN(PreparedSampleRun prepared, RunPrepared(sample, *jit, device_options));
    kernels = std::pair(prepared.compiled_before, prepared.compiled_during);
    return std::move(prepared.run);
  }
  if (backend != "interp") {
    return absl::InvalidArgumentError(absl::StrCat("unknown backend `", Excerpt(backend, 0), "` (available: interp, jit)"));
  }
  interp::Interpreter interpreter;
  if (launched != nullptr) {
    mpi::MpiBackend spread(interpreter, *launched);
    return sample.Run(spread, device_options);
  }
  return RunWithProgress(sample, interpreter, device_options, err);
}

// `jit_disk_cache`: the JIT keeps compiled kernels on disk, so the next `visa run` of the sample
// compiles nothing. Only the command line asks for it; RunSampleCommand (what tests call) writes
// nothing outside the process.
int RunSample(const RunOptions& options, bool jit_disk_cache, std::ostream& out, std::ostream& err) {
  if (options.list) {
    // --list lists; a sample or a way to run one means the user expected something else.
    if (!options.sample.empty() || options.time || options.backend != "interp") {
      err << "error: --list takes no SAMPLE, --time or --backend (list, then run one)\n";
      return 2;
    }
    nlohmann::json list = nlohmann::json::array();
    for (const samples::Sample& sample : samples::AllSamples()) {
      if (options.json) {
        list.push_back({{"name", sample.name}, {"description", sample.description}, {"slow", sample.slow}});
      } else {
        out << absl::StrFormat("%-30s %s\n", sample.name, sample.description);
      }
    }
    if (options.json) out << list.dump(2) << "\n";
    return 0;
  }
  absl::StatusOr<UninitializedReads> uninitialized = ParseUninitializedReads(options.uninitialized);
  if (!uninitialized.ok()) {
    err << "error: --uninitialized: " << uninitialized.status().message() << "\n";
    return 2;
  }
  const samples::Sample* sample = Find(options.sample, err);
  if (sample == nullptr) return 2;
  // The run's temporaries go back to the system as they are freed, so that its peak memory is
  // the device's and the backend's, not what planning and checking left in the heap.
  ReleaseLargeBlocksOnFree();
  DeviceOptions device_options;
  device_options.uninitialized_reads = *uninitialized;
  device_options.on_warning = [&err](const std::string& warning) { err << "warning: " << warning << "\n"; };
  std::optional<std::pair<int64_t, int64_t>> kernels;
  absl::StatusOr<samples::SampleRun> run = RunOn(*sample, options.backend, jit_disk_cache, device_options, err, kernels);
  if (!run.ok()) {
    err << "error: " << run.status().message() << "\n";
    return 2;
  }
  if (options.json) {
    out << RunJson(sample->name, options.backend, *run).dump(2) << "\n";
    return run->mismatch ? 1 : 0;
  }
  out << run->Summary(sample->name) << "\n";
  if (options.time) {
    out << absl::StrFormat("kernel: %.3f s on %s, %d stream elements fetched, %.3g elements/s\n",
                           run->kernel_seconds, options.backend, run->stream_elements,
                           run->stream_elements / std::max(run->kernel_seconds, 1e-9));
    out << absl::StrFormat("device memory touched: %.1f MiB (resident pages of HBM, DM, TRF and VRF)\n",
                           run->device_resident_bytes / 1048576.0);
    if (kernels) {
      out << absl::StrFormat("jit kernels: %d compiled or loaded before the run, %d during it\n", kernels->first,
                             kernels->second);
    }
  }
  return run->mismatch ? 1 : 0;
}

}  // namespace

int RunSampleCommand(const RunOptions& options, std::ostream& out, std::ostream& err) {
  return RunSample(options, /*jit_disk_cache=*/false, out, err);
}

int ExplainSampleCommand(const std::string& name, std::ostream& out, std::ostream& err) {
  return ExplainSampleCommand(name, /*json=*/false, out, err);
}

int ExplainSampleCommand(const std::string& name, bool json, std::ostream& out, std::ostream& err) {
  const samples::Sample* sample = Find(name, err);
  if (sample == nullptr) return 2;
  // Planning alone derives every configuration; the trace backend skips computing the streams.
  TraceBackend trace;
  absl::StatusOr<samples::SampleRun> run = sample->Run(trace, TracingOptions());
  if (!run.ok()) {
    err << "error: " << run.status().message() << "\n";
    return 2;
  }
  if (json) {
    nlohmann::json program = ProgramJson(run->program);
    program["sample"] = sample->name;
    program["description"] = sample->description;
    out << program.dump(2) << "\n";
    return 0;
  }
  out << "# " << sample->name << ": " << sample->description << "\n";
  // Each op, then what the scheduler sees of it: resource, cycle terms, bytes read and written.
  for (size_t i = 0; i < run->program.ops.size(); ++i) {
    const Op& op = run->program.ops[i];
    out << OpText(op, i);
    std::string description = Describe(op).ToString();
    absl::StrReplaceAll({{"\n", "\n    "}}, &description);
    out << "  = " << description.substr(0, description.size() - 4);
  }
  out << absl::StrFormat("hash: %016x\n", run->program.Hash());
  return 0;
}

void AddRunCommands(CLI::App& app, RunOptions& run, std::string& explain_sample, int& exit_code) {
  CLI::App* cmd = app.add_subcommand("run", "Run a sample kernel and check it against its host reference");
  cmd->add_option("sample", run.sample, "Sample name (see --list)");
  cmd->add_option("--backend", run.backend, "Backend: interp or jit");
  cmd->add_flag("--list", run.list, "List the samples");
  cmd->add_flag("--time", run.time, "Print the kernel time and throughput");
  cmd->add_flag("--json", run.json, "One JSON object (the list: an array) instead of the line");
  cmd->add_option("--uninitialized", run.uninitialized,
                  "Reads of device memory nothing wrote: error (default), warn or off");
  CLI::Option* no_cache = cmd->add_flag("--no-jit-cache")->description(
      "JIT: compile every kernel, neither loading nor storing objects in the disk cache");
  cmd->callback([&run, &exit_code, no_cache] {
    if (!run.list && run.sample.empty()) {
      std::cerr << "error: run needs a SAMPLE (or --list)\n";
      exit_code = 2;
      return;
    }
    if (no_cache->count() > 0 && run.backend != "jit") {
      std::cerr << "error: --no-jit-cache concerns the JIT; add --backend jit\n";
      exit_code = 2;
      return;
    }
    exit_code = RunSample(run, /*jit_disk_cache=*/no_cache->count() == 0, std::cout, std::cerr);
  });
  CLI::App* explain = app.add_subcommand("explain", "Print a sample's program: ops and derived configurations");
  explain->add_option("sample", explain_sample, "Sample name")->required();
  explain->add_flag("--json", run.explain_json, "The program as one JSON object");
  explain->callback([&explain_sample, &run, &exit_code] {
    exit_code = ExplainSampleCommand(explain_sample, run.explain_json, std::cout, std::cerr);
  });
}

}  // namespace visa::cli
