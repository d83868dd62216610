// The manual's mapping text (what goes inside `m![...]`) parsed into Mapping values.
#pragma once

#include <map>
#include <string>
#include "absl/strings/string_view.h"

#include "absl/status/statusor.h"
#include "dsl/axes.h"
#include "dsl/mapping.h"

namespace visa {

// Named mappings that `{ Name }` escapes refer to (the manual's type aliases).
using MappingDefs = std::map<std::string, Mapping, std::less<>>;

// Parses e.g. "A / 8 # 256", "[B, C] # 16", "{ L }, { R }", "A #{0} 8", "$(N: 1, F: 2)".
// Errors name the column: "mapping parse error at column 5: ...".
absl::StatusOr<Mapping> ParseMapping(absl::string_view text, const Axes& axes,
                                     const MappingDefs& defs = {});

// A parser bound to one set of axes and definitions: `MappingScope s(axes); s.m("A, B")`.
class MappingScope {
 public:
  explicit MappingScope(Axes axes, MappingDefs defs = {}) : axes_(std::move(axes)), defs_(std::move(defs)) {}
  // A scope over the axes declared in `axes` ("A = 8, B = 4", as the manual's `axes![...]`); a
  // mistake in the text is an error naming it, never an unchecked Axes.
  static absl::StatusOr<MappingScope> Parse(absl::string_view axes);
  // Parses `text`; a parse error gives an invalid mapping carrying the error (see Mapping::status).
  Mapping m(absl::string_view text) const;
  absl::Status Define(std::string name, absl::string_view text);
  const Axes& axes() const { return axes_; }
  const MappingDefs& defs() const { return defs_; }

 private:
  Axes axes_;
  MappingDefs defs_;
};

}  // namespace visa
