// The two index-matching rules, stated over the source's digit layout.
#include "dsl/index_matching.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "dsl/layout.h"
#include "dsl/outer_padding.h"

namespace visa {

Index MatchByAxis(const Index& index, const Mapping& src) {
  const std::vector<std::string> names = src.axis_names();
  Index out;
  for (const auto& [axis, value] : index.coords()) {
    if (std::binary_search(names.begin(), names.end(), axis)) out.Set(axis, value);
  }
  return out;
}

std::optional<Index> MatchByDigit(const Index& index, const Mapping& src) {
  const Index named = MatchByAxis(index, src);
  Layout layout = Layout::Of(src);
  // A left-padded outer level (a chip view's) leaves the layout without digits; the same mapping
  // without that padding holds the same indices and has them (dsl/outer_padding.h).
  if (!layout.affine()) {
    if (const std::optional<PeeledPadding> peeled = PeelOuterPadding(src)) layout = Layout::Of(peeled->mapping);
  }
  if (!layout.affine()) return named;
  Index out;
  for (const auto& [axis, value] : named.coords()) {
    std::optional<int64_t> projected = layout.ProjectCoordinate(layout.AxisId(axis), value);
    if (!projected) return std::nullopt;
    out.Set(axis, *projected);
  }
  return out;
}

std::optional<Index> Match(const Index& index, const Mapping& src, MatchRule rule) {
  if (rule == MatchRule::kByAxis) return MatchByAxis(index, src);
  return MatchByDigit(index, src);
}

absl::Status UnheldError(const Mapping& dst, int64_t position, const Index& index, const Mapping& src) {
  return absl::InvalidArgumentError(absl::StrCat(
      "move: position ", position, " of `", dst.ToString(), "` holds ", index.ToString(),
      ", which the source `", src.ToString(), "` does not hold"));
}

absl::Status DroppedError(const Mapping& src, int64_t position, const Index& index, const Mapping& dst) {
  return absl::InvalidArgumentError(absl::StrCat(
      "move: the source `", src.ToString(), "` holds ", index.ToString(), " (position ", position,
      "), which `", dst.ToString(), "` does not hold; the move would drop data"));
}

}  // namespace visa
