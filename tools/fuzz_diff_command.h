// `visa fuzz-diff`: random programs (random_programs/random_program.h) run on the interpreter and on the
// JIT, every op's output compared; a difference prints the seed, the command that reproduces it
// and the first differing op, position and values. Seed, count, time and JIT threads are options;
// the report ends with a coverage table of what actually ran. The differential test drives the same loop
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
#include "random_programs/random_program.h"

namespace visa::cli {

struct FuzzDiffOptions {
  int64_t programs = 100;  // seeds drawn, from `seed` on: each seed is drawn exactly once
  uint64_t seed = 1;       // the first draw's seed; each draw takes the next
  double seconds = 0;      // stop drawing once this much time has passed (0: no limit)
  std::string features;    // comma-separated: the draws include them; programs lacking one are filtered
  int threads = 0;         // JIT threads; 0: the host's hardware threads
  bool show_rejected = false;     // print every rejected draw in full (for tuning the generator)
  bool require_coverage = false;  // fail unless every kind the generator draws ran on both backends
};

// What happened to one seed's program.
struct FuzzVerdict {
  enum Kind {
    kIdentical,      // both backends wrote the same bytes in every op
    kDifferent,      // an op's output differs (message: the first difference)
    kRejected,       // the tracer refused the draw (message: its error); counted, never drawn again
    kFiltered,       // traced, but lacks a required feature; counted
    kUnimplemented,  // the candidate (the JIT) has no code for something in it (message: its error)
    kError,          // the interpreter failed, or the candidate failed other than Unimplemented
  };
  Kind kind = kIdentical;
  std::string message;
  std::vector<std::string> features;            // what the traced program exercises
  std::vector<samples::CoverageKey> coverage;   // the kinds the traced program exercises
};

// Traces one program and runs it on the interpreter and on `candidate`, comparing every op's
// output; `require` lists features it must exercise.
FuzzVerdict FuzzOne(const samples::RandomProgram& program, const std::vector<std::string>& require,
                    Backend& candidate);

// A program worth a report: a difference, an error, a JIT Unimplemented or a rejected draw.
struct FuzzFinding {
  uint64_t seed = 0;
  std::string message;
  std::string reproducer;   // the `visa fuzz-diff` command that draws this seed alone
  std::string description;  // the program (samples::RandomProgram::description)
};

// One row of the coverage table.
struct CoverageCount {
  int64_t drawn = 0;  // draws that called for the kind (rejected ones included)
  int64_t ran = 0;    // programs that ran it on both backends and were compared
};

struct FuzzSummary {
  std::string candidate = "jit";  // the backend compared with the interpreter
  int64_t draws = 0;     // seeds drawn: programs + rejected + filtered
  int64_t programs = 0;  // run on the interpreter (identical + different + unimplemented + errors)
  int64_t identical = 0, rejected = 0, filtered = 0;
  uint64_t first_seed = 0, last_seed = 0;
  bool stopped_by_time = false;  // --time ended the run before every seed was drawn
  std::map<std::string, int64_t> features;    // compared programs exercising each feature
  std::map<std::string, int64_t> rejections;  // rejected draws by the engine or rule named first
  std::map<samples::CoverageKey, CoverageCount> coverage;
  std::vector<samples::CoverageKey> claimed;  // what the generator draws under the run's options
  std::string required_features;  // --features as given ("contraction,cast"), empty when none
  // Kinds the generator draws without --features that the required features rule out: not
  // claimed, so --require-coverage does not ask for them.
  std::vector<samples::CoverageKey> ruled_out;
  std::vector<FuzzFinding> differences, errors, unimplemented, rejected_draws;

  // Claimed kinds that no compared program ran.
  std::vector<samples::CoverageKey> MissingCoverage() const;

  // "fuzz-diff: 300 draws (seeds 1-300): 296 programs ran: 296 identical, 0 different, 0 skipped
  // (jit unimplemented), 0 errors; 4 rejected by the tracer, 0 filtered"
  std::string SummaryLine() const;
  std::string FeatureLines() const;  // "features: bitmap 41, cast 120, ..."
  std::string RejectionLine() const;  // "rejected: Switch Broadcast01 3, Transpose 12, ..."
  // The table: every kind drawn, run or claimed, with both counts, claimed kinds marked; then
  // "coverage: ..." saying whether every claimed kind ran, and under --features which kinds the
  // features rule out.
  std::string CoverageTable() const;
};

// Draws a seed's program; samples::DrawRandomProgram unless a test stands in for it.
using ProgramDrawer = std::function<samples::RandomProgram(uint64_t seed, const samples::DrawOptions&)>;

// Draws options.programs seeds from options.seed on (or fewer: options.seconds), each exactly once,
// and runs every program the tracer accepts. `progress` is called after each program that ran.
// Errors: bad options (unknown feature, a count, seed or time out of range).
absl::StatusOr<FuzzSummary> FuzzPrograms(const FuzzDiffOptions& options, Backend& candidate,
                                         const std::function<void(const FuzzSummary&)>& progress = {},
                                         const ProgramDrawer& drawer = {});

// The report after the run: every difference and error with its reproducer and program, the
// rejected draws and Unimplemented skips grouped by message (each with its first seed), the
// summary, feature and rejection lines and the coverage table.
void PrintFuzzReport(const FuzzSummary& summary, std::ostream& out, bool show_rejected = false);

// "visa fuzz-diff --programs 1 --seed 17" (with --features when given).
std::string Reproducer(uint64_t seed, const std::string& features);

// Exit codes: 0 no difference, 1 a difference, a backend error or (with require_coverage) a kind
// the generator draws that never ran, 2 bad options.
int FuzzDiffCommand(const FuzzDiffOptions& options, std::ostream& out, std::ostream& err);

void AddFuzzDiffCommand(CLI::App& app, FuzzDiffOptions& options, int& exit_code);

}  // namespace visa::cli
