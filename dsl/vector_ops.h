// The Vector Engine's scalar operations: every op of the manual's Logic, Fxp, Float, FpDiv and Clip
// clusters and the two fixed-point conversions, as one C++ function per op over 32-bit patterns.
//
// Both backends call these very functions (the interpreter directly, the JIT's compiled loops
// through absolute symbols), so they agree bit for bit by construction. Exact semantics follow the
// manual and /work/shared/notes/vector-engine.md section 1 (wrapping / saturating integer ops, Q31
// MulFxp rounding half up, FxpToFp rounding to nearest even, FpToFxp rounding half away from zero,
// float ops as the platform libm's f32 functions).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "absl/types/span.h"
#include "dsl/dtype.h"

namespace visa {

// The manual's ALUs (Stage table and each cluster's op table); each is usable once per pass.
enum class VeAlu {
  kLogicAnd, kLogicOr, kLogicXor, kLogicLshift, kLogicRshift,
  kFxpAdd, kFxpLshift, kFxpMul, kFxpRshift,
  kFpFma, kFpFpu, kFpExp, kFpMul0, kFpMul1,
  kReduceAccTree, kReduceFpDiv,
  kClipAdd, kClipMax, kClipMin,
};
inline constexpr int kVeAluCount = 19;
const char* VeAluName(VeAlu alu);  // "FxpAdd", ...

// The manual's op enums, named as it names them.
enum class LogicBinaryOpI32 { kBitAnd, kBitOr, kBitXor, kLeftShift, kLogicRightShift, kArithRightShift };
enum class LogicBinaryOpF32 { kBitAnd, kBitOr, kBitXor };
enum class FxpBinaryOp {
  kAddFxp, kAddFxpSat, kSubFxp, kSubFxpSat, kLeftShift, kLeftShiftSat, kMulFxp, kMulInt,
  kLogicRightShift, kArithRightShift, kArithRightShiftRound,
};
enum class FpUnaryOp { kExp, kNegExp, kSqrt, kTanh, kSigmoid, kErf, kLog, kSin, kCos };
enum class FpMulAlu { kMul0, kMul1, kFma };
// FpBinaryOp::MulF(FpMulAlu) is a function-like variant in the manual; here MulF carries its ALU.
struct FpBinaryOp {
  enum class Kind { kAddF, kSubF, kMulF, kDivF, kMaskMulF };
  Kind kind;
  FpMulAlu mul = FpMulAlu::kMul0;
  static FpBinaryOp AddF() { return {Kind::kAddF}; }
  static FpBinaryOp SubF() { return {Kind::kSubF}; }
  static FpBinaryOp MulF(FpMulAlu alu) { return {Kind::kMulF, alu}; }
  static FpBinaryOp MaskMulF(FpMulAlu alu) { return {Kind::kMaskMulF, alu}; }
  static FpBinaryOp DivF() { return {Kind::kDivF}; }
};
enum class FpTernaryOp { kFmaF, kMaskFmaF };
enum class FpDivBinaryOp { kDivF };
enum class ClipBinaryOpI32 { kMin, kMax, kAbsMin, kAbsMax, kAddFxp, kAddFxpSat };
enum class ClipBinaryOpF32 { kMin, kMax, kAbsMin, kAbsMax, kAdd };

// One scalar function per op and type: its identity in a recorded program and in compiled code.
enum class VeFn : uint8_t {
  kBitAnd, kBitOr, kBitXor, kLeftShift, kLogicRightShift, kArithRightShift,
  kAddFxp, kAddFxpSat, kSubFxp, kSubFxpSat, kFxpLeftShiftSat, kMulFxp, kMulInt,
  kFxpToFp, kFpToFxp,
  kExp, kNegExp, kSqrt, kTanh, kSigmoid, kErf, kLog, kSin, kCos,
  kAddF, kSubF, kMulF, kDivF, kFmaF,
  kMinI32, kMaxI32, kAbsMinI32, kAbsMaxI32,
  kMinF32, kMaxF32, kAbsMinF32, kAbsMaxF32, kAddF32Clip,
  kFilterOut,  // the Filter stage on an element it drops: 0 bits (dsl/vector_filter.cc)
  kArithRightShiftRound, kMaskMulF, kMaskFmaF,  // semantics decided here: see ve:: below
  kCount,
};

// f(a, b, c) on raw 32-bit patterns: unary ops read a, binary a and b, ternary all three; the
// conversions read their int_width from b.
using VeScalarFn = uint32_t (*)(uint32_t a, uint32_t b, uint32_t c);

struct VeFnInfo {
  const char* name;     // "AddFxp"; compiled code calls the symbol "visa_ve_" + name
  const char* symbol;   // the linker name of `fn`
  int arity;            // 1, 2 or 3 (the conversions count as unary)
  DType in, out;        // i32 or f32 patterns
  VeScalarFn fn;
};
const VeFnInfo& Info(VeFn fn);
// Every function, for registering them with a JIT.
absl::Span<const VeFnInfo> AllVeFns();

// Named scalar semantics (tests and host references call these; Info(fn).fn wraps them).
namespace ve {
int32_t AddFxp(int32_t a, int32_t b);
int32_t AddFxpSat(int32_t a, int32_t b);
int32_t SubFxp(int32_t a, int32_t b);
int32_t SubFxpSat(int32_t a, int32_t b);
int32_t LeftShift(int32_t a, int32_t b);
int32_t LeftShiftSat(int32_t a, int32_t b);
int32_t MulFxp(int32_t a, int32_t b);
int32_t MulInt(int32_t a, int32_t b);
int32_t LogicRightShift(int32_t a, int32_t b);
int32_t ArithRightShift(int32_t a, int32_t b);
// The manual names these three without a formula and the notes find none; decided here:
// ArithRightShiftRound is a >> s rounded to nearest, ties toward +infinity (round half up, as
// MulFxp rounds), s = b mod 32, computed without overflow: floor((a + 2^(s-1)) / 2^s), and a itself
// for s = 0. It never leaves i32 (|a| / 2 + 1 <= 2^30 for s >= 1).
int32_t ArithRightShiftRound(int32_t a, int32_t b);
// MaskMulF / MaskFmaF: a product whose factor is zero is zero, whatever the other factor holds
// (infinity, NaN): multiplying by a 0 / 1 mask clears masked lanes even where they overflowed.
// The zero factor's partner is replaced by +-1 (its sign kept), so the product is the IEEE signed
// zero of the two signs; otherwise they are a * b and fmaf(a, b, c).
float MaskMulF(float a, float b);
float MaskFmaF(float a, float b, float c);
float FxpToFp(int32_t x, int int_width);
int32_t FpToFxp(float x, int int_width);
float Sigmoid(float x);
int32_t AbsMin(int32_t a, int32_t b);
int32_t AbsMax(int32_t a, int32_t b);
float AbsMin(float a, float b);
float AbsMax(float a, float b);
float Max(float a, float b);
float Min(float a, float b);
}  // namespace ve

}  // namespace visa
