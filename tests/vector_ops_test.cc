// The Vector Engine's scalar functions against the test vectors of the notes on the reference
// implementation (/work/shared/notes/vector-engine.md section 4) and values derived by hand.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <limits>

#include "dsl/vector_ops.h"

namespace visa {
namespace {

constexpr int32_t kMin = std::numeric_limits<int32_t>::min();
constexpr int32_t kMax = std::numeric_limits<int32_t>::max();

uint32_t Bits(float f) { return std::bit_cast<uint32_t>(f); }
float Float(uint32_t b) { return std::bit_cast<float>(b); }
// The op's function as both backends call it, on i32 / f32 values.
int32_t CallI(VeFn fn, int32_t a, int32_t b = 0) {
  return static_cast<int32_t>(Info(fn).fn(static_cast<uint32_t>(a), static_cast<uint32_t>(b), 0));
}
float CallF(VeFn fn, float a, float b = 0, float c = 0) { return Float(Info(fn).fn(Bits(a), Bits(b), Bits(c))); }

TEST(VectorOpsTest, FxpWrappingAndSaturatingAddSub) {  // V1-V4
  EXPECT_EQ(CallI(VeFn::kAddFxp, kMax, 1), kMin);
  EXPECT_EQ(CallI(VeFn::kAddFxpSat, kMax, 1), kMax);
  EXPECT_EQ(CallI(VeFn::kAddFxpSat, kMin, -1), kMin);
  EXPECT_EQ(CallI(VeFn::kSubFxp, kMin, 1), kMax);
  EXPECT_EQ(CallI(VeFn::kSubFxpSat, kMin, 1), kMin);
}

TEST(VectorOpsTest, MulIntIsTheLow32Bits) {  // V6
  EXPECT_EQ(CallI(VeFn::kMulInt, 65536, 65536), 0);
  EXPECT_EQ(CallI(VeFn::kMulInt, kMax, 2), -2);
}

TEST(VectorOpsTest, MulFxpIsQ31RoundingHalfUp) {  // V7-V14
  EXPECT_EQ(CallI(VeFn::kMulFxp, 1 << 30, 1 << 30), 536870912);
  EXPECT_EQ(CallI(VeFn::kMulFxp, kMin, kMin), kMax);
  EXPECT_EQ(CallI(VeFn::kMulFxp, kMin, kMax), -2147483647);
  EXPECT_EQ(CallI(VeFn::kMulFxp, kMax, kMax), 2147483646);
  EXPECT_EQ(CallI(VeFn::kMulFxp, 1 << 30, 1), 1);
  EXPECT_EQ(CallI(VeFn::kMulFxp, -(1 << 30), 1), 0);
  EXPECT_EQ(CallI(VeFn::kMulFxp, 1, 1), 0);
  EXPECT_EQ(CallI(VeFn::kMulFxp, -1, 1), 0);
  EXPECT_EQ(CallI(VeFn::kMulFxp, kMin, 1 << 30), -1073741824);
  EXPECT_EQ(CallI(VeFn::kMulFxp, 123456789, 987654321), 56779306);
}

TEST(VectorOpsTest, Shifts) {  // V15-V18
  EXPECT_EQ(CallI(VeFn::kLeftShift, 3, 30), -1073741824);
  EXPECT_EQ(CallI(VeFn::kFxpLeftShiftSat, 3, 30), kMax);
  EXPECT_EQ(CallI(VeFn::kFxpLeftShiftSat, -3, 30), kMin);
  EXPECT_EQ(CallI(VeFn::kFxpLeftShiftSat, 5, 2), 20);
  EXPECT_EQ(CallI(VeFn::kFxpLeftShiftSat, 1, 31), kMin);  // the multiplier 1 << 31 is MIN
  EXPECT_EQ(CallI(VeFn::kFxpLeftShiftSat, -1, 31), kMax);
  EXPECT_EQ(CallI(VeFn::kLogicRightShift, -1, 28), 15);
  EXPECT_EQ(CallI(VeFn::kArithRightShift, -16, 2), -4);
  EXPECT_EQ(CallI(VeFn::kArithRightShift, -1, 31), -1);
  // Amounts of 32 or more are taken modulo 32 (the manual leaves them open).
  EXPECT_EQ(CallI(VeFn::kLeftShift, 3, 33), 6);
  EXPECT_EQ(CallI(VeFn::kLogicRightShift, 256, -1), 0);
}

TEST(VectorOpsTest, LogicOnBits) {  // V19-V21
  EXPECT_EQ(CallI(VeFn::kBitOr, CallI(VeFn::kBitAnd, 0x12345678, 0xFF), 0x100), 376);
  EXPECT_EQ(CallI(VeFn::kBitXor, 0xff, 0xff), 0);
  const uint32_t mask = 0x7fffffff;
  EXPECT_EQ(Float(Info(VeFn::kBitAnd).fn(Bits(-1.0f), mask, 0)), 1.0f);
  EXPECT_EQ(Info(VeFn::kBitAnd).fn(Bits(-0.0f), mask, 0), 0u);
  EXPECT_EQ(Float(Info(VeFn::kBitAnd).fn(Bits(3.25f), mask, 0)), 3.25f);
}

TEST(VectorOpsTest, Clip) {  // V25-V28
  EXPECT_EQ(CallI(VeFn::kAbsMaxI32, -5, 3), -5);
  EXPECT_EQ(CallI(VeFn::kAbsMinI32, -5, 3), 3);
  EXPECT_EQ(CallI(VeFn::kAbsMaxI32, -3, 3), 3);  // a tie returns b
  EXPECT_EQ(CallI(VeFn::kAbsMinI32, 3, -3), -3);
  EXPECT_EQ(CallI(VeFn::kMaxI32, -7, 2), 2);
  EXPECT_EQ(CallI(VeFn::kMinI32, -7, 2), -7);
  EXPECT_EQ(CallI(VeFn::kAddFxp, 3, 3), 6);
  EXPECT_EQ(CallF(VeFn::kMaxF32, -2.5f, 0.0f), 0.0f);
  EXPECT_EQ(CallF(VeFn::kMaxF32, std::nanf(""), 0.0f), 0.0f);  // the non-NaN argument
  EXPECT_EQ(CallF(VeFn::kAbsMaxF32, -5.0f, 3.0f), -5.0f);
  EXPECT_EQ(CallF(VeFn::kAbsMinF32, std::nanf(""), 3.0f), 3.0f);  // NaN compares false: b
  EXPECT_EQ(CallF(VeFn::kAddF32Clip, 1.5f, 2.25f), 3.75f);
}

TEST(VectorOpsTest, FxpToFpRoundsOnceToNearestEven) {  // V29-V33
  auto fxp_to_fp = [](int32_t x, int w) { return Bits(Float(Info(VeFn::kFxpToFp).fn(static_cast<uint32_t>(x), w, 0))); };
  EXPECT_EQ(fxp_to_fp(16777217, 31), 0x4B800000u);
  EXPECT_EQ(fxp_to_fp(16777219, 31), 0x4B800002u);
  EXPECT_EQ(fxp_to_fp(33554435, 31), 0x4C000001u);
  EXPECT_EQ(fxp_to_fp(kMax, 31), 0x4F000000u);
  EXPECT_EQ(fxp_to_fp(kMin, 31), 0xCF000000u);
  EXPECT_EQ(fxp_to_fp(1, 0), 0x30000000u);
  EXPECT_EQ(fxp_to_fp(1 << 30, 0), Bits(0.5f));
  EXPECT_EQ(fxp_to_fp(kMin, 0), Bits(-1.0f));
  EXPECT_EQ(fxp_to_fp(kMax, 0), 0x3F800000u);
  EXPECT_EQ(fxp_to_fp(-7, 29), 0xBFE00000u);
  EXPECT_EQ(fxp_to_fp(3, 1), 0x31400000u);
  EXPECT_EQ(fxp_to_fp(0, 12), 0u);  // +0.0, never -0.0
}

TEST(VectorOpsTest, FpToFxpRoundsHalfAwayAndSaturates) {  // V34-V37
  auto fp_to_fxp = [](float x, int w) { return static_cast<int32_t>(Info(VeFn::kFpToFxp).fn(Bits(x), w, 0)); };
  EXPECT_EQ(fp_to_fxp(0.5f, 31), 1);
  EXPECT_EQ(fp_to_fxp(-0.5f, 31), -1);
  EXPECT_EQ(fp_to_fxp(2.5f, 31), 3);
  EXPECT_EQ(fp_to_fxp(0.49999997f, 31), 0);
  EXPECT_EQ(fp_to_fxp(1.0f, 0), kMax);
  EXPECT_EQ(fp_to_fxp(-1.0f, 0), kMin);
  EXPECT_EQ(fp_to_fxp(0.25f, 0), 536870912);
  EXPECT_EQ(fp_to_fxp(INFINITY, 31), kMax);
  EXPECT_EQ(fp_to_fxp(-INFINITY, 31), kMin);
  EXPECT_EQ(fp_to_fxp(std::nanf(""), 31), kMax);
  EXPECT_EQ(fp_to_fxp(Float(0xFFC00000u), 31), kMin);  // NaN with the sign bit set
  EXPECT_EQ(fp_to_fxp(3e9f, 31), kMax);
  EXPECT_EQ(fp_to_fxp(-0.0f, 31), 0);
  EXPECT_EQ(fp_to_fxp(1.5f, 30), 3);
  EXPECT_EQ(fp_to_fxp(-2.75f, 29), -11);
}

TEST(VectorOpsTest, FloatOps) {  // V39, V42, V43
  // FmaF rounds once: (1 + 2^-12)^2 - 1 = 2^-11 + 2^-24 exactly.
  EXPECT_EQ(Bits(CallF(VeFn::kFmaF, Float(0x3F800800u), Float(0x3F800800u), -1.0f)), 0x3A000400u);
  EXPECT_EQ(CallF(VeFn::kFmaF, 1.5f, 2.0f, 3.0f), 6.0f);
  EXPECT_EQ(CallF(VeFn::kSubF, 2.0f, 0.5f), 1.5f);
  EXPECT_EQ(CallF(VeFn::kDivF, 2.0f, 0.5f), 4.0f);
  EXPECT_EQ(CallF(VeFn::kDivF, 2.0f, 0.0f), INFINITY);
  EXPECT_EQ(CallF(VeFn::kDivF, 2.0f, -0.0f), -INFINITY);
  EXPECT_EQ(CallF(VeFn::kSigmoid, 0.0f), 0.5f);
  EXPECT_EQ(CallF(VeFn::kExp, 0.0f), 1.0f);
  EXPECT_EQ(CallF(VeFn::kNegExp, 0.0f), 1.0f);
  EXPECT_EQ(CallF(VeFn::kSqrt, 4.0f), 2.0f);
  EXPECT_TRUE(std::isnan(CallF(VeFn::kSqrt, -1.0f)));
  EXPECT_EQ(CallF(VeFn::kLog, 1.0f), 0.0f);
  EXPECT_EQ(CallF(VeFn::kLog, 0.0f), -INFINITY);
  EXPECT_EQ(CallF(VeFn::kTanh, 0.0f), 0.0f);
  EXPECT_EQ(CallF(VeFn::kSin, 0.0f), 0.0f);
  EXPECT_EQ(CallF(VeFn::kCos, 0.0f), 1.0f);
  EXPECT_EQ(CallF(VeFn::kErf, 0.0f), 0.0f);
  EXPECT_EQ(CallF(VeFn::kNegExp, 1.0f), std::exp(-1.0f));
}

TEST(VectorOpsTest, TableIsInEnumOrderWithDistinctSymbols) {
  for (int i = 0; i < static_cast<int>(VeFn::kCount); ++i) {
    const VeFnInfo& info = Info(static_cast<VeFn>(i));
    EXPECT_EQ(std::string(info.symbol), std::string("visa_ve_") + info.name);
    for (int j = 0; j < i; ++j) EXPECT_NE(info.fn, Info(static_cast<VeFn>(j)).fn) << info.name;
  }
  EXPECT_STREQ(VeAluName(VeAlu::kFxpAdd), "FxpAdd");
  EXPECT_STREQ(VeAluName(VeAlu::kClipMin), "ClipMin");
}

}  // namespace
}  // namespace visa
