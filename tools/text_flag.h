// Text flags that must say something: `--svg ""` or `--features ","` would otherwise be taken as
// "not given" and the command would succeed having done nothing of what was asked.
#pragma once

#include "CLI/CLI.hpp"

namespace visa::cli {

// A CLI11 check: the value must not be empty. On an option it reads
// "--svg: the value is empty: name a FILE".
CLI::Validator NonEmptyText(const std::string& what);

// Every option and positional of `app` and its subcommands that takes a value refuses an empty
// (or blank) one. CLI11 reads "" as a number's default (`--seed ""` drew from seed 0) and as a
// text flag not given: either way the command ran without what the user typed. One rule for every
// command, so a flag added later cannot miss it.
void RefuseEmptyValues(CLI::App& app);

}  // namespace visa::cli
