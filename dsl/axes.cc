// Axis declarations: parsing "A = 8, B = 512" and looking axes up by name.
#include "dsl/axes.h"

#include <cctype>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "dsl/mapping.h"
#include "dsl/status_macros.h"

namespace visa {

bool IsAxisName(absl::string_view name) {
  if (!name.empty() && name.back() == '\'') name.remove_suffix(1);
  if (name.empty() || !std::isupper(static_cast<unsigned char>(name[0]))) return false;
  for (char c : name) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_') return false;
  }
  return true;
}

absl::Status Axes::Declare(std::string name, int64_t size) {
  if (!IsAxisName(name)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "axes: `", name, "` is not an axis name (an uppercase letter, then letters, digits or _)"));
  }
  if (Find(name) != nullptr) {
    return absl::InvalidArgumentError(
        absl::StrCat("axes: axis `", name, "` is declared multiple times"));
  }
  if (size < 1 || size > kMaxMappingSize) {
    return absl::InvalidArgumentError(absl::StrCat("axes: axis `", name, "` has size ", size,
                                                   "; a size must be between 1 and ", kMaxMappingSize));
  }
  axes_.push_back(Axis{std::move(name), size, std::nullopt});
  return absl::OkStatus();
}

absl::Status Axes::DeclareSkew(std::string name, std::string base, std::string offset) {
  const Axis* base_axis = Find(base);
  const Axis* offset_axis = Find(offset);
  if (base_axis == nullptr || offset_axis == nullptr) {
    return absl::InvalidArgumentError(absl::StrCat("axes: skew axis `", name, "` = ", base, " - ",
                                                   offset, " refers to an undeclared axis"));
  }
  if (base_axis->skew || offset_axis->skew) {
    return absl::InvalidArgumentError(
        absl::StrCat("axes: skew axis `", name, "` must be defined from plain axes"));
  }
  if (base == offset) {
    return absl::InvalidArgumentError(
        absl::StrCat("axes: skew axis `", name, "` needs two different axes"));
  }
  RETURN_IF_ERROR(Declare(name, base_axis->size));
  axes_.back().skew = Skew{std::move(base), std::move(offset)};
  return absl::OkStatus();
}

const Axis* Axes::Find(absl::string_view name) const {
  for (const Axis& axis : axes_) {
    if (axis.name == name) return &axis;
  }
  return nullptr;
}

Mapping Axes::operator[](absl::string_view name) const {
  const Axis* axis = Find(name);
  if (axis == nullptr) {
    return Mapping::Invalid(absl::NotFoundError(absl::StrCat("unknown axis `", name, "`")));
  }
  absl::StatusOr<Mapping> symbol = Mapping::Symbol(*axis);
  return symbol.ok() ? *symbol : Mapping::Invalid(symbol.status());
}

absl::StatusOr<Axes> Axes::Parse(absl::string_view text) {
  Axes axes;
  for (absl::string_view part : absl::StrSplit(text, ',')) {
    part = absl::StripAsciiWhitespace(part);
    if (part.empty()) continue;  // tolerate a trailing comma, as `axes![A = 8,]`
    std::vector<absl::string_view> sides = absl::StrSplit(part, absl::MaxSplits('=', 1));
    if (sides.size() != 2) {
      return absl::InvalidArgumentError(
          absl::StrCat("axes: expected NAME = SIZE, got `", part, "`"));
    }
    std::string name(absl::StripAsciiWhitespace(sides[0]));
    absl::string_view value = absl::StripAsciiWhitespace(sides[1]);
    int64_t size = 0;
    if (absl::SimpleAtoi(value, &size)) {
      RETURN_IF_ERROR(axes.Declare(name, size));
      continue;
    }
    std::vector<absl::string_view> terms = absl::StrSplit(value, '-');
    if (terms.size() != 2 || name.back() != '\'') {
      return absl::InvalidArgumentError(absl::StrCat(
          "axes: `", part, "`: a size must be a positive integer (or a skew `B' = B - A`)"));
    }
    RETURN_IF_ERROR(axes.DeclareSkew(name, std::string(absl::StripAsciiWhitespace(terms[0])),
                                     std::string(absl::StripAsciiWhitespace(terms[1]))));
  }
  return axes;
}

}  // namespace visa
