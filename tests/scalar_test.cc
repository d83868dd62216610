// Tests of element types, bit-exact scalar conversions and packed host storage (runtime/).
#include <Eigen/Core>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "runtime/dtype.h"
#include "runtime/packed_storage.h"
#include "runtime/scalar_convert.h"

namespace visa {
namespace {

using ::testing::HasSubstr;

std::string N(DType type) { return std::string(Name(type)); }

uint32_t Bits32(float value) { return FloatToBits(value); }

// ---- Independent references (no Eigen, no library code) -----------------------------------------

// Exact value of a binary float pattern with the given field widths. `fn` = the f8e4m3 "FN"
// variant: no infinity, only the all-ones pattern is NaN.
double RefDecode(uint32_t bits, int exp_bits, int mant_bits, bool fn = false) {
  const int bias = (1 << (exp_bits - 1)) - 1;
  const uint32_t sign = bits >> (exp_bits + mant_bits);
  const int e = static_cast<int>((bits >> mant_bits) & ((1u << exp_bits) - 1));
  const uint32_t m = bits & ((1u << mant_bits) - 1);
  const double s = sign ? -1.0 : 1.0;
  const int e_max = (1 << exp_bits) - 1;
  if (fn && e == e_max && m == (1u << mant_bits) - 1) return std::nan("");
  if (!fn && e == e_max) return m == 0 ? s * INFINITY : std::nan("");
  if (e == 0) return s * std::ldexp(static_cast<double>(m), 1 - bias - mant_bits);
  return s * std::ldexp(static_cast<double>((1u << mant_bits) + m), e - bias - mant_bits);
}

// f32 (finite, normal) -> IEEE binary format with the given widths, round to nearest even,
// subnormals produced, overflow to infinity. Returns the magnitude code (no sign).
uint32_t RefIeeeNarrowMagnitude(uint32_t f32_bits, int exp_bits, int mant_bits) {
  const int bias = (1 << (exp_bits - 1)) - 1;
  const int e = static_cast<int>((f32_bits >> 23) & 0xff) - 127;
  const uint64_t sig = (f32_bits & 0x7fffffu) | 0x800000u;  // value = sig * 2^(e - 23)
  const int binade = std::max(e, 1 - bias);                  // exponent of the target binade
  const int shift = (binade - mant_bits) - (e - 23);         // quantum / f32 ulp, as a power of 2
  uint64_t q = 0;
  if (shift < 40) {
    q = sig >> shift;
    const uint64_t rem = sig & ((uint64_t{1} << shift) - 1);
    const uint64_t half = uint64_t{1} << (shift - 1);
    if (rem > half || (rem == half && (q & 1))) ++q;
  }
  const uint64_t code = (static_cast<uint64_t>(binade + bias) << mant_bits) + q -
                        (uint64_t{1} << mant_bits);
  const uint64_t inf = ((uint64_t{1} << exp_bits) - 1) << mant_bits;
  return static_cast<uint32_t>(std::min(code, inf));
}

// f32 -> bf16 by truncation plus round-to-nearest-even on the dropped 16 bits (finite input).
uint16_t RefBf16Rne(uint32_t f32_bits) {
  uint32_t q = f32_bits >> 16;
  const uint32_t rem = f32_bits & 0xffff;
  if (rem > 0x8000 || (rem == 0x8000 && (q & 1))) ++q;
  return static_cast<uint16_t>(q);
}

// The hardware f32 -> f8e4m3 rule by brute force: nearest of all finite codes, ties to the even
// code, 448 and beyond saturate, f32 subnormals flush.
uint8_t BruteF8E4M3(float x) {
  if (std::isnan(x)) return 0x7f;
  const uint8_t sign = std::signbit(x) ? 0x80 : 0;
  if (std::fpclassify(x) == FP_SUBNORMAL || x == 0) return sign;
  const double a = std::fabs(static_cast<double>(x));
  uint8_t best = 0;
  for (uint8_t code = 1; code <= 0x7e; ++code) {
    const double d_new = std::fabs(RefDecode(code, 4, 3, true) - a);
    const double d_best = std::fabs(RefDecode(best, 4, 3, true) - a);
    if (d_new < d_best || (d_new == d_best && (code & 1) == 0)) best = code;
  }
  return sign | best;
}

// The notes' f32 -> f8e5m2 rule by brute force: nearest, ties away from zero, infinity acting as
// the next value 2^16; below 2^-14 the subnormal grid with the result clamped to code 3.
uint8_t BruteF8E5M2(float x) {
  if (std::isnan(x)) return 0x7e;
  const uint8_t sign = std::signbit(x) ? 0x80 : 0;
  if (std::isinf(x)) return sign | 0x7c;
  if (std::fpclassify(x) == FP_SUBNORMAL || x == 0) return sign;
  const double a = std::fabs(static_cast<double>(x));
  auto value = [](uint8_t code) { return code == 0x7c ? 65536.0 : RefDecode(code, 5, 2); };
  if (a < std::ldexp(1.0, -14)) {
    uint8_t best = 0;
    for (uint8_t m = 1; m <= 4; ++m) {
      const double d_new = std::fabs(value(m) - a), d_best = std::fabs(value(best) - a);
      if (d_new <= d_best) best = m;  // a tie goes up: away from zero
    }
    return sign | std::min<uint8_t>(best, 3);
  }
  uint8_t best = 0;
  for (uint8_t code = 1; code <= 0x7c; ++code) {
    const double d_new = std::fabs(value(code) - a), d_best = std::fabs(value(best) - a);
    if (d_new <= d_best) best = code;
  }
  return sign | best;
}

// f32 patterns that exercise rounding at every position: each top-16-bit prefix combined with
// low halves around the bf16 rounding point, plus uniformly random patterns.
std::vector<uint32_t> InterestingF32Patterns() {
  std::vector<uint32_t> out;
  const uint32_t lows[] = {0x0000, 0x0001, 0x7fff, 0x8000, 0x8001, 0xffff, 0x1000, 0x0fff};
  for (uint32_t high = 0; high <= 0xffff; ++high) {
    for (uint32_t low : lows) out.push_back((high << 16) | low);
  }
  std::mt19937 rng(12345);
  for (int i = 0; i < 1 << 20; ++i) out.push_back(static_cast<uint32_t>(rng()));
  return out;
}

const std::vector<uint32_t>& F32Samples() {
  static const std::vector<uint32_t>* samples = new std::vector<uint32_t>(InterestingF32Patterns());
  return *samples;
}

bool IsNaN32(uint32_t bits) { return (bits & 0x7fffffff) > 0x7f800000; }
bool IsSubnormalOrZero32(uint32_t bits) { return (bits & 0x7f800000) == 0; }

// ---- DType --------------------------------------------------------------------------------------

TEST(DTypeTest, NamesAreTheManualsAndRoundTrip) {
  const std::vector<std::string> expected = {"i4",     "i5",     "i8",   "i9",  "i16", "i32",
                                             "f8e4m3", "f8e5m2", "bf16", "f16", "f32"};
  ASSERT_EQ(kAllDTypes.size(), expected.size());
  for (size_t i = 0; i < kAllDTypes.size(); ++i) {
    EXPECT_EQ(N(kAllDTypes[i]), expected[i]);
    absl::StatusOr<DType> parsed = ParseDType(expected[i]);
    ASSERT_TRUE(parsed.ok()) << parsed.status();
    EXPECT_EQ(*parsed, kAllDTypes[i]);
  }
  std::ostringstream os;
  os << DType::kF8E4M3;
  EXPECT_EQ(os.str(), "f8e4m3");
}

TEST(DTypeTest, ParseAcceptsTheDmaGrammarSpellingOfF16) {
  absl::StatusOr<DType> parsed = ParseDType("fp16");
  ASSERT_TRUE(parsed.ok());
  EXPECT_EQ(*parsed, DType::kF16);
}

TEST(DTypeTest, ParseRefusesUnknownNamesAndListsTheValidOnes) {
  for (const char* bad : {"f64", "", "I8", "int8", "bf16 ", "u8", "f4e2m1"}) {
    absl::StatusOr<DType> parsed = ParseDType(bad);
    ASSERT_FALSE(parsed.ok()) << bad;
    EXPECT_EQ(parsed.status().code(), absl::StatusCode::kInvalidArgument);
    const std::string message(parsed.status().message());
    EXPECT_THAT(message, HasSubstr(std::string("\"") + bad + "\""));
    for (DType type : kAllDTypes) EXPECT_THAT(message, HasSubstr(N(type)));
  }
}

TEST(DTypeTest, Widths) {
  struct Row {
    DType type;
    int bits, wire, storage;
  };
  const Row rows[] = {{DType::kI4, 4, 4, 4},        {DType::kI5, 5, 4, 8},
                      {DType::kI8, 8, 8, 8},        {DType::kI9, 9, 8, 16},
                      {DType::kI16, 16, 16, 16},    {DType::kI32, 32, 32, 32},
                      {DType::kF8E4M3, 8, 8, 8},    {DType::kF8E5M2, 8, 8, 8},
                      {DType::kBF16, 16, 16, 16},   {DType::kF16, 16, 16, 16},
                      {DType::kF32, 32, 32, 32}};
  for (const Row& row : rows) {
    EXPECT_EQ(Bits(row.type), row.bits) << row.type;
    EXPECT_EQ(WireBits(row.type), row.wire) << row.type;
    EXPECT_EQ(StorageBits(row.type), row.storage) << row.type;
  }
}

TEST(DTypeTest, StorageBytesPacksI4AndWidensStagingTypes) {
  EXPECT_EQ(StorageBytes(DType::kI4, 0), 0);
  EXPECT_EQ(StorageBytes(DType::kI4, 1), 1);
  EXPECT_EQ(StorageBytes(DType::kI4, 4), 2);
  EXPECT_EQ(StorageBytes(DType::kI4, 5), 3);
  EXPECT_EQ(StorageBytes(DType::kI4, 64), 32);  // one 32-byte flit of i4, as the manual says
  EXPECT_EQ(StorageBytes(DType::kI5, 3), 3);
  EXPECT_EQ(StorageBytes(DType::kI9, 3), 6);
  EXPECT_EQ(StorageBytes(DType::kBF16, 16), 32);
  EXPECT_EQ(StorageBytes(DType::kF32, 8), 32);
  EXPECT_EQ(StorageBytes(DType::kF8E5M2, 32), 32);
  EXPECT_EQ(StorageBytes(DType::kI32, kMaxStorageElements), kMaxStorageElements * 4);
}

TEST(DTypeTest, Classification) {
  for (DType type : kAllDTypes) {
    const bool is_float = type == DType::kF8E4M3 || type == DType::kF8E5M2 ||
                          type == DType::kBF16 || type == DType::kF16 || type == DType::kF32;
    EXPECT_EQ(IsFloat(type), is_float) << type;
    EXPECT_EQ(IsSignedInt(type), !is_float) << type;
    const bool staging = type == DType::kI5 || type == DType::kI9;
    EXPECT_EQ(IsStaging(type), staging) << type;
    EXPECT_EQ(IsMaterializable(type), !staging) << type;
  }
  EXPECT_EQ(IntMin(DType::kI4), -8);
  EXPECT_EQ(IntMax(DType::kI4), 7);
  EXPECT_EQ(IntMin(DType::kI5), -16);
  EXPECT_EQ(IntMax(DType::kI5), 15);
  EXPECT_EQ(IntMin(DType::kI9), -256);
  EXPECT_EQ(IntMax(DType::kI9), 255);
  EXPECT_EQ(IntMin(DType::kI32), std::numeric_limits<int32_t>::min());
  EXPECT_EQ(IntMax(DType::kI32), std::numeric_limits<int32_t>::max());
}

TEST(DTypeTest, CheckBitsFit) {
  EXPECT_TRUE(CheckBitsFit(DType::kI4, 0xf).ok());
  EXPECT_TRUE(CheckBitsFit(DType::kI9, 0x1ff).ok());
  EXPECT_TRUE(CheckBitsFit(DType::kF32, 0xffffffff).ok());
  absl::Status status = CheckBitsFit(DType::kI4, 0x10);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(status.message()), HasSubstr("i4"));
  EXPECT_FALSE(CheckBitsFit(DType::kBF16, 0x10000).ok());
}

// ---- Integers ---------------------------------------------------------------------------------

TEST(IntegerTest, NarrowingWrapsAsTheNotesSay) {
  EXPECT_EQ(I32ToI8(1000000), 64);
  EXPECT_EQ(I32ToI8(200), -56);
  EXPECT_EQ(I32ToI8(-129), 127);
  EXPECT_EQ(I32ToI16(70000), 4464);
  const std::pair<int32_t, int32_t> i4[] = {{7, 7},  {8, -8}, {15, -1},
                                            {16, 0}, {-9, 7}, {100, 4}};
  for (auto [in, out] : i4) EXPECT_EQ(I32ToI4(in), out) << in;
}

TEST(IntegerTest, NarrowingEdgeCases) {
  constexpr int32_t kMin = std::numeric_limits<int32_t>::min();
  constexpr int32_t kMax = std::numeric_limits<int32_t>::max();
  EXPECT_EQ(I32ToI4(kMin), 0);
  EXPECT_EQ(I32ToI4(kMax), -1);
  EXPECT_EQ(I32ToI8(kMin), 0);
  EXPECT_EQ(I32ToI8(kMax), -1);
  EXPECT_EQ(I32ToI16(kMin), 0);
  EXPECT_EQ(I32ToI16(kMax), -1);
  EXPECT_EQ(I32ToI4(-8), -8);
  EXPECT_EQ(I32ToI8(-128), -128);
  EXPECT_EQ(I32ToI8(128), -128);
  EXPECT_EQ(I32ToI16(-32768), -32768);
  EXPECT_EQ(I32ToI16(32768), -32768);
  // C++20 defines integer narrowing as modular, the same wrap the Cast Engine performs.
  for (int32_t v = -200000; v <= 200000; ++v) {
    ASSERT_EQ(I32ToI8(v), static_cast<int8_t>(v)) << v;
    ASSERT_EQ(I32ToI16(v), static_cast<int16_t>(v)) << v;
    ASSERT_EQ(I32ToI4(v), ((v % 16) + 16 + 8) % 16 - 8) << v;
  }
}

TEST(IntegerTest, NarrowingThroughConvertGivesRawPatterns) {
  EXPECT_EQ(*Convert(DType::kI32, DType::kI4, TruncateToBits(-9, 32)), 0x7u);
  EXPECT_EQ(*Convert(DType::kI32, DType::kI4, TruncateToBits(8, 32)), 0x8u);
  EXPECT_EQ(*Convert(DType::kI32, DType::kI8, TruncateToBits(-129, 32)), 0x7fu);
  EXPECT_EQ(*Convert(DType::kI32, DType::kI16, TruncateToBits(70000, 32)), 4464u);
  EXPECT_EQ(*Convert(DType::kI32, DType::kI16, TruncateToBits(-1, 32)), 0xffffu);
}

TEST(IntegerTest, WideningSignExtendsEveryPattern) {
  for (DType from : {DType::kI4, DType::kI5, DType::kI8, DType::kI9, DType::kI16}) {
    for (uint32_t bits = 0; bits < (1u << Bits(from)); ++bits) {
      const int32_t expected = bits >= (1u << (Bits(from) - 1))
                                   ? static_cast<int32_t>(bits) - (1 << Bits(from))
                                   : static_cast<int32_t>(bits);
      absl::StatusOr<uint32_t> widened = Convert(from, DType::kI32, bits);
      ASSERT_TRUE(widened.ok()) << from << " " << widened.status();
      ASSERT_EQ(static_cast<int32_t>(*widened), expected) << from << " " << bits;
      ASSERT_EQ(SignExtend(bits, Bits(from)), expected);
    }
  }
}

TEST(IntegerTest, ExhaustiveRoundTripsThroughI32) {
  for (DType narrow : {DType::kI4, DType::kI8, DType::kI16}) {
    for (uint32_t bits = 0; bits < (1u << Bits(narrow)); ++bits) {
      const uint32_t wide = *Convert(DType::kI32, DType::kI32, *Convert(narrow, DType::kI32, bits));
      ASSERT_EQ(*Convert(DType::kI32, narrow, wide), bits) << narrow << " " << bits;
    }
  }
}

TEST(IntegerTest, ZeroPointSubtractionVectors) {
  EXPECT_EQ(*ZeroPointSubtract(DType::kI8, -128, 127), -255);
  EXPECT_EQ(*ZeroPointSubtract(DType::kI8, 127, -128), 255);
  EXPECT_EQ(*ZeroPointSubtract(DType::kI4, 7, -8), 15);
  EXPECT_EQ(*ZeroPointSubtract(DType::kI4, -8, 7), -15);
  // The manual's examples: i8 [0..7] with zero point 10, and with 100 / -100.
  for (int32_t v = 0; v < 8; ++v) {
    EXPECT_EQ(*ZeroPointSubtract(DType::kI8, v, 10), v - 10);
    EXPECT_EQ(*ZeroPointSubtract(DType::kI8, v, 100), v - 100);
    EXPECT_EQ(*ZeroPointSubtract(DType::kI8, v, -100), v + 100);
  }
  // Every in-range pair fits the staging type.
  for (DType source : {DType::kI4, DType::kI8}) {
    const DType staging = source == DType::kI4 ? DType::kI5 : DType::kI9;
    for (int32_t v = IntMin(source); v <= IntMax(source); ++v) {
      for (int32_t zp = IntMin(source); zp <= IntMax(source); ++zp) {
        const int32_t out = *ZeroPointSubtract(source, v, zp);
        ASSERT_GE(out, IntMin(staging));
        ASSERT_LE(out, IntMax(staging));
      }
    }
  }
}

TEST(IntegerTest, ZeroPointSubtractionRefusals) {
  absl::StatusOr<int32_t> out = ZeroPointSubtract(DType::kI8, 0, 128);
  ASSERT_FALSE(out.ok());
  EXPECT_THAT(std::string(out.status().message()), HasSubstr("zero point 128"));
  EXPECT_THAT(std::string(out.status().message()), HasSubstr("[-128, 127]"));
  EXPECT_FALSE(ZeroPointSubtract(DType::kI4, 0, -9).ok());
  EXPECT_FALSE(ZeroPointSubtract(DType::kI4, 8, 0).ok());  // not an i4 value
  out = ZeroPointSubtract(DType::kI16, 0, 0);
  ASSERT_FALSE(out.ok());
  EXPECT_THAT(std::string(out.status().message()), HasSubstr("\"Zero-Point Subtraction\""));
}

// ---- bf16 ---------------------------------------------------------------------------------------

TEST(Bf16Test, NotesVectors) {
  const std::pair<uint32_t, uint16_t> vectors[] = {
      {0x3f808000, 0x3f80},  // 1 + 2^-8: tie, to even
      {0x3f818000, 0x3f82},  // 1 + 3 * 2^-8: tie, to even
      {0x3f808008, 0x3f81},  // above the tie
      {0x7f7fffff, 0x7f80},  // overflow rounds to infinity
      {0x00400000, 0x0000},  // f32 subnormal flushes
      {0x80400000, 0x8000},  // with its sign
      {0x00800000, 0x0080},  // smallest f32 normal is a bf16 normal
      {0xffc00001, 0x7fc0},  // NaN: sign and payload dropped
      {0x80000000, 0x8000},  // -0.0
  };
  for (auto [in, out] : vectors) EXPECT_EQ(F32BitsToBf16(in), out) << std::hex << in;
  EXPECT_EQ(F32ToBf16(3.7f), 0x406d);
  EXPECT_EQ(F32ToBf16(1.0f), 0x3f80);
  EXPECT_EQ(F32ToBf16(-INFINITY), 0xff80);
}

TEST(Bf16Test, WideningRules) {
  EXPECT_EQ(Bf16ToF32Bits(0x7fc1), 0x7fc00000u);
  EXPECT_EQ(Bf16ToF32Bits(0xff81), 0x7fc00000u);  // signalling, negative: canonical
  EXPECT_EQ(Bf16ToF32Bits(0x0001), 0x00000000u);  // subnormal flushes
  EXPECT_EQ(Bf16ToF32Bits(0x807f), 0x80000000u);  // with its sign
  EXPECT_EQ(Bf16ToF32Bits(0x7f80), 0x7f800000u);
  EXPECT_EQ(Bf16ToF32(0x3f80), 1.0f);
  EXPECT_EQ(Bf16ToF32(0x406d), 3.703125f);
}

TEST(Bf16Test, ExhaustiveRoundTripThroughF32) {
  for (uint32_t h = 0; h <= 0xffff; ++h) {
    const uint16_t bf = static_cast<uint16_t>(h);
    const uint32_t wide = Bf16ToF32Bits(bf);
    const uint16_t back = F32BitsToBf16(wide);
    const bool nan = (bf & 0x7fff) > 0x7f80;
    const bool subnormal = (bf & 0x7f80) == 0 && (bf & 0x7f) != 0;
    if (nan) {
      ASSERT_EQ(wide, 0x7fc00000u);
      ASSERT_EQ(back, 0x7fc0);
    } else if (subnormal) {
      ASSERT_EQ(back, bf & 0x8000) << std::hex << h;
    } else {
      ASSERT_EQ(wide, h << 16) << std::hex << h;  // exact
      ASSERT_EQ(back, bf) << std::hex << h;
    }
  }
}

TEST(Bf16Test, NarrowingMatchesTheReferenceAndEigen) {
  for (uint32_t bits : F32Samples()) {
    const uint16_t got = F32BitsToBf16(bits);
    if (IsNaN32(bits)) {
      ASSERT_EQ(got, 0x7fc0);
      continue;
    }
    if (IsSubnormalOrZero32(bits)) {
      ASSERT_EQ(got, (bits >> 16) & 0x8000);
      continue;
    }
    ASSERT_EQ(got, RefBf16Rne(bits)) << std::hex << bits;
    // Eigen gives the same bits on every normal or infinite input.
    ASSERT_EQ(Eigen::numext::bit_cast<uint16_t>(Eigen::bfloat16(BitsToFloat(bits))), got);
  }
}

TEST(Bf16Test, EigenWideningIsExactOnNormals) {
  for (uint32_t h = 0; h <= 0xffff; ++h) {
    if ((h & 0x7f80) == 0 || (h & 0x7fff) > 0x7f80) continue;
    const float eigen = static_cast<float>(Eigen::numext::bit_cast<Eigen::bfloat16>(
        static_cast<uint16_t>(h)));
    ASSERT_EQ(Bits32(eigen), h << 16);
  }
}

TEST(Bf16Test, CommitCastReluVectors) {
  const std::pair<uint32_t, uint16_t> vectors[] = {
      {Bits32(-5.0f), 0x0000}, {Bits32(-0.1f), 0x0000}, {Bits32(0.0f), 0x0000},
      {Bits32(-0.0f), 0x0000}, {Bits32(3.7f), 0x406d},  {0xffc00000, 0x7fc0},
      {0x80000001, 0x0000},  // negative subnormal
  };
  for (auto [in, out] : vectors) EXPECT_EQ(F32BitsToBf16Relu(in), out) << std::hex << in;
}

// ---- f16 ----------------------------------------------------------------------------------------

TEST(F16Test, Vectors) {
  EXPECT_EQ(F32ToF16(1.0f), 0x3c00);
  EXPECT_EQ(F32ToF16(-2.0f), 0xc000);
  EXPECT_EQ(F32ToF16(65504.0f), 0x7bff);   // largest finite
  EXPECT_EQ(F32ToF16(65519.0f), 0x7bff);   // below the halfway point
  EXPECT_EQ(F32ToF16(65520.0f), 0x7c00);   // halfway to 2^16: ties to even = infinity
  EXPECT_EQ(F32ToF16(-1e30f), 0xfc00);
  EXPECT_EQ(F32ToF16(std::ldexp(1.0f, -24)), 0x0001);         // smallest subnormal
  EXPECT_EQ(F32ToF16(std::ldexp(1.0f, -25)), 0x0000);         // tie, to even (zero)
  EXPECT_EQ(F32ToF16(std::ldexp(1.5f, -25)), 0x0001);         // above the tie
  EXPECT_EQ(F32ToF16(std::ldexp(3.0f, -25)), 0x0002);         // tie 1.5 quanta, to even 2
  EXPECT_EQ(F32ToF16(std::ldexp(1.0f, -14)), 0x0400);         // smallest normal
  EXPECT_EQ(F32BitsToF16(0x00000001), 0x0000);                // f32 subnormal
  EXPECT_EQ(F32BitsToF16(0x80000001), 0x8000);
  EXPECT_EQ(F32BitsToF16(0xffc00123), 0x7e00);                // NaN: canonical
  EXPECT_EQ(F32BitsToF16(0x7f800001), 0x7e00);
  EXPECT_EQ(F16ToF32Bits(0x7e01), 0x7fc00000u);
  EXPECT_EQ(F16ToF32Bits(0xfc01), 0x7fc00000u);
  EXPECT_EQ(F16ToF32Bits(0xfc00), 0xff800000u);
  EXPECT_EQ(F16ToF32(0x0001), std::ldexp(1.0f, -24));         // subnormals are exact
}

TEST(F16Test, ExhaustiveDecodeAndRoundTrip) {
  for (uint32_t h = 0; h <= 0xffff; ++h) {
    const uint16_t f16 = static_cast<uint16_t>(h);
    const uint32_t wide = F16ToF32Bits(f16);
    const double expected = RefDecode(h, 5, 10);
    if (std::isnan(expected)) {
      ASSERT_EQ(wide, 0x7fc00000u);
      ASSERT_EQ(F32BitsToF16(wide), 0x7e00);
      continue;
    }
    ASSERT_EQ(static_cast<double>(BitsToFloat(wide)), expected) << std::hex << h;
    ASSERT_EQ(std::signbit(BitsToFloat(wide)), (h & 0x8000) != 0);
    ASSERT_EQ(F32BitsToF16(wide), f16) << std::hex << h;
  }
}

TEST(F16Test, NarrowingMatchesTheReferenceAndEigen) {
  for (uint32_t bits : F32Samples()) {
    const uint16_t got = F32BitsToF16(bits);
    if (IsNaN32(bits)) {
      ASSERT_EQ(got, 0x7e00);
      continue;
    }
    const uint16_t sign = static_cast<uint16_t>((bits >> 16) & 0x8000);
    if (IsSubnormalOrZero32(bits)) {
      ASSERT_EQ(got, sign);
      continue;
    }
    const uint16_t expected =
        (bits & 0x7fffffff) == 0x7f800000
            ? static_cast<uint16_t>(sign | 0x7c00)
            : static_cast<uint16_t>(sign | RefIeeeNarrowMagnitude(bits, 5, 10));
    ASSERT_EQ(got, expected) << std::hex << bits;
    ASSERT_EQ(Eigen::numext::bit_cast<uint16_t>(Eigen::half(BitsToFloat(bits))), expected);
  }
}

// ---- f8e4m3 -------------------------------------------------------------------------------------

TEST(F8E4M3Test, NotesVectors) {
  const std::pair<float, uint8_t> vectors[] = {
      {1.0f, 0x38},
      {1.0625f, 0x38},  // tie, to even
      {1.125f, 0x39},
      {1.1875f, 0x3a},  // tie, to even
      {-1.3f, 0xba},
      {0.3f, 0x2a},  // 0.3125
      {std::ldexp(1.0f, -6), 0x08},
      {std::ldexp(1.0f, -7), 0x04},
      {std::ldexp(1.0f, -9), 0x01},
      {std::ldexp(1.0f, -10), 0x00},  // tie, to even
      {std::ldexp(1.5f, -10), 0x01},
      {448.0f, 0x7e},
      {464.0f, 0x7e},
      {500.0f, 0x7e},
      {1e9f, 0x7e},
      {INFINITY, 0x7e},
      {-INFINITY, 0xfe},
      {240.0f, 0x77},
      {256.0f, 0x78},
      {272.0f, 0x78},  // tie, to even
      {1e-30f, 0x00},
      {-0.0f, 0x80},
  };
  for (auto [in, out] : vectors) EXPECT_EQ(F32ToF8E4M3(in), out) << in;
}

TEST(F8E4M3Test, NaNAndSaturation) {
  EXPECT_EQ(F32BitsToF8E4M3(0x7fc00000), 0x7f);
  EXPECT_EQ(F32BitsToF8E4M3(0xffc00000), 0x7f);  // sign dropped
  EXPECT_EQ(F32BitsToF8E4M3(0x7f800001), 0x7f);
  EXPECT_EQ(F32ToF8E4M3(480.0f), 0x7e);  // would be the NaN code: saturates instead
  EXPECT_EQ(F32ToF8E4M3(-480.0f), 0xfe);
  EXPECT_EQ(F32ToF8E4M3(3.4e38f), 0x7e);
  EXPECT_EQ(F32ToF8E4M3(447.0f), 0x7e);
  EXPECT_EQ(F32ToF8E4M3(432.0f), 0x7e);  // tie 416 / 448, to even (448)
  EXPECT_EQ(F32ToF8E4M3(431.0f), 0x7d);  // 416
  EXPECT_EQ(F8E4M3ToF32Bits(0x7f), 0x7fc00000u);
  EXPECT_EQ(F8E4M3ToF32Bits(0xff), 0x7fc00000u);
  EXPECT_EQ(F8E4M3ToF32(0x7e), 448.0f);
  EXPECT_EQ(F8E4M3ToF32(0xfe), -448.0f);
  EXPECT_EQ(F8E4M3ToF32(0x78), 256.0f);  // exponent 15 is an ordinary binade (FN variant)
}

TEST(F8E4M3Test, Subnormals) {
  for (uint8_t m = 0; m < 8; ++m) {
    EXPECT_EQ(F8E4M3ToF32(m), std::ldexp(static_cast<float>(m), -9));
    EXPECT_EQ(F8E4M3ToF32(0x80 | m), -std::ldexp(static_cast<float>(m), -9));
    EXPECT_EQ(F32ToF8E4M3(std::ldexp(static_cast<float>(m), -9)), m);
  }
  EXPECT_EQ(F32ToF8E4M3(std::ldexp(7.5f, -9)), 0x08);  // tie 7 / 8 quanta, to even: min normal
  EXPECT_EQ(F32ToF8E4M3(std::ldexp(6.5f, -9)), 0x06);  // tie, to even
  EXPECT_EQ(F32ToF8E4M3(std::ldexp(5.5f, -9)), 0x06);  // tie, to even
  EXPECT_EQ(F32ToF8E4M3(std::ldexp(0.5001f, -9)), 0x01);
  EXPECT_EQ(F32ToF8E4M3(-std::ldexp(0.25f, -9)), 0x80);
  EXPECT_EQ(F32BitsToF8E4M3(0x00000001), 0x00);
  EXPECT_EQ(F32BitsToF8E4M3(0x807fffff), 0x80);
}

TEST(F8E4M3Test, ExhaustiveDecodeAndRoundTrip) {
  for (uint32_t b = 0; b <= 0xff; ++b) {
    const uint8_t f8 = static_cast<uint8_t>(b);
    const double expected = RefDecode(b, 4, 3, /*fn=*/true);
    const uint32_t wide = F8E4M3ToF32Bits(f8);
    if (std::isnan(expected)) {
      ASSERT_EQ(wide, 0x7fc00000u);
      ASSERT_EQ(F32BitsToF8E4M3(wide), 0x7f);
      continue;
    }
    ASSERT_EQ(static_cast<double>(BitsToFloat(wide)), expected) << b;
    ASSERT_EQ(std::signbit(BitsToFloat(wide)), (b & 0x80) != 0);
    ASSERT_EQ(F32BitsToF8E4M3(wide), f8) << b;
  }
}

TEST(F8E4M3Test, NarrowingMatchesBruteForce) {
  std::mt19937 rng(7);
  // Dense in the interesting range (2^-12 .. 2^10), where every rounding case lives.
  std::uniform_int_distribution<uint32_t> in_range(Bits32(std::ldexp(1.0f, -12)),
                                                   Bits32(std::ldexp(1.0f, 10)));
  for (int i = 0; i < 300000; ++i) {
    uint32_t bits = in_range(rng) | (rng() & 1u) << 31;
    if (i % 4 == 0) bits &= 0xfff80000u;  // exact ties and exact values
    if (i % 4 == 1) bits = (bits & 0xfff80000u) | 0x00080000u;
    ASSERT_EQ(F32BitsToF8E4M3(bits), BruteF8E4M3(BitsToFloat(bits))) << std::hex << bits;
  }
  for (uint32_t bits : {0x7f7fffffu, 0x00000001u, 0x3f800000u, 0x43e00000u, 0x43e80000u}) {
    ASSERT_EQ(F32BitsToF8E4M3(bits), BruteF8E4M3(BitsToFloat(bits))) << std::hex << bits;
  }
}

// ---- f8e5m2 -------------------------------------------------------------------------------------

TEST(F8E5M2Test, NotesVectors) {
  const std::pair<float, uint8_t> vectors[] = {
      {1.125f, 0x3d},  // tie, away from zero (1.25)
      {1.25f, 0x3d},
      {1.375f, 0x3e},  // tie, away (1.5)
      {1.625f, 0x3f},  // tie, away (1.75)
      {-3.5f, 0xc3},
      {std::ldexp(1.0f, -14), 0x04},
      {std::ldexp(1.0f, -15), 0x02},
      {std::ldexp(1.0f, -16), 0x01},
      {std::ldexp(2.5f, -16), 0x03},  // tie, away
      {std::ldexp(3.5f, -16), 0x03},  // rounds to 4 quanta, clamped to 3 (the quirk)
      {std::ldexp(0.5f, -16), 0x01},  // tie, away
      {57344.0f, 0x7b},               // largest finite
      {61440.0f, 0x7c},               // tie between 57344 and 2^16: away, infinity
      {61439.0f, 0x7b},
      {0.0f, 0x00},
      {-0.0f, 0x80},
  };
  for (auto [in, out] : vectors) EXPECT_EQ(F32ToF8E5M2(in), out) << in;
}

TEST(F8E5M2Test, NaNInfinityAndSubnormalQuirk) {
  EXPECT_EQ(F32ToF8E5M2(INFINITY), 0x7c);
  EXPECT_EQ(F32ToF8E5M2(-INFINITY), 0xfc);
  EXPECT_EQ(F32ToF8E5M2(-1e10f), 0xfc);  // overflow: infinity, no saturation
  EXPECT_EQ(F32BitsToF8E5M2(0xffc00000), 0x7e);  // NaN, sign dropped
  EXPECT_EQ(F32BitsToF8E5M2(0x7f800001), 0x7e);
  EXPECT_EQ(F32ToF8E5M2(std::ldexp(3.9f, -16)), 0x03);   // quirk: not the min normal 0x04
  EXPECT_EQ(F32ToF8E5M2(-std::ldexp(3.99f, -16)), 0x83);
  EXPECT_EQ(F32ToF8E5M2(std::ldexp(0.49f, -16)), 0x00);
  EXPECT_EQ(F32ToF8E5M2(-std::ldexp(0.49f, -16)), 0x80);
  EXPECT_EQ(F32BitsToF8E5M2(0x80000001), 0x80);
  EXPECT_EQ(F8E5M2ToF32Bits(0x7c), 0x7f800000u);
  EXPECT_EQ(F8E5M2ToF32Bits(0xfc), 0xff800000u);
  EXPECT_EQ(F8E5M2ToF32Bits(0x7d), 0x7fc00000u);
  EXPECT_EQ(F8E5M2ToF32Bits(0xff), 0xffc00000u);  // sign kept
  EXPECT_EQ(F8E5M2ToF32(0x01), std::ldexp(1.0f, -16));
  EXPECT_EQ(F8E5M2ToF32(0x7b), 57344.0f);
}

TEST(F8E5M2Test, ExhaustiveDecodeAndRoundTrip) {
  for (uint32_t b = 0; b <= 0xff; ++b) {
    const uint8_t f8 = static_cast<uint8_t>(b);
    const double expected = RefDecode(b, 5, 2);
    const uint32_t wide = F8E5M2ToF32Bits(f8);
    if (std::isnan(expected)) {
      ASSERT_EQ(wide, (b & 0x80 ? 0xffc00000u : 0x7fc00000u));
      ASSERT_EQ(F32BitsToF8E5M2(wide), 0x7e);
      continue;
    }
    ASSERT_EQ(static_cast<double>(BitsToFloat(wide)), expected) << b;
    ASSERT_EQ(std::signbit(BitsToFloat(wide)), (b & 0x80) != 0);
    ASSERT_EQ(F32BitsToF8E5M2(wide), f8) << b;
  }
}

TEST(F8E5M2Test, NarrowingMatchesBruteForce) {
  std::mt19937 rng(11);
  std::uniform_int_distribution<uint32_t> in_range(Bits32(std::ldexp(1.0f, -20)),
                                                   Bits32(std::ldexp(1.0f, 17)));
  for (int i = 0; i < 300000; ++i) {
    uint32_t bits = in_range(rng) | (rng() & 1u) << 31;
    if (i % 4 == 0) bits &= 0xfff00000u;
    if (i % 4 == 1) bits = (bits & 0xffe00000u) | 0x00100000u;  // exact ties
    ASSERT_EQ(F32BitsToF8E5M2(bits), BruteF8E5M2(BitsToFloat(bits))) << std::hex << bits;
  }
}

// ---- Table lookup -------------------------------------------------------------------------------

TEST(TableLookupTest, EightBitFloatsToBf16AreExact) {
  for (uint32_t b = 0; b <= 0xff; ++b) {
    const uint8_t f8 = static_cast<uint8_t>(b);
    for (auto [lookup, decode] : {std::pair(&F8E4M3ToBf16, &F8E4M3ToF32Bits),
                                  std::pair(&F8E5M2ToBf16, &F8E5M2ToF32Bits)}) {
      const uint16_t bf = lookup(f8);
      const uint32_t wide = decode(f8);
      ASSERT_EQ(static_cast<uint32_t>(bf) << 16, wide) << b;  // nothing lost
      // Same bits as Eigen's plain conversion of the decoded value.
      ASSERT_EQ(Eigen::numext::bit_cast<uint16_t>(Eigen::bfloat16(BitsToFloat(wide))), bf);
    }
  }
  EXPECT_EQ(F8E4M3ToBf16(0x38), 0x3f80);
  EXPECT_EQ(F8E4M3ToBf16(0xff), 0x7fc0);  // f8e4m3 NaN decodes unsigned
  EXPECT_EQ(F8E5M2ToBf16(0xff), 0xffc0);  // f8e5m2 NaN keeps its sign
  EXPECT_EQ(F8E5M2ToBf16(0x01), 0x3780);  // 2^-16, a bf16 normal
}

// ---- Rules: which conversions exist -------------------------------------------------------------

using Pair = std::pair<DType, DType>;

// The pairs each stage converts, listed independently of the library.
std::set<Pair> ExpectedPairs(ConversionStage stage) {
  using enum DType;
  switch (stage) {
    case ConversionStage::kFetchCast: {
      std::set<Pair> pairs = {{kI4, kI5},     {kI4, kI32},     {kI8, kI9},   {kI8, kI32},
                              {kI16, kI32},   {kF8E4M3, kF32}, {kF8E5M2, kF32}, {kBF16, kF32},
                              {kF16, kF32},   {kF32, kBF16}};
      for (DType t : kAllDTypes) pairs.insert({t, t});
      return pairs;
    }
    case ConversionStage::kFetchTableLookup:
      return {{kF8E4M3, kBF16}, {kF8E5M2, kBF16}};
    case ConversionStage::kZeroPointSub:
      return {{kI4, kI5}, {kI8, kI9}};
    case ConversionStage::kCastEngine:
      return {{kI32, kI4},     {kI32, kI8},     {kI32, kI16}, {kF32, kF8E5M2},
              {kF32, kF8E4M3}, {kF32, kF16},    {kF32, kBF16}};
    case ConversionStage::kCommitCast:
      return {{kF32, kBF16}};
    case ConversionStage::kContraction:
      return {{kI4, kI32},     {kI5, kI32},     {kI8, kI32},  {kI9, kI32},
              {kF8E4M3, kF32}, {kF8E5M2, kF32}, {kBF16, kF32}};
  }
  return {};
}

std::string RuleTitle(ConversionStage stage) {
  switch (stage) {
    case ConversionStage::kFetchCast: return "\"Type Casting\"";
    case ConversionStage::kFetchTableLookup: return "\"Table Indexing\"";
    case ConversionStage::kZeroPointSub: return "\"Zero-Point Subtraction\"";
    case ConversionStage::kCastEngine: return "\"Precision Lowering\"";
    case ConversionStage::kCommitCast: return "\"commit_cast\"";
    case ConversionStage::kContraction: return "\"Data type support\"";
  }
  return "";
}

// A valid input pattern of `type` for exercising the pair (1.0 for floats, -3 for integers).
uint32_t SampleBits(DType type) {
  return IsFloat(type) ? *DoubleToBits(type, 1.0) : *DoubleToBits(type, -3.0);
}

TEST(ConversionRuleTest, EveryStageAllowsExactlyItsPairsAndNamesItsRuleOtherwise) {
  for (ConversionStage stage : kAllConversionStages) {
    const std::set<Pair> allowed = ExpectedPairs(stage);
    for (DType from : kAllDTypes) {
      for (DType to : kAllDTypes) {
        absl::Status status = CheckConversion(stage, from, to);
        absl::StatusOr<uint32_t> converted = Convert(stage, from, to, SampleBits(from));
        if (allowed.count({from, to})) {
          EXPECT_TRUE(status.ok()) << StageName(stage) << " " << from << " -> " << to;
          EXPECT_TRUE(converted.ok()) << converted.status();
          continue;
        }
        ASSERT_FALSE(status.ok()) << StageName(stage) << " " << from << " -> " << to;
        EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
        const std::string message(status.message());
        EXPECT_THAT(message, HasSubstr(RuleTitle(stage)));
        EXPECT_THAT(message, HasSubstr(std::string(StageName(stage))));
        EXPECT_THAT(message, HasSubstr(N(from) + " to " + N(to)));
        ASSERT_FALSE(converted.ok());
        EXPECT_EQ(converted.status(), status);
      }
    }
  }
}

TEST(ConversionRuleTest, GenericConvertRefusesEveryPairNoStageConverts) {
  std::set<Pair> allowed;
  for (ConversionStage stage : kAllConversionStages) {
    for (const Pair& pair : ExpectedPairs(stage)) allowed.insert(pair);
  }
  int refused = 0;
  for (DType from : kAllDTypes) {
    for (DType to : kAllDTypes) {
      absl::StatusOr<uint32_t> converted = Convert(from, to, SampleBits(from));
      if (allowed.count({from, to})) {
        EXPECT_TRUE(converted.ok()) << from << " -> " << to << ": " << converted.status();
        continue;
      }
      ++refused;
      ASSERT_FALSE(converted.ok()) << from << " -> " << to;
      EXPECT_EQ(converted.status().code(), absl::StatusCode::kInvalidArgument);
      const std::string message(converted.status().message());
      EXPECT_THAT(message, HasSubstr("no hardware stage converts " + N(from) + " to " + N(to)));
      for (ConversionStage stage : kAllConversionStages) {
        EXPECT_THAT(message, HasSubstr(RuleTitle(stage)));
      }
    }
  }
  EXPECT_EQ(refused, 11 * 11 - static_cast<int>(allowed.size()));
  EXPECT_GT(refused, 80);
}

TEST(ConversionRuleTest, RefusalsPointAtWhatTheHardwareDoesInstead) {
  auto message = [](DType from, DType to) {
    return std::string(Convert(from, to, 0).status().message());
  };
  EXPECT_THAT(message(DType::kI4, DType::kI9), HasSubstr("RNGD-S"));
  EXPECT_THAT(message(DType::kI16, DType::kI9), HasSubstr("RNGD-S"));
  EXPECT_THAT(message(DType::kI32, DType::kI5), HasSubstr("staging type"));
  EXPECT_THAT(message(DType::kI32, DType::kF32), HasSubstr("Vector Engine"));
  EXPECT_THAT(message(DType::kF32, DType::kI32), HasSubstr("Vector Engine"));
  // f16 is not a Contraction Engine operand, and the Cast Engine has no identity.
  EXPECT_FALSE(CheckConversion(ConversionStage::kContraction, DType::kF16, DType::kF32).ok());
  EXPECT_FALSE(CheckConversion(ConversionStage::kCastEngine, DType::kF32, DType::kF32).ok());
  EXPECT_TRUE(CheckConversion(ConversionStage::kFetchCast, DType::kBF16, DType::kBF16).ok());
}

TEST(ConversionRuleTest, ConvertRefusesPatternsWiderThanTheSourceType) {
  absl::StatusOr<uint32_t> converted = Convert(DType::kI4, DType::kI32, 0x10);
  ASSERT_FALSE(converted.ok());
  EXPECT_EQ(converted.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(converted.status().message()), HasSubstr("does not fit i4"));
  EXPECT_FALSE(Convert(DType::kBF16, DType::kF32, 0x1ffff).ok());
  EXPECT_FALSE(Convert(ConversionStage::kZeroPointSub, DType::kI8, DType::kI9, 0x100).ok());
}

// Every allowed pair, on every input pattern of a source up to 16 bits, computes what the named
// conversion function does; the stage used does not matter.
TEST(ConversionRuleTest, ConvertAgreesWithTheDirectFunctions) {
  auto expect_pair = [](DType from, DType to, uint32_t bits, uint32_t expected) {
    absl::StatusOr<uint32_t> got = Convert(from, to, bits);
    ASSERT_TRUE(got.ok()) << got.status();
    ASSERT_EQ(*got, expected) << from << " -> " << to << " " << std::hex << bits;
    for (ConversionStage stage : kAllConversionStages) {
      if (CheckConversion(stage, from, to).ok()) {
        ASSERT_EQ(*Convert(stage, from, to, bits), expected);
      }
    }
  };
  for (uint32_t b = 0; b <= 0xffff; ++b) {
    const uint16_t h = static_cast<uint16_t>(b);
    expect_pair(DType::kBF16, DType::kF32, b, Bf16ToF32Bits(h));
    expect_pair(DType::kF16, DType::kF32, b, F16ToF32Bits(h));
    expect_pair(DType::kI16, DType::kI32, b, TruncateToBits(SignExtend(b, 16), 32));
    if (b > 0xff) continue;
    const uint8_t q = static_cast<uint8_t>(b);
    expect_pair(DType::kF8E4M3, DType::kF32, b, F8E4M3ToF32Bits(q));
    expect_pair(DType::kF8E5M2, DType::kF32, b, F8E5M2ToF32Bits(q));
    expect_pair(DType::kF8E4M3, DType::kBF16, b, F8E4M3ToBf16(q));
    expect_pair(DType::kF8E5M2, DType::kBF16, b, F8E5M2ToBf16(q));
    expect_pair(DType::kI8, DType::kI9, b, TruncateToBits(SignExtend(b, 8), 9));
    if (b > 0xf) continue;
    expect_pair(DType::kI4, DType::kI5, b, TruncateToBits(SignExtend(b, 4), 5));
  }
  for (size_t i = 0; i < F32Samples().size(); i += 7) {
    const uint32_t bits = F32Samples()[i];
    expect_pair(DType::kF32, DType::kBF16, bits, F32BitsToBf16(bits));
    expect_pair(DType::kF32, DType::kF16, bits, F32BitsToF16(bits));
    expect_pair(DType::kF32, DType::kF8E4M3, bits, F32BitsToF8E4M3(bits));
    expect_pair(DType::kF32, DType::kF8E5M2, bits, F32BitsToF8E5M2(bits));
    expect_pair(DType::kI32, DType::kI8, bits, bits & 0xff);
    expect_pair(DType::kI32, DType::kI4, bits, bits & 0xf);
    expect_pair(DType::kI32, DType::kI16, bits, bits & 0xffff);
    expect_pair(DType::kF32, DType::kF32, bits, bits);
  }
}

// ---- Values -------------------------------------------------------------------------------------

TEST(ValueTest, EveryNonNaNPatternRoundTripsThroughDouble) {
  for (DType type : kAllDTypes) {
    if (Bits(type) > 16) continue;
    for (uint32_t bits = 0; bits < (1u << Bits(type)); ++bits) {
      const double value = BitsToDouble(type, bits);
      absl::StatusOr<uint32_t> back = DoubleToBits(type, value);
      ASSERT_TRUE(back.ok()) << type << " " << bits << ": " << back.status();
      if (std::isnan(value)) {
        ASSERT_TRUE(std::isnan(BitsToDouble(type, *back))) << type << " " << bits;
        continue;
      }
      ASSERT_EQ(*back, bits) << type << " " << std::hex << bits;
    }
  }
}

TEST(ValueTest, DecodesExactlyIncludingSubnormals) {
  EXPECT_EQ(BitsToDouble(DType::kI4, 0x8), -8.0);
  EXPECT_EQ(BitsToDouble(DType::kI5, 0x10), -16.0);
  EXPECT_EQ(BitsToDouble(DType::kI9, 0x1ff), -1.0);
  EXPECT_EQ(BitsToDouble(DType::kI32, 0x80000000), -2147483648.0);
  EXPECT_EQ(BitsToDouble(DType::kBF16, 0x0001), std::ldexp(1.0, -133));  // the pattern's value
  EXPECT_EQ(BitsToDouble(DType::kF16, 0x0001), std::ldexp(1.0, -24));
  EXPECT_EQ(BitsToDouble(DType::kF8E4M3, 0x7e), 448.0);
  EXPECT_TRUE(std::isnan(BitsToDouble(DType::kF8E4M3, 0xff)));
  EXPECT_TRUE(std::signbit(BitsToDouble(DType::kF8E4M3, 0xff)));
  EXPECT_EQ(BitsToDouble(DType::kF8E5M2, 0xfc), -INFINITY);
  EXPECT_EQ(BitsToDouble(DType::kF32, 0x3f800000), 1.0);
}

TEST(ValueTest, EncodingRoundsFloatsAndRefusesBadIntegers) {
  EXPECT_EQ(*DoubleToBits(DType::kBF16, 3.7), 0x406du);
  EXPECT_EQ(*DoubleToBits(DType::kF8E4M3, 1000.0), 0x7eu);
  EXPECT_EQ(*DoubleToBits(DType::kF8E5M2, 1e6), 0x7cu);
  EXPECT_EQ(*DoubleToBits(DType::kF32, 1e300), 0x7f800000u);
  EXPECT_EQ(*DoubleToBits(DType::kF32, -1e300), 0xff800000u);
  const double flt_max = std::numeric_limits<float>::max();
  EXPECT_EQ(*DoubleToBits(DType::kF32, flt_max), 0x7f7fffffu);
  EXPECT_EQ(*DoubleToBits(DType::kF32, flt_max + std::ldexp(1.0, 102)), 0x7f7fffffu);
  // Halfway between FLT_MAX and 2^128 rounds to even, i.e. to infinity.
  EXPECT_EQ(*DoubleToBits(DType::kF32, flt_max + std::ldexp(1.0, 103)), 0x7f800000u);
  EXPECT_EQ(*DoubleToBits(DType::kF32, std::nan("")), 0x7fc00000u);
  EXPECT_EQ(*DoubleToBits(DType::kF32, -std::nan("")), 0xffc00000u);
  EXPECT_EQ(*DoubleToBits(DType::kI4, -8), 0x8u);
  EXPECT_EQ(*DoubleToBits(DType::kI32, -1), 0xffffffffu);
  for (auto [type, value] : {std::pair(DType::kI8, 128.0), std::pair(DType::kI8, -129.0),
                             std::pair(DType::kI4, 8.0), std::pair(DType::kI8, 1.5),
                             std::pair(DType::kI32, 2147483648.0),
                             std::pair(DType::kI16, static_cast<double>(NAN)),
                             std::pair(DType::kI16, static_cast<double>(INFINITY))}) {
    absl::StatusOr<uint32_t> bits = DoubleToBits(type, value);
    ASSERT_FALSE(bits.ok()) << type << " " << value;
    EXPECT_EQ(bits.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(std::string(bits.status().message()), HasSubstr(N(type)));
  }
}

// ---- Packed storage -----------------------------------------------------------------------------

std::vector<uint8_t> BytesOf(const PackedStorage& storage) { return storage.bytes(); }

TEST(PackedStorageTest, I4PacksTwoPerByteLowNibbleFirst) {
  PackedStorage storage = *PackedStorage::Create(DType::kI4, 5);
  EXPECT_EQ(storage.bytes().size(), 3u);
  const double values[] = {1, -2, 3, -8, 7};
  for (int i = 0; i < 5; ++i) ASSERT_TRUE(storage.SetDouble(i, values[i]).ok());
  EXPECT_EQ(BytesOf(storage), (std::vector<uint8_t>{0xe1, 0x83, 0x07}));
  for (int i = 0; i < 5; ++i) EXPECT_EQ(*storage.GetDouble(i), values[i]);
  EXPECT_EQ(*storage.GetBits(1), 0xeu);
  // Writing one nibble leaves its neighbour alone.
  ASSERT_TRUE(storage.SetBits(1, 0x5).ok());
  EXPECT_EQ(BytesOf(storage), (std::vector<uint8_t>{0x51, 0x83, 0x07}));
  ASSERT_TRUE(storage.SetBits(0, 0x0).ok());
  EXPECT_EQ(BytesOf(storage), (std::vector<uint8_t>{0x50, 0x83, 0x07}));
  // The spare nibble of an odd count is not an element.
  EXPECT_FALSE(storage.GetBits(5).ok());
  EXPECT_FALSE(storage.SetBits(5, 0).ok());
}

TEST(PackedStorageTest, I4FromBytes) {
  PackedStorage storage = *PackedStorage::FromBytes(DType::kI4, 4, {0x21, 0xf3});
  EXPECT_EQ(*storage.GetDouble(0), 1);
  EXPECT_EQ(*storage.GetDouble(1), 2);
  EXPECT_EQ(*storage.GetDouble(2), 3);
  EXPECT_EQ(*storage.GetDouble(3), -1);
}

TEST(PackedStorageTest, MultiByteTypesAreLittleEndian) {
  auto one = [](DType type, double value) {
    PackedStorage storage = *PackedStorage::Create(type, 1);
    absl::Status status = storage.SetDouble(0, value);
    EXPECT_TRUE(status.ok()) << status;
    return BytesOf(storage);
  };
  EXPECT_EQ(one(DType::kF32, 1.0), (std::vector<uint8_t>{0x00, 0x00, 0x80, 0x3f}));
  EXPECT_EQ(one(DType::kI32, 0x12345678), (std::vector<uint8_t>{0x78, 0x56, 0x34, 0x12}));
  EXPECT_EQ(one(DType::kI16, -2), (std::vector<uint8_t>{0xfe, 0xff}));
  EXPECT_EQ(one(DType::kBF16, 1.0), (std::vector<uint8_t>{0x80, 0x3f}));
  EXPECT_EQ(one(DType::kF16, 1.0), (std::vector<uint8_t>{0x00, 0x3c}));
  EXPECT_EQ(one(DType::kF8E4M3, 1.0), (std::vector<uint8_t>{0x38}));
  EXPECT_EQ(one(DType::kF8E5M2, 1.0), (std::vector<uint8_t>{0x3c}));
  EXPECT_EQ(one(DType::kI8, -1), (std::vector<uint8_t>{0xff}));
}

TEST(PackedStorageTest, StagingTypesAreHeldSignExtended) {
  PackedStorage i5 = *PackedStorage::Create(DType::kI5, 2);
  ASSERT_TRUE(i5.SetDouble(0, -16).ok());
  ASSERT_TRUE(i5.SetDouble(1, 15).ok());
  EXPECT_EQ(BytesOf(i5), (std::vector<uint8_t>{0xf0, 0x0f}));
  EXPECT_EQ(*i5.GetBits(0), 0x10u);
  EXPECT_EQ(*i5.GetDouble(0), -16);
  PackedStorage i9 = *PackedStorage::Create(DType::kI9, 2);
  ASSERT_TRUE(i9.SetDouble(0, -256).ok());
  ASSERT_TRUE(i9.SetDouble(1, 255).ok());
  EXPECT_EQ(BytesOf(i9), (std::vector<uint8_t>{0x00, 0xff, 0xff, 0x00}));
  EXPECT_EQ(*i9.GetBits(0), 0x100u);
  EXPECT_EQ(*i9.GetDouble(1), 255);
  EXPECT_FALSE(i9.SetDouble(0, 256).ok());
}

TEST(PackedStorageTest, EveryElementOfEveryTypeReadsBackWhatWasWritten) {
  std::mt19937 rng(3);
  for (DType type : kAllDTypes) {
    const int64_t count = 37;
    PackedStorage storage = *PackedStorage::Create(type, count);
    std::vector<uint32_t> written(count);
    const uint32_t mask = Bits(type) == 32 ? 0xffffffffu : (1u << Bits(type)) - 1;
    for (int64_t i = 0; i < count; ++i) {
      written[i] = static_cast<uint32_t>(rng()) & mask;
      ASSERT_TRUE(storage.SetBits(i, written[i]).ok());
    }
    for (int64_t i = 0; i < count; ++i) ASSERT_EQ(*storage.GetBits(i), written[i]) << type << i;
    // The free functions see the same image.
    for (int64_t i = 0; i < count; ++i) {
      ASSERT_EQ(*LoadElementBits(type, storage.bytes(), i), written[i]);
    }
  }
}

// The bulk forms (what the interpreter's fetch and casts use) read and write the same image as the
// element accessors, odd i4 counts and the sign-extended staging types included.
TEST(PackedStorageTest, AllBitsAndSetAllBitsMatchTheElementAccessors) {
  std::mt19937 rng(5);
  for (DType type : kAllDTypes) {
    for (int64_t count : {0, 1, 7, 64, 101}) {
      PackedStorage one_by_one = *PackedStorage::Create(type, count);
      std::vector<uint32_t> written(static_cast<size_t>(count));
      const uint32_t mask = Bits(type) == 32 ? 0xffffffffu : (1u << Bits(type)) - 1;
      for (int64_t i = 0; i < count; ++i) {
        written[i] = static_cast<uint32_t>(rng()) & mask;
        ASSERT_TRUE(one_by_one.SetBits(i, written[i]).ok());
      }
      EXPECT_EQ(one_by_one.AllBits(), written) << type << " " << count;
      PackedStorage bulk = *PackedStorage::Create(type, count);
      ASSERT_TRUE(bulk.SetAllBits(written).ok()) << type;
      EXPECT_EQ(bulk.bytes(), one_by_one.bytes()) << type << " " << count;
    }
  }
}

TEST(PackedStorageTest, SetAllBitsRefusesAPatternThatDoesNotFitOrTheWrongCount) {
  PackedStorage storage = *PackedStorage::Create(DType::kI4, 3);
  const absl::Status misfit = storage.SetAllBits(std::vector<uint32_t>{1, 0x10, 2});
  ASSERT_FALSE(misfit.ok());
  EXPECT_THAT(std::string(misfit.message()), HasSubstr("element 1"));
  EXPECT_THAT(std::string(misfit.message()), HasSubstr("does not fit i4"));
  const absl::Status count = storage.SetAllBits(std::vector<uint32_t>{1, 2});
  ASSERT_FALSE(count.ok());
  EXPECT_THAT(std::string(count.message()), HasSubstr("3 elements"));
}

TEST(PackedStorageTest, FreshStorageIsZero) {
  for (DType type : kAllDTypes) {
    PackedStorage storage = *PackedStorage::Create(type, 9);
    EXPECT_EQ(static_cast<int64_t>(storage.bytes().size()), StorageBytes(type, 9));
    for (int64_t i = 0; i < 9; ++i) {
      EXPECT_EQ(*storage.GetDouble(i), 0.0);
      EXPECT_FALSE(std::signbit(*storage.GetDouble(i)));
    }
  }
}

TEST(PackedStorageTest, UserErrorsAreStatusesNotCrashes) {
  EXPECT_EQ(PackedStorage::Create(DType::kF32, -1).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_FALSE(PackedStorage::Create(DType::kF32, kMaxStorageElements + 1).ok());
  absl::StatusOr<PackedStorage> wrong = PackedStorage::FromBytes(DType::kBF16, 3, {1, 2, 3, 4});
  ASSERT_FALSE(wrong.ok());
  EXPECT_THAT(std::string(wrong.status().message()), HasSubstr("take 6 bytes"));
  PackedStorage storage = *PackedStorage::Create(DType::kI8, 4);
  EXPECT_FALSE(storage.GetBits(-1).ok());
  EXPECT_FALSE(storage.GetBits(4).ok());
  EXPECT_FALSE(storage.GetDouble(4).ok());
  EXPECT_FALSE(storage.SetBits(0, 0x100).ok());
  EXPECT_FALSE(storage.SetDouble(0, 128).ok());
  EXPECT_FALSE(storage.SetDouble(0, 0.5).ok());
  EXPECT_FALSE(storage.SetDouble(9, 1).ok());
  const std::vector<uint8_t> short_image = {0, 0, 0};
  EXPECT_FALSE(LoadElementBits(DType::kF32, short_image, 0).ok());
  std::vector<uint8_t> image = {0, 0};
  EXPECT_FALSE(StoreElementBits(DType::kI4, image, 4, 1).ok());
  EXPECT_TRUE(StoreElementBits(DType::kI4, image, 3, 1).ok());
  EXPECT_EQ(image, (std::vector<uint8_t>{0x00, 0x10}));
}

}  // namespace
}  // namespace visa
