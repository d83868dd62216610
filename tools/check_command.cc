// `visa check`: both backends on one sample, every op's result compared element by element.
#include "tools/check_command.h"

#include <iostream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "dsl/status_macros.h"
#include "dsl/text_excerpt.h"
#include "interp/interpreter.h"
#include "jit/jit_backend.h"
#include "samples/sample.h"

namespace visa::cli {
namespace {

// 0 identical, 1 different, 2 error.
int CheckOne(const samples::Sample& sample, jit::JitBackend& jit, std::ostream& out, std::ostream& err) {
  interp::Interpreter interpreter;
  RecordingBackend reference(interpreter), compiled(jit);
  absl::StatusOr<samples::SampleRun> want = sample.Run(reference);
  if (!want.ok()) {
    err << "error: " << sample.name << " on interp: " << want.status().message() << "\n";
    return 2;
  }
  absl::StatusOr<samples::SampleRun> got = sample.Run(compiled);
  if (!got.ok()) {
    err << "error: " << sample.name << " on jit: " << got.status().message() << "\n";
    return 2;
  }
  std::optional<std::string> difference =
      FirstDifference(want->program, reference.records(), "interp", compiled.records(), "jit");
  if (difference) {
    out << sample.name << ": DIFFERENT at " << *difference << "\n";
    return 1;
  }
  out << sample.name << ": identical\n";
  return 0;
}

}  // namespace

int CheckSampleCommand(const CheckOptions& options, std::ostream& out, std::ostream& err) {
  std::vector<const samples::Sample*> chosen;
  if (options.all && !options.sample.empty()) {
    err << "error: check takes a SAMPLE or --all, not both (got --all and `" << Excerpt(options.sample, 0) << "`)\n";
    return 2;
  }
  if (options.all) {
    for (const samples::Sample& sample : samples::AllSamples()) chosen.push_back(&sample);
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
  for (const samples::Sample* sample : chosen) worst = std::max(worst, CheckOne(*sample, **jit, out, err));
  return worst;
}

void AddCheckCommand(CLI::App& app, CheckOptions& options, int& exit_code) {
  CLI::App* cmd = app.add_subcommand("check", "Run a sample on the interpreter and the JIT and compare every op");
  cmd->add_option("sample", options.sample, "Sample name (see `visa run --list`)");
  cmd->add_flag("--all", options.all, "Check every sample");
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
