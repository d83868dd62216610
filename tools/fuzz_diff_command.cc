// `visa fuzz-diff`: the differential fuzzing loop (trace, interpreter, JIT, op-by-op comparison)
// and its command line.
#include "tools/fuzz_diff_command.h"

#include <algorithm>
#include <chrono>
#include <iostream>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "dsl/status_macros.h"
#include "interp/interpreter.h"
#include "jit/jit_backend.h"
#include "runtime/recording_backend.h"
#include "runtime/trace_backend.h"
#include "tools/text_flag.h"
#include "runtime/trace_options.h"

namespace visa::cli {
namespace {

constexpr int64_t kMaxPrograms = 100'000'000;
// Seeds stay below 2^63 so that the seeds a run draws (at most kMaxPrograms after the first) never
// wrap around.
constexpr uint64_t kMaxSeed = uint64_t{1} << 63;
constexpr int64_t kMaxSeconds = 10'000'000;  // about four months

absl::StatusOr<std::vector<std::string>> ParseFeatures(const std::string& text) {
  std::vector<std::string> names;
  for (absl::string_view part : absl::StrSplit(text, ',', absl::SkipWhitespace())) {
    names.emplace_back(absl::StripAsciiWhitespace(part));
  }
  if (names.empty() && !absl::StripAsciiWhitespace(text).empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("--features: `", text, "` names no feature (comma-separated names, e.g. switch,cast)"));
  }
  RETURN_IF_ERROR(samples::CheckFeatureNames(names));
  return names;
}

absl::Status CheckOptions(const FuzzDiffOptions& options) {
  if (options.programs < 1 || options.programs > kMaxPrograms) {
    return absl::InvalidArgumentError(
        absl::StrCat("--programs must be between 1 and ", kMaxPrograms, ", got ", options.programs));
  }
  if (options.seed > kMaxSeed) {
    return absl::InvalidArgumentError(absl::StrCat("--seed must be at most ", kMaxSeed, ", got ", options.seed));
  }
  // (Written so that NaN fails too.)
  if (!(options.seconds >= 0 && options.seconds <= static_cast<double>(kMaxSeconds))) {
    return absl::InvalidArgumentError(
        absl::StrCat("--time must be between 0 (no limit) and ", kMaxSeconds, " seconds, got ", options.seconds));
  }
  if (options.threads < 0) {
    return absl::InvalidArgumentError(absl::StrCat("--threads must be 0 (the host's) or more, got ", options.threads));
  }
  return ParseFeatures(options.features).status();
}

// The engine or rule a tracer error names first ("Switch Broadcast01", "Transpose"): what the
// message says before its first ':' (or '{'), when that is short enough to be a name.
std::string RejectionKey(absl::string_view message) {
  const size_t end = std::min(message.find(':'), message.find('{'));
  if (end == absl::string_view::npos || end > 48) return "other";
  return std::string(absl::StripAsciiWhitespace(message.substr(0, end)));
}

bool HasAll(const std::vector<std::string>& features, const std::vector<std::string>& require) {
  return std::all_of(require.begin(), require.end(), [&](const std::string& f) {
    return std::find(features.begin(), features.end(), f) != features.end();
  });
}

std::string CountsText(const std::map<std::string, int64_t>& counts, bool details) {
  std::vector<std::string> parts;
  for (const auto& [name, count] : counts) {
    if ((name.find(':') != std::string::npos) == details) parts.push_back(absl::StrCat(name, " ", count));
  }
  return parts.empty() ? "none" : absl::StrJoin(parts, ", ");
}

void Record(FuzzSummary& summary, const samples::RandomProgram& program, const FuzzVerdict& verdict,
            const FuzzDiffOptions& options) {
  FuzzFinding finding{program.seed, verdict.message, Reproducer(program.seed, options.features), program.description};
  ++summary.draws;
  for (const samples::CoverageKey& k : program.drawn) ++summary.coverage[k].drawn;
  switch (verdict.kind) {
    case FuzzVerdict::kRejected:
      ++summary.rejected;
      ++summary.rejections[RejectionKey(verdict.message)];
      summary.rejected_draws.push_back(finding);
      return;
    case FuzzVerdict::kFiltered: ++summary.filtered; return;
    case FuzzVerdict::kUnimplemented: summary.unimplemented.push_back(finding); break;
    case FuzzVerdict::kError: summary.errors.push_back(finding); break;
    case FuzzVerdict::kDifferent: summary.differences.push_back(finding); break;
    case FuzzVerdict::kIdentical: ++summary.identical; break;
  }
  ++summary.programs;
  if (verdict.kind == FuzzVerdict::kIdentical || verdict.kind == FuzzVerdict::kDifferent) {
    for (const std::string& f : verdict.features) ++summary.features[f];
    for (const samples::CoverageKey& k : verdict.coverage) ++summary.coverage[k].ran;
  }
}

void PrintFinding(std::ostream& out, const char* what, const FuzzFinding& f) {
  out << what << " seed " << f.seed << ": " << f.message << "\n  reproduce: " << f.reproducer << "\n  "
      << absl::StrReplaceAll(f.description, {{"\n", "\n  "}}) << "\n";
}

// Findings grouped by message: how many, and the first seed of each with its reproducer.
void PrintGrouped(std::ostream& out, const std::string& what, const std::vector<FuzzFinding>& findings) {
  std::map<std::string, std::pair<int64_t, const FuzzFinding*>> by_message;
  for (const FuzzFinding& f : findings) {
    auto [it, inserted] = by_message.try_emplace(f.message, 0, &f);
    ++it->second.first;
  }
  for (const auto& [message, seen] : by_message) {
    out << what << " " << seen.first << " program(s), first seed " << seen.second->seed << " ("
        << seen.second->reproducer << "): " << message << "\n";
  }
}

}  // namespace

FuzzVerdict FuzzOne(const samples::RandomProgram& program, const std::vector<std::string>& require,
                    Backend& candidate) {
  FuzzVerdict verdict;
  TraceBackend tracer;  // records only: the rules are checked, nothing runs
  absl::StatusOr<samples::SampleRun> traced = program.sample.Run(tracer, TracingOptions());
  if (!traced.ok()) return {FuzzVerdict::kRejected, std::string(traced.status().message()), {}, {}};
  verdict.features = samples::ProgramFeatures(traced->program);
  verdict.coverage = samples::ProgramCoverage(traced->program);
  if (!HasAll(verdict.features, require)) {
    verdict.kind = FuzzVerdict::kFiltered;
    return verdict;
  }
  interp::Interpreter interpreter;
  RecordingBackend want(interpreter), got(candidate);
  absl::StatusOr<samples::SampleRun> reference = program.sample.Run(want);
  if (!reference.ok()) {
    verdict.kind = FuzzVerdict::kError;
    verdict.message = absl::StrCat("the interpreter failed on a traced program: ", reference.status().ToString());
    return verdict;
  }
  absl::StatusOr<samples::SampleRun> run = program.sample.Run(got);
  if (!run.ok()) {
    const bool unimplemented = run.status().code() == absl::StatusCode::kUnimplemented;
    verdict.kind = unimplemented ? FuzzVerdict::kUnimplemented : FuzzVerdict::kError;
    verdict.message = unimplemented ? std::string(run.status().message())
                                    : absl::StrCat("the ", candidate.name(), " backend failed where the interpreter ran: ",
                                                   run.status().ToString());
    return verdict;
  }
  std::optional<std::string> difference =
      FirstDifference(reference->program, want.records(), "interp", got.records(), candidate.name());
  if (difference) {
    verdict.kind = FuzzVerdict::kDifferent;
    verdict.message = *difference;
  }
  return verdict;
}

std::vector<samples::CoverageKey> FuzzSummary::MissingCoverage() const {
  std::vector<samples::CoverageKey> missing;
  for (const samples::CoverageKey& k : claimed) {
    auto it = coverage.find(k);
    if (it == coverage.end() || it->second.ran == 0) missing.push_back(k);
  }
  return missing;
}

std::string FuzzSummary::SummaryLine() const {
  std::string seeds = last_seed >= first_seed ? absl::StrCat(first_seed, "-", last_seed) : "none";
  std::string line = absl::StrFormat(
      "fuzz-diff: %d draws (seeds %s): %d programs ran: %d identical, %d different, %d skipped (%s unimplemented), "
      "%d errors; %d rejected by the tracer, %d filtered",
      draws, seeds, programs, identical, differences.size(), unimplemented.size(), candidate, errors.size(), rejected,
      filtered);
  if (stopped_by_time) absl::StrAppend(&line, "; stopped by --time");
  return line;
}

std::string FuzzSummary::FeatureLines() const { return absl::StrCat("features: ", CountsText(features, false)); }

std::string FuzzSummary::RejectionLine() const { return absl::StrCat("rejected: ", CountsText(rejections, false)); }

std::string FuzzSummary::CoverageTable() const {
  std::map<samples::CoverageKey, CoverageCount> rows = coverage;
  for (const samples::CoverageKey& k : claimed) rows.try_emplace(k);
  std::string table = "coverage (draws that called for a kind / programs that ran it on both backends; * = the "
                      "generator claims to draw it):\n";
  for (const auto& [key, count] : rows) {
    const bool is_claimed = std::find(claimed.begin(), claimed.end(), key) != claimed.end();
    absl::StrAppendFormat(&table, "  %-12s %-20s %8d %8d %s%s\n", key.category, key.kind, count.drawn, count.ran,
                          is_claimed ? "*" : " ", is_claimed && count.ran == 0 ? " NEVER RAN" : "");
  }
  const std::vector<samples::CoverageKey> missing = MissingCoverage();
  const std::string under =
      required_features.empty() ? "" : absl::StrCat(" with --features ", required_features);
  if (missing.empty()) {
    absl::StrAppendFormat(&table, "coverage: all %d kinds the generator draws%s ran on both backends", claimed.size(),
                          under);
  } else {
    std::vector<std::string> names;
    for (const samples::CoverageKey& k : missing) {
      auto it = coverage.find(k);
      names.push_back(absl::StrCat(k.ToString(), " (drawn ", it == coverage.end() ? 0 : it->second.drawn, ")"));
    }
    absl::StrAppendFormat(&table, "coverage: %d of %d kinds the generator draws%s never ran: %s", missing.size(),
                          claimed.size(), under, absl::StrJoin(names, ", "));
  }
  if (!ruled_out.empty()) {
    std::vector<std::string> names;
    for (const samples::CoverageKey& k : ruled_out) names.push_back(k.ToString());
    absl::StrAppendFormat(&table,
                          "\ncoverage: not required: %d kinds the generator draws without --features, which no draw "
                          "with --features %s calls for: %s",
                          ruled_out.size(), required_features, absl::StrJoin(names, ", "));
  }
  return table;
}

absl::StatusOr<FuzzSummary> FuzzPrograms(const FuzzDiffOptions& options, Backend& candidate,
                                         const std::function<void(const FuzzSummary&)>& progress,
                                         const ProgramDrawer& drawer) {
  RETURN_IF_ERROR(CheckOptions(options));
  ASSIGN_OR_RETURN(std::vector<std::string> require, ParseFeatures(options.features));
  const samples::DrawOptions draw{require};
  // Reproducers spell the features as one shell word: "switch,cast", whatever the spacing given.
  FuzzDiffOptions normalized = options;
  normalized.features = absl::StrJoin(require, ",");
  FuzzSummary summary;
  summary.candidate = candidate.name();
  summary.first_seed = options.seed;
  summary.last_seed = options.seed - 1;
  summary.claimed = samples::DrawnKinds(draw);
  summary.required_features = normalized.features;
  for (const samples::CoverageKey& k : samples::AllDrawnKinds()) {
    if (std::find(summary.claimed.begin(), summary.claimed.end(), k) == summary.claimed.end()) {
      summary.ruled_out.push_back(k);
    }
  }
  const auto start = std::chrono::steady_clock::now();
  for (int64_t i = 0; i < options.programs; ++i) {
    if (options.seconds > 0 &&
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() >= options.seconds) {
      summary.stopped_by_time = true;
      break;
    }
    const uint64_t seed = options.seed + static_cast<uint64_t>(i);
    samples::RandomProgram program = drawer ? drawer(seed, draw) : samples::DrawRandomProgram(seed, draw);
    const FuzzVerdict verdict = FuzzOne(program, require, candidate);
    summary.last_seed = seed;
    const int64_t before = summary.programs;
    Record(summary, program, verdict, normalized);
    if (progress && summary.programs > before) progress(summary);
  }
  return summary;
}

void PrintFuzzReport(const FuzzSummary& summary, std::ostream& out, bool show_rejected) {
  if (show_rejected) {
    for (const FuzzFinding& f : summary.rejected_draws) PrintFinding(out, "REJECTED", f);
  }
  for (const FuzzFinding& f : summary.differences) PrintFinding(out, "DIFFERENT", f);
  for (const FuzzFinding& f : summary.errors) PrintFinding(out, "ERROR", f);
  PrintGrouped(out, "rejected by the tracer:", summary.rejected_draws);
  PrintGrouped(out, absl::StrCat("skipped (", summary.candidate, " unimplemented):"), summary.unimplemented);
  out << summary.SummaryLine() << "\n" << summary.FeatureLines() << "\n" << summary.RejectionLine() << "\n"
      << summary.CoverageTable() << "\n";
}

std::string Reproducer(uint64_t seed, const std::string& features) {
  std::string command = absl::StrCat("visa fuzz-diff --programs 1 --seed ", seed);
  if (!features.empty()) absl::StrAppend(&command, " --features ", features);
  return command;
}

int FuzzDiffCommand(const FuzzDiffOptions& options, std::ostream& out, std::ostream& err) {
  if (absl::Status status = CheckOptions(options); !status.ok()) {
    err << "error: " << status.message() << "\n";
    return 2;
  }
  absl::StatusOr<std::unique_ptr<jit::JitBackend>> jit = jit::JitBackend::Create({.threads = options.threads});
  if (!jit.ok()) {
    err << "error: " << jit.status().message() << "\n";
    return 2;
  }
  const auto start = std::chrono::steady_clock::now();
  // A progress line every tenth of the draws (or of the time), at most one a second.
  const int64_t step = std::max<int64_t>(1, std::min<int64_t>(options.programs, 100'000) / 10);
  size_t seen_differences = 0, seen_errors = 0;
  auto announce = [&](const char* what, const std::vector<FuzzFinding>& findings, size_t& seen) {
    for (; seen < findings.size(); ++seen) {
      const FuzzFinding& f = findings[seen];
      out << what << " seed " << f.seed << " (" << f.reproducer << "): " << f.message << "\n";
    }
  };
  auto progress = [&](const FuzzSummary& s) {
    // A long run names each finding as it happens; the full report follows at the end.
    announce("found: DIFFERENT", s.differences, seen_differences);
    announce("found: ERROR", s.errors, seen_errors);
    out.flush();
    if (s.draws % step != 0 || s.draws == options.programs) return;
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    out << absl::StrFormat("progress: %d/%d draws, seeds %d-%d, %d ran, %d different, %d errors, %d rejected, %.1f s\n",
                           s.draws, options.programs, s.first_seed, s.last_seed, s.programs, s.differences.size(),
                           s.errors.size(), s.rejected, seconds);
    out.flush();
  };
  absl::StatusOr<FuzzSummary> summary = FuzzPrograms(options, **jit, progress);
  if (!summary.ok()) {
    err << "error: " << summary.status().message() << "\n";
    return 2;
  }
  PrintFuzzReport(*summary, out, options.show_rejected);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  out << absl::StrFormat("time: %.1f s\n", seconds);
  // A gate that ran nothing passed nothing: with no program run, every kind "ran" vacuously.
  if (options.require_coverage && summary->programs == 0) {
    out << "coverage: no program ran (every draw was rejected or filtered out): nothing was compared\n";
    return 1;
  }
  const bool covered = !options.require_coverage || summary->MissingCoverage().empty();
  return summary->differences.empty() && summary->errors.empty() && covered ? 0 : 1;
}

void AddFuzzDiffCommand(CLI::App& app, FuzzDiffOptions& options, int& exit_code) {
  CLI::App* cmd = app.add_subcommand(
      "fuzz-diff", "Run random programs on the interpreter and the JIT and compare every op's output");
  CLI::Option* programs = cmd->add_option(
      "--programs", options.programs,
      "Seeds to draw, each once (default 100, or no limit with --time); rejected draws are counted");
  // CLI11 would read "-1" as 2^64 - 1 for an unsigned option: refuse the sign outright.
  const CLI::Validator not_negative(
      [](std::string& text) { return absl::StartsWith(text, "-") ? "must not be negative, got " + text : ""; },
      "", "not negative");
  cmd->add_option("--seed", options.seed, "Seed of the first draw; each draw takes the next (default 1)")
      ->check(not_negative);
  cmd->add_option("--features", options.features,
                  absl::StrCat("Run only programs exercising all of these (comma-separated: ",
                               absl::StrJoin(samples::RandomProgramFeatures(), ", "), ")"))
      ->check(NonEmptyText("one or more features"));
  CLI::Option* time = cmd->add_option("--time", options.seconds, "Stop drawing after this many seconds (default: no limit)");
  cmd->add_option("--threads", options.threads, "JIT threads (default: the host's)");
  cmd->add_flag("--show-rejected", options.show_rejected, "Print every draw the tracer rejected in full");
  cmd->add_flag("--require-coverage", options.require_coverage,
                "Fail unless every kind the generator draws (with --features: can draw with them) ran on both backends "
                "(see the coverage table)");
  cmd->callback([&options, &exit_code, programs, time] {
    if (time->count() > 0 && programs->count() == 0) options.programs = kMaxPrograms;
    exit_code = FuzzDiffCommand(options, std::cout, std::cerr);
  });
}

}  // namespace visa::cli
