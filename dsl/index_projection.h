// Matching a tensor index against a source mapping by digit, as the manual's tensor functions do:
// what a move reads when the destination splits an axis differently from the source.
#pragma once

#include "dsl/index.h"
#include "dsl/mapping.h"

namespace visa {

// `index` with each coordinate of an axis the source splits into digits reduced to the digits the
// source holds (sum over its digits of (x / coef) % live * coef): destination digits the source
// does not carry broadcast (the manual's tensor functions match by digit, so `J / 8 % 4` reads a
// source that holds only `J / 32` with stride 0).
Index ProjectOntoSource(const Index& index, const Mapping& src);

}  // namespace visa
