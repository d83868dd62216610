// Bit-exact scalar conversions the hardware performs (fetch casts, Cast Engine, contraction).
//
// Every function here is exact: the same input bits always give the same output bits, on every
// host, with the rounding, saturation, NaN, infinity and subnormal rules of design.md "Numeric
// semantics" and notes/engine-semantics.md section 2. Raw patterns are passed in the low bits of
// an unsigned integer (Bits(type) of them); integer values are passed sign-extended in int32_t.
//
// Summary of the rules (f32 means IEEE binary32):
//   widening (fetch cast, contraction; exact):
//     i4 / i5 / i8 / i9 / i16 -> i32: sign extension.
//     bf16 -> f32: NaN -> 0x7fc00000, bf16 subnormal -> signed zero, otherwise exact.
//     f16 -> f32: NaN -> 0x7fc00000, otherwise exact (f16 subnormals are f32 normals).
//     f8e4m3 -> f32: exact; 0x7f and 0xff (the NaNs) -> 0x7fc00000.
//     f8e5m2 -> f32: exact; infinities kept; NaN -> 0x7fc00000 with the sign kept.
//   narrowing (Cast Engine; f32 -> bf16 also fetch cast and commit cast):
//     i32 -> i4 / i8 / i16: two's complement wrap (keep the low bits), never saturate.
//     f32 -> bf16: NaN -> 0x7fc0; f32 subnormal -> signed zero; round to nearest even; overflow
//       -> +-inf.
//     f32 -> f16: NaN -> 0x7e00; round to nearest even (f16 subnormals produced); overflow ->
//       +-inf.
//     f32 -> f8e4m3: NaN -> 0x7f; round to nearest even (also in the subnormal range); results
//       >= 448 after rounding, and +-inf, saturate to +-448 (0x7e / 0xfe); f32 subnormal -> signed
//       zero.
//     f32 -> f8e5m2: NaN -> 0x7e; +-inf kept; round half AWAY from zero; overflow -> +-inf; below
//       2^-14 the subnormal code is round_half_away(|x| * 2^16) clamped to 3.
//   table lookup (fetch): f8e4m3 / f8e5m2 -> bf16: exact (the f32 decode truncated to 16 bits).
#pragma once

#include <array>
#include <cstdint>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "dsl/dtype.h"

namespace visa {

// ---- f32 bit patterns ------------------------------------------------------------------------

uint32_t FloatToBits(float value);
float BitsToFloat(uint32_t bits);

// ---- Widening to f32 (Fetch Adapter type casting, Contraction Engine) ------------------------

uint32_t Bf16ToF32Bits(uint16_t bf16);
uint32_t F16ToF32Bits(uint16_t f16);
uint32_t F8E4M3ToF32Bits(uint8_t f8);
uint32_t F8E5M2ToF32Bits(uint8_t f8);

float Bf16ToF32(uint16_t bf16);
float F16ToF32(uint16_t f16);
float F8E4M3ToF32(uint8_t f8);
float F8E5M2ToF32(uint8_t f8);

// ---- Narrowing from f32 (Cast Engine; f32 -> bf16 also in fetch cast and commit cast) ---------

uint16_t F32BitsToBf16(uint32_t f32_bits);
uint16_t F32BitsToF16(uint32_t f32_bits);
uint8_t F32BitsToF8E4M3(uint32_t f32_bits);
uint8_t F32BitsToF8E5M2(uint32_t f32_bits);

uint16_t F32ToBf16(float value);
uint16_t F32ToF16(float value);
uint8_t F32ToF8E4M3(float value);
uint8_t F32ToF8E5M2(float value);

// commit_cast_relu: a non-NaN f32 whose sign bit is set (negatives, -0.0, negative subnormals)
// becomes +0; everything else follows F32BitsToBf16 (so a negative NaN still gives 0x7fc0).
uint16_t F32BitsToBf16Relu(uint32_t f32_bits);

// ---- Table lookup (fetch): 8-bit floats to bf16, exact ----------------------------------------

uint16_t F8E4M3ToBf16(uint8_t f8);
uint16_t F8E5M2ToBf16(uint8_t f8);

// ---- Integers --------------------------------------------------------------------------------

// The value of the low `width` bits of `bits` read as two's complement (1 <= width <= 32).
int32_t SignExtend(uint32_t bits, int width);

// The low `width` bits of `value`: its raw pattern in a `width`-bit integer type.
uint32_t TruncateToBits(int32_t value, int width);

// Cast Engine narrowing: keep the low 4 / 8 / 16 bits, read them back as signed.
// E.g. I32ToI8(200) == -56, I32ToI4(100) == 4, I32ToI16(70000) == 4464.
int32_t I32ToI4(int32_t value);
int32_t I32ToI8(int32_t value);
int32_t I32ToI16(int32_t value);

// Fetch Adapter zero-point subtraction: i4 -> i5 or i8 -> i9, `value - zero_point` computed
// exactly. `source` is i4 or i8; `value` and `zero_point` must both lie in the source type's range
// (which guarantees the result fits the staging type), otherwise InvalidArgument.
absl::StatusOr<int32_t> ZeroPointSubtract(DType source, int32_t value, int32_t zero_point);

// ---- Which stage converts what -----------------------------------------------------------------

enum class ConversionStage {
  kFetchCast,         // Fetch Adapter type casting (manual, RNGD table), identity included
  kFetchTableLookup,  // Fetch Adapter fixed tables: f8e4m3 / f8e5m2 -> bf16
  kZeroPointSub,      // Fetch Adapter zero-point subtraction: i4 -> i5, i8 -> i9
  kCastEngine,        // Cast Engine precision lowering, no identity
  kCommitCast,        // Commit Adapter cast: f32 -> bf16 only
  kContraction,       // Contraction Engine operand widening to the accumulator type
};

inline constexpr std::array<ConversionStage, 6> kAllConversionStages = {
    ConversionStage::kFetchCast,  ConversionStage::kFetchTableLookup,
    ConversionStage::kZeroPointSub, ConversionStage::kCastEngine,
    ConversionStage::kCommitCast, ConversionStage::kContraction};

// "fetch cast", "Cast Engine", ...
std::string_view StageName(ConversionStage stage);

// The rule that governs `stage`, in words, with its manual section and the pairs it allows.
std::string_view StageRule(ConversionStage stage);

// OK if `stage` converts `from` to `to`; otherwise InvalidArgument naming the stage's rule.
absl::Status CheckConversion(ConversionStage stage, DType from, DType to);

// Converts the raw pattern `bits` of type `from` to the raw pattern of type `to`, if some stage
// of the hardware performs that conversion (or from == to); otherwise InvalidArgument naming the
// rules. All stages that share a pair apply the same rule, so the result does not depend on which
// stage runs it. `bits` must fit in Bits(from) bits (InvalidArgument otherwise). Zero-point
// subtraction appears here with a zero point of 0.
absl::StatusOr<uint32_t> Convert(DType from, DType to, uint32_t bits);

// As Convert, restricted to the pairs `stage` allows.
absl::StatusOr<uint32_t> Convert(ConversionStage stage, DType from, DType to, uint32_t bits);

// ---- Values -------------------------------------------------------------------------------------

// The exact value a raw pattern denotes: integers sign-extended; floats decoded exactly, with
// subnormals kept (this is the pattern's meaning, not the FTZ widening a stage applies) and NaN
// patterns giving a quiet NaN of the same sign. `bits` beyond Bits(type) are ignored.
double BitsToDouble(DType type, uint32_t bits);

// The raw pattern of `value` in `type`, for building host data. Integers: `value` must be an
// integer inside the type's range (InvalidArgument otherwise; no silent wrap). Floats: `value` is
// rounded to f32 (nearest even), then to the type: bf16 / f16 the plain IEEE way (nearest even,
// subnormals kept, NaN -> canonical NaN of the same sign; not the FTZ Cast rule), f8e4m3 / f8e5m2
// by the rules above. Exact for every value the type represents, so BitsToDouble round-trips.
absl::StatusOr<uint32_t> DoubleToBits(DType type, double value);

}  // namespace visa
