// The NaN-payload rule of the Vector Engine's binary and ternary float ops (dsl/vector_nan_payload.h):
// when an operand is a NaN the result is the first NaN operand in argument order, quieted. Checked
// on both backends with NaN pairs of distinct payloads (quiet and signaling, both signs) in every
// argument mode: a constant, a VRF operand, the stash, two-group zips, each in both argument
// orders (Mode01 / Mode10, ternary modes), and through the reductions. Expected values come from
// a host model of the rule written here, not from the code under test.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <functional>
#include <limits>

#include "absl/strings/str_cat.h"
#include "dsl/mapping_parser.h"
#include "interp/interpreter.h"
#include "interp/vector_reduce.h"
#include "jit/jit_backend.h"
#include "runtime/tensor_unit.h"
#include "runtime/transfer.h"
#include "tests/common/dm_input.h"
#include "tests/common/backends.h"

namespace visa {
namespace {

float Float(uint32_t b) { return std::bit_cast<float>(b); }
uint32_t Bits(float f) { return std::bit_cast<uint32_t>(f); }
bool IsNan(uint32_t b) { return std::isnan(Float(b)); }

// Distinct payloads: quiet and signaling, both signs.
constexpr uint32_t kQuietA = 0x7fc00011u, kQuietB = 0xffc00022u, kSignalingC = 0x7f800033u, kSignalingD = 0xff800044u;
const uint32_t kValues[] = {kQuietA, kQuietB, kSignalingC, kSignalingD, Bits(1.5f),
                            Bits(std::numeric_limits<float>::infinity())};

// The stream x and the operand y, position by position: every ordered pair of kValues (36), then
// a zero against a NaN both ways (the masked ops drop that NaN) and zero times infinity both ways
// (an invalid product: against a NaN addend FmaF still returns the addend's payload).
constexpr int kPositions = 40;
std::pair<std::vector<uint32_t>, std::vector<uint32_t>> Pairs() {
  std::vector<uint32_t> x, y;
  for (uint32_t a : kValues) {
    for (uint32_t b : kValues) x.push_back(a), y.push_back(b);
  }
  for (auto [a, b] : std::vector<std::pair<uint32_t, uint32_t>>{
           {Bits(0.0f), kQuietB},
           {kSignalingC, Bits(-0.0f)},
           {Bits(0.0f), Bits(std::numeric_limits<float>::infinity())},
           {Bits(-std::numeric_limits<float>::infinity()), Bits(-0.0f)}}) {
    x.push_back(a), y.push_back(b);
  }
  return {x, y};
}

// The rule as the host states it: the first NaN argument, quiet bit set.
std::optional<uint32_t> FirstNanQuieted(std::initializer_list<uint32_t> args) {
  for (uint32_t a : args) {
    if (IsNan(a)) return a | 0x00400000u;
  }
  return std::nullopt;
}

using Arithmetic = std::function<float(float, float, float)>;
enum class Masking { kNone, kMasked };

// The expected result of an op over (a, b, c): a masked op first replaces a zero factor's partner
// by +-1; then a NaN argument decides by the rule, else IEEE arithmetic.
void ExpectRule(uint32_t got, std::vector<uint32_t> args, const Arithmetic& arithmetic, Masking masking,
                const std::string& where) {
  args.resize(3, Bits(0.0f));
  if (masking == Masking::kMasked) {
    if (Float(args[0]) == 0.0f) args[1] = Bits(std::copysign(1.0f, Float(args[1])));
    else if (Float(args[1]) == 0.0f) args[0] = Bits(std::copysign(1.0f, Float(args[0])));
  }
  if (std::optional<uint32_t> nan = FirstNanQuieted({args[0], args[1], args[2]})) {
    EXPECT_EQ(got, *nan) << where << std::hex << ": args " << args[0] << " " << args[1] << " " << args[2];
    return;
  }
  const float want = arithmetic(Float(args[0]), Float(args[1]), Float(args[2]));
  if (std::isnan(want)) {
    EXPECT_TRUE(IsNan(got)) << where;  // an invalid operation: the host's default NaN, on both
  } else {
    EXPECT_EQ(got, Bits(want)) << where;
  }
}

const Arithmetic kAdd = [](float a, float b, float) { return a + b; };
const Arithmetic kSub = [](float a, float b, float) { return a - b; };
const Arithmetic kMul = [](float a, float b, float) { return a * b; };
const Arithmetic kDiv = [](float a, float b, float) { return a / b; };
const Arithmetic kFma = [](float a, float b, float c) { return std::fma(a, b, c); };

class VectorNanPayloadTest : public ::testing::Test {
 protected:
  VectorNanPayloadTest() : scope_(*Axes::Parse("T = 5, A = 8, I = 2")) {}
  Mapping m(const std::string& text) { return scope_.m(text); }

  DmTensor Dm(Context& ctx, const Mapping& element, const std::vector<uint32_t>& bits, int64_t address) {
    return test::WriteDm(ctx.device(), *HostTensor::FromBits(DType::kF32, element, bits), element, address);
  }

  using Chain = std::function<Stream(Stream, const VrfTensor&)>;

  // x through `chain` (between the branch and vector_final) with y as a VRF operand, on the
  // interpreter and the JIT, which must agree bit for bit; the result in [T, A] order.
  std::vector<uint32_t> Run(const Chain& chain, const std::string& what) {
    const auto [x, y] = Pairs();
    std::vector<uint32_t> results[2];
    for (int b = 0; b < 2; ++b) {
      Device device(1);
      std::unique_ptr<Backend> backend = test::MakeBackend(b, 1);
      Context ctx(device, *backend);
      DmTensor in = Dm(ctx, m("T, A"), x, 0), other = Dm(ctx, m("T, A"), y, 8192);
      absl::StatusOr<VrfTensor> vrf =
          ctx.sub.begin(other.view()).fetch(DType::kF32, m("T"), m("A")).collect(m("T"), m("A")).to_vrf(m("T, A"), 0);
      EXPECT_TRUE(vrf.ok()) << vrf.status();
      if (!vrf.ok()) return {};
      Stream entered = ctx.main.begin(in.view())
                           .fetch(DType::kF32, m("T"), m("A"))
                           .collect(m("T"), m("A"))
                           .vector_init()
                           .vector_intra_slice_branch(BranchMode::Unconditional());
      absl::StatusOr<DmTensor> out = chain(std::move(entered), *vrf).vector_final().commit(m("T, A"), 16384);
      EXPECT_TRUE(out.ok()) << what << ": " << out.status();
      if (!out.ok()) return {};
      results[b] = ReadAs(*out, m("T, A"))->ToBits();
    }
    EXPECT_EQ(results[0], results[1]) << what << ": the interpreter and the JIT differ";
    return results[0];
  }

  // The Way4 region around `ops`.
  Chain Way4(std::function<Stream(Stream, const VrfTensor&)> ops) {
    return [this, ops](Stream s, const VrfTensor& y) {
      return ops(std::move(s).vector_split(m("T, A / 4"), m("A % 4")), y).vector_concat(m("T"), m("A"));
    };
  }

  MappingScope scope_;
};

struct BinaryCase {
  FpBinaryOp op;
  Arithmetic arithmetic;
  Masking masking;
  std::string name;
};

std::vector<BinaryCase> BinaryCases() {
  return {{FpBinaryOp::AddF(), kAdd, Masking::kNone, "AddF"},
          {FpBinaryOp::SubF(), kSub, Masking::kNone, "SubF"},
          {FpBinaryOp::MulF(FpMulAlu::kMul0), kMul, Masking::kNone, "MulF(Mul0)"},
          {FpBinaryOp::MulF(FpMulAlu::kFma), kMul, Masking::kNone, "MulF(Fma)"},
          {FpBinaryOp::DivF(), kDiv, Masking::kNone, "DivF"},
          {FpBinaryOp::MaskMulF(FpMulAlu::kMul0), kMul, Masking::kMasked, "MaskMulF(Mul0)"}};
}

const BinaryArgMode kOrders[] = {BinaryArgMode::kMode01, BinaryArgMode::kMode10};
bool Swapped(BinaryArgMode mode) { return mode == BinaryArgMode::kMode10; }

TEST_F(VectorNanPayloadTest, BinaryOpsWithAConstantOperand) {
  const auto [x, y] = Pairs();
  for (const BinaryCase& c : BinaryCases()) {
    for (BinaryArgMode mode : kOrders) {
      for (uint32_t constant : {kQuietB, 0x7fc12345u, Bits(1.5f)}) {
        const std::string what = absl::StrCat(c.name, " constant ", absl::Hex(constant), Swapped(mode) ? " Mode10" : "");
        const std::vector<uint32_t> got = Run(Way4([&](Stream s, const VrfTensor&) {
          return std::move(s).vector_fp_binary_with_mode(c.op, mode, VeRhs(Float(constant)));
        }), what);
        ASSERT_EQ(got.size(), x.size()) << what;
        for (size_t i = 0; i < x.size(); ++i) {
          const std::vector<uint32_t> args = Swapped(mode) ? std::vector{constant, x[i]} : std::vector{x[i], constant};
          ExpectRule(got[i], args, c.arithmetic, c.masking, absl::StrCat(what, " at ", i));
        }
      }
    }
  }
}

TEST_F(VectorNanPayloadTest, BinaryOpsWithAVrfOperand) {
  const auto [x, y] = Pairs();
  for (const BinaryCase& c : BinaryCases()) {
    for (BinaryArgMode mode : kOrders) {
      const std::string what = absl::StrCat(c.name, " vrf", Swapped(mode) ? " Mode10" : "");
      const std::vector<uint32_t> got = Run(Way4([&](Stream s, const VrfTensor& vrf) {
        return std::move(s).vector_fp_binary_with_mode(c.op, mode, VeRhs::vrf(vrf));
      }), what);
      ASSERT_EQ(got.size(), x.size()) << what;
      for (size_t i = 0; i < x.size(); ++i) {
        const std::vector<uint32_t> args = Swapped(mode) ? std::vector{y[i], x[i]} : std::vector{x[i], y[i]};
        ExpectRule(got[i], args, c.arithmetic, c.masking, absl::StrCat(what, " at ", i));
      }
    }
  }
}

// The stash holds x; a first op, MulF(Mul1) with the VRF operand first (Mode10), turns the stream
// into z = y * x under the rule (y's payload where y is a NaN); the op under test reads (z, stash).
TEST_F(VectorNanPayloadTest, BinaryOpsWithTheStash) {
  const auto [x, y] = Pairs();
  for (const BinaryCase& c : BinaryCases()) {
    if (c.name == "DivF") continue;  // below, on the FpDiv stage and on FpFpu
    for (BinaryArgMode mode : kOrders) {
      const std::string what = absl::StrCat(c.name, " stash", Swapped(mode) ? " Mode10" : "");
      const std::vector<uint32_t> got = Run(Way4([&](Stream s, const VrfTensor& vrf) {
        return std::move(s)
            .vector_stash()
            .vector_fp_binary_with_mode(FpBinaryOp::MulF(FpMulAlu::kMul1), BinaryArgMode::kMode10, VeRhs::vrf(vrf))
            .vector_fp_binary_with_mode(c.op, mode, Stash);
      }), what);
      ASSERT_EQ(got.size(), x.size()) << what;
      for (size_t i = 0; i < x.size(); ++i) {
        const uint32_t z = FirstNanQuieted({y[i], x[i]}).value_or(Bits(Float(y[i]) * Float(x[i])));
        const std::vector<uint32_t> args = Swapped(mode) ? std::vector{x[i], z} : std::vector{z, x[i]};
        ExpectRule(got[i], args, c.arithmetic, c.masking, absl::StrCat(what, " at ", i));
      }
    }
  }
}

TEST_F(VectorNanPayloadTest, DivisionOnFpDivAndFpFpuInEveryArgumentMode) {
  const auto [x, y] = Pairs();
  for (BinaryArgMode mode : kOrders) {
    const std::vector<uint32_t> fp_div = Run(Way4([&](Stream s, const VrfTensor& vrf) {
      return std::move(s).vector_fp_div_with_mode(FpDivBinaryOp::kDivF, mode, VeRhs::vrf(vrf));
    }), "FpDiv vrf");
    const std::vector<uint32_t> fp_div_constant = Run(Way4([&](Stream s, const VrfTensor&) {
      return std::move(s).vector_fp_div_with_mode(FpDivBinaryOp::kDivF, mode, VeRhs(Float(kQuietB)));
    }), "FpDiv constant");
    const std::vector<uint32_t> stash = Run(Way4([&](Stream s, const VrfTensor& vrf) {
      return std::move(s)
          .vector_stash()
          .vector_fp_binary_with_mode(FpBinaryOp::MulF(FpMulAlu::kMul1), BinaryArgMode::kMode10, VeRhs::vrf(vrf))
          .vector_fp_binary_with_mode(FpBinaryOp::DivF(), mode, Stash);
    }), "DivF stash");
    ASSERT_EQ(fp_div.size(), x.size());
    ASSERT_EQ(fp_div_constant.size(), x.size());
    ASSERT_EQ(stash.size(), x.size());
    for (size_t i = 0; i < x.size(); ++i) {
      const bool swapped = Swapped(mode);
      ExpectRule(fp_div[i], swapped ? std::vector{y[i], x[i]} : std::vector{x[i], y[i]}, kDiv, Masking::kNone,
                 absl::StrCat("FpDiv vrf at ", i, swapped ? " Mode10" : ""));
      ExpectRule(fp_div_constant[i], swapped ? std::vector{kQuietB, x[i]} : std::vector{x[i], kQuietB}, kDiv,
                 Masking::kNone, absl::StrCat("FpDiv constant at ", i, swapped ? " Mode10" : ""));
      const uint32_t z = FirstNanQuieted({y[i], x[i]}).value_or(Bits(Float(y[i]) * Float(x[i])));
      ExpectRule(stash[i], swapped ? std::vector{x[i], z} : std::vector{z, x[i]}, kDiv, Masking::kNone,
                 absl::StrCat("DivF stash at ", i, swapped ? " Mode10" : ""));
    }
  }
}

// Clip Add (Way8): against a constant, the VRF operand and the stash (written at the branch, read
// after the stream went through MulF(Mul1) by the VRF operand, first).
TEST_F(VectorNanPayloadTest, ClipAddInEveryArgumentMode) {
  const auto [x, y] = Pairs();
  for (BinaryArgMode mode : kOrders) {
    const bool swapped = Swapped(mode);
    const std::vector<uint32_t> constant = Run([&](Stream s, const VrfTensor&) {
      return std::move(s).vector_clip_with_mode(ClipBinaryOpF32::kAdd, mode, VeRhs(Float(kQuietA)));
    }, "clip constant");
    const std::vector<uint32_t> vrf = Run([&](Stream s, const VrfTensor& v) {
      return std::move(s).vector_clip_with_mode(ClipBinaryOpF32::kAdd, mode, VeRhs::vrf(v));
    }, "clip vrf");
    const std::vector<uint32_t> stash = Run([&](Stream s, const VrfTensor& v) {
      return std::move(s)
          .vector_stash()
          .vector_split(m("T, A / 4"), m("A % 4"))
          .vector_fp_binary_with_mode(FpBinaryOp::MulF(FpMulAlu::kMul1), BinaryArgMode::kMode10, VeRhs::vrf(v))
          .vector_concat(m("T"), m("A"))
          .vector_clip_with_mode(ClipBinaryOpF32::kAdd, mode, Stash);
    }, "clip stash");
    ASSERT_EQ(constant.size(), x.size());
    ASSERT_EQ(vrf.size(), x.size());
    ASSERT_EQ(stash.size(), x.size());
    for (size_t i = 0; i < x.size(); ++i) {
      const std::string at = absl::StrCat(" at ", i, swapped ? " Mode10" : "");
      ExpectRule(constant[i], swapped ? std::vector{kQuietA, x[i]} : std::vector{x[i], kQuietA}, kAdd, Masking::kNone,
                 "clip constant" + at);
      ExpectRule(vrf[i], swapped ? std::vector{y[i], x[i]} : std::vector{x[i], y[i]}, kAdd, Masking::kNone,
                 "clip vrf" + at);
      const uint32_t z = FirstNanQuieted({y[i], x[i]}).value_or(Bits(Float(y[i]) * Float(x[i])));
      ExpectRule(stash[i], swapped ? std::vector{x[i], z} : std::vector{z, x[i]}, kAdd, Masking::kNone,
                 "clip stash" + at);
    }
  }
}

// FmaF and MaskFmaF over (x, o0, o1) = v[0], v[1], v[2] in every ternary mode, with o0 a NaN
// constant, the VRF operand or the stash, and o1 a NaN constant of a third payload.
TEST_F(VectorNanPayloadTest, TernaryOpsInEveryModeAndOperandKind) {
  const auto [x, y] = Pairs();
  const TernaryArgMode modes[] = {TernaryArgMode::kMode012, TernaryArgMode::kMode002, TernaryArgMode::kMode102,
                                  TernaryArgMode::kMode112, TernaryArgMode::kMode020, TernaryArgMode::kMode021,
                                  TernaryArgMode::kMode120};
  constexpr uint32_t kO1 = 0x7fc00abcu;
  for (FpTernaryOp op : {FpTernaryOp::kFmaF, FpTernaryOp::kMaskFmaF}) {
    const Masking masking = op == FpTernaryOp::kMaskFmaF ? Masking::kMasked : Masking::kNone;
    for (TernaryArgMode mode : modes) {
      const VeArgs args = ArgsOf(mode);
      for (int kind = 0; kind < 3; ++kind) {  // 0 constant, 1 VRF, 2 stash
        const std::string what = absl::StrCat(op == FpTernaryOp::kFmaF ? "FmaF " : "MaskFmaF ", args.name,
                                              kind == 0 ? " constant" : kind == 1 ? " vrf" : " stash");
        const std::vector<uint32_t> got = Run(Way4([&](Stream s, const VrfTensor& vrf) {
          if (kind == 0) return std::move(s).vector_fp_ternary_with_mode(op, mode, VeBranchOperand(VeRhs(Float(kQuietB)), Float(kO1)));
          if (kind == 1) return std::move(s).vector_fp_ternary_with_mode(op, mode, VeBranchOperand(VeRhs::vrf(vrf), Float(kO1)));
          return std::move(s)
              .vector_stash()
              .vector_fp_binary_with_mode(FpBinaryOp::MulF(FpMulAlu::kMul1), BinaryArgMode::kMode10, VeRhs::vrf(vrf))
              .vector_fp_ternary_with_mode(op, mode, VeBranchOperand(VeRhs(Stash), Float(kO1)));
        }), what);
        ASSERT_EQ(got.size(), x.size()) << what;
        for (size_t i = 0; i < x.size(); ++i) {
          const uint32_t z = FirstNanQuieted({y[i], x[i]}).value_or(Bits(Float(y[i]) * Float(x[i])));
          const uint32_t stream = kind == 2 ? z : x[i];
          const uint32_t o0 = kind == 0 ? kQuietB : kind == 1 ? y[i] : x[i];
          const uint32_t v[3] = {stream, o0, kO1};
          ExpectRule(got[i], {v[args.from[0]], v[args.from[1]], v[args.from[2]]}, kFma, masking,
                     absl::StrCat(what, " at ", i));
        }
      }
    }
  }
}

// Two-group zips: group 0 holds x, group 1 y (interleaved fetch), merged in both orders.
class VectorNanPayloadZipTest : public VectorNanPayloadTest {
 protected:
  std::vector<uint32_t> RunZip(const std::function<Stream(Stream)>& zip, const std::string& what) {
    const auto [x, y] = Pairs();
    std::vector<uint32_t> results[2];
    for (int b = 0; b < 2; ++b) {
      Device device(1);
      std::unique_ptr<Backend> backend = test::MakeBackend(b, 1);
      Context ctx(device, *backend);
      DmTensor lhs = Dm(ctx, m("T, A"), x, 0), rhs = Dm(ctx, m("T, A"), y, 8192);
      Stream paired = ctx.main.begin_interleaved(m("I"), lhs.view(), rhs.view())
                          .fetch(DType::kF32, m("T, I"), m("A"))
                          .collect(m("T, I"), m("A"))
                          .vector_init()
                          .vector_intra_slice_unzip("I", m("1 # 2"), m("T"));
      absl::StatusOr<DmTensor> out = zip(std::move(paired)).vector_final().commit(m("T, A"), 16384);
      EXPECT_TRUE(out.ok()) << what << ": " << out.status();
      if (!out.ok()) return {};
      results[b] = ReadAs(*out, m("T, A"))->ToBits();
    }
    EXPECT_EQ(results[0], results[1]) << what << ": the interpreter and the JIT differ";
    return results[0];
  }
};

TEST_F(VectorNanPayloadZipTest, FloatZipsInBothOrders) {
  const auto [x, y] = Pairs();
  for (const BinaryCase& c : BinaryCases()) {
    for (BinaryArgMode mode : kOrders) {
      const std::string what = absl::StrCat(c.name, " zip", Swapped(mode) ? " Mode10" : "");
      const std::vector<uint32_t> got = RunZip([&](Stream s) {
        return std::move(s).vector_split(m("T, I, A / 4"), m("A % 4")).vector_fp_zip(c.op, mode).vector_concat(m("T"), m("A"));
      }, what);
      ASSERT_EQ(got.size(), x.size()) << what;
      for (size_t i = 0; i < x.size(); ++i) {
        const std::vector<uint32_t> args = Swapped(mode) ? std::vector{y[i], x[i]} : std::vector{x[i], y[i]};
        ExpectRule(got[i], args, c.arithmetic, c.masking, absl::StrCat(what, " at ", i));
      }
    }
    const std::string what = absl::StrCat("clip Add zip");
    for (BinaryArgMode mode : kOrders) {
      const std::vector<uint32_t> got = RunZip([&](Stream s) { return std::move(s).vector_clip_zip(ClipBinaryOpF32::kAdd, mode); }, what);
      ASSERT_EQ(got.size(), x.size());
      for (size_t i = 0; i < x.size(); ++i) {
        ExpectRule(got[i], Swapped(mode) ? std::vector{y[i], x[i]} : std::vector{x[i], y[i]}, kAdd, Masking::kNone,
                   absl::StrCat(what, " at ", i, Swapped(mode) ? " Mode10" : ""));
      }
    }
  }
}

// Per-group binary ops: group 0 against a NaN constant, group 1 against another, then a zip.
TEST_F(VectorNanPayloadZipTest, PerGroupConstantsThenZip) {
  const auto [x, y] = Pairs();
  const std::vector<uint32_t> got = RunZip([&](Stream s) {
    return std::move(s)
        .vector_split(m("T, I, A / 4"), m("A % 4"))
        .vector_fp_binary(FpBinaryOp::AddF(), VeRhs(Float(kQuietB)), VeRhs(Float(0x7fc00077u)))
        .vector_fp_zip(FpBinaryOp::MulF(FpMulAlu::kMul0), BinaryArgMode::kMode10)
        .vector_concat(m("T"), m("A"));
  }, "per-group AddF, MulF zip");
  ASSERT_EQ(got.size(), x.size());
  for (size_t i = 0; i < x.size(); ++i) {
    const uint32_t g0 = FirstNanQuieted({x[i], kQuietB}).value_or(0);
    const uint32_t g1 = FirstNanQuieted({y[i], 0x7fc00077u}).value_or(0);
    ExpectRule(got[i], {g1, g0}, kMul, Masking::kNone, absl::StrCat("at ", i));
  }
}

// The reductions combine acc op x under the same rule, the earlier contribution first (the JIT's
// compiled reductions are compared with these on NaNs of many payloads in vector_reduce_jit_test).
TEST(VectorNanPayloadReduceTest, ReductionsTakeTheEarlierNaN) {
  for (VeReduceOp op : {VeReduceOp::kAdd, VeReduceOp::kMul}) {
    for (uint32_t acc : kValues) {
      for (uint32_t x : kValues) {
        const uint32_t got = interp::ReduceCombine(op, DType::kF32, acc, x);
        ExpectRule(got, {acc, x}, op == VeReduceOp::kAdd ? kAdd : kMul, Masking::kNone,
                   absl::StrCat(VeReduceOpName(op), " ", absl::Hex(acc), " ", absl::Hex(x)));
      }
    }
  }
}

}  // namespace
}  // namespace visa
