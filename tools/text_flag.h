// Text flags that must say something: `--svg ""` or `--features ","` would otherwise be taken as
// "not given" and the command would succeed having done nothing of what was asked.
#pragma once

#include "CLI/CLI.hpp"

namespace visa::cli {

// A CLI11 check: the value must not be empty. On an option it reads
// "--svg: the value is empty: name a FILE".
CLI::Validator NonEmptyText(const std::string& what);

}  // namespace visa::cli
