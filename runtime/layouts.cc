// Named level mappings: the missing-Element rule and the defaults of layouts.h.
#include "runtime/layouts.h"

#include "absl/strings/str_cat.h"

namespace visa {
namespace {

absl::StatusOr<Mapping> RequiredElement(const std::optional<Mapping>& element, absl::string_view layout,
                                        absl::string_view op) {
  if (element) return *element;
  return absl::InvalidArgumentError(absl::StrCat(
      "Layout: ", op, " needs the tensor's Element mapping; give `.element = ...` in the ", layout,
      " (the other levels have defaults, the Element does not)"));
}

}  // namespace

absl::StatusOr<std::vector<Mapping>> LevelsOf(const HbmLayout& layout, const Mapping& chip, absl::string_view op) {
  absl::StatusOr<Mapping> element = RequiredElement(layout.element, "HbmLayout", op);
  if (!element.ok()) return element.status();
  return std::vector<Mapping>{layout.chip.value_or(chip), *element};
}

absl::StatusOr<std::vector<Mapping>> LevelsOf(const DmLayout& layout, const Mapping& chip, absl::string_view op) {
  absl::StatusOr<Mapping> element = RequiredElement(layout.element, "DmLayout", op);
  if (!element.ok()) return element.status();
  return std::vector<Mapping>{layout.chip.value_or(chip), layout.cluster, layout.slice, *element};
}

absl::StatusOr<std::vector<Mapping>> LevelsOf(const TrfLayout& layout, const Mapping& chip, absl::string_view op) {
  absl::StatusOr<Mapping> element = RequiredElement(layout.element, "TrfLayout", op);
  if (!element.ok()) return element.status();
  return std::vector<Mapping>{layout.chip.value_or(chip), layout.cluster, layout.slice, layout.row, *element};
}

absl::StatusOr<std::vector<Mapping>> LevelsOf(const VrfLayout& layout, const Mapping& chip, absl::string_view op) {
  absl::StatusOr<Mapping> element = RequiredElement(layout.element, "VrfLayout", op);
  if (!element.ok()) return element.status();
  return std::vector<Mapping>{layout.chip.value_or(chip), layout.cluster, layout.slice, *element};
}

}  // namespace visa
