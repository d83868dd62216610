// Bit-exact scalar conversions the hardware performs (fetch casts, Cast Engine, contraction).
#include "dsl/scalar_convert.h"

#include <Eigen/Core>
#include <algorithm>
#include <bit>
#include <cfloat>
#include <cmath>
#include <limits>
#include <optional>
#include <string>
#include <string_view>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace visa {
namespace {

constexpr uint32_t kF32SignMask = 0x80000000u;
constexpr uint32_t kF32AbsMask = 0x7fffffffu;
constexpr uint32_t kF32ExpMask = 0x7f800000u;  // also the bits of +inf
constexpr uint32_t kF32MantMask = 0x007fffffu;
constexpr uint32_t kF32ImplicitOne = 0x00800000u;
constexpr uint32_t kF32CanonicalNaN = 0x7fc00000u;

constexpr uint16_t kBf16CanonicalNaN = 0x7fc0;
constexpr uint16_t kF16CanonicalNaN = 0x7e00;
constexpr uint8_t kF8E4M3NaN = 0x7f;
constexpr uint8_t kF8E4M3MaxFinite = 0x7e;  // 448
constexpr uint8_t kF8E5M2NaN = 0x7e;
constexpr uint8_t kF8E5M2Inf = 0x7c;

// Message text. (The absl in use has its own string_view, so std::string_view and DType go
// through std::string.)
std::string Str(std::string_view text) { return std::string(text); }
std::string Str(DType type) { return std::string(Name(type)); }

bool IsF32NaN(uint32_t bits) { return (bits & kF32AbsMask) > kF32ExpMask; }
bool IsF32Inf(uint32_t bits) { return (bits & kF32AbsMask) == kF32ExpMask; }
bool IsF32ZeroOrSubnormal(uint32_t bits) { return (bits & kF32ExpMask) == 0; }
int F32BiasedExponent(uint32_t bits) { return static_cast<int>((bits >> 23) & 0xff); }

// The 24-bit significand (implicit one included) of a normal f32.
uint32_t F32Significand(uint32_t bits) { return (bits & kF32MantMask) | kF32ImplicitOne; }

// sig / 2^shift rounded to an integer, ties to even. `sig` < 2^24, so for shift >= 32 the
// quotient is below 2^-8 and rounds to 0.
uint32_t ShiftRightNearestEven(uint32_t sig, int shift) {
  if (shift <= 0) return sig;
  if (shift >= 32) return 0;
  const uint32_t q = sig >> shift;
  const uint32_t rem = sig & ((1u << shift) - 1);
  const uint32_t half = 1u << (shift - 1);
  return (rem > half || (rem == half && (q & 1u))) ? q + 1 : q;
}

// sig / 2^shift rounded to an integer, ties away from zero (f8e5m2's "round half up").
uint32_t ShiftRightHalfAway(uint32_t sig, int shift) {
  if (shift <= 0) return sig;
  if (shift >= 32) return 0;
  const uint32_t q = sig >> shift;
  const uint32_t rem = sig & ((1u << shift) - 1);
  return rem >= (1u << (shift - 1)) ? q + 1 : q;
}

uint16_t EigenBf16Bits(float value) {
  return Eigen::numext::bit_cast<uint16_t>(Eigen::bfloat16(value));
}
uint16_t EigenHalfBits(float value) {
  return Eigen::numext::bit_cast<uint16_t>(Eigen::half(value));
}
float EigenBf16Value(uint16_t bits) {
  return static_cast<float>(Eigen::numext::bit_cast<Eigen::bfloat16>(bits));
}
float EigenHalfValue(uint16_t bits) {
  return static_cast<float>(Eigen::numext::bit_cast<Eigen::half>(bits));
}

// ---- Which stage converts what ------------------------------------------------------------------

struct StagePair {
  ConversionStage stage;
  DType from;
  DType to;
};

using enum DType;
using enum ConversionStage;

constexpr StagePair kStagePairs[] = {
    // Manual, Fetch Adapter "Type Casting", the RNGD table.
    {kFetchCast, kI4, kI5},
    {kFetchCast, kI4, kI32},
    {kFetchCast, kI8, kI9},
    {kFetchCast, kI8, kI32},
    {kFetchCast, kI16, kI32},
    {kFetchCast, kF8E4M3, kF32},
    {kFetchCast, kF8E5M2, kF32},
    {kFetchCast, kBF16, kF32},
    {kFetchCast, kF16, kF32},
    {kFetchCast, kF32, kBF16},
    // Fixed lookup tables (notes 2.3); the manual lists the same pairs as RNGD-S type casts.
    {kFetchTableLookup, kF8E4M3, kBF16},
    {kFetchTableLookup, kF8E5M2, kBF16},
    // Manual, Fetch Adapter "Zero-Point Subtraction".
    {kZeroPointSub, kI4, kI5},
    {kZeroPointSub, kI8, kI9},
    // Manual, Cast Engine "Precision Lowering".
    {kCastEngine, kI32, kI4},
    {kCastEngine, kI32, kI8},
    {kCastEngine, kI32, kI16},
    {kCastEngine, kF32, kF8E5M2},
    {kCastEngine, kF32, kF8E4M3},
    {kCastEngine, kF32, kF16},
    {kCastEngine, kF32, kBF16},
    // Notes 2.3, commit_cast / commit_cast_relu.
    {kCommitCast, kF32, kBF16},
    // Manual, Reducer "Data type support": i4/i8 -> i32, f8/bf16 -> f32 (plus the i5/i9 stagings).
    {kContraction, kI4, kI32},
    {kContraction, kI5, kI32},
    {kContraction, kI8, kI32},
    {kContraction, kI9, kI32},
    {kContraction, kF8E4M3, kF32},
    {kContraction, kF8E5M2, kF32},
    {kContraction, kBF16, kF32},
};

bool StageAllows(ConversionStage stage, DType from, DType to) {
  // A fetch without a cast leaves the type as it is.
  if (stage == kFetchCast && from == to) return true;
  return std::any_of(std::begin(kStagePairs), std::end(kStagePairs), [&](const StagePair& p) {
    return p.stage == stage && p.from == from && p.to == to;
  });
}

bool AnyStageAllows(DType from, DType to) {
  return from == to || std::any_of(std::begin(kAllConversionStages),
                                   std::end(kAllConversionStages),
                                   [&](ConversionStage s) { return StageAllows(s, from, to); });
}

// Extra words for refusals a user is likely to try, pointing at what the hardware does instead.
std::string RefusalHint(DType from, DType to) {
  if ((from == kI4 || from == kI16) && to == kI9) {
    return absl::StrCat(" (", Str(from),
                        " -> i9 is an RNGD-S-only type cast; this project models RNGD)");
  }
  if (IsStaging(to)) {
    return absl::StrCat(" (", Str(to), " is a staging type: only zero-point subtraction of ",
                        to == kI5 ? "i4" : "i8", " produces it)");
  }
  if (IsFloat(from) != IsFloat(to)) {
    return " (integer <-> float conversion is a Vector Engine operation (FxpToFp / FpToFxp), "
           "not a cast)";
  }
  return "";
}

// The arithmetic of an allowed pair; nullopt for a pair no rule defines.
std::optional<uint32_t> ConvertBits(DType from, DType to, uint32_t bits) {
  if (from == to) return bits;
  // Integer widening sign-extends, integer narrowing wraps: both are "read as the source width,
  // keep the target width".
  if (IsSignedInt(from) && IsSignedInt(to)) {
    return TruncateToBits(SignExtend(bits, Bits(from)), Bits(to));
  }
  if (to == kF32) {
    switch (from) {
      case kBF16: return Bf16ToF32Bits(static_cast<uint16_t>(bits));
      case kF16: return F16ToF32Bits(static_cast<uint16_t>(bits));
      case kF8E4M3: return F8E4M3ToF32Bits(static_cast<uint8_t>(bits));
      case kF8E5M2: return F8E5M2ToF32Bits(static_cast<uint8_t>(bits));
      default: return std::nullopt;
    }
  }
  if (from == kF32) {
    switch (to) {
      case kBF16: return F32BitsToBf16(bits);
      case kF16: return F32BitsToF16(bits);
      case kF8E4M3: return F32BitsToF8E4M3(bits);
      case kF8E5M2: return F32BitsToF8E5M2(bits);
      default: return std::nullopt;
    }
  }
  if (to == kBF16 && from == kF8E4M3) return F8E4M3ToBf16(static_cast<uint8_t>(bits));
  if (to == kBF16 && from == kF8E5M2) return F8E5M2ToBf16(static_cast<uint8_t>(bits));
  return std::nullopt;
}

absl::StatusOr<uint32_t> ConvertChecked(DType from, DType to, uint32_t bits) {
  if (absl::Status fit = CheckBitsFit(from, bits); !fit.ok()) return fit;
  std::optional<uint32_t> out = ConvertBits(from, to, bits);
  if (!out) {
    return absl::InternalError(absl::StrCat("no arithmetic for the allowed conversion ", Str(from),
                                            " -> ", Str(to)));
  }
  return *out;
}

// f32 rounding of a double that never relies on an out-of-range double -> float cast (undefined
// behaviour in C++): beyond FLT_MAX the result is FLT_MAX or infinity by the round-to-nearest rule.
float DoubleToFloatNearestEven(double value) {
  if (std::isnan(value)) return std::copysign(std::numeric_limits<float>::quiet_NaN(), value);
  const double magnitude = std::fabs(value);
  if (magnitude > FLT_MAX) {
    // Halfway between FLT_MAX and 2^128; the tie goes to the even 2^128, i.e. infinity.
    const double halfway = 0x1.ffffffp127;
    const float rounded = magnitude >= halfway ? std::numeric_limits<float>::infinity() : FLT_MAX;
    return std::copysign(rounded, value);
  }
  return static_cast<float>(value);
}

}  // namespace

// ---- f32 bit patterns ------------------------------------------------------------------------

uint32_t FloatToBits(float value) { return std::bit_cast<uint32_t>(value); }
float BitsToFloat(uint32_t bits) { return std::bit_cast<float>(bits); }

// ---- Widening to f32 --------------------------------------------------------------------------

uint32_t Bf16ToF32Bits(uint16_t bf16) {
  if ((bf16 & 0x7fff) > 0x7f80) return kF32CanonicalNaN;
  // A bf16 subnormal is an f32 subnormal, which the hardware's f32 datapath flushes to zero.
  if ((bf16 & 0x7f80) == 0) return static_cast<uint32_t>(bf16 & 0x8000) << 16;
  return FloatToBits(EigenBf16Value(bf16));
}

uint32_t F16ToF32Bits(uint16_t f16) {
  if ((f16 & 0x7fff) > 0x7c00) return kF32CanonicalNaN;
  // f16 subnormals (down to 2^-24) are f32 normals, so they convert exactly.
  return FloatToBits(EigenHalfValue(f16));
}

uint32_t F8E4M3ToF32Bits(uint8_t f8) {
  if ((f8 & 0x7f) == kF8E4M3NaN) return kF32CanonicalNaN;
  const uint32_t sign = static_cast<uint32_t>(f8 & 0x80) << 24;
  const uint32_t exponent = (f8 >> 3) & 0xf;
  const uint32_t mantissa = f8 & 0x7;
  if (exponent == 0) {
    // Subnormal: mantissa * 2^-9, exact in f32.
    return sign | FloatToBits(static_cast<float>(mantissa) * 0x1p-9f);
  }
  return sign | ((exponent - 7 + 127) << 23) | (mantissa << 20);
}

uint32_t F8E5M2ToF32Bits(uint8_t f8) {
  const uint32_t sign = static_cast<uint32_t>(f8 & 0x80) << 24;
  const uint32_t exponent = (f8 >> 2) & 0x1f;
  const uint32_t mantissa = f8 & 0x3;
  if (exponent == 0x1f) return sign | (mantissa == 0 ? kF32ExpMask : kF32CanonicalNaN);
  if (exponent == 0) {
    // Subnormal: mantissa * 2^-16, exact in f32.
    return sign | FloatToBits(static_cast<float>(mantissa) * 0x1p-16f);
  }
  return sign | ((exponent - 15 + 127) << 23) | (mantissa << 21);
}

float Bf16ToF32(uint16_t bf16) { return BitsToFloat(Bf16ToF32Bits(bf16)); }
float F16ToF32(uint16_t f16) { return BitsToFloat(F16ToF32Bits(f16)); }
float F8E4M3ToF32(uint8_t f8) { return BitsToFloat(F8E4M3ToF32Bits(f8)); }
float F8E5M2ToF32(uint8_t f8) { return BitsToFloat(F8E5M2ToF32Bits(f8)); }

// ---- Narrowing from f32 -----------------------------------------------------------------------

uint16_t F32BitsToBf16(uint32_t f32_bits) {
  if (IsF32NaN(f32_bits)) return kBf16CanonicalNaN;
  // The hardware flushes f32 subnormals; Eigen would round them to bf16 subnormals.
  if (IsF32ZeroOrSubnormal(f32_bits)) return static_cast<uint16_t>((f32_bits >> 16) & 0x8000);
  // Eigen rounds to nearest even and overflows to infinity, exactly the hardware rule here.
  return EigenBf16Bits(BitsToFloat(f32_bits));
}

uint16_t F32BitsToF16(uint32_t f32_bits) {
  // Eigen keeps the NaN sign (and with F16C the payload); the hardware-style rule drops both.
  if (IsF32NaN(f32_bits)) return kF16CanonicalNaN;
  // f32 subnormals lie far below half of f16's smallest subnormal (2^-25): they round to a
  // signed zero. Doing it here keeps the result independent of the host's denormal mode.
  if (IsF32ZeroOrSubnormal(f32_bits)) return static_cast<uint16_t>((f32_bits >> 16) & 0x8000);
  return EigenHalfBits(BitsToFloat(f32_bits));
}

uint8_t F32BitsToF8E4M3(uint32_t f32_bits) {
  if (IsF32NaN(f32_bits)) return kF8E4M3NaN;
  const uint8_t sign = static_cast<uint8_t>((f32_bits >> 24) & 0x80);
  if (IsF32ZeroOrSubnormal(f32_bits)) return sign;
  // f8e4m3 (the FN variant) has no infinity: infinities and everything that rounds to 448 or
  // more saturate to the largest finite value.
  if (IsF32Inf(f32_bits)) return sign | kF8E4M3MaxFinite;
  const int exponent = F32BiasedExponent(f32_bits) - 127 + 7;  // f8e4m3 biased exponent
  if (exponent > 15) return sign | kF8E4M3MaxFinite;          // |x| >= 512
  // Quantum of the target binade: 2^(e - 7 - 3) for normals, 2^-9 for the subnormal range,
  // i.e. 20 significand bits dropped plus one more per binade below the smallest normal.
  const int coded_exponent = std::max(exponent, 1);
  const uint32_t steps =
      ShiftRightNearestEven(F32Significand(f32_bits), 20 + (coded_exponent - exponent));
  // steps counts quanta: 8..16 for a normal (16 = carry into the next binade), 0..8 for a
  // subnormal, so one formula covers both and the carry.
  const uint32_t code = (static_cast<uint32_t>(coded_exponent) << 3) + steps - 8;
  return sign | static_cast<uint8_t>(std::min<uint32_t>(code, kF8E4M3MaxFinite));
}

uint8_t F32BitsToF8E5M2(uint32_t f32_bits) {
  if (IsF32NaN(f32_bits)) return kF8E5M2NaN;
  const uint8_t sign = static_cast<uint8_t>((f32_bits >> 24) & 0x80);
  if (IsF32Inf(f32_bits)) return sign | kF8E5M2Inf;
  if (IsF32ZeroOrSubnormal(f32_bits)) return sign;
  const int exponent = F32BiasedExponent(f32_bits) - 127 + 15;  // f8e5m2 biased exponent
  if (exponent >= 31) return sign | kF8E5M2Inf;
  const uint32_t sig = F32Significand(f32_bits);
  if (exponent <= 0) {
    // |x| < 2^-14: code = round_half_away(|x| * 2^16), clamped to 3, so [3.5, 4) * 2^-16 gives
    // 0x03 rather than the smallest normal 0x04 (the hardware's quirk, kept on purpose).
    // |x| * 2^16 = sig * 2^(E - 134) with E the f32 biased exponent.
    const uint32_t code = ShiftRightHalfAway(sig, 134 - F32BiasedExponent(f32_bits));
    return sign | static_cast<uint8_t>(std::min<uint32_t>(code, 3));
  }
  // Keep 2 of 23 mantissa bits, half up in magnitude; steps is 4..8, 8 carrying the exponent.
  const uint32_t steps = ShiftRightHalfAway(sig, 21);
  const uint32_t code = (static_cast<uint32_t>(exponent) << 2) + steps - 4;
  return sign | static_cast<uint8_t>(std::min<uint32_t>(code, kF8E5M2Inf));
}

uint16_t F32ToBf16(float value) { return F32BitsToBf16(FloatToBits(value)); }
uint16_t F32ToF16(float value) { return F32BitsToF16(FloatToBits(value)); }
uint8_t F32ToF8E4M3(float value) { return F32BitsToF8E4M3(FloatToBits(value)); }
uint8_t F32ToF8E5M2(float value) { return F32BitsToF8E5M2(FloatToBits(value)); }

uint16_t F32BitsToBf16Relu(uint32_t f32_bits) {
  // The sign bit, not "< 0", decides: -0.0 and negative subnormals become +0 as well.
  if (!IsF32NaN(f32_bits) && (f32_bits & kF32SignMask) != 0) return 0;
  return F32BitsToBf16(f32_bits);
}

// ---- Table lookup -----------------------------------------------------------------------------

// Every 8-bit float value is a normal bf16 whose f32 form has 16 zero low bits, so the table entry
// is the f32 decode truncated; f8e4m3 NaNs decode unsigned, f8e5m2 NaNs keep their sign.
uint16_t F8E4M3ToBf16(uint8_t f8) { return static_cast<uint16_t>(F8E4M3ToF32Bits(f8) >> 16); }
uint16_t F8E5M2ToBf16(uint8_t f8) { return static_cast<uint16_t>(F8E5M2ToF32Bits(f8) >> 16); }

// ---- Integers ---------------------------------------------------------------------------------

int32_t SignExtend(uint32_t bits, int width) {
  const int unused = 32 - width;
  return static_cast<int32_t>(bits << unused) >> unused;  // arithmetic shift (C++20)
}

uint32_t TruncateToBits(int32_t value, int width) {
  const uint32_t raw = static_cast<uint32_t>(value);
  return width >= 32 ? raw : raw & ((1u << width) - 1);
}

int32_t I32ToI4(int32_t value) { return SignExtend(TruncateToBits(value, 4), 4); }
int32_t I32ToI8(int32_t value) { return SignExtend(TruncateToBits(value, 8), 8); }
int32_t I32ToI16(int32_t value) { return SignExtend(TruncateToBits(value, 16), 16); }

absl::StatusOr<int32_t> ZeroPointSubtract(DType source, int32_t value, int32_t zero_point) {
  if (source != kI4 && source != kI8) {
    return absl::InvalidArgumentError(absl::StrCat(
        "zero-point subtraction cannot take ", Str(source), ": ",
        Str(StageRule(ConversionStage::kZeroPointSub))));
  }
  const DType staging = source == kI4 ? kI5 : kI9;
  // The zero point has the source type (the manual's fetch_with_zero_point takes an i8), which is
  // what guarantees value - zero_point fits the staging type.
  if (zero_point < IntMin(source) || zero_point > IntMax(source)) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "zero point %d is outside %s's range [%d, %d] (manual, Fetch Adapter constraints: "
        "zero-point values must fit the representable range; %s - zero point must fit %s)",
        zero_point, Str(source), IntMin(source), IntMax(source), Str(source), Str(staging)));
  }
  if (value < IntMin(source) || value > IntMax(source)) {
    return absl::InvalidArgumentError(absl::StrFormat("value %d is not an %s (range [%d, %d])",
                                                      value, Str(source), IntMin(source),
                                                      IntMax(source)));
  }
  return value - zero_point;
}

// ---- Which stage converts what ----------------------------------------------------------------

std::string_view StageName(ConversionStage stage) {
  switch (stage) {
    case kFetchCast: return "fetch cast";
    case kFetchTableLookup: return "fetch table lookup";
    case kZeroPointSub: return "zero-point subtraction";
    case kCastEngine: return "Cast Engine";
    case kCommitCast: return "commit cast";
    case kContraction: return "Contraction Engine";
  }
  return "unknown stage";
}

std::string_view StageRule(ConversionStage stage) {
  switch (stage) {
    case kFetchCast:
      return "rule \"Type Casting\" (manual, Fetch Adapter, RNGD table): i4 -> i5/i32, "
             "i8 -> i9/i32, i16 -> i32, f8e4m3/f8e5m2/bf16/f16 -> f32, f32 -> bf16, or no cast";
    case kFetchTableLookup:
      return "rule \"Table Indexing\" (manual, Fetch Adapter; fixed tables per notes 2.3): "
             "f8e4m3 -> bf16, f8e5m2 -> bf16";
    case kZeroPointSub:
      return "rule \"Zero-Point Subtraction\" (manual, Fetch Adapter): i4 -> i5, i8 -> i9";
    case kCastEngine:
      return "rule \"Precision Lowering\" (manual, Cast Engine): i32 -> i4/i8/i16, "
             "f32 -> f8e5m2/f8e4m3/f16/bf16, no identity";
    case kCommitCast:
      return "rule \"commit_cast\" (notes 2.3, Commit Adapter): f32 -> bf16 only";
    case kContraction:
      return "rule \"Data type support\" (manual, Reducer): operands i4/i8 (and their "
             "zero-point stagings i5/i9) widen to i32, f8e4m3/f8e5m2/bf16 widen to f32";
  }
  return "unknown rule";
}

absl::Status CheckConversion(ConversionStage stage, DType from, DType to) {
  if (StageAllows(stage, from, to)) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat(Str(StageName(stage)), " cannot convert ",
                                                 Str(from), " to ", Str(to), ": ",
                                                 Str(StageRule(stage)), RefusalHint(from, to)));
}

absl::StatusOr<uint32_t> Convert(DType from, DType to, uint32_t bits) {
  if (!AnyStageAllows(from, to)) {
    std::string rules;
    for (ConversionStage stage : kAllConversionStages) {
      absl::StrAppend(&rules, "\n  ", Str(StageName(stage)), ": ", Str(StageRule(stage)));
    }
    return absl::InvalidArgumentError(absl::StrCat("no hardware stage converts ", Str(from), " to ",
                                                   Str(to), RefusalHint(from, to),
                                                   "; the conversion rules are:", rules));
  }
  return ConvertChecked(from, to, bits);
}

absl::StatusOr<uint32_t> Convert(ConversionStage stage, DType from, DType to, uint32_t bits) {
  if (absl::Status allowed = CheckConversion(stage, from, to); !allowed.ok()) return allowed;
  return ConvertChecked(from, to, bits);
}

// ---- Values -------------------------------------------------------------------------------------

double BitsToDouble(DType type, uint32_t bits) {
  if (Bits(type) < 32) bits &= (1u << Bits(type)) - 1;
  const double nan = std::numeric_limits<double>::quiet_NaN();
  switch (type) {
    case kF32: {
      const float value = BitsToFloat(bits);
      return std::isnan(value) ? std::copysign(nan, (bits >> 31) ? -1.0 : 1.0) : value;
    }
    case kBF16: {
      // The pattern's meaning, subnormals included (unlike the FTZ widening).
      const float value = BitsToFloat(bits << 16);
      return std::isnan(value) ? std::copysign(nan, (bits >> 15) ? -1.0 : 1.0) : value;
    }
    case kF16: {
      if ((bits & 0x7fff) > 0x7c00) return std::copysign(nan, (bits >> 15) ? -1.0 : 1.0);
      return EigenHalfValue(static_cast<uint16_t>(bits));
    }
    case kF8E4M3: {
      if ((bits & 0x7f) == kF8E4M3NaN) return std::copysign(nan, (bits >> 7) ? -1.0 : 1.0);
      return F8E4M3ToF32(static_cast<uint8_t>(bits));
    }
    case kF8E5M2:
      return F8E5M2ToF32(static_cast<uint8_t>(bits));
    default:
      return SignExtend(bits, Bits(type));
  }
}

absl::StatusOr<uint32_t> DoubleToBits(DType type, double value) {
  if (IsSignedInt(type)) {
    if (!std::isfinite(value) || value != std::trunc(value) ||
        value < static_cast<double>(IntMin(type)) || value > static_cast<double>(IntMax(type))) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "%g is not an %s value (integers in [%d, %d])", value, Str(type), IntMin(type),
          IntMax(type)));
    }
    return TruncateToBits(static_cast<int32_t>(value), Bits(type));
  }
  const float rounded = DoubleToFloatNearestEven(value);
  const uint32_t f32_bits = FloatToBits(rounded);
  const bool negative = (f32_bits & kF32SignMask) != 0;
  switch (type) {
    case kF32:
      // One NaN per sign, so a stored NaN does not depend on how the host produced it.
      return IsF32NaN(f32_bits) ? (f32_bits & kF32SignMask) | kF32CanonicalNaN : f32_bits;
    // Host values are encoded the plain IEEE way (subnormals kept), not by the FTZ Cast rule:
    // writing a representable bf16 / f16 value must store exactly that value.
    case kBF16:
      if (IsF32NaN(f32_bits)) return (negative ? 0x8000u : 0u) | kBf16CanonicalNaN;
      return EigenBf16Bits(rounded);
    case kF16:
      if (IsF32NaN(f32_bits)) return (negative ? 0x8000u : 0u) | kF16CanonicalNaN;
      return EigenHalfBits(rounded);
    case kF8E4M3: return F32BitsToF8E4M3(f32_bits);
    case kF8E5M2: return F32BitsToF8E5M2(f32_bits);
    default: return absl::InternalError(absl::StrCat("no float encoding for ", Str(type)));
  }
}

}  // namespace visa
