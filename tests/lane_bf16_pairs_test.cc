// The bf16 lane kernel's first tree level on vdpbf16ps pairs (LaneContractionSpec::bf16_pairs):
// the range check that allows it (PairSumsAreExact) against sums computed on the host, and the
// kernel against the interpreter and a host loop in the Contraction Engine's order, on operands
// the per-slice scan sends down the pair path (exact cancellations, signed zeros, the smallest
// allowed sums) and on operands it must refuse (a pair sum below the normal range, which the
// instruction would flush to zero).
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>

#include "dsl/mapping_parser.h"
#include "interp/interpreter.h"
#include "jit/exact_products.h"
#include "jit/jit_backend.h"
#include "runtime/launch.h"
#include "runtime/transfer.h"
#include "tests/bf16_contraction_reference.h"

namespace visa::jit {
namespace {

using bf16_reference::Bf16Tensor;
using bf16_reference::Bf16Value;
using bf16_reference::F32Bits;
using bf16_reference::HostContraction;
using bf16_reference::kPacket;

bool HostHasBf16Pairs() { return __builtin_cpu_supports("avx512bf16"); }

// A bf16 pattern: sign, unbiased exponent (normal range), 7-bit mantissa.
uint16_t Bf16(bool negative, int exponent, int mantissa) {
  return static_cast<uint16_t>((negative ? 0x8000 : 0) | (exponent + 127) << 7 | mantissa);
}

ExponentRange RangeOf(int min, int max) { return {min, max, /*finite=*/true, /*nonzero=*/true}; }

TEST(PairSumsAreExact, TheBoundIsTheSmallestSumOfTwoProducts) {
  EXPECT_TRUE(PairSumsAreExact(RangeOf(-56, 0), RangeOf(-56, 0)));   // sums >= 2^-126
  EXPECT_FALSE(PairSumsAreExact(RangeOf(-57, 0), RangeOf(-56, 0)));  // a sum may be 2^-127
  EXPECT_TRUE(PairSumsAreExact(RangeOf(-100, 0), RangeOf(-12, 0)));
  EXPECT_FALSE(PairSumsAreExact(RangeOf(0, 127), RangeOf(0, 1)));   // products may overflow
  ExponentRange nan = RangeOf(0, 0);
  nan.finite = false;
  EXPECT_FALSE(PairSumsAreExact(nan, RangeOf(0, 0)));
  EXPECT_TRUE(PairSumsAreExact(ExponentRange{}, RangeOf(-126, 127)));  // every product is zero
}

// Random bf16 values with x.min + w.min = -112 (the bound): every sum of two products, computed
// in double (exact) and rounded to f32, is zero or normal; one exponent lower, a sum of 2^-127
// exists (the bound is tight).
TEST(PairSumsAreExact, AcceptedRangesNeverSumBelowTheNormalRange) {
  std::mt19937 engine(5);
  std::uniform_int_distribution<int> exponent(0, 20), mantissa(0, 127), sign(0, 1);
  const float smallest_normal = std::ldexp(1.0f, -126);
  for (int i = 0; i < 200000; ++i) {
    float v[4];
    for (int k = 0; k < 4; ++k) v[k] = Bf16Value(Bf16(sign(engine), -56 + exponent(engine), mantissa(engine)));
    // Make near-cancellations frequent: the second product close to the first's negation.
    if (i % 2 == 0) {
      v[2] = v[0];
      v[3] = -Bf16Value(static_cast<uint16_t>((F32Bits(v[1]) >> 16) + (i % 4 == 0 ? 1 : 0)));
    }
    const double sum = static_cast<double>(v[0]) * v[1] + static_cast<double>(v[2]) * v[3];
    const float rounded = static_cast<float>(sum);
    ASSERT_TRUE(rounded == 0 || std::fabs(rounded) >= smallest_normal) << i;
  }
  // One exponent lower: (1 + 2^-7) 2^-57 * (1 + 2^-7) 2^-56 - (1 + 2^-6) 2^-57 * 2^-56 = 2^-127.
  const double below = static_cast<double>(Bf16Value(Bf16(false, -57, 1))) * Bf16Value(Bf16(false, -56, 1)) -
                       static_cast<double>(Bf16Value(Bf16(false, -57, 2))) * Bf16Value(Bf16(false, -56, 0));
  EXPECT_LT(std::fabs(static_cast<float>(below)), smallest_normal);
  EXPECT_GT(below, 0.0);
}

DmTensor OnSliceZero(Context& ctx, const MappingScope& s, const HostTensor& host, int64_t address) {
  absl::StatusOr<HbmTensor> hbm = host.to_hbm(ctx.pdma, address, s.m("1"), host.mapping());
  EXPECT_TRUE(hbm.ok()) << hbm.status();
  absl::StatusOr<DmTensor> dm = hbm->to_dm(ctx.tdma, address, s.m("1 # 2"), s.m("1 # 256"), host.mapping());
  EXPECT_TRUE(dm.ok()) << dm.status();
  return *dm;
}

// x [A, K] (bf16) contracted with w [R, K] (bf16) through the TRF into [A, R] (f32) on slice 0,
// packets of 32 elements of K.
HostTensor Contract(Backend& backend, const MappingScope& s, const HostTensor& x, const HostTensor& w) {
  auto device = std::make_unique<Device>(1);
  Context ctx(*device, backend);
  DmTensor wd = OnSliceZero(ctx, s, w, 1 << 16), xd = OnSliceZero(ctx, s, x, 0);
  absl::StatusOr<TrfTensor> trf = ctx.sub.begin(wd.view())
                                      .fetch(DType::kBF16, s.m("R, K / 16"), s.m("K % 16"))
                                      .collect(s.m("R, K / 16"), s.m("K % 16"))
                                      .to_trf(s.m("R"), s.m("K"), TrfAddress::kFull);
  EXPECT_TRUE(trf.ok()) << trf.status();
  absl::StatusOr<DmTensor> out = ctx.main.begin(xd.view())
                                     .fetch(DType::kBF16, s.m("A, K / 16"), s.m("K % 16"))
                                     .collect(s.m("A, K / 16"), s.m("K % 16"))
                                     .align(s.m("A, K / 32"), s.m("K % 32"), *trf)
                                     .contract(s.m("1"))
                                     .accumulate(s.m("A"), s.m("R # 8"), AccumulationKind::kInterleaved)
                                     .commit(s.m("A, R"), 1 << 17);
  EXPECT_TRUE(out.ok()) << out.status();
  return *ReadAs(*out, s.m("A, R"));
}

constexpr int kA = 32, kRows = 4, kK = 128;

struct Results {
  std::vector<uint32_t> jit, interpreter;
  int64_t pair_slices = 0;
};

Results Both(const std::vector<uint16_t>& xb, const std::vector<uint16_t>& wb) {
  MappingScope s(*Axes::Parse(absl::StrCat("A = ", kA, ", K = ", kK, ", R = ", kRows)));
  const HostTensor x = Bf16Tensor(s.m("A, K"), xb), w = Bf16Tensor(s.m("R, K"), wb);
  absl::StatusOr<std::unique_ptr<JitBackend>> jit = JitBackend::Create({.threads = 1});
  EXPECT_TRUE(jit.ok()) << jit.status();
  Results run;
  run.jit = Contract(**jit, s, x, w).ToBits();
  EXPECT_EQ((*jit)->stats().fused_pipelines, 1);
  run.pair_slices = (*jit)->stats().bf16_pair_slices;
  interp::Interpreter interpreter;
  run.interpreter = Contract(interpreter, s, x, w).ToBits();
  return run;
}

// Values over 2^-40 .. 2^40 with exact cancellations (x1 = x0, w1 = -w0: the pair sums to +0)
// and zeros of both signs (two -0 products must sum to -0, which is why the pair starts at -0):
// the pair path runs and gives the host order's bits.
TEST(LaneBf16Pairs, CancellationsAndSignedZerosKeepTheTreesBits) {
  std::mt19937 engine(9);
  std::uniform_int_distribution<int> exponent(-40, 40), mantissa(0, 127), sign(0, 1), kind(0, 5);
  std::vector<uint16_t> xb(kA * kK), wb(kRows * kK);
  for (uint16_t& b : wb) b = Bf16(sign(engine), exponent(engine), mantissa(engine));
  for (int a = 0; a < kA; ++a) {
    for (int p = 0; p < kK; p += 2) {
      uint16_t& x0 = xb[a * kK + p];
      uint16_t& x1 = xb[a * kK + p + 1];
      x0 = Bf16(sign(engine), exponent(engine), mantissa(engine));
      x1 = Bf16(sign(engine), exponent(engine), mantissa(engine));
      switch (kind(engine)) {
        case 0: x0 = x1 = 0x8000; break;  // -0 products where the weights are positive
        case 1: x0 = 0x0000; x1 = 0x8000; break;
        case 2: x0 = 0x8000; break;
        default: break;
      }
    }
  }
  // Row 0: the odd weights negate the even ones, and lanes 0..7 repeat each even operand value,
  // so their pairs cancel exactly.
  for (int p = 0; p < kK; p += 2) wb[p + 1] = wb[p] ^ 0x8000;
  for (int a = 0; a < 8; ++a) {
    for (int p = 0; p < kK; p += 2) xb[a * kK + p + 1] = xb[a * kK + p];
  }
  // Row 1: positive weights only, so the -0 operands give -0 products; lanes 8 and 9 are all -0,
  // so their Row 1 sums are -0 (a pair starting from +0 would make them +0).
  for (int p = 0; p < kK; ++p) wb[kK + p] &= 0x7fff;
  for (int a = 8; a < 10; ++a) {
    for (int p = 0; p < kK; ++p) xb[a * kK + p] = 0x8000;
  }
  const Results run = Both(xb, wb);
  EXPECT_EQ(run.pair_slices, HostHasBf16Pairs() ? 1 : 0);
  EXPECT_EQ(run.jit, HostContraction(xb, wb, kA, kRows, kK));
  EXPECT_EQ(run.jit, run.interpreter);
  EXPECT_EQ(run.jit[8 * kRows + 1], 0x80000000u);
  EXPECT_EQ(run.jit[9 * kRows + 1], 0x80000000u);
  EXPECT_EQ(run.jit[0], 0x00000000u);  // Row 0's cancellations
}

// The smallest sums the check allows: operands down to 2^-56 on both sides, with pairs that
// cancel to 2^-126 (the smallest normal), which the pair path must keep.
TEST(LaneBf16Pairs, TheSmallestAllowedPairSumsStayNormal) {
  std::vector<uint16_t> xb(kA * kK), wb(kRows * kK);
  for (int p = 0; p < kK; p += 2) {
    for (int r = 0; r < kRows; ++r) {
      wb[r * kK + p] = Bf16(false, -56, 1);      // (1 + 2^-7) 2^-56
      wb[r * kK + p + 1] = Bf16(true, -56, 0);   // -2^-56
    }
    for (int a = 0; a < kA; ++a) {
      xb[a * kK + p] = Bf16(false, -56, 1);      // (1 + 2^-7)^2 2^-112 - (1 + 2^-6) 2^-112 = 2^-126
      xb[a * kK + p + 1] = Bf16(false, -56, 2);  // (1 + 2^-6) 2^-56
    }
  }
  const Results run = Both(xb, wb);
  EXPECT_EQ(run.pair_slices, HostHasBf16Pairs() ? 1 : 0);
  EXPECT_EQ(run.jit, HostContraction(xb, wb, kA, kRows, kK));
  EXPECT_EQ(run.jit, run.interpreter);
  EXPECT_NE(run.jit[0], 0u);
}

// One exponent lower, the same cancellation leaves 2^-127, a subnormal vdpbf16ps would flush to
// zero: the scan refuses the pair path and the exact tree keeps the interpreter's bits.
TEST(LaneBf16Pairs, APairSumBelowTheNormalRangeRunsTheExactTree) {
  std::vector<uint16_t> xb(kA * kK), wb(kRows * kK);
  for (int p = 0; p < kK; p += 2) {
    for (int r = 0; r < kRows; ++r) {
      wb[r * kK + p] = Bf16(false, -57, 1);
      wb[r * kK + p + 1] = Bf16(true, -57, 0);
    }
    for (int a = 0; a < kA; ++a) {
      xb[a * kK + p] = Bf16(false, -56, 1);
      xb[a * kK + p + 1] = Bf16(false, -56, 2);
    }
  }
  const Results run = Both(xb, wb);
  EXPECT_EQ(run.pair_slices, 0);
  EXPECT_EQ(run.jit, run.interpreter);
  EXPECT_NE(run.jit[0], 0u);  // the subnormal pair sums add up to a nonzero result
}

// Two slices, each with its own operand and weights: x [S, A, K], w [S, R, K] into [S, A, R].
std::vector<uint32_t> ContractPerSlice(Backend& backend, const MappingScope& s, const HostTensor& x,
                                       const HostTensor& w) {
  auto device = std::make_unique<Device>(1);
  Context ctx(*device, backend);
  auto on_slices = [&](const HostTensor& host, const char* per_slice, int64_t address) {
    absl::StatusOr<HbmTensor> hbm = host.to_hbm(ctx.pdma, address, s.m("1"), host.mapping());
    EXPECT_TRUE(hbm.ok()) << hbm.status();
    absl::StatusOr<DmTensor> dm = hbm->to_dm(ctx.tdma, address, s.m("1 # 2"), s.m("S # 256"), s.m(per_slice));
    EXPECT_TRUE(dm.ok()) << dm.status();
    return *dm;
  };
  DmTensor wd = on_slices(w, "R, K", 1 << 16), xd = on_slices(x, "A, K", 0);
  absl::StatusOr<TrfTensor> trf = ctx.sub.begin(wd.view())
                                      .fetch(DType::kBF16, s.m("R, K / 16"), s.m("K % 16"))
                                      .collect(s.m("R, K / 16"), s.m("K % 16"))
                                      .to_trf(s.m("R"), s.m("K"), TrfAddress::kFull);
  EXPECT_TRUE(trf.ok()) << trf.status();
  absl::StatusOr<DmTensor> out = ctx.main.begin(xd.view())
                                     .fetch(DType::kBF16, s.m("A, K / 16"), s.m("K % 16"))
                                     .collect(s.m("A, K / 16"), s.m("K % 16"))
                                     .align(s.m("A, K / 32"), s.m("K % 32"), *trf)
                                     .contract(s.m("1"))
                                     .accumulate(s.m("A"), s.m("R # 8"), AccumulationKind::kInterleaved)
                                     .commit(s.m("A, R"), 1 << 17);
  EXPECT_TRUE(out.ok()) << out.status();
  return ReadAs(*out, s.m("S, A, R"))->ToBits();
}

// Slice 0's operands allow the pair path, slice 1's (the refused subnormal pair sums) do not: each
// slice runs its own kernel, the exact one compiled after the pair slices ran, on 1 and 2 threads.
TEST(LaneBf16Pairs, EachSliceRunsTheKernelItsOperandsAllow) {
  std::mt19937 engine(3);
  std::uniform_int_distribution<int> exponent(-40, 40), mantissa(0, 127), sign(0, 1);
  std::vector<uint16_t> xb(2 * kA * kK), wb(2 * kRows * kK);
  for (int i = 0; i < kA * kK; ++i) xb[i] = Bf16(sign(engine), exponent(engine), mantissa(engine));
  for (int i = 0; i < kRows * kK; ++i) wb[i] = Bf16(sign(engine), exponent(engine), mantissa(engine));
  for (int p = 0; p < kK; p += 2) {
    for (int r = 0; r < kRows; ++r) {
      wb[(kRows + r) * kK + p] = Bf16(false, -57, 1);
      wb[(kRows + r) * kK + p + 1] = Bf16(true, -57, 0);
    }
    for (int a = 0; a < kA; ++a) {
      xb[(kA + a) * kK + p] = Bf16(false, -56, 1);
      xb[(kA + a) * kK + p + 1] = Bf16(false, -56, 2);
    }
  }
  MappingScope s(*Axes::Parse(absl::StrCat("S = 2, A = ", kA, ", K = ", kK, ", R = ", kRows)));
  const HostTensor x = Bf16Tensor(s.m("S, A, K"), xb), w = Bf16Tensor(s.m("S, R, K"), wb);
  interp::Interpreter interpreter;
  const std::vector<uint32_t> expected = ContractPerSlice(interpreter, s, x, w);
  EXPECT_EQ(std::vector<uint32_t>(expected.begin(), expected.begin() + kA * kRows),
            HostContraction(std::vector<uint16_t>(xb.begin(), xb.begin() + kA * kK),
                            std::vector<uint16_t>(wb.begin(), wb.begin() + kRows * kK), kA, kRows, kK));
  for (int threads : {1, 2}) {
    absl::StatusOr<std::unique_ptr<JitBackend>> jit = JitBackend::Create({.threads = threads});
    ASSERT_TRUE(jit.ok()) << jit.status();
    EXPECT_EQ(ContractPerSlice(**jit, s, x, w), expected) << threads << " threads";
    EXPECT_EQ((*jit)->stats().fused_pipelines, 1);
    EXPECT_EQ((*jit)->stats().bf16_pair_slices, HostHasBf16Pairs() ? 1 : 0);
  }
}

}  // namespace
}  // namespace visa::jit
