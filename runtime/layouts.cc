// Named level mappings: the missing-Element rule and the defaults of layouts.h.
#include "runtime/layouts.h"

#include "absl/strings/str_cat.h"
#include "dsl/status_macros.h"

namespace visa {
namespace {

absl::StatusOr<Mapping> Required(const std::optional<Mapping>& level, absl::string_view layout,
                                 absl::string_view field, absl::string_view op) {
  if (level) return *level;
  const bool element = field == ".element";
  return absl::InvalidArgumentError(absl::StrCat(
      "Layout: ", op, " needs the tensor's ", element ? "Element" : "Row", " mapping; give `", field,
      " = ...` in the ", layout, " (Chip, Cluster and Slice have defaults, the ",
      element ? "Element" : "Row", " does not)"));
}

// The given level, else the fallback's at `index`.
Mapping Or(const std::optional<Mapping>& given, const std::vector<Mapping>& fallback, size_t index) {
  VISA_CHECK(index < fallback.size(), "LevelsOf: a fallback level is missing");
  return given ? *given : fallback[index];
}

}  // namespace

std::vector<Mapping> NewTensorLevels(int chips) {
  return {chips > 1 ? Mapping().pad(chips) : Mapping(), Mapping().pad(2), Mapping().pad(256)};
}

absl::StatusOr<std::vector<Mapping>> LevelsOf(const HbmLayout& layout, const std::vector<Mapping>& fallback,
                                              absl::string_view op) {
  absl::StatusOr<Mapping> element = Required(layout.element, "HbmLayout", ".element", op);
  if (!element.ok()) return element.status();
  return std::vector<Mapping>{Or(layout.chip, fallback, 0), *element};
}

absl::StatusOr<std::vector<Mapping>> LevelsOf(const DmLayout& layout, const std::vector<Mapping>& fallback,
                                              absl::string_view op) {
  absl::StatusOr<Mapping> element = Required(layout.element, "DmLayout", ".element", op);
  if (!element.ok()) return element.status();
  return std::vector<Mapping>{Or(layout.chip, fallback, 0), Or(layout.cluster, fallback, 1),
                              Or(layout.slice, fallback, 2), *element};
}

absl::StatusOr<std::vector<Mapping>> LevelsOf(const TrfLayout& layout, const std::vector<Mapping>& fallback,
                                              absl::string_view op) {
  absl::StatusOr<Mapping> row = Required(layout.row, "TrfLayout", ".row", op);
  if (!row.ok()) return row.status();
  absl::StatusOr<Mapping> element = Required(layout.element, "TrfLayout", ".element", op);
  if (!element.ok()) return element.status();
  return std::vector<Mapping>{Or(layout.chip, fallback, 0), Or(layout.cluster, fallback, 1),
                              Or(layout.slice, fallback, 2), *row, *element};
}

absl::StatusOr<std::vector<Mapping>> LevelsOf(const VrfLayout& layout, const std::vector<Mapping>& fallback,
                                              absl::string_view op) {
  absl::StatusOr<Mapping> element = Required(layout.element, "VrfLayout", ".element", op);
  if (!element.ok()) return element.status();
  return std::vector<Mapping>{Or(layout.chip, fallback, 0), Or(layout.cluster, fallback, 1),
                              Or(layout.slice, fallback, 2), *element};
}

}  // namespace visa
