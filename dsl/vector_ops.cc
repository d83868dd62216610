// The Vector Engine's scalar functions and their table.
#include "dsl/vector_ops.h"

#include <bit>
#include <cmath>
#include <limits>
#include <utility>

#include "dsl/vector_nan_payload.h"

namespace visa {
namespace {

constexpr int32_t kMin = std::numeric_limits<int32_t>::min();
constexpr int32_t kMax = std::numeric_limits<int32_t>::max();

int32_t I(uint32_t bits) { return static_cast<int32_t>(bits); }
uint32_t U(int32_t value) { return static_cast<uint32_t>(value); }
float F(uint32_t bits) { return std::bit_cast<float>(bits); }
uint32_t U(float value) { return std::bit_cast<uint32_t>(value); }

int32_t Saturate(int64_t value) {
  if (value > kMax) return kMax;
  if (value < kMin) return kMin;
  return static_cast<int32_t>(value);
}

// The manual leaves shift amounts of 32 or more (and negative ones) open; the amount is taken
// modulo 32, as the reference model's release build does, so no input is undefined.
uint32_t Amount(int32_t b) { return static_cast<uint32_t>(b) & 31u; }

}  // namespace

namespace ve {
int32_t AddFxp(int32_t a, int32_t b) { return I(U(a) + U(b)); }
int32_t AddFxpSat(int32_t a, int32_t b) { return Saturate(int64_t{a} + b); }
int32_t SubFxp(int32_t a, int32_t b) { return I(U(a) - U(b)); }
int32_t SubFxpSat(int32_t a, int32_t b) { return Saturate(int64_t{a} - b); }
int32_t LeftShift(int32_t a, int32_t b) { return I(U(a) << Amount(b)); }
int32_t LeftShiftSat(int32_t a, int32_t b) {
  // The multiplier 2^b is built as an i32 first, so b = 31 multiplies by MIN (notes 1.2).
  const int32_t multiplier = I(1u << Amount(b));
  return Saturate(int64_t{a} * multiplier);
}
int32_t MulFxp(int32_t a, int32_t b) {
  if (a == kMin && b == kMin) return kMax;  // the only product outside Q31
  const int64_t product = int64_t{a} * b;
  return static_cast<int32_t>(((product >> 30) + 1) >> 1);  // round half up
}
int32_t MulInt(int32_t a, int32_t b) { return I(U(a) * U(b)); }
int32_t LogicRightShift(int32_t a, int32_t b) { return I(U(a) >> Amount(b)); }
int32_t ArithRightShift(int32_t a, int32_t b) { return a >> Amount(b); }
int32_t ArithRightShiftRound(int32_t a, int32_t b) {
  const uint32_t s = Amount(b);
  if (s == 0) return a;
  return static_cast<int32_t>((int64_t{a} + (int64_t{1} << (s - 1))) >> s);  // >> floors on int64
}
float FxpToFp(int32_t x, int int_width) {
  // The double product is exact; the cast rounds once, to nearest even.
  return static_cast<float>(static_cast<double>(x) * std::ldexp(1.0, int_width - 31));
}
int32_t FpToFxp(float x, int int_width) {
  if (std::isnan(x)) return std::signbit(x) ? kMin : kMax;
  const double scaled = std::round(static_cast<double>(x) * std::ldexp(1.0, 31 - int_width));  // half away
  if (scaled >= 2147483647.0) return kMax;
  if (scaled <= -2147483648.0) return kMin;
  return static_cast<int32_t>(scaled);
}
float Sigmoid(float x) { return 1.0f / (1.0f + std::exp(-x)); }
int32_t AbsMin(int32_t a, int32_t b) {
  // |MIN| wraps to MIN (two's complement), as the reference model's release build computes it.
  const int64_t abs_a = a < 0 ? -int64_t{a} : a, abs_b = b < 0 ? -int64_t{b} : b;
  const int32_t wa = a == kMin ? kMin : static_cast<int32_t>(abs_a);
  const int32_t wb = b == kMin ? kMin : static_cast<int32_t>(abs_b);
  return wa < wb ? a : b;
}
int32_t AbsMax(int32_t a, int32_t b) {
  const int32_t wa = a == kMin ? kMin : (a < 0 ? -a : a);
  const int32_t wb = b == kMin ? kMin : (b < 0 ? -b : b);
  return wa > wb ? a : b;
}
float AbsMin(float a, float b) { return std::fabs(a) < std::fabs(b) ? a : b; }
float AbsMax(float a, float b) { return std::fabs(a) > std::fabs(b) ? a : b; }
float Max(float a, float b) { return std::fmax(a, b); }
float Min(float a, float b) { return std::fmin(a, b); }
namespace {
// The factors of a masked product: a zero factor turns its partner into +-1.
std::pair<float, float> MaskedFactors(float a, float b) {
  if (a == 0.0f) b = std::copysign(1.0f, b);
  else if (b == 0.0f) a = std::copysign(1.0f, a);
  return {a, b};
}
}  // namespace
float MaskMulF(float a, float b) {
  const auto [x, y] = MaskedFactors(a, b);
  return WithNanPayload(x * y, {x, y});  // a NaN masked by a zero partner is gone
}
float MaskFmaF(float a, float b, float c) {
  const auto [x, y] = MaskedFactors(a, b);
  return WithNanPayload(std::fma(x, y, c), {x, y, c});
}
}  // namespace ve

extern "C" {
#define VISA_VE_I2(NAME, EXPR) \
  uint32_t visa_ve_##NAME(uint32_t a, uint32_t b, uint32_t) { return U(static_cast<int32_t>(EXPR)); }
#define VISA_VE_F1(NAME, EXPR) \
  uint32_t visa_ve_##NAME(uint32_t a, uint32_t, uint32_t) { const float x = F(a); return U(static_cast<float>(EXPR)); }
#define VISA_VE_F2(NAME, EXPR) \
  uint32_t visa_ve_##NAME(uint32_t a, uint32_t b, uint32_t) { const float x = F(a), y = F(b); return U(static_cast<float>(EXPR)); }
// Float arithmetic under the NaN-payload rule (dsl/vector_nan_payload.h).
#define VISA_VE_F2_NAN(NAME, EXPR) \
  uint32_t visa_ve_##NAME(uint32_t a, uint32_t b, uint32_t) { const float x = F(a), y = F(b); return WithNanPayload(U(static_cast<float>(EXPR)), {a, b}); }

uint32_t visa_ve_BitAnd(uint32_t a, uint32_t b, uint32_t) { return a & b; }
uint32_t visa_ve_BitOr(uint32_t a, uint32_t b, uint32_t) { return a | b; }
uint32_t visa_ve_BitXor(uint32_t a, uint32_t b, uint32_t) { return a ^ b; }
VISA_VE_I2(LeftShift, ve::LeftShift(I(a), I(b)))
VISA_VE_I2(LogicRightShift, ve::LogicRightShift(I(a), I(b)))
VISA_VE_I2(ArithRightShift, ve::ArithRightShift(I(a), I(b)))
VISA_VE_I2(AddFxp, ve::AddFxp(I(a), I(b)))
VISA_VE_I2(AddFxpSat, ve::AddFxpSat(I(a), I(b)))
VISA_VE_I2(SubFxp, ve::SubFxp(I(a), I(b)))
VISA_VE_I2(SubFxpSat, ve::SubFxpSat(I(a), I(b)))
VISA_VE_I2(LeftShiftSat, ve::LeftShiftSat(I(a), I(b)))
VISA_VE_I2(MulFxp, ve::MulFxp(I(a), I(b)))
VISA_VE_I2(MulInt, ve::MulInt(I(a), I(b)))
uint32_t visa_ve_FxpToFp(uint32_t a, uint32_t b, uint32_t) { return U(ve::FxpToFp(I(a), I(b))); }
uint32_t visa_ve_FpToFxp(uint32_t a, uint32_t b, uint32_t) { return U(ve::FpToFxp(F(a), I(b))); }
VISA_VE_F1(Exp, std::exp(x))
VISA_VE_F1(NegExp, std::exp(-x))
VISA_VE_F1(Sqrt, std::sqrt(x))
VISA_VE_F1(Tanh, std::tanh(x))
VISA_VE_F1(Sigmoid, ve::Sigmoid(x))
VISA_VE_F1(Erf, std::erf(x))
VISA_VE_F1(Log, std::log(x))
VISA_VE_F1(Sin, std::sin(x))
VISA_VE_F1(Cos, std::cos(x))
VISA_VE_F2_NAN(AddF, x + y)
VISA_VE_F2_NAN(SubF, x - y)
VISA_VE_F2_NAN(MulF, x * y)
VISA_VE_F2_NAN(DivF, x / y)
uint32_t visa_ve_FmaF(uint32_t a, uint32_t b, uint32_t c) { return WithNanPayload(U(std::fma(F(a), F(b), F(c))), {a, b, c}); }
VISA_VE_I2(MinI32, I(a) < I(b) ? I(a) : I(b))
VISA_VE_I2(MaxI32, I(a) > I(b) ? I(a) : I(b))
VISA_VE_I2(AbsMinI32, ve::AbsMin(I(a), I(b)))
VISA_VE_I2(AbsMaxI32, ve::AbsMax(I(a), I(b)))
VISA_VE_F2(MinF32, ve::Min(x, y))
VISA_VE_F2(MaxF32, ve::Max(x, y))
VISA_VE_F2(AbsMinF32, ve::AbsMin(x, y))
VISA_VE_F2(AbsMaxF32, ve::AbsMax(x, y))
VISA_VE_F2_NAN(AddF32Clip, x + y)
uint32_t visa_ve_FilterOut(uint32_t, uint32_t, uint32_t) { return 0; }
VISA_VE_I2(ArithRightShiftRound, ve::ArithRightShiftRound(I(a), I(b)))
VISA_VE_F2(MaskMulF, ve::MaskMulF(x, y))
uint32_t visa_ve_MaskFmaF(uint32_t a, uint32_t b, uint32_t c) { return U(ve::MaskFmaF(F(a), F(b), F(c))); }
#undef VISA_VE_I2
#undef VISA_VE_F1
#undef VISA_VE_F2
#undef VISA_VE_F2_NAN
}

namespace {

#define ENTRY(NAME, ARITY, IN, OUT) {#NAME, "visa_ve_" #NAME, ARITY, DType::IN, DType::OUT, &visa_ve_##NAME}
// In VeFn order.
constexpr VeFnInfo kFns[] = {
    ENTRY(BitAnd, 2, kI32, kI32),        ENTRY(BitOr, 2, kI32, kI32),
    ENTRY(BitXor, 2, kI32, kI32),        ENTRY(LeftShift, 2, kI32, kI32),
    ENTRY(LogicRightShift, 2, kI32, kI32), ENTRY(ArithRightShift, 2, kI32, kI32),
    ENTRY(AddFxp, 2, kI32, kI32),        ENTRY(AddFxpSat, 2, kI32, kI32),
    ENTRY(SubFxp, 2, kI32, kI32),        ENTRY(SubFxpSat, 2, kI32, kI32),
    ENTRY(LeftShiftSat, 2, kI32, kI32),  ENTRY(MulFxp, 2, kI32, kI32),
    ENTRY(MulInt, 2, kI32, kI32),        ENTRY(FxpToFp, 1, kI32, kF32),
    ENTRY(FpToFxp, 1, kF32, kI32),       ENTRY(Exp, 1, kF32, kF32),
    ENTRY(NegExp, 1, kF32, kF32),        ENTRY(Sqrt, 1, kF32, kF32),
    ENTRY(Tanh, 1, kF32, kF32),          ENTRY(Sigmoid, 1, kF32, kF32),
    ENTRY(Erf, 1, kF32, kF32),           ENTRY(Log, 1, kF32, kF32),
    ENTRY(Sin, 1, kF32, kF32),           ENTRY(Cos, 1, kF32, kF32),
    ENTRY(AddF, 2, kF32, kF32),          ENTRY(SubF, 2, kF32, kF32),
    ENTRY(MulF, 2, kF32, kF32),          ENTRY(DivF, 2, kF32, kF32),
    ENTRY(FmaF, 3, kF32, kF32),          ENTRY(MinI32, 2, kI32, kI32),
    ENTRY(MaxI32, 2, kI32, kI32),        ENTRY(AbsMinI32, 2, kI32, kI32),
    ENTRY(AbsMaxI32, 2, kI32, kI32),     ENTRY(MinF32, 2, kF32, kF32),
    ENTRY(MaxF32, 2, kF32, kF32),        ENTRY(AbsMinF32, 2, kF32, kF32),
    ENTRY(AbsMaxF32, 2, kF32, kF32),     ENTRY(AddF32Clip, 2, kF32, kF32),
    ENTRY(FilterOut, 1, kI32, kI32),     ENTRY(ArithRightShiftRound, 2, kI32, kI32),
    ENTRY(MaskMulF, 2, kF32, kF32),      ENTRY(MaskFmaF, 3, kF32, kF32),
};
#undef ENTRY
static_assert(sizeof(kFns) / sizeof(kFns[0]) == static_cast<size_t>(VeFn::kCount));

}  // namespace

const VeFnInfo& Info(VeFn fn) { return kFns[static_cast<size_t>(fn)]; }
absl::Span<const VeFnInfo> AllVeFns() { return kFns; }

const char* VeAluName(VeAlu alu) {
  static constexpr const char* kNames[kVeAluCount] = {
      "LogicAnd", "LogicOr", "LogicXor", "LogicLshift", "LogicRshift", "FxpAdd", "FxpLshift",
      "FxpMul",   "FxpRshift", "FpFma",  "FpFpu",       "FpExp",       "FpMul0", "FpMul1",
      "ReduceAccTree", "ReduceFpDiv", "ClipAdd", "ClipMax", "ClipMin"};
  return kNames[static_cast<int>(alu)];
}

}  // namespace visa
