// Equivalence of mappings: canonical forms decide when they exist, enumeration otherwise.
#include "dsl/equivalence.h"

#include <algorithm>
#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "dsl/normal_form.h"
#include "dsl/status_macros.h"

namespace visa {
namespace {

std::string Describe(const std::vector<Cell>& cells) {
  std::vector<std::string> parts;
  for (const Cell& cell : cells) parts.push_back(cell.ToString());
  return absl::StrJoin(parts, " | ");
}

std::optional<Difference> CompareAt(const Mapping& a, const Mapping& b, int64_t p) {
  std::vector<Cell> ca = a.maps(p);
  std::vector<Cell> cb = b.maps(p);
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

absl::StatusOr<std::optional<Difference>> FirstDifference(const Mapping& a, const Mapping& b) {
  RETURN_IF_ERROR(a.status());
  RETURN_IF_ERROR(b.status());
  if (a.size() != b.size()) {
    return Difference{true, 0, absl::StrCat(a.size()), absl::StrCat(b.size())};
  }
  const NormalForm& na = a.normal_form();
  const NormalForm& nb = b.normal_form();
  bool canonical = na.is_canonical() && nb.is_canonical();
  if (canonical && na == nb) return std::nullopt;

  // Scan from the start: exact, and quick for the small mappings people compare by hand.
  constexpr int64_t kScanLimit = int64_t{1} << 22;
  int64_t limit = canonical ? std::min(a.size(), kScanLimit) : a.size();
  for (int64_t p = 0; p < limit; ++p) {
    if (auto diff = CompareAt(a, b, p)) return diff;
  }
  if (limit == a.size()) return std::nullopt;
  // Distinct canonical forms always differ somewhere; look at digit boundaries first.
  std::set<int64_t> candidates = BoundaryPositions(na, a.size());
  std::set<int64_t> more = BoundaryPositions(nb, a.size());
  candidates.insert(more.begin(), more.end());
  for (int64_t p : candidates) {
    if (auto diff = CompareAt(a, b, p)) return diff;
  }
  for (int64_t p = limit; p < a.size(); ++p) {
    if (auto diff = CompareAt(a, b, p)) return diff;
  }
  return std::nullopt;
}

absl::StatusOr<bool> Equivalent(const Mapping& a, const Mapping& b) {
  ASSIGN_OR_RETURN(std::optional<Difference> diff, FirstDifference(a, b));
  return !diff.has_value();
}

}  // namespace visa
