// ExactProducts: exponent scans of bf16 / f8 operands, and the normal-range check of products.
#include "jit/exact_products.h"

#include <algorithm>
#include <cstring>

namespace visa::jit {
namespace {

// One format's fields: `exponent_bits` after `mantissa_bits`, the all-ones exponent either
// non-finite (bf16, e5m2) or, for e4m3, NaN only with an all-ones mantissa.
struct Format {
  int mantissa_bits;
  int exponent_bits;
  int bias;
  bool e4m3;
};

Format FormatOf(DType type) {
  switch (type) {
    case DType::kBF16: return {7, 8, 127, false};
    case DType::kF8E4M3: return {3, 4, 7, true};
    default: return {2, 5, 15, false};  // f8e5m2
  }
}

// Scans one format with the raw patterns given by `load`; the loop body stays branch-light.
template <typename Load>
void Scan(const Format& f, int64_t elements, Load load, ExponentRange& range) {
  const uint32_t exponent_mask = (1u << f.exponent_bits) - 1;
  const uint32_t mantissa_mask = (1u << f.mantissa_bits) - 1;
  // The largest and smallest nonzero magnitude patterns: the order of magnitudes is that of the
  // patterns without their sign bit.
  uint32_t largest = 0, smallest = UINT32_MAX;
  const uint32_t magnitude_mask = (1u << (f.mantissa_bits + f.exponent_bits)) - 1;
  for (int64_t i = 0; i < elements; ++i) {
    const uint32_t m = load(i) & magnitude_mask;
    largest = std::max(largest, m);
    smallest = std::min(smallest, m == 0 ? UINT32_MAX : m);
  }
  if (largest == 0) return;
  const uint32_t top = largest >> f.mantissa_bits;
  const bool nan_e4m3 = f.e4m3 && top == exponent_mask && (largest & mantissa_mask) == mantissa_mask;
  if ((!f.e4m3 && top == exponent_mask) || nan_e4m3) range.finite = false;
  const auto exponent = [&](uint32_t pattern) {
    const int field = static_cast<int>(pattern >> f.mantissa_bits);
    // A subnormal is below 2^(1 - bias): count it at the smallest subnormal's exponent, or lower.
    return field == 0 ? 1 - f.bias - f.mantissa_bits - 1 : field - f.bias;
  };
  range.Merge({exponent(smallest), exponent(largest), range.finite, true});
}

}  // namespace

void ExponentRange::Merge(const ExponentRange& other) {
  finite = finite && other.finite;
  if (!other.nonzero) return;
  nonzero = true;
  min = std::min(min, other.min);
  max = std::max(max, other.max);
}

bool HasExactProducts(DType type) {
  return type == DType::kBF16 || type == DType::kF8E4M3 || type == DType::kF8E5M2;
}

void ScanExponents(DType type, const uint8_t* data, int64_t elements, ExponentRange& range) {
  if (type == DType::kBF16) {
    Scan(FormatOf(type), elements, [data](int64_t i) {
      uint16_t v;
      std::memcpy(&v, data + 2 * i, 2);
      return static_cast<uint32_t>(v);
    }, range);
    return;
  }
  Scan(FormatOf(type), elements, [data](int64_t i) { return static_cast<uint32_t>(data[i]); }, range);
}

bool ProductsAreExact(const ExponentRange& x, const ExponentRange& w) {
  if (!x.finite || !w.finite) return false;
  if (!x.nonzero || !w.nonzero) return true;  // every product is a zero
  // |x w| < 2^(x.max + w.max + 2) must stay at most 2^128 (no rounding to infinity), and
  // |x w| >= 2^(x.min + w.min) at least 2^-126 (no subnormal rounding).
  return x.max + w.max + 2 <= 128 && x.min + w.min >= -126;
}

}  // namespace visa::jit
