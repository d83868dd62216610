// `visa map`: the mapping explorer used by people and scripts.
#include "tools/map_command.h"

#include <iostream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/strip.h"
#include "dsl/equivalence.h"
#include "dsl/mapping_parser.h"
#include "dsl/normal_form.h"
#include "dsl/position_cells.h"
#include "dsl/status_macros.h"
#include "tools/expression_input.h"

namespace visa::cli {
namespace {

absl::StatusOr<MappingScope> MakeScope(const MapOptions& options) {
  ASSIGN_OR_RETURN(Axes axes, Axes::Parse(options.axes));
  MappingScope scope(std::move(axes));
  for (const std::string& def : options.defs) {
    size_t eq = def.find('=');
    std::string name(absl::StripAsciiWhitespace(absl::string_view(def).substr(0, eq)));
    if (eq == std::string::npos || !IsAxisName(name)) {
      return absl::InvalidArgumentError(
          absl::StrCat("--def `", def, "`: expected NAME=EXPR, e.g. --def L=\"A / 2\""));
    }
    absl::Status status = scope.Define(name, absl::string_view(def).substr(eq + 1));
    if (!status.ok()) {
      return absl::InvalidArgumentError(absl::StrCat("--def ", name, ": ", status.message()));
    }
  }
  return scope;
}

// "<i> pad", "<i> {}" or "<i> A=1 B=0 ..." with every axis the expression names.
std::string DescribeCell(const Cell& cell, const std::vector<std::string>& names) {
  if (cell.kind == Cell::Kind::kPad) return "pad";
  if (names.empty()) return "{}";
  std::vector<std::string> parts;
  for (const std::string& name : names) parts.push_back(absl::StrCat(name, "=", cell.index[name]));
  return absl::StrJoin(parts, " ");
}

absl::Status Enumerate(const Mapping& m, const MapOptions& options, std::ostream& out) {
  if (m.size() > options.max_positions) {
    return absl::ResourceExhaustedError(absl::StrCat(
        "--enumerate: `", MappingExcerpt(m), "` has ", m.size(), " positions, more than the limit of ",
        options.max_positions, " (--max-positions); raise it with `--max-positions N`"));
  }
  WorkBudget budget(options.max_work);
  std::vector<std::string> names = m.axis_names();
  for (int64_t i = 0; i < m.size(); ++i) {
    absl::StatusOr<std::vector<Cell>> cells = m.TryMaps(i, budget);
    if (!cells.ok()) {
      if (!budget.exhausted()) return cells.status();
      return budget.Exhausted(absl::StrCat("enumerating `", MappingExcerpt(m), "` (stopped at position ", i, ")"));
    }
    std::vector<std::string> alternatives;
    for (const Cell& cell : *cells) alternatives.push_back(DescribeCell(cell, names));
    out << i << " " << absl::StrJoin(alternatives, " | ") << "\n";
  }
  return absl::OkStatus();
}

absl::StatusOr<int> Run(const MapOptions& options, std::istream& in, std::ostream& out) {
  if (options.enumerate && options.equiv) {
    return absl::InvalidArgumentError("--enumerate and --equiv are two different questions; ask one");
  }
  if (options.expr == "-" && options.equiv == "-") {
    return absl::InvalidArgumentError("EXPR and --equiv cannot both come from standard input (`-`); use @PATH for one");
  }
  ASSIGN_OR_RETURN(std::string expr, ReadExpression(options.expr, "EXPR", in));
  ASSIGN_OR_RETURN(MappingScope scope, MakeScope(options));
  ASSIGN_OR_RETURN(Mapping m, ParseMapping(expr, scope.axes(), scope.defs()));
  if (options.equiv) {
    ASSIGN_OR_RETURN(std::string equiv, ReadExpression(*options.equiv, "--equiv", in));
    ASSIGN_OR_RETURN(Mapping other, ParseMapping(equiv, scope.axes(), scope.defs()));
    WorkBudget budget(options.max_work);
    ASSIGN_OR_RETURN(std::optional<Difference> diff, FirstDifference(m, other, budget));
    if (!diff) {
      out << "equivalent\n";
      return 0;
    }
    out << "not equivalent: " << diff->ToString() << "\n";
    return 1;
  }
  if (options.enumerate) {
    RETURN_IF_ERROR(Enumerate(m, options, out));
    return 0;
  }
  out << "size: " << m.size() << "\n";
  out << "normal: " << m.normal_form().ToString() << "\n";
  return 0;
}

}  // namespace

int RunMap(const MapOptions& options, std::ostream& out, std::ostream& err) {
  return RunMap(options, std::cin, out, err);
}

int RunMap(const MapOptions& options, std::istream& in, std::ostream& out, std::ostream& err) {
  absl::StatusOr<int> code = Run(options, in, out);
  if (!code.ok()) {
    err << "error: " << code.status().message() << "\n";
    return 2;
  }
  return *code;
}

void AddMapCommand(CLI::App& app, MapOptions& options, int& exit_code) {
  CLI::App* map = app.add_subcommand("map", "Size, normal form, enumeration or equivalence of a mapping");
  map->add_option("expr", options.expr,
                  "Mapping expression, e.g. \"B / 64, B % 64\"; @PATH reads it from a file, - from standard input")
      ->required();
  map->add_option("--axes", options.axes, "Axis sizes, e.g. A=8,B=512 (skew: B'=B-A)")->required();
  map->add_option("--def", options.defs, "Named mapping for { NAME } escapes: NAME=EXPR (repeatable)");
  auto* enumerate = map->add_flag("--enumerate", options.enumerate, "Print what every buffer position holds");
  map->add_option("--equiv", options.equiv, "Decide equivalence with a second expression (@PATH and - as for EXPR)")
      ->excludes(enumerate);
  map->add_option("--max-work", options.max_work, "Work limit in steps for --equiv and --enumerate")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  map->add_option("--max-positions", options.max_positions, "Most positions --enumerate prints")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  map->callback([&options, &exit_code] { exit_code = RunMap(options, std::cout, std::cerr); });
}

}  // namespace visa::cli
