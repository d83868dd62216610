// `visa bench`: the flags, the samples chosen, and the output of tools/whole_kernel_bench.h.
#include "tools/bench_command.h"

#include <iostream>
#include <vector>

#include "absl/strings/str_cat.h"
#include "dsl/text_excerpt.h"
#include "jit/parallel.h"
#include "nlohmann/json.hpp"
#include "samples/sample.h"
#include "tools/json_output.h"
#include "tools/numeric_flag.h"
#include "tools/progress.h"
#include "tools/whole_kernel_bench.h"

namespace visa::cli {
namespace {

// The flags' meaning together, checked before anything is measured; an empty string when sound.
std::string FlagError(const BenchOptions& options) {
  if (options.all && !options.sample.empty()) {
    return absl::StrCat("bench takes a SAMPLE or --all, not both (got --all and `", Excerpt(options.sample, 0), "`)");
  }
  if (!options.all && options.sample.empty()) return "bench needs a SAMPLE (or --all)";
  if (!options.all && samples::FindSample(options.sample) == nullptr) {
    return absl::StrCat("unknown sample `", Excerpt(options.sample, 0), "` (see `visa run --list`)");
  }
  if (options.repeat < 1 || options.repeat > kMaxBenchRepeat) {
    return absl::StrCat("--repeat: value `", options.repeat, "` is out of range: a whole number from 1 to ",
                        kMaxBenchRepeat);
  }
  if (options.max_interp_seconds < 0 || options.max_interp_seconds > kMaxInterpSecondsLimit) {
    return absl::StrCat("--max-interp-seconds: value `", options.max_interp_seconds,
                        "` is out of range: a whole number from 0 to ", kMaxInterpSecondsLimit);
  }
  if (absl::StatusOr<int> threads = jit::ResolveThreads(options.threads); !threads.ok()) {
    return absl::StrCat("--threads: ", threads.status().message());
  }
  return "";
}

}  // namespace

int BenchSampleCommand(const BenchOptions& options, std::ostream& out, std::ostream& err) {
  if (std::string error = FlagError(options); !error.empty()) {
    err << "error: " << error << "\n";
    return 2;
  }
  std::vector<const samples::Sample*> chosen;
  if (options.all) {
    // The slow samples (the manual's full sizes) are measured by name only: `tiled_gemm`'s fresh
    // and warm runs together passed 22 GB.
    for (const samples::Sample& sample : samples::AllSamples()) {
      if (!sample.slow) chosen.push_back(&sample);
    }
  } else {
    chosen.push_back(samples::FindSample(options.sample));
  }
  const WholeKernelSettings settings{.repeat = options.repeat,
                                     .threads = options.threads,
                                     .max_interp_seconds = static_cast<double>(options.max_interp_seconds)};
  std::vector<SampleFigures> measured;
  nlohmann::json json = nlohmann::json::array();
  int worst = 0;
  for (size_t i = 0; i < chosen.size(); ++i) {
    const samples::Sample& sample = *chosen[i];
    const std::string label = options.all ? absl::StrCat("bench ", i + 1, "/", chosen.size(), " ", sample.name)
                                          : absl::StrCat("bench ", sample.name);
    Progress progress(label, WholeKernelSteps(settings), err, options.progress && Progress::StderrIsTerminal());
    absl::StatusOr<SampleFigures> figures = MeasureWholeKernel(sample, settings, progress);
    progress.Finish();
    if (!figures.ok()) {
      worst = std::max(worst, absl::IsInternal(figures.status()) ? 1 : 2);
      err << "error: " << sample.name << ": " << figures.status().message() << "\n";
      json.push_back({{"sample", sample.name}, {"error", figures.status().message()}});
      continue;
    }
    json.push_back(BenchJson(*figures));
    measured.push_back(std::move(*figures));
  }
  if (options.json) {
    out << (options.all ? json : json[0]).dump(2) << "\n";
  } else if (options.all) {
    out << WholeKernelTable(measured) << "\n";
    for (const SampleFigures& f : measured) out << WholeKernelText(f) << "\n";
  } else if (!measured.empty()) {
    out << WholeKernelText(measured[0]);
  }
  return worst;
}

void AddBenchCommand(CLI::App& app, BenchOptions& options, int& exit_code) {
  CLI::App* cmd = app.add_subcommand(
      "bench", "Time a sample (or every sample) on the interpreter and the JIT, fresh and warm (medians and ratios)");
  cmd->add_option("sample", options.sample, "Sample name (see `visa run --list`)");
  cmd->add_flag("--all", options.all, "Every sample but the slow ones (the manual's full sizes): a summary table, then each sample's ops");
  cmd->add_flag("--json", options.json, "JSON instead of the table: one object (with --all, an array of one per sample)");
  cmd->add_option("--repeat", options.repeat, "Runs per measurement (default 3)")
      ->check(WholeNumberIn(1, kMaxBenchRepeat));
  cmd->add_option("--threads", options.threads, "JIT threads (default 0: the host's)")
      ->check(WholeNumberIn(0, jit::kMaxThreads));
  cmd->add_option("--max-interp-seconds", options.max_interp_seconds,
                  "Stop a sample's interpreter runs past this many seconds, at an op boundary (default 30; "
                  "0 skips the interpreter)")
      ->check(WholeNumberIn(0, kMaxInterpSecondsLimit));
  cmd->callback([&options, &exit_code] { exit_code = BenchSampleCommand(options, std::cout, std::cerr); });
}

}  // namespace visa::cli
