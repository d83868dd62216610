// ExactProducts: exponent scans of bf16 / f8 operands, and the normal-range check of products.
#include "jit/exact_products.h"

#include <algorithm>
#include <cstring>
#include <utility>

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

// The largest and the smallest nonzero magnitude pattern (the pattern without its sign bit, whose
// order is the magnitudes' order) of `elements` raw patterns of `Raw`, `magnitude_mask` selecting
// the magnitude bits. Vectorized by blocks: the scan runs once per contraction over all of its
// operands, so a scalar loop would cost as much as the arithmetic it enables.
template <typename Raw>
inline __attribute__((always_inline)) std::pair<uint32_t, uint32_t> MagnitudeBounds(const uint8_t* data,
                                                                                     int64_t elements,
                                                                                     Raw magnitude_mask) {
  constexpr int kBlock = 64 / sizeof(Raw);
  typedef Raw Vector __attribute__((vector_size(64)));
  Vector largest = {}, below = {};  // below: min over (m - 1), so a zero wraps to the top
  below -= 1;
  int64_t i = 0;
  for (; i + kBlock <= elements; i += kBlock) {
    Vector v;
    std::memcpy(&v, data + i * sizeof(Raw), sizeof(v));
    v &= magnitude_mask;
    largest = v > largest ? v : largest;
    const Vector shifted = v - 1;
    below = shifted < below ? shifted : below;
  }
  uint32_t top = 0, low = UINT32_MAX;
  for (int k = 0; k < kBlock; ++k) {
    top = std::max<uint32_t>(top, largest[k]);
    if (below[k] != static_cast<Raw>(-1)) low = std::min<uint32_t>(low, below[k] + 1u);
  }
  for (; i < elements; ++i) {
    Raw v;
    std::memcpy(&v, data + i * sizeof(Raw), sizeof(v));
    v &= magnitude_mask;
    top = std::max<uint32_t>(top, v);
    if (v != 0) low = std::min<uint32_t>(low, v);
  }
  return {top, low};
}

// One instantiation per raw width, compiled for the host's widest vectors (the library itself is
// built for the baseline ISA) and picked at load time.
#if defined(__x86_64__)
#define VISA_HOST_VECTOR_CLONES __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#else
#define VISA_HOST_VECTOR_CLONES
#endif
VISA_HOST_VECTOR_CLONES
std::pair<uint32_t, uint32_t> MagnitudeBounds16(const uint8_t* data, int64_t elements, uint16_t mask) {
  return MagnitudeBounds<uint16_t>(data, elements, mask);
}
VISA_HOST_VECTOR_CLONES
std::pair<uint32_t, uint32_t> MagnitudeBounds8(const uint8_t* data, int64_t elements, uint8_t mask) {
  return MagnitudeBounds<uint8_t>(data, elements, mask);
}

void Scan(const Format& f, uint32_t largest, uint32_t smallest, ExponentRange& range) {
  const uint32_t exponent_mask = (1u << f.exponent_bits) - 1;
  const uint32_t mantissa_mask = (1u << f.mantissa_bits) - 1;
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
  const Format f = FormatOf(type);
  const uint32_t magnitude_mask = (1u << (f.mantissa_bits + f.exponent_bits)) - 1;
  const auto [largest, smallest] =
      type == DType::kBF16 ? MagnitudeBounds16(data, elements, static_cast<uint16_t>(magnitude_mask))
                           : MagnitudeBounds8(data, elements, static_cast<uint8_t>(magnitude_mask));
  Scan(f, largest, smallest, range);
}

bool ProductsAreExact(const ExponentRange& x, const ExponentRange& w) {
  if (!x.finite || !w.finite) return false;
  if (!x.nonzero || !w.nonzero) return true;  // every product is a zero
  // |x w| < 2^(x.max + w.max + 2) must stay at most 2^128 (no rounding to infinity), and
  // |x w| >= 2^(x.min + w.min) at least 2^-126 (no subnormal rounding).
  return x.max + w.max + 2 <= 128 && x.min + w.min >= -126;
}

bool PairSumsAreExact(const ExponentRange& x, const ExponentRange& w) {
  if (!ProductsAreExact(x, w)) return false;
  return !x.nonzero || !w.nonzero || x.min + w.min - 14 >= -126;
}

}  // namespace visa::jit
