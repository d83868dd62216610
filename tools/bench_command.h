// `visa bench SAMPLE [--json]`: median times of a sample on the interpreter, the JIT's compile
// (first and cached) and run, the host reference and a memcpy of the output's bytes, with ratios.
#pragma once

#include <ostream>
#include <string>

#include "CLI/CLI.hpp"

namespace visa::cli {

// The most runs per measurement `--repeat` accepts (each run of a large sample takes seconds).
inline constexpr int kMaxBenchRepeat = 10000;

struct BenchOptions {
  std::string sample;
  bool json = false;
  int repeat = 5;   // runs per measurement (the median is reported), 1 to kMaxBenchRepeat
  int threads = 0;  // JIT threads; 0: the host's hardware threads, else 1 to jit::kMaxThreads
};

// Exit codes: 0 measured, 1 a backend's result was wrong, 2 an error.
int BenchSampleCommand(const BenchOptions& options, std::ostream& out, std::ostream& err);

void AddBenchCommand(CLI::App& app, BenchOptions& options, int& exit_code);

}  // namespace visa::cli
