// Tests of `visa fuzz-diff`: the summary of a short run, the feature filter, how differences,
// Unimplemented skips, errors and rejected draws are reported (against stand-in backends and
// drawers that misbehave on purpose), the time limit, the coverage table and its check, and bad
// options and flags as clear errors.
#include <algorithm>
#include <cmath>
#include <sstream>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "CLI/CLI.hpp"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "random_programs/random_program.h"
#include "tools/fuzz_diff_command.h"

namespace visa::cli {
namespace {

using ::testing::Contains;
using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::StartsWith;

struct Result {
  int code;
  std::string out, err;
};

Result RunFuzzDiff(const FuzzDiffOptions& options) {
  std::ostringstream out, err;
  int code = FuzzDiffCommand(options, out, err);
  return {code, out.str(), err.str()};
}

// Pipelines "run" without writing anything: every pipeline's output differs from the interpreter's.
class LazyBackend : public Backend {
 public:
  using Backend::Run;
  const char* name() const override { return "lazy"; }
  absl::Status Run(const PipelineOp&, const PipelineTensors&) override { return absl::OkStatus(); }
};

// Has no code for pipelines, the way the JIT reports what it cannot compile.
class UnimplementedBackend : public Backend {
 public:
  using Backend::Run;
  const char* name() const override { return "partial"; }
  absl::Status Run(const PipelineOp&, const PipelineTensors&) override {
    return absl::UnimplementedError("partial: no code for pipelines");
  }
};

// Fails on pipelines with an internal error (a bug, not a missing feature).
class BrokenBackend : public Backend {
 public:
  using Backend::Run;
  const char* name() const override { return "broken"; }
  absl::Status Run(const PipelineOp&, const PipelineTensors&) override {
    return absl::InternalError("broken: lost a packet");
  }
};

TEST(FuzzDiffCommand, AFewProgramsAgreeAndTheSummaryCountsThem) {
  Result r = RunFuzzDiff({.programs = 4, .seed = 1, .threads = 2});
  EXPECT_EQ(r.code, 0) << r.out << r.err;
  EXPECT_EQ(r.err, "");
  EXPECT_THAT(r.out, HasSubstr("fuzz-diff: 4 draws (seeds 1-4): 4 programs ran: 4 identical, 0 different, 0 skipped "
                               "(jit unimplemented), 0 errors; 0 rejected by the tracer, 0 filtered\n"));
  EXPECT_THAT(r.out, HasSubstr("\nfeatures: "));
  EXPECT_THAT(r.out, HasSubstr("\nrejected: "));
  EXPECT_THAT(r.out, HasSubstr("\ncoverage (draws that called for a kind / programs that ran it"));
  EXPECT_THAT(r.out, HasSubstr("\n  stage        fetch                       4        4 *\n"));
  EXPECT_THAT(r.out, HasSubstr("\ntime: "));
}

TEST(FuzzDiffCommand, FeaturesKeepOnlyProgramsThatExerciseThem) {
  Result r = RunFuzzDiff({.programs = 2, .seed = 5, .features = "contraction, switch", .threads = 2});
  EXPECT_EQ(r.code, 0) << r.out << r.err;
  EXPECT_THAT(r.out, HasSubstr(": 2 identical, 0 different"));
  EXPECT_THAT(r.out, HasSubstr("contraction 2"));
  EXPECT_THAT(r.out, HasSubstr("switch 2"));
}

// A draw the tracer refuses keeps its seed: it is counted, grouped by message with its first seed
// and a reproducer that draws exactly that seed, and the next seed is the next draw.
TEST(FuzzDiffCommand, ARejectedDrawIsCountedAndReportedNeverDrawnAgain) {
  ProgramDrawer odd_seeds_break_a_rule = [](uint64_t seed, const samples::DrawOptions& options) {
    samples::RandomProgram program = samples::DrawRandomProgram(seed, options);
    if (seed % 2 == 1) {
      program.sample.runner = [](Backend&, const DeviceOptions&) -> absl::StatusOr<samples::SampleRun> {
        return absl::InvalidArgumentError("Fake Engine: a rule the generator broke");
      };
    }
    return program;
  };
  LazyBackend lazy;
  absl::StatusOr<FuzzSummary> summary =
      FuzzPrograms({.programs = 4, .seed = 11}, lazy, {}, odd_seeds_break_a_rule);
  ASSERT_TRUE(summary.ok()) << summary.status();
  EXPECT_EQ(summary->draws, 4);
  EXPECT_EQ(summary->rejected, 2);
  EXPECT_EQ(summary->programs, 2);  // seeds 12 and 14: not 4 programs found by drawing more seeds
  EXPECT_EQ(summary->last_seed, 14u);
  ASSERT_EQ(summary->rejected_draws.size(), 2u);
  EXPECT_EQ(summary->rejected_draws[0].seed, 11u);
  EXPECT_EQ(summary->rejected_draws[0].reproducer, "visa fuzz-diff --programs 1 --seed 11");
  EXPECT_EQ(summary->rejections.at("Fake Engine"), 2);
  std::ostringstream report;
  PrintFuzzReport(*summary, report);
  EXPECT_THAT(report.str(), HasSubstr("rejected by the tracer: 2 program(s), first seed 11 (visa fuzz-diff --programs 1 "
                                      "--seed 11): Fake Engine: a rule the generator broke\n"));
  EXPECT_THAT(report.str(), HasSubstr("; 2 rejected by the tracer, 0 filtered"));
  // The rejected draws called for a fetch that never ran: drawn counts them, ran does not.
  const CoverageCount fetch = summary->coverage.at({"stage", "fetch"});
  EXPECT_EQ(fetch.drawn, 4);
  EXPECT_EQ(fetch.ran, 2);
}

// The table marks a kind the generator claims to draw but that no compared program ran, and
// --require-coverage turns that into a failure; a run covering nothing misses every claim.
TEST(FuzzDiffCommand, AClaimedKindThatNeverRanFailsTheCoverageCheck) {
  ProgramDrawer contractions_break_a_rule = [](uint64_t seed, const samples::DrawOptions& options) {
    samples::RandomProgram program = samples::DrawRandomProgram(seed, options);
    const samples::CoverageKey align{"stage", "align"};
    if (std::find(program.drawn.begin(), program.drawn.end(), align) != program.drawn.end()) {
      program.sample.runner = [](Backend&, const DeviceOptions&) -> absl::StatusOr<samples::SampleRun> {
        return absl::InvalidArgumentError("Aligner: refused");
      };
    }
    return program;
  };
  LazyBackend lazy;
  absl::StatusOr<FuzzSummary> summary = FuzzPrograms({.programs = 12, .seed = 1}, lazy, {}, contractions_break_a_rule);
  ASSERT_TRUE(summary.ok()) << summary.status();
  ASSERT_GT((summary->coverage[samples::CoverageKey{"stage", "align"}].drawn), 0) << "no contraction among the seeds";
  const std::vector<samples::CoverageKey> missing = summary->MissingCoverage();
  EXPECT_THAT(missing, ::testing::Contains(samples::CoverageKey{"stage", "align"}));
  EXPECT_THAT(missing, ::testing::Contains(samples::CoverageKey{"reduce", "Add"}));
  const std::string table = summary->CoverageTable();
  EXPECT_THAT(table, ::testing::ContainsRegex("\n  stage        align +[1-9][0-9]* +0 \\* NEVER RAN\n"));
  EXPECT_THAT(table, HasSubstr(absl::StrCat("coverage: ", missing.size(), " of ", summary->claimed.size(),
                                            " kinds the generator draws never ran: ")));

  Result loose = RunFuzzDiff({.programs = 1, .seed = 1, .threads = 2});
  EXPECT_EQ(loose.code, 0) << loose.out << loose.err;
  EXPECT_THAT(loose.out, HasSubstr(" never ran: "));
  Result strict = RunFuzzDiff({.programs = 1, .seed = 1, .threads = 2, .require_coverage = true});
  EXPECT_EQ(strict.code, 1) << strict.out << strict.err;
}

// Under --features the check asks only for the kinds those features can draw, and the table says
// which kinds it leaves out and why.
TEST(FuzzDiffCommand, RequiredCoverageFollowsTheFeatures) {
  LazyBackend lazy;
  absl::StatusOr<FuzzSummary> summary = FuzzPrograms({.programs = 2, .seed = 1, .features = "contraction"}, lazy);
  ASSERT_TRUE(summary.ok()) << summary.status();
  const samples::CoverageKey masked{"adapter", "masked"}, align{"stage", "align"};
  EXPECT_THAT(summary->claimed, Not(Contains(masked)));
  EXPECT_THAT(summary->claimed, Contains(align));
  EXPECT_THAT(summary->ruled_out, Contains(masked));
  EXPECT_THAT(summary->MissingCoverage(), Not(Contains(masked)));
  EXPECT_EQ(summary->claimed.size() + summary->ruled_out.size(), samples::AllDrawnKinds().size());
  const std::string table = summary->CoverageTable();
  EXPECT_THAT(table, HasSubstr(" kinds the generator draws with --features contraction never ran: "));
  EXPECT_THAT(table, HasSubstr(absl::StrCat("coverage: not required: ", summary->ruled_out.size(),
                                            " kinds the generator draws without --features, which no draw with "
                                            "--features contraction calls for: ")));
  EXPECT_THAT(table, HasSubstr("adapter masked"));

  absl::StatusOr<FuzzSummary> plain = FuzzPrograms({.programs = 1, .seed = 1}, lazy);
  ASSERT_TRUE(plain.ok()) << plain.status();
  EXPECT_TRUE(plain->ruled_out.empty());
  EXPECT_THAT(plain->CoverageTable(), Not(HasSubstr("not required")));
}

TEST(FuzzDiffCommand, TimeStopsTheDrawsAndSaysSo) {
  LazyBackend lazy;
  absl::StatusOr<FuzzSummary> summary = FuzzPrograms({.programs = 100000, .seed = 1, .seconds = 0.001}, lazy);
  ASSERT_TRUE(summary.ok()) << summary.status();
  EXPECT_TRUE(summary->stopped_by_time);
  EXPECT_LT(summary->draws, 100000);
  EXPECT_EQ(summary->last_seed, summary->first_seed + summary->draws - 1);
  EXPECT_THAT(summary->SummaryLine(), HasSubstr("; stopped by --time"));
}

TEST(FuzzDiffCommand, TheSameSeedDrawsTheSameProgram) {
  samples::RandomProgram a = samples::DrawRandomProgram(42), b = samples::DrawRandomProgram(42);
  EXPECT_EQ(a.description, b.description);
  EXPECT_THAT(a.description, StartsWith("random program, seed 42\n"));
  EXPECT_NE(a.description, samples::DrawRandomProgram(43).description);
}

TEST(FuzzDiffCommand, ReproducerRunsTheOneSeed) {
  EXPECT_EQ(Reproducer(17, ""), "visa fuzz-diff --programs 1 --seed 17");
  EXPECT_EQ(Reproducer(17, "switch,cast"), "visa fuzz-diff --programs 1 --seed 17 --features switch,cast");
}

TEST(FuzzDiffCommand, ReproducersSpellTheFeaturesAsOneWord) {
  LazyBackend lazy;
  absl::StatusOr<FuzzSummary> summary = FuzzPrograms({.programs = 1, .seed = 1, .features = " cast , dma"}, lazy);
  ASSERT_TRUE(summary.ok()) << summary.status();
  ASSERT_EQ(summary->differences.size(), 1u);
  EXPECT_THAT(summary->differences[0].reproducer, HasSubstr(" --features cast,dma"));
}

TEST(FuzzDiffCommand, ADifferenceIsReportedWithSeedReproducerAndFirstDifferingOp) {
  LazyBackend lazy;
  absl::StatusOr<FuzzSummary> summary = FuzzPrograms({.programs = 1, .seed = 3}, lazy);
  ASSERT_TRUE(summary.ok()) << summary.status();
  ASSERT_EQ(summary->differences.size(), 1u);
  const FuzzFinding& f = summary->differences[0];
  EXPECT_EQ(f.reproducer, Reproducer(f.seed, ""));
  EXPECT_THAT(f.message, HasSubstr("interp"));
  EXPECT_THAT(f.message, HasSubstr("lazy"));
  std::ostringstream report;
  PrintFuzzReport(*summary, report);
  EXPECT_THAT(report.str(), StartsWith(absl::StrCat("DIFFERENT seed ", f.seed, ": op ")));
  EXPECT_THAT(report.str(), HasSubstr(absl::StrCat("  reproduce: visa fuzz-diff --programs 1 --seed ", f.seed, "\n")));
  EXPECT_THAT(report.str(), HasSubstr(absl::StrCat("  random program, seed ", f.seed, "\n")));
  EXPECT_THAT(report.str(), HasSubstr(", 1 different, "));
}

TEST(FuzzDiffCommand, UnimplementedIsSkippedAndCountedOtherFailuresAreErrors) {
  UnimplementedBackend partial;
  absl::StatusOr<FuzzSummary> skipped = FuzzPrograms({.programs = 3, .seed = 1}, partial);
  ASSERT_TRUE(skipped.ok()) << skipped.status();
  EXPECT_EQ(skipped->unimplemented.size(), 3u);
  EXPECT_TRUE(skipped->differences.empty());
  EXPECT_TRUE(skipped->errors.empty());
  std::ostringstream report;
  PrintFuzzReport(*skipped, report);
  EXPECT_THAT(report.str(), HasSubstr("skipped (partial unimplemented): 3 program(s), first seed 1 (visa fuzz-diff "
                                      "--programs 1 --seed 1): partial: no code"));
  EXPECT_THAT(report.str(), HasSubstr("0 different, 3 skipped (partial unimplemented), 0 errors"));

  BrokenBackend broken;
  absl::StatusOr<FuzzSummary> failed = FuzzPrograms({.programs = 1, .seed = 1}, broken);
  ASSERT_TRUE(failed.ok()) << failed.status();
  ASSERT_EQ(failed->errors.size(), 1u);
  EXPECT_THAT(failed->errors[0].message, HasSubstr("the broken backend failed where the interpreter ran"));
  EXPECT_THAT(failed->errors[0].message, HasSubstr("lost a packet"));
}

TEST(FuzzDiffCommand, BadOptionsAreClearErrors) {
  struct Case {
    FuzzDiffOptions options;
    std::string error;
  };
  for (const Case& c : {
           Case{{.programs = 0}, "error: --programs must be between 1 and 100000000, got 0\n"},
           Case{{.programs = -5}, "error: --programs must be between 1 and 100000000, got -5\n"},
           Case{{.programs = 1, .features = "switch,bogus"},
                "error: unknown feature `bogus` (features: bitmap, cast, contraction, dma, interleave, masked, sub, "
                "switch, table, transpose, vector, zero_point)\n"},
           Case{{.programs = 1, .features = ","},
                "error: --features: `,` names no feature (comma-separated names, e.g. switch,cast)\n"},
           Case{{.programs = 1, .features = " , ,"},
                "error: --features: ` , ,` names no feature (comma-separated names, e.g. switch,cast)\n"},
           Case{{.programs = 1, .threads = -1}, "error: --threads must be 0 (the host's) or more, got -1\n"},
           Case{{.programs = 1, .seconds = -1},
                "error: --time must be between 0 (no limit) and 10000000 seconds, got -1\n"},
           Case{{.programs = 1, .seconds = std::nan("")},
                "error: --time must be between 0 (no limit) and 10000000 seconds, got nan\n"},
           Case{{.programs = 1, .seed = ~uint64_t{0}},
                "error: --seed must be at most 9223372036854775808, got 18446744073709551615\n"},
       }) {
    Result r = RunFuzzDiff(c.options);
    EXPECT_EQ(r.code, 2) << c.error;
    EXPECT_EQ(r.err, c.error);
    EXPECT_EQ(r.out, "");
  }
}

TEST(FuzzDiffCommand, CommandLineFlagsReachTheOptions) {
  CLI::App app{"visa"};
  app.require_subcommand(1);
  FuzzDiffOptions options;
  int exit_code = -1;
  AddFuzzDiffCommand(app, options, exit_code);
  testing::internal::CaptureStdout();
  app.parse("fuzz-diff --programs 2 --seed 7 --features cast --threads 2 --time 600 --require-coverage", false);
  std::string out = testing::internal::GetCapturedStdout();
  EXPECT_EQ(exit_code, 1) << out;  // two programs cannot cover every kind
  EXPECT_EQ(options.programs, 2);
  EXPECT_EQ(options.seed, 7u);
  EXPECT_EQ(options.features, "cast");
  EXPECT_EQ(options.seconds, 600);
  EXPECT_TRUE(options.require_coverage);
  EXPECT_THAT(out, HasSubstr("fuzz-diff: 2 draws (seeds 7-8): "));
}

// `--features ""` is not "no filter": the flag was given and said nothing.
TEST(FuzzDiffCommand, AnEmptyFeaturesFlagIsRefused) {
  CLI::App app{"visa"};
  FuzzDiffOptions options;
  int exit_code = -1;
  AddFuzzDiffCommand(app, options, exit_code);
  try {
    std::vector<std::string> reversed_args{"", "--features", "1", "--programs", "fuzz-diff"};  // CLI11 reads it back to front
    app.parse(reversed_args);
    FAIL() << "parsed";
  } catch (const CLI::ValidationError& e) {
    EXPECT_THAT(std::string(e.what()), HasSubstr("--features: the value is empty: name one or more features"));
  }
  EXPECT_EQ(exit_code, -1);  // nothing ran
}

// A coverage gate that compared nothing has not passed: every draw filtered out is exit 1.
TEST(FuzzDiffCommand, RequiredCoverageFailsWhenNoProgramRan) {
  Result r = RunFuzzDiff({.programs = 2,
                          .seed = 1,
                          .features = "bitmap,cast,contraction,dma,interleave,masked,sub,switch,table,transpose,"
                                      "vector,zero_point",
                          .threads = 1,
                          .require_coverage = true});
  EXPECT_EQ(r.code, 1) << r.out << r.err;
  EXPECT_THAT(r.out, HasSubstr("coverage: no program ran"));
}

// --time alone draws until the time is up (no count), and says it stopped there.
TEST(FuzzDiffCommand, TimeWithoutProgramsHasNoCount) {
  CLI::App app{"visa"};
  FuzzDiffOptions options;
  int exit_code = -1;
  AddFuzzDiffCommand(app, options, exit_code);
  testing::internal::CaptureStdout();
  app.parse("fuzz-diff --time 0.2 --threads 2", false);
  std::string out = testing::internal::GetCapturedStdout();
  EXPECT_EQ(exit_code, 0) << out;
  EXPECT_EQ(options.programs, 100'000'000);
  EXPECT_THAT(out, HasSubstr("; stopped by --time\n"));
}

TEST(FuzzDiffCommand, MalformedFlagsAreParseErrors) {
  // `visa` prints a CLI::ParseError as "error: ..." with exit code 2; none of these may run.
  for (const char* line : {"fuzz-diff --programs many", "fuzz-diff --seed -1", "fuzz-diff --seed 1x",
                           "fuzz-diff --programs", "fuzz-diff --bogus 3", "fuzz-diff --time soon",
                           "fuzz-diff --require-coverage=maybe"}) {
    CLI::App app{"visa"};
    FuzzDiffOptions options;
    int exit_code = -1;
    AddFuzzDiffCommand(app, options, exit_code);
    EXPECT_THROW(app.parse(line, false), CLI::ParseError) << line;
    EXPECT_EQ(exit_code, -1) << line;
  }
}

}  // namespace
}  // namespace visa::cli
