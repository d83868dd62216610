// Tile views: deriving a window's mapping and offset from a buffer mapping and a tile dimension.
#include "dsl/tile.h"

#include "absl/strings/str_cat.h"
#include "dsl/checked_math.h"
#include "dsl/equivalence.h"
#include "dsl/normal_form.h"
#include "dsl/status_macros.h"

namespace visa {
namespace {

absl::Status TileError(absl::string_view message) {
  return absl::InvalidArgumentError(absl::StrCat("tile: ", message));
}

// Splits the digit of `axis` that strictly contains coefficient boundary `b` into two digits.
// Returns false when the boundary cannot be placed (not a divisor, or the digit is padded).
bool SplitAt(std::vector<Factor>& factors, const std::string& axis, int64_t b) {
  for (size_t k = 0; k < factors.size(); ++k) {
    Factor& f = factors[k];
    if (f.kind != Factor::Kind::kDigit || f.axis != axis) continue;
    int64_t reach = f.coef * f.count;
    if (b <= f.coef || b >= reach) continue;
    if (b % f.coef != 0 || reach % b != 0 || f.live != f.count) return false;
    Factor outer = f;
    outer.coef = b;
    outer.count = outer.live = reach / b;
    f.count = f.live = b / f.coef;
    factors.insert(factors.begin() + k + 1, outer);
    return true;
  }
  return true;  // no digit contains the boundary
}

}  // namespace

Index TileView::ToBufferIndex(const Index& tile_index) const {
  const Factor& digit = dim.normal_form().factors().front();
  Index index = tile_index;
  index.Add(digit.axis, start * digit.coef);
  return index;
}

absl::StatusOr<TileView> Tile(const Mapping& buffer, const Mapping& dim, int64_t len, int64_t start) {
  RETURN_IF_ERROR(buffer.status());
  RETURN_IF_ERROR(dim.status());
  const std::vector<Factor>& dim_factors = dim.normal_form().factors();
  if (dim_factors.size() != 1 || dim_factors[0].kind != Factor::Kind::kDigit ||
      dim_factors[0].axis.empty() || !dim_factors[0].fully_live()) {
    return TileError(absl::StrCat("the tile dimension `", dim.ToString(),
                                  "` must be one digit of one axis, such as `B` or `B / 32`"));
  }
  const Factor& d = dim_factors[0];
  // Written as a range check so that a huge `len` or `start` cannot wrap `start + len` into range.
  if (len < 1 || !RangeWithin(start, len, d.count)) {
    return TileError(absl::StrCat("a tile of ", len, " values of `", dim.ToString(), "` starting at ",
                                  start, " does not fit in its ", d.count, " values"));
  }
  const NormalForm& form = buffer.normal_form();
  if (!form.is_canonical()) {
    return TileError(absl::StrCat("the buffer mapping `", buffer.ToString(),
                                  "` has no digit form to tile"));
  }
  std::vector<Factor> factors = form.factors();
  if (!SplitAt(factors, d.axis, d.coef) || !SplitAt(factors, d.axis, d.coef * d.count)) {
    return TileError(absl::StrCat("the buffer `", buffer.ToString(), "` does not lay out `",
                                  dim.ToString(), "` as one dimension"));
  }
  int64_t inner = 1;
  for (Factor& f : factors) {
    if (f.kind == Factor::Kind::kDigit && f.axis == d.axis && f.coef == d.coef &&
        f.live == d.count) {
      f.live = len;  // the footprint stays, so every other dimension keeps its stride
      f.pad = PadKind::kTop;
      TileView view;
      view.mapping = NormalForm(factors).ToMapping();
      RETURN_IF_ERROR(view.mapping.status());
      view.offset = start * inner;
      view.dim = dim;
      view.start = start;
      view.len = len;
      return view;
    }
    inner = f.kind == Factor::Kind::kBlockPad ? f.block : inner * f.count;
  }
  return TileError(absl::StrCat("the buffer `", buffer.ToString(), "` does not lay out `",
                                dim.ToString(), "` as one dimension"));
}

absl::StatusOr<TileView> Tile(const Mapping& buffer, const Mapping& dim, int64_t len,
                              const Mapping& expected, int64_t start) {
  ASSIGN_OR_RETURN(TileView view, Tile(buffer, dim, len, start));
  RETURN_IF_ERROR(expected.status());
  ASSIGN_OR_RETURN(std::optional<Difference> diff, FirstDifference(expected, view.mapping));
  if (diff) {
    return TileError(absl::StrCat(
        "the requested view `", expected.ToString(), "` is not the split of `", buffer.ToString(),
        "` along `", dim.ToString(), "`, which is `", view.mapping.normal_form().ToString(),
        "` (", diff->ToString(), "); the view keeps the buffer's footprint so strides stay"));
  }
  return view;
}

}  // namespace visa
