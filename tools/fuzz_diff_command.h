// `visa fuzz-diff`: random programs (samples/random_program.h) run on the interpreter and on the
// JIT, every op's output compared; a difference prints the seed, the command that reproduces it
// and the first differing op, position and values. The differential test drives the same loop
// (which takes any backend as the candidate, so that its reports can be tested too).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <ostream>
#include <string>
#include <vector>

#include "CLI/CLI.hpp"
#include "absl/status/statusor.h"
#include "runtime/backend.h"
#include "samples/random_program.h"

namespace visa::cli {

struct FuzzDiffOptions {
  int64_t programs = 100;  // programs run on both backends (rejected draws are not counted)
  uint64_t seed = 1;       // the first draw's seed; each draw takes the next
  std::string features;    // comma-separated: run only programs that exercise all of them
  int threads = 0;         // JIT threads; 0: the host's hardware threads
  bool show_rejected = false;  // print every rejected draw's error (for tuning the generator)
};

// What happened to one seed's program.
struct FuzzVerdict {
  enum Kind {
    kIdentical,      // both backends wrote the same bytes in every op
    kDifferent,      // an op's output differs (message: the first difference)
    kRejected,       // the tracer refused the draw (message: its error); drawn again
    kFiltered,       // traced, but lacks a required feature; drawn again
    kUnimplemented,  // the candidate (the JIT) has no code for something in it (message: its error)
    kError,          // the interpreter failed, or the candidate failed other than Unimplemented
  };
  Kind kind = kIdentical;
  std::string message;
  std::vector<std::string> features;  // what the traced program exercises
};

// Traces one program and runs it on the interpreter and on `candidate`, comparing every op's
// output; `require` lists features it must exercise.
FuzzVerdict FuzzOne(const samples::RandomProgram& program, const std::vector<std::string>& require,
                    Backend& candidate);

// A program worth a report: a difference, an error, or a JIT Unimplemented.
struct FuzzFinding {
  uint64_t seed = 0;
  std::string message;
  std::string reproducer;   // the `visa fuzz-diff` command that runs this program alone
  std::string description;  // the program (samples::RandomProgram::description)
};

struct FuzzSummary {
  std::string candidate = "jit";  // the backend compared with the interpreter
  int64_t programs = 0;  // run on the interpreter (identical + different + unimplemented + errors)
  int64_t identical = 0, rejected = 0, filtered = 0;
  uint64_t first_seed = 0, last_seed = 0;
  std::map<std::string, int64_t> features;    // compared programs exercising each feature
  std::map<std::string, int64_t> rejections;  // rejected draws by the engine or rule named first
  std::vector<FuzzFinding> differences, errors, unimplemented;
  std::vector<FuzzFinding> rejected_draws;  // kept only with FuzzDiffOptions::show_rejected

  // "fuzz-diff: 300 programs (seeds 1-341): 298 identical, 0 different, 2 skipped (jit
  // unimplemented), 0 errors; 41 draws rejected by the tracer, 0 filtered"
  std::string SummaryLine() const;
  // "features: bitmap 41, cast 120, ..." then "details: accumulate:Interleaved 57, ..."
  std::string FeatureLines() const;
  std::string RejectionLine() const;  // "rejected: Switch Broadcast01 3, Transpose 12, ..."
};

// Runs programs from options.seed on until options.programs ran (or 50 draws per program were
// tried: then an error says the draws were mostly rejected). `progress` is called after each
// program that ran. Errors: bad options (unknown feature, a count out of range).
absl::StatusOr<FuzzSummary> FuzzPrograms(const FuzzDiffOptions& options, Backend& candidate,
                                         const std::function<void(const FuzzSummary&)>& progress = {});

// The report after the run: every difference and error with its reproducer and program, the
// Unimplemented skips grouped by message, the summary, feature and rejection lines.
void PrintFuzzReport(const FuzzSummary& summary, std::ostream& out);

// "visa fuzz-diff --programs 1 --seed 17" (with --features when given).
std::string Reproducer(uint64_t seed, const std::string& features);

// Exit codes: 0 no difference, 1 a difference (or a backend error), 2 bad options.
int FuzzDiffCommand(const FuzzDiffOptions& options, std::ostream& out, std::ostream& err);

void AddFuzzDiffCommand(CLI::App& app, FuzzDiffOptions& options, int& exit_code);

}  // namespace visa::cli
