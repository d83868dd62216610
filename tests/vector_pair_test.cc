// The Vector Engine's two-group mode: unzip over an interleaved fetch, per-group operands, _zip ops
// (the notes' pair test vectors V64-V67 on both backends) and the mode's rules as negative tests.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <bit>

#include "dsl/mapping_parser.h"
#include "interp/interpreter.h"
#include "jit/jit_backend.h"
#include "runtime/tensor_unit.h"
#include "runtime/transfer.h"
#include "tests/common/dm_input.h"
#include "tests/common/backends.h"

namespace visa {
namespace {

using ::testing::HasSubstr;

class VectorPairTest : public ::testing::Test {
 protected:
  VectorPairTest() : scope_(*Axes::Parse("A = 8, I = 2")) {}
  Mapping m(const std::string& text) { return scope_.m(text); }

  DmTensor Dm(Context& ctx, DType dtype, double value, int64_t address) {
    return test::WriteDm(ctx.device(), *HostTensor::FromValues(dtype, m("A"), std::vector<double>(8, value)), m("A"), address);
  }

  // Group 0 holds g0 and group 1 g1 everywhere; `chain` runs between unzip and vector_final.
  using Chain = std::function<Stream(Stream)>;
  Stream Paired(Context& ctx, DType dtype, double g0, double g1) {
    DmTensor lhs = Dm(ctx, dtype, g0, 0), rhs = Dm(ctx, dtype, g1, 1024);
    return ctx.main.begin_interleaved(m("I"), lhs.view(), rhs.view())
        .fetch(dtype, m("I"), m("A"))
        .collect(m("I"), m("A"))
        .vector_init()
        .vector_intra_slice_unzip("I", m("1 # 2"), m("1"));
  }

  // Element 0 of the merged result on the interpreter and the JIT (which must agree), as bits.
  uint32_t Run(DType dtype, double g0, double g1, const Chain& chain) {
    uint32_t results[2] = {0, 0};
    for (int b = 0; b < 2; ++b) {
      Device device(1);
      std::unique_ptr<Backend> backend = test::MakeBackend(b, 1);
      Context ctx(device, *backend);
      absl::StatusOr<DmTensor> out = chain(Paired(ctx, dtype, g0, g1)).vector_final().commit(m("A"), 4096);
      EXPECT_TRUE(out.ok()) << out.status();
      if (!out.ok()) return 0;
      std::vector<uint32_t> bits = ReadAs(*out, m("A"))->ToBits();
      for (uint32_t v : bits) EXPECT_EQ(v, bits[0]);
      results[b] = bits[0];
    }
    EXPECT_EQ(results[0], results[1]) << "the interpreter and the JIT differ";
    return results[0];
  }

  absl::Status Plan(DType dtype, const Chain& chain) {
    Device device(1);
    interp::Interpreter interp;
    Context ctx(device, interp);
    return chain(Paired(ctx, dtype, 1, 2)).vector_final().commit(m("A"), 4096).status();
  }

  MappingScope scope_;
};

uint32_t F(float f) { return std::bit_cast<uint32_t>(f); }

TEST_F(VectorPairTest, PerGroupChainThenZip) {  // V64
  EXPECT_EQ(Run(DType::kI32, 1, 2, [](Stream s) {
              return std::move(s)
                  .vector_fxp(FxpBinaryOp::kAddFxp, VeRhs(10), VeRhs(20))
                  .vector_fxp(FxpBinaryOp::kMulInt, VeRhs(2), VeRhs(3))
                  .vector_clip_zip(ClipBinaryOpI32::kAddFxp);
            }),
            88u);
}

TEST_F(VectorPairTest, OneSidedPreprocessing) {  // V67
  EXPECT_EQ(Run(DType::kI32, 3, 4, [](Stream s) {
              return std::move(s).vector_fxp(FxpBinaryOp::kMulInt, VeRhs(10), std::nullopt).vector_clip_zip(
                  ClipBinaryOpI32::kAddFxp);
            }),
            34u);
}

TEST_F(VectorPairTest, FloatZipModes) {  // V65, V66
  auto narrow = [this](Stream s) { return std::move(s).vector_split(m("I, A / 4"), m("A % 4")); };
  auto widen = [this](Stream s) { return std::move(s).vector_concat(m("1"), m("A")); };
  EXPECT_EQ(Run(DType::kF32, 1.0, 3.5, [&](Stream s) {
              return widen(narrow(std::move(s)).vector_fp_zip(FpBinaryOp::SubF(), BinaryArgMode::kMode10));
            }),
            F(2.5f));
  EXPECT_EQ(Run(DType::kF32, 1.5, 2.0, [&](Stream s) {
              return widen(narrow(std::move(s))
                               .vector_fp_unary(FpUnaryOp::kExp, false, false)  // no group: nothing runs
                               .vector_fp_binary(FpBinaryOp::MulF(FpMulAlu::kMul0), VeRhs(2.0f), std::nullopt)
                               .vector_fp_binary(FpBinaryOp::AddF(), VeRhs(1.0f), std::nullopt)
                               .vector_fp_zip(FpBinaryOp::DivF()));
            }),
            F(2.0f));  // (1.5 * 2 + 1) / 2
  EXPECT_EQ(Run(DType::kF32, 0.0, 1.0, [&](Stream s) {
              return widen(narrow(std::move(s)).vector_fp_unary(FpUnaryOp::kExp, true, false).vector_fp_zip(
                  FpBinaryOp::MulF(FpMulAlu::kMul1)));
            }),
            F(1.0f));  // exp(0) * 1
}

TEST_F(VectorPairTest, ZipClaimsItsAluAfterTheGroupsUnion) {
  EXPECT_THAT(Plan(DType::kI32, [](Stream s) {
                return std::move(s).vector_fxp(FxpBinaryOp::kMulInt, VeRhs(2), VeRhs(3)).vector_fxp_zip(
                    FxpBinaryOp::kMulInt);
              }).message(),
              HasSubstr("ALU single-use: FxpMul is already in use"));
  // An op on group 1 alone still takes the ALU for the pair.
  EXPECT_THAT(Plan(DType::kI32, [](Stream s) {
                return std::move(s)
                    .vector_clip(ClipBinaryOpI32::kAddFxp, std::nullopt, VeRhs(1))
                    .vector_clip_zip(ClipBinaryOpI32::kAddFxpSat);
              }).message(),
              HasSubstr("ClipAdd is already in use"));
}

TEST_F(VectorPairTest, ModeRules) {
  EXPECT_THAT(Plan(DType::kI32, [](Stream s) { return s; }).message(),
              HasSubstr("Two-Group Mode: merge the two groups with a _zip op"));
  EXPECT_THAT(Plan(DType::kI32, [](Stream s) { return std::move(s).vector_stash(); }).message(),
              HasSubstr("Two-Group Mode: `vector_stash` is unavailable while the two groups are paired"));
  EXPECT_THAT(Plan(DType::kI32, [](Stream s) {
                return std::move(s).vector_clip_zip(ClipBinaryOpI32::kAddFxp).vector_stash();
              }).message(),
              HasSubstr("`vector_stash` is unavailable after a _zip op merged the pair"));
  EXPECT_THAT(Plan(DType::kF32, [this](Stream s) {
                return std::move(s).vector_trim_way4(m("A % 4"));
              }).message(),
              HasSubstr("`vector_trim_way4` is unavailable while the two groups are paired"));
  EXPECT_THAT(Plan(DType::kI32, [](Stream s) {
                return std::move(s).vector_clip_zip(ClipBinaryOpI32::kAddFxp).vector_fxp_zip(FxpBinaryOp::kAddFxp);
              }).message(),
              HasSubstr("this stream is not paired"));
  // Unzip comes directly after vector_init, on a Time axis of size 2.
  Device device(1);
  interp::Interpreter interp;
  Context ctx(device, interp);
  DmTensor lhs = Dm(ctx, DType::kI32, 1, 0), rhs = Dm(ctx, DType::kI32, 2, 1024);
  auto entered = [&] {
    return ctx.main.begin_interleaved(m("I"), lhs.view(), rhs.view())
        .fetch(DType::kI32, m("I"), m("A"))
        .collect(m("I"), m("A"))
        .vector_init();
  };
  EXPECT_THAT(entered()
                  .vector_intra_slice_branch(BranchMode::Unconditional())
                  .vector_intra_slice_unzip("I", m("1 # 2"), m("1"))
                  .status()
                  .message(),
              HasSubstr("only available directly from vector_init()"));
  EXPECT_THAT(entered().vector_intra_slice_unzip("A", m("1 # 2"), m("1")).status().message(),
              HasSubstr("the group axis `A` must be a Time axis"));
  EXPECT_THAT(entered().vector_intra_slice_unzip("I", m("1 # 2"), m("I")).status().message(),
              HasSubstr("each group's Time is the stream's Time [I] without the group axis"));
  EXPECT_THAT(entered()
                  .vector_intra_slice_branch(BranchMode::Unconditional())
                  .vector_fxp(FxpBinaryOp::kAddFxp, VeRhs(1), VeRhs(2))
                  .status()
                  .message(),
              HasSubstr("per-group operands need the pair"));
}

TEST_F(VectorPairTest, PerGroupTernary) {  // V52: group 0 -> (2, 10), group 1 -> (3, 20) on 1.0
  auto narrow = [this](Stream s) { return std::move(s).vector_split(m("I, A / 4"), m("A % 4")); };
  auto widen = [this](Stream s) { return std::move(s).vector_concat(m("1"), m("A")); };
  auto fma = [&](BinaryArgMode zip) {
    return [&, zip](Stream s) {
      return widen(narrow(std::move(s))
                       .vector_fp_ternary(FpTernaryOp::kFmaF, std::pair{VeRhs(2.0f), 10.0f},
                                          std::pair{VeRhs(3.0f), 20.0f})
                       .vector_fp_zip(FpBinaryOp::MulF(FpMulAlu::kMul0), zip));
    };
  };
  EXPECT_EQ(Run(DType::kF32, 1.0, 1.0, fma(BinaryArgMode::kMode00)), F(12.0f * 12.0f));  // group 0: 1 * 2 + 10
  EXPECT_EQ(Run(DType::kF32, 1.0, 1.0, fma(BinaryArgMode::kMode11)), F(23.0f * 23.0f));  // group 1: 1 * 3 + 20
  // One group only: group 1 passes unchanged.
  EXPECT_EQ(Run(DType::kF32, 1.5, 4.0, [&](Stream s) {
              return widen(narrow(std::move(s))
                               .vector_fp_ternary(FpTernaryOp::kFmaF, std::pair{VeRhs(2.0f), 1.0f}, std::nullopt)
                               .vector_fp_zip(FpBinaryOp::DivF()));
            }),
            F(1.0f));  // (1.5 * 2 + 1) / 4 (V66 with a ternary)
  // Per-group FpDiv: group 0 / 2, group 1 unchanged, then (after Widen) group 0 + group 1.
  EXPECT_EQ(Run(DType::kF32, 3.0, 5.0, [&](Stream s) {
              return narrow(std::move(s))
                  .vector_fp_div(FpDivBinaryOp::kDivF, VeRhs(2.0f), std::nullopt)
                  .vector_concat(m("I"), m("A"))  // both groups widen together
                  .vector_clip_zip(ClipBinaryOpF32::kAdd);
            }),
            F(6.5f));
}

TEST_F(VectorPairTest, PerGroupTernaryRules) {
  auto narrow = [this](Stream s) { return std::move(s).vector_split(m("I, A / 4"), m("A % 4")); };
  // The FpFma ALU is the pair's: a zip on it after a per-group FmaF conflicts.
  EXPECT_THAT(Plan(DType::kF32, [&](Stream s) {
                return narrow(std::move(s))
                    .vector_fp_ternary(FpTernaryOp::kFmaF, std::pair{VeRhs(2.0f), 1.0f}, std::nullopt)
                    .vector_fp_zip(FpBinaryOp::AddF());
              }).message(),
              HasSubstr("ALU single-use: FpFma is already in use"));
  // A group operand is a constant or a VRF tensor, not the stash.
  EXPECT_THAT(Plan(DType::kF32, [&](Stream s) {
                return narrow(std::move(s))
                    .vector_fp_ternary(FpTernaryOp::kFmaF, std::pair{VeRhs(Stash), 1.0f}, std::nullopt)
                    .vector_fp_zip(FpBinaryOp::MulF(FpMulAlu::kMul0));
              }).message(),
              HasSubstr("Two-Group Mode: a group operand is a constant or a VRF tensor, not the stash"));
  // Float ops need Way4: the per-group ternary before the split fails on the Way.
  EXPECT_THAT(Plan(DType::kF32, [&](Stream s) {
                return std::move(s).vector_fp_ternary(FpTernaryOp::kFmaF, std::pair{VeRhs(2.0f), 1.0f}, std::nullopt);
              }).message(),
              HasSubstr("Vector Engine Way: `vector_fp_ternary` requires Way4"));
  // Per-group operands need the pair.
  Device device(1);
  interp::Interpreter interp;
  Context ctx(device, interp);
  DmTensor x = Dm(ctx, DType::kF32, 1, 0);
  EXPECT_THAT(ctx.main.begin(x.view())
                  .fetch(DType::kF32, m("1"), m("A"))
                  .collect(m("1"), m("A"))
                  .vector_init()
                  .vector_intra_slice_branch(BranchMode::Unconditional())
                  .vector_split(m("A / 4"), m("A % 4"))
                  .vector_fp_ternary(FpTernaryOp::kFmaF, std::pair{VeRhs(2.0f), 1.0f}, std::nullopt)
                  .status()
                  .message(),
              HasSubstr("per-group operands need the pair"));
}

}  // namespace
}  // namespace visa
