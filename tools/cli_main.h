// The `visa` command line as a library entry: a kernel program of one's own gets `run`, `check`,
// `bench` and `explain` (with --json and progress) for its kernels without re-implementing them.
//
//   int main(int argc, char** argv) {
//     return visa::cli::Main(argc, argv, {MyKernel(), MyOtherKernel()});
//   }
//
//   $ ./my_kernels run my_kernel --backend jit
//   $ ./my_kernels check --all
#pragma once

#include <string>
#include <vector>

#include "samples/sample.h"

namespace visa::cli {

struct MainOptions {
  std::string name = "visa";       // the program name in --help
  bool keep_builtin_samples = false;  // also offer the repository's samples
};

// Registers `kernels` (samples::RegisterSamples) and runs the command line on argv: map, seq, run,
// explain, check, bench, fuzz-diff and schedule: `visa` itself is this over the built-in samples. Returns the exit code (0 ok, 1 a mismatch or
// difference, 2 an error, printed as `error: ...` on stderr).
int Main(int argc, char** argv, std::vector<samples::Sample> kernels, const MainOptions& options = {});

// 0 when everything written to standard output reached it; otherwise prints `error: standard
// output: ...` and returns 2 (Main's result after a successful command).
int CheckStandardOutput();

}  // namespace visa::cli
