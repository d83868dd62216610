// ClosestNames: the candidates nearest a misspelled name, for "did you mean" hints in errors.
#pragma once

#include <string>
#include "absl/strings/string_view.h"
#include <vector>

namespace visa {

// Up to `limit` candidates ordered by edit distance to `name` (insertions, deletions and
// substitutions of bytes; ties keep the candidates' order), keeping only those within half the
// longer name's length, so unrelated names are not suggested.
std::vector<std::string> ClosestNames(absl::string_view name, const std::vector<std::string>& candidates,
                                      size_t limit = 3);

// "; closest: `a`, `b`" or "" when nothing is close.
std::string ClosestNamesHint(absl::string_view name, const std::vector<std::string>& candidates);

}  // namespace visa
