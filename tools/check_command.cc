// `visa check`: both backends on one sample, every op's result compared element by element.
#include "tools/check_command.h"

#include <iostream>
#include <optional>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "dsl/status_macros.h"
#include "dsl/text_excerpt.h"
#include "interp/interpreter.h"
#include "jit/jit_backend.h"
#include "mpi/mpi_backend.h"
#include "nlohmann/json.hpp"
#include "tools/sample_selection.h"
#include "samples/sample.h"
#include "tools/progress.h"

namespace visa::cli {
namespace {

struct Outcome {
  int code = 0;        // 0 identical, 1 different, 2 error
  std::string detail;  // the first difference, or the error
};

const char* ResultName(int code) { return code == 0 ? "identical" : code == 1 ? "different" : "error"; }

Outcome CheckOne(const samples::Sample& sample, jit::JitBackend& jit) {
  interp::Interpreter interpreter;
  // Under mpirun every rank runs both backends over MpiBackend (mpi/mpi_backend.h).
  mpi::Session* launched = mpi::Session::Launched();
  std::optional<mpi::MpiBackend> spread_interp, spread_jit;
  if (launched != nullptr) {
    spread_interp.emplace(interpreter, *launched);
    spread_jit.emplace(jit, *launched);
    // Pipelines over several ranks' chips run whole on both, so the two record the same outputs
    // on every chip (split, each rank would hold only its own chips' parts).
    spread_interp->set_split_pipelines(false);
    spread_jit->set_split_pipelines(false);
  }
  RecordingBackend reference(spread_interp ? static_cast<Backend&>(*spread_interp) : interpreter),
      compiled(spread_jit ? static_cast<Backend&>(*spread_jit) : jit);
  absl::StatusOr<samples::SampleRun> want = sample.Run(reference);
  if (!want.ok()) return {2, absl::StrCat("on interp: ", want.status().message())};
  absl::StatusOr<samples::SampleRun> got = sample.Run(compiled);
  if (!got.ok()) return {2, absl::StrCat("on jit: ", got.status().message())};
  std::optional<std::string> difference =
      FirstDifference(want->program, reference.records(), "interp", compiled.records(), "jit");
  if (difference) return {1, *difference};
  return {0, ""};
}

void PrintText(const samples::Sample& sample, const Outcome& outcome, std::ostream& out, std::ostream& err) {
  switch (outcome.code) {
    case 0: out << sample.name << ": identical\n"; break;
    case 1: out << sample.name << ": DIFFERENT at " << outcome.detail << "\n"; break;
    default: err << "error: " << sample.name << " " << outcome.detail << "\n"; break;
  }
}

}  // namespace

int CheckSampleCommand(const CheckOptions& options, std::ostream& out, std::ostream& err) {
  std::vector<const samples::Sample*> chosen;
  SampleSelection selection;
  if (options.all && !options.sample.empty()) {
    err << "error: check takes a SAMPLE or --all, not both (got --all and `" << Excerpt(options.sample, 0) << "`)\n";
    return 2;
  }
  if (options.include_slow && !options.all) {
    err << "error: --include-slow goes with --all (a sample named is checked whatever its size)\n";
    return 2;
  }
  if (options.all) {
    selection = SelectAllSamples(options.include_slow);
    chosen = selection.chosen;
  } else {
    const samples::Sample* sample = samples::FindSample(options.sample);
    if (sample == nullptr) {
      err << "error: unknown sample `" << Excerpt(options.sample, 0) << "` (see `visa run --list`)\n";
      return 2;
    }
    chosen.push_back(sample);
  }
  absl::StatusOr<std::unique_ptr<jit::JitBackend>> jit = jit::JitBackend::Create({.threads = 0});  // the host's
  if (!jit.ok()) {
    err << "error: " << jit.status().message() << "\n";
    return 2;
  }
  int worst = 0;
  int counts[3] = {0, 0, 0};
  nlohmann::json results = nlohmann::json::array();
  Progress progress("check", static_cast<int64_t>(chosen.size()), err,
                    options.all && options.progress && Progress::StderrIsTerminal());
  for (const samples::Sample* sample : chosen) {
    const Outcome outcome = CheckOne(*sample, **jit);
    progress.Step(sample->name);
    worst = std::max(worst, outcome.code);
    ++counts[outcome.code];
    if (options.json) {
      results.push_back({{"sample", sample->name}, {"result", ResultName(outcome.code)}, {"detail", outcome.detail}});
    } else {
      PrintText(*sample, outcome, out, err);
    }
  }
  progress.Finish();
  if (options.json) {
    nlohmann::json summary = {{"samples", results},   {"identical", counts[0]},
                              {"different", counts[1]}, {"errors", counts[2]},
                              {"skipped_slow", selection.skipped_slow}};
    out << summary.dump(2) << "\n";
  } else if (std::string note = SkippedSlowNote(selection); !note.empty()) {
    out << note << "\n";
  }
  return worst;
}

void AddCheckCommand(CLI::App& app, CheckOptions& options, int& exit_code) {
  CLI::App* cmd = app.add_subcommand("check", "Run a sample on the interpreter and the JIT and compare every op");
  cmd->add_option("sample", options.sample, "Sample name (see `visa run --list`)");
  cmd->add_flag("--all", options.all, "Check every sample but the slow ones (the manual's full sizes)");
  cmd->add_flag("--include-slow", options.include_slow, "With --all, the slow samples too (minutes, gigabytes)");
  cmd->add_flag("--json", options.json, "One JSON object with every sample's result");
  cmd->callback([&options, &exit_code] {
    if (!options.all && options.sample.empty()) {
      std::cerr << "error: check needs a SAMPLE (or --all)\n";
      exit_code = 2;
      return;
    }
    exit_code = CheckSampleCommand(options, std::cout, std::cerr);
  });
}

}  // namespace visa::cli
