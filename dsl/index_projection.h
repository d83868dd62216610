// Matching a tensor index against a source mapping by digit, as the manual's tensor functions do:
// what a move reads when the destination splits an axis differently from the source.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "dsl/index.h"
#include "dsl/mapping.h"
#include "dsl/normal_form.h"

namespace visa {

// One digit of an axis in a source's canonical normal form, and how a coordinate reads it.
struct SourceDigit {
  int64_t coef = 1;     // coordinate step of the digit
  int64_t live = 1;     // digit values that hold data
  int64_t modulus = 1;  // digit value of coordinate x: (x / coef) % modulus
};

// The digits of `axis` in `src`'s canonical form, lowest coefficient first, with their moduli:
// the top digit wraps at its live values (higher digits the source lacks broadcast), a lower digit
// at min(its extent, the gap to the next digit) (a gap is a digit the source lacks).
std::vector<SourceDigit> SourceDigitsOf(const NormalForm& src, const std::string& axis);

// `index` matched against `src` by digit, as the manual's tensor functions match (destination
// digits the source does not carry broadcast, so `J / 8 % 4` reads a source holding only `J / 32`
// with stride 0): each coordinate of an axis `src` holds in digits becomes the sum of its digit
// values times their coefficients, an axis named without digits becomes 0. nullopt when a digit
// value falls in a digit's padding (the source does not hold it). Sources whose normal form is not
// canonical are matched by axis (the index is returned as is).
std::optional<Index> ProjectOntoSource(const Index& index, const Mapping& src);

}  // namespace visa
