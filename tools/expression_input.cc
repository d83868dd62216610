// Reading an expression argument from a file (`@PATH`) or standard input (`-`).
#include "tools/expression_input.h"

#include <fstream>
#include <iterator>

#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"

namespace visa::cli {
namespace {

absl::StatusOr<std::string> ReadAll(std::istream& in, const std::string& what) {
  std::string text;
  char buffer[64 * 1024];
  while (in.read(buffer, sizeof buffer) || in.gcount() > 0) {
    text.append(buffer, static_cast<size_t>(in.gcount()));
    if (text.size() > kMaxExpressionBytes) {
      return absl::InvalidArgumentError(absl::StrCat(what, " holds more than ", kMaxExpressionBytes >> 20,
                                                     " MB; an expression must be shorter"));
    }
  }
  if (in.bad()) return absl::InvalidArgumentError(absl::StrCat("could not read ", what));
  // A file or a pipe usually ends its one line with a newline.
  absl::StripTrailingAsciiWhitespace(&text);
  return text;
}

}  // namespace

absl::StatusOr<std::string> ReadExpression(const std::string& arg, const std::string& flag, std::istream& in) {
  if (arg == "-") return ReadAll(in, absl::StrCat(flag, " from standard input"));
  if (arg.empty() || arg[0] != '@') return arg;
  const std::string path = arg.substr(1);
  std::ifstream file(path, std::ios::binary);
  if (!file) {
    return absl::InvalidArgumentError(absl::StrCat(flag, ": cannot open `", path,
                                                   "` (`@PATH` reads the expression from a file)"));
  }
  return ReadAll(file, absl::StrCat(flag, " file `", path, "`"));
}

}  // namespace visa::cli
