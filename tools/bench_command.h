// `visa bench SAMPLE | --all [--json]`: whole-kernel figures of a sample or of every sample
// (tools/whole_kernel_bench.h): the interpreter, the JIT's compile, its run on a fresh device and
// relaunched on a warm one, each op with its bytes, the host reference and memcpy, with ratios.
#pragma once

#include <ostream>
#include <string>

#include "CLI/CLI.hpp"

namespace visa::cli {

// The most runs per measurement `--repeat` accepts (each run of a large sample takes seconds).
inline constexpr int kMaxBenchRepeat = 10000;
// The largest --max-interp-seconds (a day).
inline constexpr int kMaxInterpSecondsLimit = 86400;

struct BenchOptions {
  std::string sample;
  bool all = false;  // every sample but the slow ones instead of `sample` (tools/sample_selection.h)
  bool include_slow = false;  // with --all, the slow samples too
  bool json = false;
  int repeat = 3;   // runs per measurement (the median is reported), 1 to kMaxBenchRepeat
  int threads = 0;  // JIT threads; 0: the host's hardware threads, else 1 to jit::kMaxThreads
  // The interpreter's runs of one sample stop past this many seconds; 0 skips the interpreter.
  int max_interp_seconds = 30;
  bool progress = true;  // progress on stderr when it is a terminal (tests turn it off)
};

// Exit codes: 0 measured, 1 a backend's result was wrong, 2 an error (with --all: the worst
// sample's; the other samples are still measured).
int BenchSampleCommand(const BenchOptions& options, std::ostream& out, std::ostream& err);

void AddBenchCommand(CLI::App& app, BenchOptions& options, int& exit_code);

}  // namespace visa::cli
