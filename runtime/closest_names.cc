// ClosestNames: Levenshtein distance over bytes, one row of the table at a time.
#include "runtime/closest_names.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace visa {
namespace {

size_t EditDistance(absl::string_view a, absl::string_view b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diagonal = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      size_t above = row[j];
      size_t substitute = diagonal + (a[i - 1] == b[j - 1] ? 0 : 1);
      row[j] = std::min({above + 1, row[j - 1] + 1, substitute});
      diagonal = above;
    }
  }
  return row[b.size()];
}

}  // namespace

std::vector<std::string> ClosestNames(absl::string_view name, const std::vector<std::string>& candidates,
                                      size_t limit) {
  // Longer names are never compared, so a hostile file's names cannot make the hint quadratic.
  constexpr size_t kMaxCompared = 256;
  std::vector<std::pair<size_t, size_t>> scored;  // (distance, candidate index)
  if (name.size() > kMaxCompared) return {};
  for (size_t k = 0; k < candidates.size(); ++k) {
    if (candidates[k].size() > kMaxCompared) continue;
    size_t distance = EditDistance(name, candidates[k]);
    size_t longer = std::max(name.size(), candidates[k].size());
    if (2 * distance <= longer) scored.emplace_back(distance, k);
  }
  std::stable_sort(scored.begin(), scored.end(),
                   [](const auto& x, const auto& y) { return x.first < y.first; });
  std::vector<std::string> closest;
  for (size_t k = 0; k < scored.size() && closest.size() < limit; ++k) {
    closest.push_back(candidates[scored[k].second]);
  }
  return closest;
}

std::string ClosestNamesHint(absl::string_view name, const std::vector<std::string>& candidates) {
  std::vector<std::string> closest = ClosestNames(name, candidates);
  if (closest.empty()) return "";
  return absl::StrCat("; closest: `", absl::StrJoin(closest, "`, `"), "`");
}

}  // namespace visa
