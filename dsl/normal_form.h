// NormalForm: the canonical factor list of a mapping, used for equivalence, inverse and printing.
//
// A mapping's buffer positions are read as a mixed-radix number. Factors are listed innermost
// (fastest) first. A digit factor of extent `count` has a live prefix `live`: digit values below it
// contribute `coef * d` to one axis (or nothing, for a broadcast), values at or above it make the
// position padding of `pad`. A block-pad factor pads everything inner to it from its size to
// `block` positions (the case `[A, B] # 10` that no digit can express). A composite factor is a
// sub-mapping that could not be split into digits (linear combinations, skews, strides that cut
// across padding); it keeps the mapping itself.
//
// Canonical rules: count-1 digits are dropped; a digit whose live prefix is one position carries
// no axis; adjacent digits merge when they read as one digit (same axis with
// coef_outer == coef_inner * count_inner, or two broadcasts, or an outer one-live-position pad
// digit); a block pad whose size is a multiple of its block becomes a pad digit, and one whose
// size is a multiple of everything inside its outermost digit folds into that digit.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "dsl/index.h"
#include "dsl/mapping.h"

namespace visa {

struct Factor {
  enum class Kind { kDigit, kBlockPad, kComposite };
  Kind kind = Kind::kDigit;
  // kDigit: axis name ("" for a broadcast digit) and its declared size.
  std::string axis;
  int64_t axis_size = 0;
  int64_t coef = 0;    // coordinate step per digit value (0 for a broadcast digit)
  int64_t count = 1;   // the digit's extent
  int64_t live = 1;    // digit values below this are live
  PadKind pad = PadKind::kTop;
  // kBlockPad: the cumulative number of positions the inner block is padded to.
  int64_t block = 0;
  // kComposite
  std::optional<Mapping> composite;

  bool is_broadcast() const { return kind == Kind::kDigit && axis.empty(); }
  bool fully_live() const { return kind != Kind::kDigit || live == count; }
  bool operator==(const Factor& other) const;
};

class NormalForm {
 public:
  NormalForm() = default;
  explicit NormalForm(std::vector<Factor> innermost_first);

  // Builds the canonical form of `mapping` (which must be valid).
  static NormalForm Of(const Mapping& mapping);

  const std::vector<Factor>& factors() const { return factors_; }  // innermost first
  int64_t size() const;
  // Digits and block pads only: such forms are equal exactly when their mappings are equivalent.
  bool is_canonical() const;

  // What position `i` holds, computed from the factors (agrees with Mapping::map).
  Cell map(int64_t i) const;
  // The smallest live position holding `index`, when every factor is a digit or block pad and the
  // digits of each axis do not overlap; nullopt means "not held"; an error means "cannot tell".
  absl::StatusOr<std::optional<int64_t>> inverse(const Index& index) const;

  // Mapping syntax of the canonical form, outermost factor first ("B / 64, B % 64" prints "B").
  std::string ToString() const;
  // The canonical form as a mapping value (parses from ToString()).
  Mapping ToMapping() const;

  bool operator==(const NormalForm& other) const { return factors_ == other.factors_; }

 private:
  std::vector<Factor> factors_;
  std::vector<std::pair<std::string, int64_t>> axis_sizes_;  // every axis the factors name
};

}  // namespace visa
