// Expressions on the command line, or from a file or standard input when they are too long to
// type: `@PATH` reads the file at PATH, `-` reads standard input (neither is valid mapping text).
#pragma once

#include <istream>
#include <string>

#include "absl/status/statusor.h"

namespace visa::cli {

// The largest expression read from a file or standard input.
inline constexpr size_t kMaxExpressionBytes = size_t{16} << 20;

// `arg` itself, or the text it names (`@PATH`, `-` from `in`) with its trailing newline removed.
// `flag` names the argument in errors ("EXPR", "--equiv").
absl::StatusOr<std::string> ReadExpression(const std::string& arg, const std::string& flag, std::istream& in);

}  // namespace visa::cli
