// The Vector Engine ops the manual lists without a formula: ArithRightShiftRound (Fxp, FxpRshift),
// MaskMulF (Float, FpMul0 / FpMul1) and MaskFmaF (Float, FpFma), with the semantics decided in
// dsl/vector_ops.h, on both backends against host loops written from that definition (not from the
// code under test): rounding edge cases (negative values, ties, shift 0, 31, and amounts taken
// modulo 32), zero factors against infinity and NaN. Also their per-group forms in two-group mode,
// a group operand order with the VRF tensor on group 0 and a constant on group 1, and every
// restriction as an error naming its rule.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <limits>
#include <random>

#include "dsl/mapping_parser.h"
#include "dsl/vector_ops.h"
#include "interp/interpreter.h"
#include "jit/jit_backend.h"
#include "runtime/tensor_unit.h"
#include "runtime/transfer.h"
#include "tests/common/dm_input.h"
#include "tests/common/backends.h"

namespace visa {
namespace {

using ::testing::HasSubstr;

constexpr int32_t kMin = std::numeric_limits<int32_t>::min();
constexpr int32_t kMax = std::numeric_limits<int32_t>::max();
const float kInf = std::numeric_limits<float>::infinity();
const float kNaN = std::numeric_limits<float>::quiet_NaN();

uint32_t Bits(float f) { return std::bit_cast<uint32_t>(f); }
float Float(uint32_t b) { return std::bit_cast<float>(b); }

// The definition: a / 2^s rounded to nearest, ties up, s = b mod 32. In double, a / 2^s + 1/2 is
// exact (at most 32 significant bits), so floor gives the rounded value.
int32_t HostShiftRound(int32_t a, int32_t b) {
  const int s = static_cast<int>(static_cast<uint32_t>(b) % 32u);
  if (s == 0) return a;
  return static_cast<int32_t>(std::floor(std::ldexp(static_cast<double>(a), -s) + 0.5));
}

// The definition: a zero factor gives the signed zero of the two signs; else the IEEE product.
float HostMaskMul(float a, float b) {
  if (a == 0.0f || b == 0.0f) return (std::signbit(a) != std::signbit(b)) ? -0.0f : 0.0f;
  return a * b;
}
float HostMaskFma(float a, float b, float c) {
  if (a == 0.0f || b == 0.0f) return HostMaskMul(a, b) + c;  // an exact zero product: one rounding
  return std::fma(a, b, c);
}

// Equal bits, or both NaN (a NaN's payload is not part of the definition).
void ExpectSameFloat(uint32_t got, float want, const std::string& where) {
  if (std::isnan(want)) {
    EXPECT_TRUE(std::isnan(Float(got))) << where;
  } else {
    EXPECT_EQ(got, Bits(want)) << where << ": got " << Float(got) << ", want " << want;
  }
}

class VectorRoundMaskOpsTest : public ::testing::Test {
 protected:
  VectorRoundMaskOpsTest() : scope_(*Axes::Parse("T = 2, A = 8, I = 2")) {}
  Mapping m(const std::string& text) { return scope_.m(text); }

  DmTensor Dm(Context& ctx, DType dtype, const Mapping& element, const std::vector<double>& values, int64_t address) {
    return test::WriteDm(ctx.device(), *HostTensor::FromValues(dtype, element, values), element, address);
  }

  using Chain = std::function<Stream(Stream, Context&)>;

  // [T, A] values through `chain` (between the branch and vector_final), on the interpreter and
  // the JIT, which must agree; the result's bits in [T, A] order.
  std::vector<uint32_t> Run(DType dtype, const std::vector<double>& values, const Chain& chain) {
    std::vector<uint32_t> results[2];
    for (int b = 0; b < 2; ++b) {
      Device device(1);
      std::unique_ptr<Backend> backend = test::MakeBackend(b, 1);
      Context ctx(device, *backend);
      DmTensor in = Dm(ctx, dtype, m("T, A"), values, 0);
      Stream entered = ctx.main.begin(in.view())
                           .fetch(dtype, m("T"), m("A"))
                           .collect(m("T"), m("A"))
                           .vector_init()
                           .vector_intra_slice_branch(BranchMode::Unconditional());
      absl::StatusOr<DmTensor> out = chain(std::move(entered), ctx).vector_final().commit(m("T, A"), 4096);
      EXPECT_TRUE(out.ok()) << out.status();
      if (!out.ok()) return {};
      results[b] = ReadAs(*out, m("T, A"))->ToBits();
    }
    EXPECT_EQ(results[0], results[1]) << "the interpreter and the JIT differ";
    return results[0];
  }

  absl::Status Plan(DType dtype, const Chain& chain) {
    Device device(1);
    interp::Interpreter interp;
    Context ctx(device, interp);
    DmTensor in = Dm(ctx, dtype, m("T, A"), std::vector<double>(16, 1.0), 0);
    Stream entered = ctx.main.begin(in.view())
                         .fetch(dtype, m("T"), m("A"))
                         .collect(m("T"), m("A"))
                         .vector_init()
                         .vector_intra_slice_branch(BranchMode::Unconditional());
    return chain(std::move(entered), ctx).vector_final().commit(m("T, A"), 4096).status();
  }

  // The Way4 region around `ops`.
  Chain Way4(std::function<Stream(Stream)> ops) {
    return [this, ops](Stream s, Context&) {
      return ops(std::move(s).vector_split(m("T, A / 4"), m("A % 4"))).vector_concat(m("T"), m("A"));
    };
  }

  MappingScope scope_;
};

// ---- ArithRightShiftRound ----------------------------------------------------------------------

const std::vector<int32_t> kShiftInputs = {0,  1,  -1, 2,  -2,   3,    -3,   5,
                                           -5, 6,  -6, 7,  kMax, kMin, 1 << 30, -(1 << 30)};

TEST_F(VectorRoundMaskOpsTest, ArithRightShiftRoundMatchesTheHostRoundingForEveryShift) {
  std::vector<double> values(kShiftInputs.begin(), kShiftInputs.end());
  for (int32_t shift : {0, 1, 2, 3, 30, 31, 32, 33, -1}) {
    const std::vector<uint32_t> got = Run(DType::kI32, values, [shift](Stream s, Context&) {
      return std::move(s).vector_fxp(FxpBinaryOp::kArithRightShiftRound, shift);
    });
    ASSERT_EQ(got.size(), kShiftInputs.size());
    for (size_t i = 0; i < got.size(); ++i) {
      EXPECT_EQ(static_cast<int32_t>(got[i]), HostShiftRound(kShiftInputs[i], shift))
          << kShiftInputs[i] << " >> " << shift;
    }
  }
}

TEST_F(VectorRoundMaskOpsTest, ArithRightShiftRoundEdgeCasesWorkedByHand) {
  // Ties go up (toward +infinity), on both signs.
  EXPECT_EQ(ve::ArithRightShiftRound(5, 1), 3);     // 2.5
  EXPECT_EQ(ve::ArithRightShiftRound(-5, 1), -2);   // -2.5
  EXPECT_EQ(ve::ArithRightShiftRound(-6, 2), -1);   // -1.5
  EXPECT_EQ(ve::ArithRightShiftRound(-7, 2), -2);   // -1.75
  EXPECT_EQ(ve::ArithRightShiftRound(-1, 1), 0);    // -0.5
  EXPECT_EQ(ve::ArithRightShiftRound(-1, 2), 0);    // -0.25
  // Shift 0 is the identity, shift 31 leaves -1, 0 or 1, and nothing overflows.
  EXPECT_EQ(ve::ArithRightShiftRound(kMin, 0), kMin);
  EXPECT_EQ(ve::ArithRightShiftRound(kMax, 31), 1);            // 1 - 2^-31
  EXPECT_EQ(ve::ArithRightShiftRound(kMin, 31), -1);           // exactly -1
  EXPECT_EQ(ve::ArithRightShiftRound(-(1 << 30), 31), 0);      // -0.5, a tie
  EXPECT_EQ(ve::ArithRightShiftRound((1 << 30) - 1, 31), 0);   // just under 0.5
  EXPECT_EQ(ve::ArithRightShiftRound(kMax, 1), 1 << 30);       // 2^30 - 0.5 rounds up
  // Amounts modulo 32, as the other shifts take them.
  EXPECT_EQ(ve::ArithRightShiftRound(12, 32), 12);
  EXPECT_EQ(ve::ArithRightShiftRound(kMin, -1), -1);  // -1 is 31
  // Against the host definition on random inputs and every shift.
  std::mt19937 rng(7);
  for (int i = 0; i < 20000; ++i) {
    const int32_t a = static_cast<int32_t>(rng()), b = static_cast<int32_t>(rng() % 70) - 3;
    ASSERT_EQ(ve::ArithRightShiftRound(a, b), HostShiftRound(a, b)) << a << " >> " << b;
  }
}

TEST_F(VectorRoundMaskOpsTest, ArithRightShiftRoundTakesTheFxpRshiftAlu) {
  EXPECT_THAT(Plan(DType::kI32, [](Stream s, Context&) {
                return std::move(s)
                    .vector_fxp(FxpBinaryOp::kArithRightShift, 1)
                    .vector_fxp(FxpBinaryOp::kArithRightShiftRound, 1);
              }).message(),
              HasSubstr("FxpRshift is already in use"));
  EXPECT_THAT(Plan(DType::kF32, [](Stream s, Context&) {
                return std::move(s).vector_fxp(FxpBinaryOp::kArithRightShiftRound, 1);
              }).message(),
              HasSubstr("i32"));
  // The binary arg modes apply as to the other Fxp ops: Mode10 shifts the stashed value by the stream.
  const std::vector<uint32_t> got = Run(DType::kI32, std::vector<double>(16, 7), [](Stream s, Context&) {
    return std::move(s).vector_stash().vector_fxp_with_mode(FxpBinaryOp::kArithRightShiftRound, BinaryArgMode::kMode10,
                                                            Stash);
  });
  ASSERT_FALSE(got.empty());
  EXPECT_EQ(static_cast<int32_t>(got[0]), HostShiftRound(7, 7));  // 7 / 128 rounds to 0
}

// ---- MaskMulF / MaskFmaF ------------------------------------------------------------------------

const std::vector<float> kFactors = {0.0f, -0.0f, 1.5f, -2.0f, kInf, -kInf, kNaN, 3.0e38f,
                                     1.0e-45f, -7.25f, 0.0f, -0.0f, kInf, 2.0f, -1.0f, 0.5f};

TEST_F(VectorRoundMaskOpsTest, MaskMulFZeroFactorMasksInfinityAndNaN) {
  std::vector<double> values(kFactors.begin(), kFactors.end());
  for (FpMulAlu alu : {FpMulAlu::kMul0, FpMulAlu::kMul1}) {
    for (float operand : {0.0f, -0.0f, 2.0f, kInf, kNaN, -3.0e38f}) {
      const std::vector<uint32_t> got = Run(DType::kF32, values, Way4([&](Stream s) {
        return std::move(s).vector_fp_binary(FpBinaryOp::MaskMulF(alu), operand);
      }));
      ASSERT_EQ(got.size(), kFactors.size());
      for (size_t i = 0; i < got.size(); ++i) {
        ExpectSameFloat(got[i], HostMaskMul(kFactors[i], operand),
                        absl::StrCat("MaskMulF(", kFactors[i], ", ", operand, ")"));
      }
    }
  }
  // The point of the mask: 0 * inf is 0, not the NaN MulF gives.
  EXPECT_EQ(Bits(ve::MaskMulF(0.0f, kInf)), Bits(0.0f));
  EXPECT_EQ(Bits(ve::MaskMulF(kNaN, -0.0f)), Bits(-0.0f));
  EXPECT_TRUE(std::isnan(0.0f * kInf));
}

TEST_F(VectorRoundMaskOpsTest, MaskFmaFMasksTheProductOnly) {
  std::vector<double> values(kFactors.begin(), kFactors.end());
  for (const auto& [o0, o1] : std::vector<std::pair<float, float>>{
           {0.0f, 5.0f}, {-0.0f, 0.0f}, {0.0f, -0.0f}, {2.0f, 1.0f}, {kInf, -1.0f}, {1.0e-30f, 1.0f}}) {
    const std::vector<uint32_t> got = Run(DType::kF32, values, Way4([&, o0 = o0, o1 = o1](Stream s) {
      return std::move(s).vector_fp_ternary(FpTernaryOp::kMaskFmaF, VeBranchOperand(o0, o1));
    }));
    ASSERT_EQ(got.size(), kFactors.size());
    for (size_t i = 0; i < got.size(); ++i) {
      ExpectSameFloat(got[i], HostMaskFma(kFactors[i], o0, o1),
                      absl::StrCat("MaskFmaF(", kFactors[i], ", ", o0, ", ", o1, ")"));
    }
  }
  // One rounding, as FmaF: 1e-30 would vanish in a separate multiply-then-add at 1.0.
  EXPECT_EQ(Bits(ve::MaskFmaF(1.0f + 0x1p-23f, 1.0f - 0x1p-23f, -1.0f)), Bits(-0x1p-46f));
}

TEST_F(VectorRoundMaskOpsTest, MaskOpsTakeTheManualsAlus) {
  // MaskMulF(Mul0) and MulF(Mul1) are two ALUs; two MaskMulF on Mul0 are one too many.
  EXPECT_TRUE(Plan(DType::kF32, Way4([](Stream s) {
                return std::move(s)
                    .vector_fp_binary(FpBinaryOp::MaskMulF(FpMulAlu::kMul0), 2.0f)
                    .vector_fp_binary(FpBinaryOp::MulF(FpMulAlu::kMul1), 2.0f);
              })).ok());
  EXPECT_THAT(Plan(DType::kF32, Way4([](Stream s) {
                return std::move(s)
                    .vector_fp_binary(FpBinaryOp::MulF(FpMulAlu::kMul0), 2.0f)
                    .vector_fp_binary(FpBinaryOp::MaskMulF(FpMulAlu::kMul0), 2.0f);
              })).message(),
              HasSubstr("ALU single-use: FpMul0 is already in use"));
  EXPECT_THAT(Plan(DType::kF32, Way4([](Stream s) {
                return std::move(s)
                    .vector_fp_binary(FpBinaryOp::AddF(), 2.0f)
                    .vector_fp_ternary(FpTernaryOp::kMaskFmaF, VeBranchOperand(2.0f, 1.0f));
              })).message(),
              HasSubstr("ALU single-use: FpFma is already in use"));
  // The manual's table has MaskMulF on Mul0 and Mul1 only.
  EXPECT_THAT(Plan(DType::kF32, Way4([](Stream s) {
                return std::move(s).vector_fp_binary(FpBinaryOp::MaskMulF(FpMulAlu::kFma), 2.0f);
              })).message(),
              HasSubstr("Float Cluster: MaskMulF runs on FpMul0 or FpMul1"));
  // Float ops need Way4 and f32, as the other Float ops.
  EXPECT_THAT(Plan(DType::kF32, [](Stream s, Context&) {
                return std::move(s).vector_fp_binary(FpBinaryOp::MaskMulF(FpMulAlu::kMul0), 2.0f);
              }).message(),
              HasSubstr("Way4"));
  EXPECT_THAT(Plan(DType::kF32, [](Stream s, Context&) {
                return std::move(s).vector_fp_ternary(FpTernaryOp::kMaskFmaF, VeBranchOperand(2.0f, 1.0f));
              }).message(),
              HasSubstr("Way4"));
}

TEST_F(VectorRoundMaskOpsTest, ExplainNamesTheOps) {
  Device device(1);
  interp::Interpreter interp;
  Context ctx(device, interp);
  DmTensor in = Dm(ctx, DType::kF32, m("T, A"), std::vector<double>(16, 1.0), 0);
  absl::StatusOr<DmTensor> out = ctx.main.begin(in.view())
                                     .fetch(DType::kF32, m("T"), m("A"))
                                     .collect(m("T"), m("A"))
                                     .vector_init()
                                     .vector_intra_slice_branch(BranchMode::Unconditional())
                                     .vector_split(m("T, A / 4"), m("A % 4"))
                                     .vector_fp_binary(FpBinaryOp::MaskMulF(FpMulAlu::kMul1), 2.0f)
                                     .vector_fp_ternary(FpTernaryOp::kMaskFmaF, VeBranchOperand(2.0f, 1.0f))
                                     .vector_concat(m("T"), m("A"))
                                     .vector_fp_to_fxp(31)
                                     .vector_final()
                                     .commit(m("T, A"), 4096);
  ASSERT_TRUE(out.ok()) << out.status();
  const std::string text = ctx.program().ToText();
  EXPECT_THAT(text, HasSubstr("vector_fp_binary MaskMulF Mode01 [2] on FpMul1"));
  EXPECT_THAT(text, HasSubstr("vector_fp_ternary MaskFmaF Mode012 [(2, 1)] on FpFma"));
}

// ---- Many inputs: the JIT's inline code against the host definitions -------------------------------

// 2048 elements per run: random patterns plus the special values, so the compiled code's branch-free
// forms meet every shift amount and every zero / infinity / NaN pairing.
class VectorRoundMaskManyTest : public ::testing::Test {
 protected:
  VectorRoundMaskManyTest() : scope_(*Axes::Parse("T = 256, A = 8")) {}

  std::vector<uint32_t> Run(DType dtype, const std::vector<uint32_t>& bits,
                            const std::function<Stream(Stream)>& chain) {
    std::vector<double> values;
    for (uint32_t b : bits) {
      values.push_back(dtype == DType::kF32 ? static_cast<double>(Float(b)) : static_cast<double>(static_cast<int32_t>(b)));
    }
    std::vector<uint32_t> results[2];
    for (int b = 0; b < 2; ++b) {
      Device device(1);
      std::unique_ptr<Backend> backend = test::MakeBackend(b, 1);
      Context ctx(device, *backend);
      const Mapping element = scope_.m("T, A");
      HostTensor host = *HostTensor::FromValues(dtype, element, values);
      Placement placement =
          *Place(ctx.device(), dtype, Tier::kDm, {scope_.m("1"), scope_.m("1 # 2"), scope_.m("1 # 256"), element}, 0);
      DmTensor in(*WriteAs(host, ctx.device(), placement));
      Stream entered = ctx.main.begin(in.view())
                           .fetch(dtype, scope_.m("T"), scope_.m("A"))
                           .collect(scope_.m("T"), scope_.m("A"))
                           .vector_init()
                           .vector_intra_slice_branch(BranchMode::Unconditional());
      absl::StatusOr<DmTensor> out = chain(std::move(entered)).vector_final().commit(element, 1 << 16);
      EXPECT_TRUE(out.ok()) << out.status();
      if (!out.ok()) return {};
      results[b] = ReadAs(*out, element)->ToBits();
    }
    EXPECT_EQ(results[0], results[1]) << "the interpreter and the JIT differ";
    return results[0];
  }

  static std::vector<uint32_t> Patterns(DType dtype) {
    std::mt19937 rng(11);
    std::vector<uint32_t> bits(2048);
    for (uint32_t& b : bits) b = rng();
    const std::vector<uint32_t> special = dtype == DType::kF32
        ? std::vector<uint32_t>{Bits(0.0f), Bits(-0.0f), Bits(kInf), Bits(-kInf), Bits(kNaN), 0x00000001u,
                                0x80000001u, Bits(1.0f), Bits(-1.0f), 0x7f7fffffu}
        : std::vector<uint32_t>{0u, 1u, 0xffffffffu, 0x80000000u, 0x7fffffffu, 0x40000000u, 0xc0000000u, 0x1fu};
    for (size_t i = 0; i < bits.size(); i += 3) bits[i] = special[(i / 3) % special.size()];
    if (dtype == DType::kF32) {
      for (uint32_t& b : bits) {
        if (std::isnan(Float(b))) b = Bits(kNaN);  // one NaN: the host tensor holds doubles
      }
    }
    return bits;
  }

  MappingScope scope_;
};

TEST_F(VectorRoundMaskManyTest, ShiftRoundByEveryAmount) {
  // Mode00: each element shifted by itself (its low five bits).
  const std::vector<uint32_t> in = Patterns(DType::kI32);
  const std::vector<uint32_t> got = Run(DType::kI32, in, [](Stream s) {
    return std::move(s).vector_fxp_with_mode(FxpBinaryOp::kArithRightShiftRound, BinaryArgMode::kMode00, 0);
  });
  ASSERT_EQ(got.size(), in.size());
  for (size_t i = 0; i < in.size(); ++i) {
    const int32_t a = static_cast<int32_t>(in[i]);
    ASSERT_EQ(static_cast<int32_t>(got[i]), HostShiftRound(a, a)) << a;
  }
}

TEST_F(VectorRoundMaskManyTest, MaskedProductsOfStreamAndStash) {
  // m = x * c (MulF on FpMul1), then MaskMulF(m, x) and MaskFmaF(m, x, 0.75) with x read back from
  // the stash; c = 0 makes m a zero (or NaN) against every x, infinities included.
  const std::vector<uint32_t> in = Patterns(DType::kF32);
  for (float c : {-1.0f, 0.5f, 0.0f}) {
    auto prefix = [this, c](Stream s) {
      return std::move(s)
          .vector_split(scope_.m("T, A / 4"), scope_.m("A % 4"))
          .vector_stash()
          .vector_fp_binary(FpBinaryOp::MulF(FpMulAlu::kMul1), c);
    };
    const std::vector<uint32_t> mul = Run(DType::kF32, in, [&](Stream s) {
      return prefix(std::move(s))
          .vector_fp_binary(FpBinaryOp::MaskMulF(FpMulAlu::kMul0), Stash)
          .vector_concat(scope_.m("T"), scope_.m("A"));
    });
    const std::vector<uint32_t> fma = Run(DType::kF32, in, [&](Stream s) {
      return prefix(std::move(s))
          .vector_fp_ternary(FpTernaryOp::kMaskFmaF, VeBranchOperand(VeRhs(Stash), 0.75f))
          .vector_concat(scope_.m("T"), scope_.m("A"));
    });
    ASSERT_EQ(mul.size(), in.size());
    ASSERT_EQ(fma.size(), in.size());
    for (size_t i = 0; i < in.size(); ++i) {
      const float x = Float(in[i]), m = x * c;
      ExpectSameFloat(mul[i], HostMaskMul(m, x), absl::StrCat("MaskMulF ", i, " x ", x, " c ", c));
      ExpectSameFloat(fma[i], HostMaskFma(m, x, 0.75f), absl::StrCat("MaskFmaF ", i, " x ", x, " c ", c));
    }
  }
}

// ---- Two-group mode ------------------------------------------------------------------------------

class VectorRoundMaskPairTest : public VectorRoundMaskOpsTest {
 protected:
  // Group 0 reads `g0`, group 1 `g1` (8 values each, over A); `chain` runs between unzip and
  // vector_final and must merge the pair. The merged [A] bits, identical on both backends.
  std::vector<uint32_t> RunPair(DType dtype, const std::vector<double>& g0, const std::vector<double>& g1,
                                const std::function<Stream(Stream, Context&)>& chain) {
    std::vector<uint32_t> results[2];
    for (int b = 0; b < 2; ++b) {
      Device device(1);
      std::unique_ptr<Backend> backend = test::MakeBackend(b, 1);
      Context ctx(device, *backend);
      DmTensor lhs = Dm(ctx, dtype, m("A"), g0, 0), rhs = Dm(ctx, dtype, m("A"), g1, 1024);
      Stream paired = ctx.main.begin_interleaved(m("I"), lhs.view(), rhs.view())
                          .fetch(dtype, m("I"), m("A"))
                          .collect(m("I"), m("A"))
                          .vector_init()
                          .vector_intra_slice_unzip("I", m("1 # 2"), m("1"));
      absl::StatusOr<DmTensor> out = chain(std::move(paired), ctx).vector_final().commit(m("A"), 4096);
      EXPECT_TRUE(out.ok()) << out.status();
      if (!out.ok()) return {};
      results[b] = ReadAs(*out, m("A"))->ToBits();
    }
    EXPECT_EQ(results[0], results[1]) << "the interpreter and the JIT differ";
    return results[0];
  }
};

TEST_F(VectorRoundMaskPairTest, PerGroupShiftRoundThenZip) {
  const std::vector<double> g0 = {5, -5, 7, -7, 100, -100, 1, -1}, g1 = {6, -6, 9, -9, 64, -64, 3, -3};
  const std::vector<uint32_t> got = RunPair(DType::kI32, g0, g1, [](Stream s, Context&) {
    return std::move(s)
        .vector_fxp(FxpBinaryOp::kArithRightShiftRound, VeRhs(1), VeRhs(2))
        .vector_clip_zip(ClipBinaryOpI32::kAddFxp);
  });
  ASSERT_EQ(got.size(), 8u);
  for (size_t i = 0; i < 8; ++i) {
    const int32_t want = HostShiftRound(static_cast<int32_t>(g0[i]), 1) + HostShiftRound(static_cast<int32_t>(g1[i]), 2);
    EXPECT_EQ(static_cast<int32_t>(got[i]), want) << i;
  }
}

TEST_F(VectorRoundMaskPairTest, ZipWithShiftRoundAndMaskMul) {
  const std::vector<double> g0 = {5, -5, 7, -7, 100, -100, 1, -1}, g1 = {1, 1, 2, 2, 3, 3, 31, 0};
  const std::vector<uint32_t> shifted = RunPair(DType::kI32, g0, g1, [](Stream s, Context&) {
    return std::move(s).vector_fxp_zip(FxpBinaryOp::kArithRightShiftRound);
  });
  ASSERT_EQ(shifted.size(), 8u);
  for (size_t i = 0; i < 8; ++i) {
    EXPECT_EQ(static_cast<int32_t>(shifted[i]),
              HostShiftRound(static_cast<int32_t>(g0[i]), static_cast<int32_t>(g1[i])))
        << i;
  }
  // A 0 / 1 mask in group 1 clears group 0's infinities where it is 0.
  const std::vector<double> x = {1.5, kInf, -kInf, 2.0, kInf, -3.0, 0.25, -kInf};
  const std::vector<double> mask = {1, 0, 1, 0, 0, 1, 0, 0};
  const std::vector<uint32_t> masked = RunPair(DType::kF32, x, mask, [this](Stream s, Context&) {
    return std::move(s)
        .vector_split(m("I, A / 4"), m("A % 4"))
        .vector_fp_zip(FpBinaryOp::MaskMulF(FpMulAlu::kMul1))
        .vector_concat(m("1"), m("A"));
  });
  ASSERT_EQ(masked.size(), 8u);
  for (size_t i = 0; i < 8; ++i) {
    ExpectSameFloat(masked[i], HostMaskMul(static_cast<float>(x[i]), static_cast<float>(mask[i])),
                    absl::StrCat("element ", i));
  }
}

// Group 0 reads a VRF tensor (the rf slot), group 1 a constant (an immediate): the constant takes
// reg0 and the VRF tensor the rf slot after it, whatever order the groups are written in.
TEST_F(VectorRoundMaskPairTest, VrfOperandOnGroupZeroAndAConstantOnGroupOne) {
  const std::vector<double> g0 = {10, 20, 30, 40, 50, 60, 70, 80}, g1 = {1, 2, 3, 4, 5, 6, 7, 8};
  const std::vector<double> bias = {100, 200, 300, 400, 500, 600, 700, 800};
  auto chain = [&](bool vrf_on_group0) {
    return [&, vrf_on_group0](Stream s, Context& ctx) {
      DmTensor b = Dm(ctx, DType::kI32, m("A"), bias, 8192);
      absl::StatusOr<VrfTensor> vrf =
          ctx.sub.begin(b.view()).fetch(DType::kI32, m("1"), m("A")).collect(m("1"), m("A")).to_vrf(m("A"), 0);
      EXPECT_TRUE(vrf.ok()) << vrf.status();
      Stream grouped = vrf_on_group0 ? std::move(s).vector_fxp(FxpBinaryOp::kAddFxp, VeRhs::vrf(*vrf), VeRhs(1000))
                                     : std::move(s).vector_fxp(FxpBinaryOp::kAddFxp, VeRhs(1000), VeRhs::vrf(*vrf));
      return std::move(grouped).vector_clip_zip(ClipBinaryOpI32::kAddFxp);
    };
  };
  for (bool vrf_on_group0 : {true, false}) {
    const std::vector<uint32_t> got = RunPair(DType::kI32, g0, g1, chain(vrf_on_group0));
    ASSERT_EQ(got.size(), 8u) << vrf_on_group0;
    for (size_t i = 0; i < 8; ++i) {
      EXPECT_EQ(static_cast<int32_t>(got[i]), static_cast<int32_t>(g0[i] + g1[i] + bias[i] + 1000))
          << i << (vrf_on_group0 ? " (vrf on group 0)" : " (vrf on group 1)");
    }
  }
}

TEST_F(VectorRoundMaskPairTest, PerGroupMaskOpsKeepTheirRules) {
  auto plan = [this](const std::function<Stream(Stream)>& ops) {
    Device device(1);
    interp::Interpreter interp;
    Context ctx(device, interp);
    DmTensor lhs = Dm(ctx, DType::kF32, m("A"), std::vector<double>(8, 1.0), 0);
    DmTensor rhs = Dm(ctx, DType::kF32, m("A"), std::vector<double>(8, 2.0), 1024);
    Stream paired = ctx.main.begin_interleaved(m("I"), lhs.view(), rhs.view())
                        .fetch(DType::kF32, m("I"), m("A"))
                        .collect(m("I"), m("A"))
                        .vector_init()
                        .vector_intra_slice_unzip("I", m("1 # 2"), m("1"))
                        .vector_split(m("I, A / 4"), m("A % 4"));
    return ops(std::move(paired)).vector_concat(m("1"), m("A")).vector_final().commit(m("A"), 4096).status();
  };
  EXPECT_THAT(plan([](Stream s) {
                return std::move(s).vector_fp_zip(FpBinaryOp::MaskMulF(FpMulAlu::kFma));
              }).message(),
              HasSubstr("Float Cluster: MaskMulF runs on FpMul0 or FpMul1"));
  EXPECT_THAT(plan([](Stream s) {
                return std::move(s)
                    .vector_fp_binary(FpBinaryOp::MaskMulF(FpMulAlu::kMul0), VeRhs(2.0f), std::nullopt)
                    .vector_fp_zip(FpBinaryOp::MaskMulF(FpMulAlu::kMul0));
              }).message(),
              HasSubstr("ALU single-use: FpMul0 is already in use"));
  // Per-group MaskFmaF (FpFma), then a zip on FpMul0: (1 * 0) + 3 = 3 for group 0, 2 * 4 + 0 = 8
  // for group 1, merged 3 * 8.
  const std::vector<uint32_t> got = RunPair(DType::kF32, std::vector<double>(8, 1.0), std::vector<double>(8, 2.0),
                                            [this](Stream s, Context&) {
                                              return std::move(s)
                                                  .vector_split(m("I, A / 4"), m("A % 4"))
                                                  .vector_fp_ternary(FpTernaryOp::kMaskFmaF, std::pair{VeRhs(0.0f), 3.0f},
                                                                     std::pair{VeRhs(4.0f), 0.0f})
                                                  .vector_fp_zip(FpBinaryOp::MulF(FpMulAlu::kMul0))
                                                  .vector_concat(m("1"), m("A"));
                                            });
  ASSERT_EQ(got.size(), 8u);
  for (uint32_t bits : got) EXPECT_EQ(bits, Bits(24.0f));
}

}  // namespace
}  // namespace visa
