// Equivalence of mappings: canonical forms decide when they exist, enumeration otherwise.
#include "dsl/equivalence.h"

#include <algorithm>
#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "dsl/normal_form.h"
#include "dsl/position_cells.h"
#include "dsl/status_macros.h"

namespace visa {
namespace {

std::string Describe(const std::vector<Cell>& cells) {
  std::vector<std::string> parts;
  for (const Cell& cell : cells) parts.push_back(cell.ToString());
  return absl::StrJoin(parts, " | ");
}

// Compares what position p holds in each mapping: by their canonical forms when both have one
// (a few factors, whatever the size of the expression trees), else by evaluating them.
absl::StatusOr<std::optional<Difference>> CompareAt(const Mapping& a, const Mapping& b, bool canonical,
                                                    int64_t p, WorkBudget& budget) {
  if (!budget.Spend(1)) return budget.Exhausted("deciding equivalence");
  std::vector<Cell> ca, cb;
  if (canonical) {
    ca = {a.normal_form().map(p)};
    cb = {b.normal_form().map(p)};
  } else {
    ASSIGN_OR_RETURN(ca, a.TryMaps(p, budget));
    ASSIGN_OR_RETURN(cb, b.TryMaps(p, budget));
  }
  if (ca == cb) return std::nullopt;
  return Difference{false, p, Describe(ca), Describe(cb)};
}

// Positions where two digit lists most likely disagree: every digit boundary of either form.
std::set<int64_t> BoundaryPositions(const NormalForm& form, int64_t size) {
  std::set<int64_t> positions;
  int64_t inner = 1;
  for (const Factor& f : form.factors()) {
    int64_t outer = f.kind == Factor::Kind::kBlockPad ? f.block : inner * f.count;
    for (int64_t p : {inner, inner * f.live, inner * (f.live - 1), outer - inner, outer - 1}) {
      if (p >= 0 && p < size) positions.insert(p);
    }
    inner = outer;
  }
  return positions;
}

}  // namespace

std::string Difference::ToString() const {
  if (sizes_differ) return absl::StrCat("sizes ", lhs, " and ", rhs);
  return absl::StrCat("position ", position, ": ", lhs, " vs ", rhs);
}

absl::StatusOr<std::optional<Difference>> FirstDifference(const Mapping& a, const Mapping& b,
                                                          WorkBudget& budget) {
  RETURN_IF_ERROR(a.status());
  RETURN_IF_ERROR(b.status());
  if (a.size() != b.size()) {
    return Difference{true, 0, absl::StrCat(a.size()), absl::StrCat(b.size())};
  }
  const NormalForm& na = a.normal_form();
  const NormalForm& nb = b.normal_form();
  bool canonical = na.is_canonical() && nb.is_canonical();
  if (canonical && na == nb) return std::nullopt;
  auto compare = [&](int64_t p) -> absl::StatusOr<std::optional<Difference>> {
    absl::StatusOr<std::optional<Difference>> diff = CompareAt(a, b, canonical, p, budget);
    if (diff.status().code() != absl::StatusCode::kResourceExhausted) return diff;
    return budget.Exhausted(absl::StrCat("deciding whether `", MappingExcerpt(a), "` and `", MappingExcerpt(b),
                                         "` (", a.size(), " positions) are equivalent"));
  };

  // Scan from the start: exact, and quick for the small mappings people compare by hand.
  constexpr int64_t kScanLimit = int64_t{1} << 22;
  int64_t limit = canonical ? std::min(a.size(), kScanLimit) : a.size();
  for (int64_t p = 0; p < limit; ++p) {
    ASSIGN_OR_RETURN(std::optional<Difference> diff, compare(p));
    if (diff) return diff;
  }
  if (limit == a.size()) return std::nullopt;
  // Distinct canonical forms always differ somewhere; look at digit boundaries first.
  std::set<int64_t> candidates = BoundaryPositions(na, a.size());
  std::set<int64_t> more = BoundaryPositions(nb, a.size());
  candidates.insert(more.begin(), more.end());
  for (int64_t p : candidates) {
    ASSIGN_OR_RETURN(std::optional<Difference> diff, compare(p));
    if (diff) return diff;
  }
  for (int64_t p = limit; p < a.size(); ++p) {
    ASSIGN_OR_RETURN(std::optional<Difference> diff, compare(p));
    if (diff) return diff;
  }
  return std::nullopt;
}

absl::StatusOr<std::optional<Difference>> FirstDifference(const Mapping& a, const Mapping& b) {
  WorkBudget budget;
  return FirstDifference(a, b, budget);
}

absl::StatusOr<bool> Equivalent(const Mapping& a, const Mapping& b) {
  ASSIGN_OR_RETURN(std::optional<Difference> diff, FirstDifference(a, b));
  return !diff.has_value();
}

}  // namespace visa
