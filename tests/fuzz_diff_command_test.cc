// Tests of `visa fuzz-diff`: the summary of a short run, the feature filter, how differences,
// Unimplemented skips and errors are reported (against stand-in backends that misbehave on
// purpose), and bad options and flags as clear errors.
#include <sstream>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "CLI/CLI.hpp"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "samples/random_program.h"
#include "tools/fuzz_diff_command.h"

namespace visa::cli {
namespace {

using ::testing::HasSubstr;
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
  EXPECT_THAT(r.out, HasSubstr("fuzz-diff: 4 programs (seeds 1-"));
  EXPECT_THAT(r.out, HasSubstr(": 4 identical, 0 different, 0 skipped (jit unimplemented), 0 errors; "));
  EXPECT_THAT(r.out, HasSubstr("\nfeatures: "));
  EXPECT_THAT(r.out, HasSubstr("\nrejected: "));
  EXPECT_THAT(r.out, HasSubstr("\ntime: "));
}

TEST(FuzzDiffCommand, FeaturesKeepOnlyProgramsThatExerciseThem) {
  Result r = RunFuzzDiff({.programs = 2, .seed = 5, .features = "contraction, switch", .threads = 2});
  EXPECT_EQ(r.code, 0) << r.out << r.err;
  EXPECT_THAT(r.out, HasSubstr(": 2 identical, 0 different"));
  EXPECT_THAT(r.out, HasSubstr("contraction 2"));
  EXPECT_THAT(r.out, HasSubstr("switch 2"));
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
  EXPECT_THAT(report.str(), HasSubstr("skipped (partial unimplemented) 3 program(s), first seed 1: partial: no code"));
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
                "switch, table, transpose, zero_point)\n"},
           Case{{.programs = 1, .threads = -1}, "error: --threads must be 0 (the host's) or more, got -1\n"},
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
  app.parse("fuzz-diff --programs 2 --seed 7 --features cast --threads 2", false);
  std::string out = testing::internal::GetCapturedStdout();
  EXPECT_EQ(exit_code, 0) << out;
  EXPECT_EQ(options.programs, 2);
  EXPECT_EQ(options.seed, 7u);
  EXPECT_EQ(options.features, "cast");
  EXPECT_THAT(out, HasSubstr("fuzz-diff: 2 programs (seeds 7-"));
}

TEST(FuzzDiffCommand, MalformedFlagsAreParseErrors) {
  // `visa` prints a CLI::ParseError as "error: ..." with exit code 2; none of these may run.
  for (const char* line : {"fuzz-diff --programs many", "fuzz-diff --seed -1", "fuzz-diff --seed 1x",
                           "fuzz-diff --programs", "fuzz-diff --bogus 3"}) {
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
