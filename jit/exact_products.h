// ExactProducts: whether every product the Contraction Engine forms from two operand ranges is
// exact in f32, so that the first level of the pairwise tree may fuse its multiply and add.
//
// fma(a, b, c) rounds a * b + c once; when a * b is exact in f32 that is round(round(a * b) + c),
// the manual's order, bit for bit. bf16 and f8 values have at most 8 significant bits, so their
// product has at most 16 of f32's 24: it is exact unless it overflows or falls below f32's normal
// range. The scan bounds the operands' binary exponents (and finds infinities and NaNs, whose fused
// result could carry a different NaN) and the check keeps every product inside the normal range.
#pragma once

#include <climits>
#include <cstdint>

#include "dsl/dtype.h"

namespace visa::jit {

// Bounds of floor(log2 |v|) over the nonzero values seen; `finite` false once an infinity or a
// NaN is seen. Subnormals count with a bound below their true exponent (conservative).
struct ExponentRange {
  int min = INT_MAX;
  int max = INT_MIN;
  bool finite = true;
  bool nonzero = false;  // some value is nonzero

  void Merge(const ExponentRange& other);
};

// Whether `type` is one the scan understands (bf16, f8e4m3, f8e5m2).
bool HasExactProducts(DType type);
// Widens `range` by `elements` raw values of `type` from `data` (one byte, or two for bf16).
void ScanExponents(DType type, const uint8_t* data, int64_t elements, ExponentRange& range);
// Whether every product of a value in `x` with a value in `w` is a normal f32 or zero, hence exact.
bool ProductsAreExact(const ExponentRange& x, const ExponentRange& w);
// Whether, besides, every sum of two such products is a normal f32 or zero, so a two-product dot
// step that flushes subnormal results (vdpbf16ps) rounds exactly as the tree's first level. A
// bf16 x bf16 product is a multiple of 2^(ex + ey - 14), and so is a sum of two: a nonzero one
// is at least 2^(x.min + w.min - 14), normal when that is at least 2^-126.
bool PairSumsAreExact(const ExponentRange& x, const ExponentRange& w);

}  // namespace visa::jit
