// libFuzzer target: the `visa` command line's argument handling. The fuzzer's bytes are an argv
// (one argument per line after the program name), parsed by the same CLI11 app `visa` builds and
// run in-process with the output discarded. Every argv must end in an exit code: a parse error, a
// clean `error:` or a result; an uncaught exception, an abort or a sanitizer report is a finding.
//
// The subcommands that only read their arguments (map, seq, explain, run --list) run whatever the
// input. Those whose action is a long job by design (running a sample on a backend, `check`,
// `bench`, `fuzz-diff`) run only on their cheap error paths (an unknown or missing sample, a
// program count below one): a real kernel run or JIT compile would take seconds per input.
// Inputs that reach known, already reported resource exhaustion of mapping work (issue 15 item
// 4: linear combinations, --def chains, --enumerate) are skipped unless VISA_FUZZ_KNOWN=1.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <ostream>
#include <streambuf>
#include <string>
#include <vector>

#include "CLI/CLI.hpp"
#include "absl/strings/match.h"
#include "absl/strings/str_split.h"
#include "samples/sample.h"
#include "tools/bench_command.h"
#include "tools/check_command.h"
#include "tools/fuzz_diff_command.h"
#include "tools/map_command.h"
#include "tools/run_command.h"
#include "tools/seq_command.h"

namespace visa::cli {
namespace {

constexpr size_t kMaxArgs = 24;

bool IncludeKnown() {
  static const bool include = [] {
    const char* v = std::getenv("VISA_FUZZ_KNOWN");
    return v != nullptr && std::string(v) == "1";
  }();
  return include;
}

// Discards everything written to it.
class NullBuffer : public std::streambuf {
 protected:
  int overflow(int c) override { return traits_type::not_eof(c); }
  std::streamsize xsputn(const char*, std::streamsize n) override { return n; }
};

// std::cout and std::cerr discarded while it lives (the subcommands' callbacks print to them).
class Silence {
 public:
  Silence() : out_(std::cout.rdbuf(&null_)), err_(std::cerr.rdbuf(&null_)) {}
  ~Silence() {
    std::cout.rdbuf(out_);
    std::cerr.rdbuf(err_);
  }

 private:
  NullBuffer null_;
  std::streambuf* out_;
  std::streambuf* err_;
};

// The `visa` app as tools/visa_main.cc builds it, with the long-running actions guarded.
struct App {
  CLI::App app{"visa"};
  int exit_code = 0;
  MapOptions map;
  SeqOptions seq;
  RunOptions run;
  std::string explain_sample;
  CheckOptions check;
  BenchOptions bench;
  FuzzDiffOptions fuzz_diff;
  NullBuffer null;
  std::ostream out{&null};

  App() {
    app.require_subcommand(1);
    AddMapCommand(app, map, exit_code);
    AddSeqCommand(app, seq, exit_code);
    AddRunCommands(app, run, explain_sample, exit_code);
    AddCheckCommand(app, check, exit_code);
    AddBenchCommand(app, bench, exit_code);
    AddFuzzDiffCommand(app, fuzz_diff, exit_code);
    app.get_subcommand("run")->callback([this] {
      if (run.list || samples::FindSample(run.sample) == nullptr) exit_code = RunSampleCommand(run, out, out);
    });
    app.get_subcommand("check")->callback([this] {
      if (!check.all && samples::FindSample(check.sample) == nullptr) exit_code = CheckSampleCommand(check, out, out);
    });
    app.get_subcommand("bench")->callback([this] {
      if (samples::FindSample(bench.sample) == nullptr) exit_code = BenchSampleCommand(bench, out, out);
    });
    app.get_subcommand("fuzz-diff")->callback([this] {
      if (fuzz_diff.programs < 1) exit_code = FuzzDiffCommand(fuzz_diff, out, out);
    });
  }

  // What visa_main does with argv: parse errors and help requests end the run with an exit code.
  int Run(std::vector<std::string> args) {
    std::reverse(args.begin(), args.end());  // CLI11 takes the arguments last first
    try {
      app.parse(args);
    } catch (const CLI::ParseError& e) {
      return e.get_exit_code() == 0 ? 0 : 2;
    }
    return exit_code;
  }
};

bool Known(absl::string_view input) {
  return !IncludeKnown() && (absl::StrContains(input, "$") || absl::StrContains(input, "--def") ||
                             absl::StrContains(input, "--enum") || absl::StrContains(input, "--equiv"));
}

void Exercise(absl::string_view input) {
  if (Known(input)) return;
  std::vector<std::string> args = absl::StrSplit(input, '\n');
  if (args.size() > kMaxArgs) return;
  Silence silence;
  App app;
  const int code = app.Run(std::move(args));
  if (code < 0 || code > 2) {
    std::fprintf(stderr, "cli_args_fuzz: exit code %d is none of 0, 1, 2\n", code);
    std::abort();
  }
}

}  // namespace
}  // namespace visa::cli

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  visa::cli::Exercise(absl::string_view(reinterpret_cast<const char*>(data), size));
  return 0;
}
