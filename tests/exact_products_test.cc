// ExactProducts: the exponent scan and the check that allows a fused first tree level, against
// products computed in double (exact for these types) and rounded to f32.
#include "jit/exact_products.h"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "runtime/scalar_convert.h"

namespace visa::jit {
namespace {

double ValueOf(DType type, uint32_t bits) { return BitsToDouble(type, bits); }

// Whether the f32 product of two values equals their exact product.
bool ExactInF32(double x, double w) {
  const double exact = x * w;  // exact in double: at most 16 significant bits
  return static_cast<double>(static_cast<float>(x) * static_cast<float>(w)) == exact;
}

ExponentRange RangeOf(DType type, uint32_t bits) {
  ExponentRange range;
  uint8_t bytes[2];
  std::memcpy(bytes, &bits, 2);  // little-endian raw pattern
  ScanExponents(type, bytes, 1, range);
  return range;
}

// Every pair of f8 values, exhaustively: the check accepts exactly the finite pairs (f8 ranges
// are small), and every accepted product is exact.
TEST(ExactProducts, EveryFiniteF8PairIsAcceptedAndExact) {
  for (DType x_type : {DType::kF8E4M3, DType::kF8E5M2}) {
    for (DType w_type : {DType::kF8E4M3, DType::kF8E5M2}) {
      int64_t accepted = 0, finite = 0;
      for (uint32_t a = 0; a < 256; ++a) {
        for (uint32_t b = 0; b < 256; ++b) {
          const double x = ValueOf(x_type, a), w = ValueOf(w_type, b);
          const bool both_finite = std::isfinite(x) && std::isfinite(w);
          finite += both_finite;
          if (!ProductsAreExact(RangeOf(x_type, a), RangeOf(w_type, b))) continue;
          ++accepted;
          ASSERT_TRUE(both_finite) << a << " " << b;
          ASSERT_TRUE(ExactInF32(x, w)) << a << " " << b;
        }
      }
      EXPECT_EQ(accepted, finite) << Name(x_type) << " x " << Name(w_type);
    }
  }
}

// bf16 pairs over every exponent pair with random mantissas and signs: an accepted pair's product
// is exact; a refused finite pair's product is out of f32's normal range (or its operands are
// subnormal), so the check refuses nothing it could have allowed by more than the bound's slack.
TEST(ExactProducts, Bf16AcceptedProductsAreExactAndRefusalsAreNearTheRangeEdges) {
  std::mt19937 rng(7);
  int64_t accepted = 0, refused = 0;
  for (uint32_t ea = 0; ea < 256; ++ea) {
    for (uint32_t eb = 0; eb < 256; ++eb) {
      const uint32_t a = (rng() & 0x8000) | (ea << 7) | (rng() & 0x7f);
      const uint32_t b = (rng() & 0x8000) | (eb << 7) | (rng() & 0x7f);
      const double x = ValueOf(DType::kBF16, a), w = ValueOf(DType::kBF16, b);
      if (ProductsAreExact(RangeOf(DType::kBF16, a), RangeOf(DType::kBF16, b))) {
        ++accepted;
        ASSERT_TRUE(ExactInF32(x, w)) << std::hex << a << " " << b;
      } else {
        ++refused;
        if (std::isfinite(x) && std::isfinite(w) && x != 0 && w != 0) {
          const double magnitude = std::fabs(x * w);
          EXPECT_TRUE(magnitude >= 0x1p126 || magnitude < 0x1p-124 || ea == 0 || eb == 0) << std::hex << a << " " << b;
        }
      }
    }
  }
  EXPECT_GT(accepted, 30000);
  EXPECT_GT(refused, 1000);
}

// A range merges scans: one infinity, NaN or far exponent anywhere refuses the whole run.
TEST(ExactProducts, ARangeRefusesOnAnyInfinityNaNOrOverflow) {
  std::vector<uint16_t> ones(100, 0x3f80);  // bf16 1.0
  ExponentRange range;
  ScanExponents(DType::kBF16, reinterpret_cast<const uint8_t*>(ones.data()), 100, range);
  EXPECT_TRUE(ProductsAreExact(range, range));
  ones[57] = 0x7f80;  // +inf
  ExponentRange with_inf;
  ScanExponents(DType::kBF16, reinterpret_cast<const uint8_t*>(ones.data()), 100, with_inf);
  EXPECT_FALSE(ProductsAreExact(with_inf, range));
  ones[57] = 0x5f80;  // 2^64: 2^64 * 2^64 overflows f32
  ExponentRange big;
  ScanExponents(DType::kBF16, reinterpret_cast<const uint8_t*>(ones.data()), 100, big);
  EXPECT_FALSE(ProductsAreExact(big, big));
  EXPECT_TRUE(ProductsAreExact(big, range));
  ExponentRange zeros;
  std::vector<uint16_t> zero(10, 0x8000);  // -0
  ScanExponents(DType::kBF16, reinterpret_cast<const uint8_t*>(zero.data()), 10, zeros);
  EXPECT_TRUE(ProductsAreExact(zeros, big));
}

}  // namespace
}  // namespace visa::jit
