// Index and Cell values, and the manual's `i![...]` index notation.
#include "dsl/index.h"

#include <cctype>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/strip.h"
#include "dsl/mapping.h"
#include "dsl/mapping_parser.h"
#include "dsl/status_macros.h"

namespace visa {

const char* PadKindOperator(PadKind kind) {
  switch (kind) {
    case PadKind::kTop: return "#";
    case PadKind::kZero: return "#{0}";
    case PadKind::kBottom: return "#{!}";
  }
  return "#";
}

const char* PadKindName(PadKind kind) {
  switch (kind) {
    case PadKind::kTop: return "top";
    case PadKind::kZero: return "zero";
    case PadKind::kBottom: return "bottom";
  }
  return "top";
}

void Index::Add(const std::string& axis, int64_t value) {
  if (value == 0) return;
  auto [it, inserted] = coords_.try_emplace(axis, value);
  if (!inserted) {
    it->second += value;
    if (it->second == 0) coords_.erase(it);
  }
}

void Index::AddAll(const Index& other) {
  for (const auto& [axis, value] : other.coords_) Add(axis, value);
}

void Index::Set(const std::string& axis, int64_t value) {
  if (value == 0) {
    coords_.erase(axis);
  } else {
    coords_[axis] = value;
  }
}

int64_t Index::operator[](absl::string_view axis) const {
  auto it = coords_.find(axis);
  return it == coords_.end() ? 0 : it->second;
}

std::string Index::ToString() const {
  return absl::StrCat("{", absl::StrJoin(coords_, ", ", absl::PairFormatter("=")), "}");
}

bool Cell::operator==(const Cell& other) const {
  if (kind != other.kind) return false;
  if (kind == Kind::kPad) return pad == other.pad;
  if (kind == Kind::kLive) return index == other.index;
  return true;
}

bool Cell::operator<(const Cell& other) const {
  if (kind != other.kind) return kind < other.kind;
  if (kind == Kind::kPad) return pad < other.pad;
  if (kind == Kind::kLive) return index < other.index;
  return false;
}

std::string Cell::ToString() const {
  switch (kind) {
    case Kind::kLive: return index.ToString();
    case Kind::kPad:
      return pad == PadKind::kTop ? "pad" : absl::StrCat("pad", PadKindOperator(pad));
    case Kind::kOutOfBounds: return "out of bounds";
  }
  return "";
}


Cell CombineCells(const Cell& major, const Cell& minor) {
  if (major.kind != Cell::Kind::kLive) return major;
  if (minor.kind != Cell::Kind::kLive) return minor;
  Cell out = major;
  out.index.AddAll(minor.index);
  return out;
}

absl::StatusOr<Cell> ParseIndex(absl::string_view text, const Axes& axes) {
  // Terms are `MAPPING: VALUE` separated by top-level commas; the mapping itself may contain
  // commas (`i![A, B: 5]` assigns 5 to the pair `A, B`), so a term ends at the comma after a value.
  Cell cell = Cell::Live({});
  size_t pos = 0;
  while (true) {
    while (pos < text.size() && std::isspace(static_cast<unsigned char>(text[pos]))) ++pos;
    if (pos >= text.size()) break;
    int depth = 0;
    size_t colon = pos;
    for (; colon < text.size(); ++colon) {
      char c = text[colon];
      if (c == '(' || c == '[' || c == '{') ++depth;
      if (c == ')' || c == ']' || c == '}') --depth;
      if (c == ':' && depth == 0) break;
    }
    if (colon >= text.size()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "index `", text, "`: term `", absl::StripAsciiWhitespace(text.substr(pos)),
          "` has no `: VALUE`"));
    }
    size_t end = text.find(',', colon);
    if (end == absl::string_view::npos) end = text.size();
    absl::string_view head = absl::StripAsciiWhitespace(text.substr(pos, colon - pos));
    absl::string_view value_text = absl::StripAsciiWhitespace(text.substr(colon + 1, end - colon - 1));
    pos = end + 1;
    int64_t value = 0;
    if (!absl::SimpleAtoi(value_text, &value) || value < 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          "index `", text, "`: `", value_text, "` is not a non-negative integer"));
    }
    if (const Axis* axis = axes.Find(head); axis != nullptr && !axis->skew) {
      // A bare symbol adds its value directly, without a bounds check (as the manual's `i!`).
      Index term;
      term.Add(axis->name, value);
      cell = CombineCells(cell, Cell::Live(term));
      continue;
    }
    ASSIGN_OR_RETURN(Mapping mapping, ParseMapping(head, axes));
    cell = CombineCells(cell, mapping.map(value));
  }
  return cell;
}

}  // namespace visa
