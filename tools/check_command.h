// `visa check SAMPLE`: runs a sample on the interpreter and on the JIT and reports the first
// element where what an op wrote differs (op, position, tensor index, both values).
#pragma once

#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "CLI/CLI.hpp"
#include "runtime/recording_backend.h"

namespace visa::cli {

struct CheckOptions {
  std::string sample;
  bool all = false;  // every sample but the slow ones (tools/sample_selection.h)
  bool include_slow = false;  // with --all, the slow samples too
  bool json = false;  // {"samples": [{"sample", "result", "detail"}], "identical", "different", "errors", "skipped_slow"}
  bool progress = true;  // with --all, done / total on stderr when it is a terminal (tools/progress.h)
};

// Exit codes: 0 identical, 1 a difference, 2 an error (unknown sample, a backend failed).
int CheckSampleCommand(const CheckOptions& options, std::ostream& out, std::ostream& err);

void AddCheckCommand(CLI::App& app, CheckOptions& options, int& exit_code);

}  // namespace visa::cli
