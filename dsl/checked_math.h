// Checked math: overflow-safe integer arithmetic for every size, address and capacity check.
//
// A check written `address + bytes > capacity` wraps when a user passes an address near INT64_MAX
// and then accepts what it should refuse (and the wrap itself is undefined behaviour). Checks use
// these helpers instead: they never overflow, so a bad input is refused, not turned into a good one.
#pragma once

#include <cstdint>
#include <limits>
#include <optional>

namespace visa {

// a + b, or nullopt when the sum does not fit in int64.
inline std::optional<int64_t> CheckedAdd(int64_t a, int64_t b) {
  int64_t sum;
  if (__builtin_add_overflow(a, b, &sum)) return std::nullopt;
  return sum;
}

// a * b, or nullopt when the product does not fit in int64.
inline std::optional<int64_t> CheckedMul(int64_t a, int64_t b) {
  int64_t product;
  if (__builtin_mul_overflow(a, b, &product)) return std::nullopt;
  return product;
}

// a + b clamped to the int64 range: for printing a range's end in an error message, where the
// true end may not be representable.
inline int64_t SaturatingAdd(int64_t a, int64_t b) {
  int64_t sum;
  if (!__builtin_add_overflow(a, b, &sum)) return sum;
  return b > 0 ? std::numeric_limits<int64_t>::max() : std::numeric_limits<int64_t>::min();
}

// Whether [begin, begin + size) lies inside [0, capacity): begin >= 0, size >= 0 and
// begin + size <= capacity, decided without computing begin + size.
inline bool RangeWithin(int64_t begin, int64_t size, int64_t capacity) {
  return begin >= 0 && size >= 0 && size <= capacity && begin <= capacity - size;
}

}  // namespace visa
