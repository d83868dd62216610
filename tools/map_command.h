// `visa map`: size, normal form, enumeration and equivalence of mapping expressions.
#pragma once

#include <istream>
#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "CLI/CLI.hpp"
#include "dsl/work_budget.h"

namespace visa::cli {

struct MapOptions {
  std::string expr;
  std::string axes;
  std::vector<std::string> defs;  // NAME=EXPR, in order (later ones may use earlier ones)
  bool enumerate = false;
  std::optional<std::string> equiv;
  int64_t max_work = WorkBudget::kDefaultSteps;  // steps --equiv and --enumerate may take
  int64_t max_positions = int64_t{1} << 20;      // positions --enumerate prints at most
};

// Exit codes: 0 success (or equivalent), 1 not equivalent, 2 user error (printed as `error: ...`).
// EXPR and --equiv may be `@PATH` (read from a file) or `-` (read from standard input, std::cin
// unless `in` is given).
int RunMap(const MapOptions& options, std::ostream& out, std::ostream& err);
int RunMap(const MapOptions& options, std::istream& in, std::ostream& out, std::ostream& err);

// Registers the subcommand; `exit_code` receives RunMap's result when it runs.
void AddMapCommand(CLI::App& app, MapOptions& options, int& exit_code);

}  // namespace visa::cli
