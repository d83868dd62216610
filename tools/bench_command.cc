// `visa bench`: medians of repeated runs, measured in one process so the ratios compare like with like.
#include "tools/bench_command.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <iostream>

#include "absl/strings/str_format.h"
#include "dsl/status_macros.h"
#include "dsl/text_excerpt.h"
#include "interp/index_move.h"
#include "interp/interpreter.h"
#include "jit/jit_backend.h"
#include "jit/parallel.h"
#include "runtime/timing_backend.h"
#include "nlohmann/json.hpp"
#include "samples/sample.h"
#include "tools/numeric_flag.h"
#include "tools/progress.h"

namespace visa::cli {
namespace {

using Clock = std::chrono::steady_clock;

double Seconds(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

struct Figures {
  double interp = 0, compile_first = 0, compile_cached = 0, jit = 0, reference = 0, memcpy = 0;
  int threads = 1;
  std::string target;
  std::vector<std::string> op_kinds;  // the JIT run's ops, in order
  std::vector<double> op_seconds;     // their median times
};

// The sample's host reference evaluated at every output element (what `visa run` checks against),
// and a plain copy of the output's bytes.
absl::Status TimeHost(const samples::Sample& sample, int repeat, Figures& f) {
  if (sample.readback.empty()) return absl::OkStatus();  // a sample with its own read-back: no reference here
  ASSIGN_OR_RETURN(Axes axes, Axes::Parse(sample.axes));
  MappingScope s(axes);
  ASSIGN_OR_RETURN(HostTensor input, HostTensor::Random(sample.dtype, Pair({s.m(sample.slice), s.m(sample.element)}), 42));
  Mapping layout = s.m(sample.readback);
  RETURN_IF_ERROR(layout.status());
  const std::vector<std::string> input_axes = input.mapping().axis_names();
  std::vector<double> reference, copy;
  double sink = 0;
  for (int r = 0; r < repeat; ++r) {
    auto start = Clock::now();
    for (int64_t p = 0; p < layout.size(); ++p) {
      Cell cell = layout.map(p);
      if (!cell.live()) continue;
      sink += sample.reference ? sample.reference(cell.index, input)
                               : input.Get(interp::Restrict(cell.index, input_axes)).value_or(0);
    }
    reference.push_back(Seconds(start));
    std::vector<uint8_t> from(input.bytes()), to(from.size());
    start = Clock::now();
    std::memcpy(to.data(), from.data(), from.size());
    copy.push_back(Seconds(start));
    sink += to.empty() ? 0 : to[to.size() / 2];
  }
  f.reference = Median(reference);
  f.memcpy = Median(copy) + sink * 0;
  return absl::OkStatus();
}

absl::StatusOr<Figures> Measure(const samples::Sample& sample, const BenchOptions& options, std::ostream& err) {
  const int repeat = options.repeat;
  Figures f;
  Progress progress(absl::StrCat("bench ", sample.name), repeat + std::min(repeat, 3) + repeat + 1, err,
                    Progress::StderrIsTerminal());
  interp::Interpreter interpreter;
  std::vector<double> interp_times, first, cached, jit_times;
  Program program;
  for (int r = 0; r < repeat; ++r) {
    ASSIGN_OR_RETURN(samples::SampleRun run, sample.Run(interpreter));
    interp_times.push_back(run.kernel_seconds);
    program = run.program;
    progress.Step("interpreter");
  }
  for (int r = 0; r < std::min(repeat, 3); ++r) {
    ASSIGN_OR_RETURN(std::unique_ptr<jit::JitBackend> jit, jit::JitBackend::Create({.threads = options.threads}));
    ASSIGN_OR_RETURN(double seconds, jit->Prepare(program));
    first.push_back(seconds);
    auto start = Clock::now();
    RETURN_IF_ERROR(jit->Prepare(program).status());
    cached.push_back(Seconds(start));
    progress.Step("jit compile");
  }
  ASSIGN_OR_RETURN(std::unique_ptr<jit::JitBackend> jit, jit::JitBackend::Create({.threads = options.threads}));
  f.threads = jit->threads();
  f.target = jit->target();
  TimingBackend timed(*jit);
  std::vector<std::vector<double>> op_times;
  for (int r = 0; r < repeat + 1; ++r) {
    timed.Clear();
    ASSIGN_OR_RETURN(samples::SampleRun run, sample.Run(timed));
    if (run.mismatch) return absl::InternalError(absl::StrCat("the JIT's result is wrong: ", *run.mismatch));
    progress.Step("jit run");
    if (r == 0) continue;  // the first run compiles
    jit_times.push_back(run.kernel_seconds);
    op_times.resize(timed.times().size());
    for (size_t i = 0; i < timed.times().size(); ++i) op_times[i].push_back(timed.times()[i].seconds);
    if (f.op_kinds.empty()) {
      for (const TimingBackend::OpTime& t : timed.times()) f.op_kinds.push_back(t.kind);
    }
  }
  progress.Finish();
  for (std::vector<double>& times : op_times) f.op_seconds.push_back(Median(times));
  f.interp = Median(interp_times);
  f.compile_first = Median(first);
  f.compile_cached = Median(cached);
  f.jit = Median(jit_times);
  RETURN_IF_ERROR(TimeHost(sample, repeat, f));
  return f;
}

double Ratio(double a, double b) { return b > 0 ? a / b : 0; }

}  // namespace

int BenchSampleCommand(const BenchOptions& options, std::ostream& out, std::ostream& err) {
  const samples::Sample* sample = samples::FindSample(options.sample);
  if (sample == nullptr) {
    err << "error: unknown sample `" << Excerpt(options.sample, 0) << "` (see `visa run --list`)\n";
    return 2;
  }
  // Checked before measuring: a bad count would otherwise fail only after the interpreter ran.
  if (options.repeat < 1 || options.repeat > kMaxBenchRepeat) {
    err << "error: --repeat: value `" << options.repeat << "` is out of range: a whole number from 1 to "
        << kMaxBenchRepeat << "\n";
    return 2;
  }
  if (absl::StatusOr<int> threads = jit::ResolveThreads(options.threads); !threads.ok()) {
    err << "error: --threads: " << threads.status().message() << "\n";
    return 2;
  }
  absl::StatusOr<Figures> f = Measure(*sample, options, err);
  if (!f.ok()) {
    err << "error: " << f.status().message() << "\n";
    return absl::IsInternal(f.status()) ? 1 : 2;
  }
  if (options.json) {
    nlohmann::json ops = nlohmann::json::array();
    for (size_t i = 0; i < f->op_seconds.size() && i < f->op_kinds.size(); ++i) {
      ops.push_back({{"index", i}, {"kind", f->op_kinds[i]}, {"jit_run_s", f->op_seconds[i]}});
    }
    nlohmann::json json = {{"sample", sample->name}, {"repeat", options.repeat}, {"threads", f->threads},
                           {"target", f->target}, {"interp_s", f->interp}, {"jit_compile_first_s", f->compile_first},
                           {"jit_compile_cached_s", f->compile_cached}, {"jit_run_s", f->jit},
                           {"host_reference_s", f->reference}, {"memcpy_s", f->memcpy},
                           {"interp_over_jit", Ratio(f->interp, f->jit)}, {"jit_over_memcpy", Ratio(f->jit, f->memcpy)},
                           {"host_reference_over_jit", Ratio(f->reference, f->jit)}, {"ops", ops}};
    out << json.dump(2) << "\n";
    return 0;
  }
  out << absl::StrFormat("%s (median of %d, JIT on %d threads, %s)\n", sample->name, options.repeat, f->threads,
                         f->target);
  out << absl::StrFormat("  interpreter        %12.6f ms\n", f->interp * 1e3);
  out << absl::StrFormat("  jit compile first  %12.6f ms\n", f->compile_first * 1e3);
  out << absl::StrFormat("  jit compile cached %12.6f ms\n", f->compile_cached * 1e3);
  out << absl::StrFormat("  jit run            %12.6f ms\n", f->jit * 1e3);
  for (size_t i = 0; i < f->op_seconds.size() && i < f->op_kinds.size(); ++i) {
    out << absl::StrFormat("    op %-3d %-14s %12.6f ms\n", static_cast<int>(i), f->op_kinds[i], f->op_seconds[i] * 1e3);
  }
  out << absl::StrFormat("  host reference     %12.6f ms\n", f->reference * 1e3);
  out << absl::StrFormat("  memcpy of output   %12.6f ms\n", f->memcpy * 1e3);
  out << absl::StrFormat("  interp / jit %.3gx, jit / memcpy %.3gx, host reference / jit %.3gx\n",
                         Ratio(f->interp, f->jit), Ratio(f->jit, f->memcpy), Ratio(f->reference, f->jit));
  return 0;
}

void AddBenchCommand(CLI::App& app, BenchOptions& options, int& exit_code) {
  CLI::App* cmd = app.add_subcommand("bench", "Time a sample on the interpreter and the JIT (medians and ratios)");
  cmd->add_option("sample", options.sample, "Sample name (see `visa run --list`)")->required();
  cmd->add_flag("--json", options.json, "One JSON object instead of the table");
  cmd->add_option("--repeat", options.repeat, "Runs per measurement (default 5)")
      ->check(WholeNumberIn(1, kMaxBenchRepeat));
  cmd->add_option("--threads", options.threads, "JIT threads (default 0: the host's)")
      ->check(WholeNumberIn(0, jit::kMaxThreads));
  cmd->callback([&options, &exit_code] { exit_code = BenchSampleCommand(options, std::cout, std::cerr); });
}

}  // namespace visa::cli
