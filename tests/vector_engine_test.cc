// The Vector Engine's intra-slice block through the Context API: every planning rule (stage order,
// Way, data types, the ALU single-use rule with the manual's conflict example, operands and slots,
// the stash) as negative tests naming the rule, and the semantics of branches, guards, argument
// modes, Narrow / Widen, the stash and VRF operands on both backends against the notes' test
// vectors and values derived by hand.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <bit>
#include <cmath>

#include "dsl/mapping_parser.h"
#include "interp/interpreter.h"
#include "jit/jit_backend.h"
#include "runtime/launch.h"
#include "runtime/op_description.h"
#include "runtime/tensor_unit.h"
#include "runtime/transfer.h"
#include "tests/common/dm_input.h"
#include "tests/common/backends.h"

namespace visa {
namespace {

using ::testing::HasSubstr;

class VectorEngineTest : public ::testing::Test {
 protected:
  VectorEngineTest() : scope_(*Axes::Parse("T = 2, A = 8, H = 4")) {}
  Mapping m(const std::string& text) { return scope_.m(text); }

  // A [T, A] tensor on slice 0 of 256 (the others hold the same shape; only slice 0 is checked).
  DmTensor Dm(Context& ctx, DType dtype, const std::vector<double>& values, int64_t address = 0) {
    return test::WriteDm(ctx.device(), *HostTensor::FromValues(dtype, m("T, A"), values), m("T, A"), address);
  }

  // The stream over [T] [A] entering the Vector Engine and the intra-slice block.
  Stream Enter(Context& ctx, const DmTensor& in, BranchMode mode = BranchMode::Unconditional()) {
    return ctx.main.begin(in.view())
        .fetch(in.dtype(), m("T"), m("A"))
        .collect(m("T"), m("A"))
        .vector_init()
        .vector_intra_slice_branch(mode);
  }

  using Chain = std::function<Stream(Stream, Context&)>;

  // Runs `chain` on `values` on the interpreter and the JIT; both results must be identical and
  // are returned as bits (i32 or f32 patterns) in [T, A] order.
  std::vector<uint32_t> Run(DType dtype, const std::vector<double>& values, const Chain& chain) {
    std::vector<uint32_t> results[2];
    for (int b = 0; b < 2; ++b) {
      Device device(1);
      std::unique_ptr<Backend> backend = test::MakeBackend(b, 1);
      Context ctx(device, *backend);
      DmTensor in = Dm(ctx, dtype, values);
      absl::StatusOr<DmTensor> out = chain(Enter(ctx, in), ctx).vector_final().commit(m("T, A"), 4096);
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
    DmTensor in = Dm(ctx, dtype, std::vector<double>(16, 1.0));
    return chain(Enter(ctx, in), ctx).vector_final().commit(m("T, A"), 4096).status();
  }

  MappingScope scope_;
};

std::vector<double> Iota(double from) {
  std::vector<double> v(16);
  for (int i = 0; i < 16; ++i) v[i] = from + i;
  return v;
}
uint32_t F(float f) { return std::bit_cast<uint32_t>(f); }
uint32_t I(int32_t i) { return static_cast<uint32_t>(i); }

// ---- Rules ---------------------------------------------------------------------------------------

TEST_F(VectorEngineTest, TheManualsAluConflictExampleFailsOnFxpAdd) {
  absl::Status status = Plan(DType::kI32, [](Stream s, Context&) {
    return std::move(s)
        .vector_fxp(FxpBinaryOp::kAddFxp, 10)
        .vector_fxp(FxpBinaryOp::kMulInt, 2)
        .vector_fxp(FxpBinaryOp::kSubFxp, 5);
  });
  EXPECT_THAT(status.message(), HasSubstr("ALU single-use: FxpAdd is already in use"));
  EXPECT_THAT(status.message(), HasSubstr("`vector_fxp` SubFxp"));
}

TEST_F(VectorEngineTest, TanhOfSqrtInOnePassFailsOnFpFpu) {
  absl::Status status = Plan(DType::kF32, [this](Stream s, Context&) {
    return std::move(s)
        .vector_split(m("T, A / 4"), m("A % 4"))
        .vector_fp_unary(FpUnaryOp::kSqrt)
        .vector_fp_unary(FpUnaryOp::kTanh);
  });
  EXPECT_THAT(status.message(), HasSubstr("FpFpu is already in use"));
  // DivF in the Float stage is FpFpu too; FpDiv's divider is its own ALU.
  EXPECT_THAT(Plan(DType::kF32, [this](Stream s, Context&) {
                return std::move(s)
                    .vector_split(m("T, A / 4"), m("A % 4"))
                    .vector_fp_unary(FpUnaryOp::kSigmoid)
                    .vector_fp_binary(FpBinaryOp::DivF(), 2.0f);
              }).message(),
              HasSubstr("FpFpu is already in use"));
  EXPECT_TRUE(Plan(DType::kF32, [this](Stream s, Context&) {
                return std::move(s)
                    .vector_split(m("T, A / 4"), m("A % 4"))
                    .vector_fp_binary(FpBinaryOp::DivF(), 2.0f)
                    .vector_fp_div(FpDivBinaryOp::kDivF, 2.0f)
                    .vector_concat(m("T"), m("A"));
              }).ok());
}

TEST_F(VectorEngineTest, StagesRunInTheManualsOrderOnly) {
  absl::Status back = Plan(DType::kI32, [](Stream s, Context&) {
    return std::move(s).vector_clip(ClipBinaryOpI32::kMax, 0).vector_fxp(FxpBinaryOp::kAddFxp, 1);
  });
  EXPECT_THAT(back.message(), HasSubstr("Vector Engine stage order: `vector_fxp` is the Fxp stage, which cannot follow "
                                        "the Clip stage"));
  absl::Status twice = Plan(DType::kI32, [](Stream s, Context&) {
    return std::move(s).vector_fxp_to_fp(31).vector_fp_to_fxp(31).vector_fxp_to_fp(31);
  });
  EXPECT_THAT(twice.message(), HasSubstr("cannot follow the FpToFxp stage"));
  // Every stage is optional: Branch straight to Clip, or to Output.
  EXPECT_TRUE(Plan(DType::kI32, [](Stream s, Context&) { return std::move(s).vector_clip(ClipBinaryOpI32::kMin, 5); }).ok());
  EXPECT_TRUE(Plan(DType::kI32, [](Stream s, Context&) { return s; }).ok());
}

TEST_F(VectorEngineTest, WayRules) {
  absl::Status fp_in_way8 = Plan(DType::kF32, [](Stream s, Context&) {
    return std::move(s).vector_fp_unary(FpUnaryOp::kExp);
  });
  EXPECT_THAT(fp_in_way8.message(), HasSubstr("Vector Engine Way: `vector_fp_unary` requires Way4"));
  absl::Status final_in_way4 = Plan(DType::kF32, [this](Stream s, Context&) {
    return std::move(s).vector_split(m("T, A / 4"), m("A % 4"));
  });
  EXPECT_THAT(final_in_way4.message(), HasSubstr("`vector_final` requires Way8"));
  absl::Status trim_live = Plan(DType::kF32, [this](Stream s, Context&) {
    return std::move(s).vector_trim_way4(m("A % 4"));
  });
  EXPECT_THAT(trim_live.message(), HasSubstr("the back 4 lanes of [A] hold data; use vector_split() instead"));
  absl::Status bad_split = Plan(DType::kF32, [this](Stream s, Context&) {
    return std::move(s).vector_split(m("A / 4, T"), m("A % 4"));
  });
  EXPECT_THAT(bad_split.message(), HasSubstr("Narrow / Widen: `vector_split` Time"));
}

TEST_F(VectorEngineTest, DataTypeRules) {
  EXPECT_THAT(Plan(DType::kF32, [](Stream s, Context&) { return std::move(s).vector_fxp(FxpBinaryOp::kAddFxp, 1); })
                  .message(),
              HasSubstr("Vector Engine data type: `vector_fxp` takes i32 but the stream is f32"));
  EXPECT_THAT(Plan(DType::kF32, [](Stream s, Context&) { return std::move(s).vector_clip(ClipBinaryOpF32::kMax, 1); })
                  .message(),
              HasSubstr("Operands: `vector_clip` Max on f32 takes a f32 constant, got i32 1"));
  // vector_init takes i32 / f32 streams after collect or accumulate only.
  Device device(1);
  interp::Interpreter interp;
  Context ctx(device, interp);
  DmTensor i8 = Dm(ctx, DType::kI8, std::vector<double>(16, 1.0));
  EXPECT_THAT(ctx.main.begin(i8.view()).fetch(DType::kI8, m("T"), m("A")).collect(m("T"), m("A # 32")).vector_init()
                  .status()
                  .message(),
              HasSubstr("`vector_init` takes i32 or f32 data"));
  DmTensor i32 = Dm(ctx, DType::kI32, std::vector<double>(16, 1.0));
  EXPECT_THAT(ctx.main.begin(i32.view()).fetch(DType::kI32, m("T"), m("A")).vector_init().status().message(),
              HasSubstr("`vector_init` follows the Collect Engine or the Contraction Engine's accumulate, not Fetch"));
  // Inside the chain no other engine runs; after vector_final the stream goes on to commit.
  EXPECT_THAT(Enter(ctx, i32).commit(m("T, A"), 4096).status().message(),
              HasSubstr("close the chain with vector_final() first"));
  EXPECT_THAT(ctx.main.begin(i32.view()).fetch(DType::kI32, m("T"), m("A")).collect(m("T"), m("A")).vector_fxp(
                  FxpBinaryOp::kAddFxp, 1).status().message(),
              HasSubstr("`vector_fxp` needs vector_init() first"));
  EXPECT_THAT(ctx.main.begin(i32.view()).fetch(DType::kI32, m("T"), m("A")).collect(m("T"), m("A")).vector_init()
                  .vector_fxp(FxpBinaryOp::kAddFxp, 1).status().message(),
              HasSubstr("call vector_intra_slice_branch(...) after vector_init() first"));
}

TEST_F(VectorEngineTest, OperandSlotRules) {
  EXPECT_THAT(Plan(DType::kI32, [](Stream s, Context&) {
                return std::move(s).vector_fxp(FxpBinaryOp::kAddFxp,
                                               VeBranchOperand().imm(TagGuard::All(), 1).imm(TagGuard::Group(GroupId::kOne), 2));
              }).message(),
              HasSubstr("is unconditional, which claims every element the earlier guards left over"));
  EXPECT_THAT(Plan(DType::kI32, [](Stream s, Context&) {
                return std::move(s).vector_fxp(FxpBinaryOp::kAddFxp,
                                               VeBranchOperand().imm(TagGuard::NotMatches({}), 1));
              }).message(),
              HasSubstr("slot reg0's guard is satisfied by no execution id at all"));
  const TagGuard g0 = TagGuard::Matches({BitReq::kOne}), g1 = TagGuard::Matches({BitReq::kZero, BitReq::kOne});
  const TagGuard g2 = TagGuard::Matches({BitReq::kZero, BitReq::kZero, BitReq::kOne});
  EXPECT_THAT(Plan(DType::kI32, [&](Stream s, Context&) {
                return std::move(s).vector_fxp(FxpBinaryOp::kAddFxp,
                                               VeBranchOperand().imm(g0, 1).imm(g1, 2).imm(g2, 3).imm(TagGuard::All(), 4));
              }).message(),
              HasSubstr("no immediate register left"));
  EXPECT_THAT(Plan(DType::kI32, [](Stream s, Context&) {
                return std::move(s).vector_fxp(FxpBinaryOp::kAddFxp, VeBranchOperand());
              }).message(),
              HasSubstr("this operand fills no slot"));
  // ArithRightShiftRound is planned like the other Fxp ops (tests/vector_round_mask_ops_test.cc).
  EXPECT_TRUE(Plan(DType::kI32, [](Stream s, Context&) {
                return std::move(s).vector_fxp(FxpBinaryOp::kArithRightShiftRound, 1);
              }).ok());
  EXPECT_EQ(Plan(DType::kI32, [](Stream s, Context&) { return s; }).code(), absl::StatusCode::kOk);
}

TEST_F(VectorEngineTest, StashRules) {
  EXPECT_THAT(Plan(DType::kI32, [](Stream s, Context&) { return std::move(s).vector_clip(ClipBinaryOpI32::kMax, Stash); })
                  .message(),
              HasSubstr("Stash: `vector_clip` Max reads the stash, but no vector_stash() wrote it"));
  EXPECT_THAT(Plan(DType::kI32, [](Stream s, Context&) { return std::move(s).vector_stash().vector_stash(); }).message(),
              HasSubstr("the stash is a single slot per pass"));
  EXPECT_THAT(Plan(DType::kI32, [](Stream s, Context&) {
                return std::move(s).vector_stash().vector_fxp(FxpBinaryOp::kAddFxp, Stash).vector_clip(
                    ClipBinaryOpI32::kMax, Stash);
              }).message(),
              HasSubstr("reads the stash a second time"));
  EXPECT_THAT(Plan(DType::kI32, [](Stream s, Context&) {
                return std::move(s).vector_fxp_to_fp(31).vector_stash();
              }).message(),
              HasSubstr("not after the FxpToFp stage"));
  EXPECT_THAT(Plan(DType::kI32, [](Stream s, Context&) {
                return std::move(s).vector_stash().vector_fxp_to_fp(31).vector_clip(ClipBinaryOpF32::kMax, Stash);
              }).message(),
              HasSubstr("cannot read the stash written as i32 in Way8"));
  EXPECT_THAT(Plan(DType::kF32, [this](Stream s, Context&) {
                return std::move(s).vector_stash().vector_split(m("T, A / 4"), m("A % 4")).vector_fp_binary(
                    FpBinaryOp::AddF(), Stash).vector_concat(m("T"), m("A"));
              }).message(),
              HasSubstr("in Way4 cannot read the stash written as f32 in Way8"));
}

// ValidCount needs the axis its Valid Count Generator counts (tests/vector_branch_modes_test.cc).
TEST_F(VectorEngineTest, ValidCountBranchNamesItsAxis) {
  absl::Status status = [&] {
    Device device(1);
    interp::Interpreter interp;
    Context ctx(device, interp);
    DmTensor in = Dm(ctx, DType::kI32, std::vector<double>(16, 1.0));
    return Enter(ctx, in, BranchMode::ValidCount()).vector_final().commit(m("T, A"), 4096).status();
  }();
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(status.message(), HasSubstr("Branch: BranchMode::ValidCount names the padded axis"));
}

TEST_F(VectorEngineTest, ExplainShowsTheConfiguration) {
  Device device(1);
  interp::Interpreter interp;
  Context ctx(device, interp);
  DmTensor in = Dm(ctx, DType::kI32, Iota(0));
  ASSERT_TRUE(Enter(ctx, in).vector_fxp(FxpBinaryOp::kAddFxp, 100).vector_final().commit(m("T, A"), 4096).ok());
  const std::string text = ctx.program().ToText();
  EXPECT_THAT(text, HasSubstr("vector i32 branch Unconditional"));
  EXPECT_THAT(text, HasSubstr("Fxp: vector_fxp AddFxp Mode01 [100] on FxpAdd"));
}

TEST_F(VectorEngineTest, CyclesFollowTheManualsPerformanceSection) {
  // Way8 passes one flit per cycle, a pass with a Way4 region half a flit; one cycle per ALU.
  Device device(1);
  interp::Interpreter interp;
  Context ctx(device, interp);
  DmTensor in = Dm(ctx, DType::kF32, Iota(0));
  ASSERT_TRUE(Enter(ctx, in)
                  .vector_split(m("T, A / 4"), m("A % 4"))
                  .vector_fp_unary(FpUnaryOp::kSqrt)
                  .vector_fp_unary(FpUnaryOp::kExp)
                  .vector_concat(m("T"), m("A"))
                  .vector_final()
                  .commit(m("T, A"), 4096)
                  .ok());
  OpDescription d = Describe(ctx.program().ops.back());
  std::vector<std::optional<int64_t>> vector_terms;
  for (const CycleTerm& term : d.terms) {
    if (term.stage == "vector") vector_terms.push_back(term.cycles);
  }
  ASSERT_EQ(vector_terms.size(), 2u);
  EXPECT_EQ(vector_terms[0], 4);  // Time 2 x 1 flit x 2 (Way4 region)
  EXPECT_EQ(vector_terms[1], 2);  // sqrt on FpFpu, exp on FpExp: "exp(sqrt(x)) adds 2 cycles"
}

// ---- Semantics on both backends ----------------------------------------------------------------

TEST_F(VectorEngineTest, ArgumentModes) {  // V5, V20, V25
  EXPECT_EQ(Run(DType::kI32, std::vector<double>(16, 10),
                [](Stream s, Context&) {
                  return std::move(s).vector_fxp_with_mode(FxpBinaryOp::kSubFxp, BinaryArgMode::kMode10, 7);
                })[0],
            I(-3));
  EXPECT_EQ(Run(DType::kI32, Iota(0),
                [](Stream s, Context&) {
                  return std::move(s).vector_logic_with_mode(LogicBinaryOpI32::kBitXor, BinaryArgMode::kMode11, 0xff);
                })[5],
            0u);
  EXPECT_EQ(Run(DType::kI32, Iota(0),
                [](Stream s, Context&) {
                  return std::move(s).vector_clip_with_mode(ClipBinaryOpI32::kAddFxp, BinaryArgMode::kMode11, 3);
                })[9],
            6u);
  EXPECT_EQ(Run(DType::kI32, Iota(3),
                [](Stream s, Context&) {
                  return std::move(s).vector_fxp_with_mode(FxpBinaryOp::kMulInt, BinaryArgMode::kMode00, 0);
                })[2],
            25u);
}

TEST_F(VectorEngineTest, TernaryModesAndFpDiv) {  // V40, V42
  auto fp = [this](std::function<Stream(Stream)> ops) {
    return [this, ops](Stream s, Context&) {
      return ops(std::move(s).vector_split(m("T, A / 4"), m("A % 4"))).vector_concat(m("T"), m("A"));
    };
  };
  EXPECT_EQ(Run(DType::kF32, std::vector<double>(16, 1.5),
                fp([](Stream s) { return std::move(s).vector_fp_ternary(FpTernaryOp::kFmaF, VeBranchOperand(2.0f, 3.0f)); }))[0],
            F(6.0f));
  EXPECT_EQ(Run(DType::kF32, std::vector<double>(16, 5.0), fp([](Stream s) {
              return std::move(s).vector_fp_ternary_with_mode(FpTernaryOp::kFmaF, TernaryArgMode::kMode120,
                                                              VeBranchOperand(2.0f, 1.0f));
            }))[3],
            F(7.0f));
  EXPECT_EQ(Run(DType::kF32, std::vector<double>(16, 0.5), fp([](Stream s) {
              return std::move(s).vector_fp_binary_with_mode(FpBinaryOp::SubF(), BinaryArgMode::kMode10, 2.0f);
            }))[1],
            F(1.5f));
  std::vector<double> divisors(16, 0.5);
  divisors[1] = 0.0;
  divisors[2] = -0.0;
  std::vector<uint32_t> q = Run(DType::kF32, divisors, fp([](Stream s) {
    return std::move(s).vector_fp_div_with_mode(FpDivBinaryOp::kDivF, BinaryArgMode::kMode10, 2.0f);
  }));
  EXPECT_EQ(q[0], F(4.0f));
  EXPECT_EQ(q[1], F(INFINITY));
  EXPECT_EQ(q[2], F(-INFINITY));
}

TEST_F(VectorEngineTest, ReinterpretChainAbsThenExponentStep) {  // V21, V22
  std::vector<double> x = {0.0, -0.0, -1.0, 1.0, -0.5, 3.25, -80.0, 120.0, 1.17549435e-38, 0, 0, 0, 0, 0, 0, 0};
  std::vector<uint32_t> got = Run(DType::kF32, x, [](Stream s, Context&) {
    return std::move(s)
        .vector_reinterpret(DType::kI32)
        .vector_logic(LogicBinaryOpI32::kBitAnd, 0x7fffffff)
        .vector_fxp(FxpBinaryOp::kAddFxp, 1 << 23)
        .vector_reinterpret(DType::kF32)
        .vector_clip(ClipBinaryOpF32::kMin, 100.0f);
  });
  const float min_normal = 1.17549435e-38f;
  const std::vector<float> want = {min_normal, min_normal, 2.0f, 2.0f, 1.0f, 6.5f, 100.0f, 100.0f, 2 * min_normal};
  for (size_t i = 0; i < want.size(); ++i) EXPECT_EQ(got[i], F(want[i])) << i;
}

TEST_F(VectorEngineTest, FullI32Pipeline) {  // V38
  std::vector<double> x(16, 0);
  x[1] = 1;
  x[2] = -100;
  x[3] = 300;
  std::vector<uint32_t> got = Run(DType::kI32, x, [this](Stream s, Context&) {
    return std::move(s)
        .vector_fxp(FxpBinaryOp::kAddFxp, 100)
        .vector_fxp_to_fp(31)
        .vector_split(m("T, A / 4"), m("A % 4"))
        .vector_fp_binary(FpBinaryOp::MulF(FpMulAlu::kMul0), 2.5f)
        .vector_concat(m("T"), m("A"))
        .vector_fp_to_fxp(31)
        .vector_clip(ClipBinaryOpI32::kMax, 0)
        .vector_clip(ClipBinaryOpI32::kMin, 1000);
  });
  EXPECT_EQ(got[0], 250u);
  EXPECT_EQ(got[1], 253u);
  EXPECT_EQ(got[2], 0u);
  EXPECT_EQ(got[3], 1000u);
}

TEST_F(VectorEngineTest, StashReadsAcrossNarrowAndWiden) {  // V44, V45
  std::vector<double> x(16, 2.0);
  x[0] = -3.0;
  std::vector<uint32_t> got = Run(DType::kF32, x, [this](Stream s, Context&) {
    return std::move(s)
        .vector_stash()
        .vector_split(m("T, A / 4"), m("A % 4"))
        .vector_fp_binary(FpBinaryOp::MulF(FpMulAlu::kMul0), 2.0f)
        .vector_concat(m("T"), m("A"))
        .vector_clip(ClipBinaryOpF32::kMax, Stash);
  });
  EXPECT_EQ(got[0], F(-3.0f));
  EXPECT_EQ(got[1], F(4.0f));
  x[0] = -1.0;
  x[1] = 1.5;
  got = Run(DType::kF32, x, [this](Stream s, Context&) {
    return std::move(s)
        .vector_split(m("T, A / 4"), m("A % 4"))
        .vector_fp_binary(FpBinaryOp::MulF(FpMulAlu::kMul0), 2.0f)
        .vector_concat(m("T"), m("A"))
        .vector_clip(ClipBinaryOpF32::kMax, 0.0f)
        .vector_stash()
        .vector_clip(ClipBinaryOpF32::kAdd, Stash);
  });
  EXPECT_EQ(got[0], F(0.0f));
  EXPECT_EQ(got[1], F(6.0f));
}

TEST_F(VectorEngineTest, ComparisonIdsAndFirstMatchSlots) {  // V54
  // tag bits: 0 x == 0, 1 x == 5, 2 x < 10, 3 x > 1000; stash x; BitOr per bit; Clip Min with the
  // stash where bit 1 is set.
  std::vector<double> x = {0, 5, 7, 1001, 100, -3, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};
  const BranchMode mode = BranchMode::Comparison(
      {InputCmp::Equal(0), InputCmp::Equal(5), InputCmp::Less(10), InputCmp::Greater(1000)});
  std::vector<uint32_t> results[2];
  for (int b = 0; b < 2; ++b) {
    Device device(1);
    std::unique_ptr<Backend> backend = test::MakeBackend(b, 1);
    Context ctx(device, *backend);
    DmTensor in = Dm(ctx, DType::kI32, x);
    auto bit = [](int i) {
      std::array<BitReq, 4> bits{};
      bits[i] = BitReq::kOne;
      return TagGuard::Matches(bits);
    };
    absl::StatusOr<DmTensor> out =
        Enter(ctx, in, mode)
            .vector_stash()
            .vector_logic(LogicBinaryOpI32::kBitOr,
                          VeBranchOperand().imm(bit(0), 0x100).imm(bit(2), 0x200).imm(bit(3), 0x400))
            .vector_clip(ClipBinaryOpI32::kMin, VeBranchOperand().rf(bit(1), Stash))
            .vector_final()
            .commit(m("T, A"), 4096);
    ASSERT_TRUE(out.ok()) << out.status();
    results[b] = ReadAs(*out, m("T, A"))->ToBits();
  }
  EXPECT_EQ(results[0], results[1]);
  const std::vector<int32_t> want = {256, 5, 519, 2025, 100, -3};
  for (size_t i = 0; i < want.size(); ++i) EXPECT_EQ(results[0][i], I(want[i])) << "x = " << x[i];
}

TEST_F(VectorEngineTest, FloatComparisonsAndGuardedUnary) {  // V46, V51
  const BranchMode mode = BranchMode::Comparison(
      {InputCmp::Equal(0.0f), InputCmp::Greater(0.0f), InputCmp::Less(0.0f), InputCmp::True()});
  std::vector<double> x = {0.0, 1.5, -2.5, -0.0, 4.0, -1.0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};
  // Unconditional ids are all 0: a unary op guarded on bit 1 admits no element, every x passes.
  std::vector<uint32_t> got = Run(DType::kF32, x, [this](Stream s, Context&) {
    return std::move(s)
        .vector_split(m("T, A / 4"), m("A % 4"))
        .vector_fp_unary(TagGuard::Matches({BitReq::kIgnore, BitReq::kOne}), FpUnaryOp::kExp)
        .vector_concat(m("T"), m("A"));
  });
  for (int i = 0; i < 6; ++i) EXPECT_EQ(got[i], F(static_cast<float>(x[i]))) << i;
  // Comparison ids: only the positive elements (bit 1) take the slot and are scaled by 10.
  got = [&] {
    std::vector<uint32_t> r[2];
    test::OnBothBackends([&](int b, Context& ctx) {
      DmTensor in = Dm(ctx, DType::kF32, x);
      absl::StatusOr<DmTensor> out =
          Enter(ctx, in, mode)
              .vector_split(m("T, A / 4"), m("A % 4"))
              .vector_fp_binary(FpBinaryOp::MulF(FpMulAlu::kMul0),
                                VeBranchOperand().imm(TagGuard::Matches({BitReq::kIgnore, BitReq::kOne}), 10.0f))
              .vector_concat(m("T"), m("A"))
              .vector_final()
              .commit(m("T, A"), 4096);
      EXPECT_TRUE(out.ok()) << out.status();
      r[b] = ReadAs(*out, m("T, A"))->ToBits();
    }, 1);
    EXPECT_EQ(r[0], r[1]);
    return r[0];
  }();
  EXPECT_EQ(got[0], F(0.0f));
  EXPECT_EQ(got[1], F(15.0f));
  EXPECT_EQ(got[2], F(-2.5f));
  EXPECT_EQ(got[3], F(-0.0f));
  EXPECT_EQ(got[4], F(40.0f));
}

TEST_F(VectorEngineTest, AxisToggleSelectsGroupOperands) {  // V49, group operands
  std::vector<double> x(16, 1.0);
  std::vector<uint32_t> results[2];
  test::OnBothBackends([&](int b, Context& ctx) {
    DmTensor in = Dm(ctx, DType::kI32, x);
    absl::StatusOr<DmTensor> out =
        Enter(ctx, in, BranchMode::AxisToggle("A"))
            .vector_fxp(FxpBinaryOp::kAddFxp, VeBranchOperand().imm(TagGuard::Group(GroupId::kZero), 10).imm(
                                                  TagGuard::Group(GroupId::kOne), 20))
            .vector_final()
            .commit(m("T, A"), 4096);
    ASSERT_TRUE(out.ok()) << out.status();
    results[b] = ReadAs(*out, m("T, A"))->ToBits();
  }, 1);
  EXPECT_EQ(results[0], results[1]);
  for (int i = 0; i < 16; ++i) EXPECT_EQ(results[0][i], (i % 8) % 2 == 0 ? 11u : 21u) << i;
}

TEST_F(VectorEngineTest, VrfOperandBroadcastsOverTime) {  // the manual's VRF Input example
  std::vector<uint32_t> results[2];
  test::OnBothBackends([&](int b, Context& ctx) {
    DmTensor in = Dm(ctx, DType::kI32, Iota(0));
    HostTensor bias_host = *HostTensor::FromValues(DType::kI32, m("A"), {100, 200, 300, 400, 500, 600, 700, 800});
    Placement placement = *Place(ctx.device(), DType::kI32, Tier::kDm, {m("1"), m("1 # 2"), m("1 # 256"), m("A")}, 8192);
    DmTensor bias(*WriteAs(bias_host, ctx.device(), placement));
    absl::StatusOr<VrfTensor> vrf =
        ctx.sub.begin(bias.view()).fetch(DType::kI32, m("1"), m("A")).collect(m("1"), m("A")).to_vrf(m("A"), 0);
    ASSERT_TRUE(vrf.ok()) << vrf.status();
    absl::StatusOr<DmTensor> out =
        Enter(ctx, in).vector_fxp(FxpBinaryOp::kAddFxp, *vrf).vector_final().commit(m("T, A"), 4096);
    ASSERT_TRUE(out.ok()) << out.status();
    results[b] = ReadAs(*out, m("T, A"))->ToBits();
    EXPECT_THAT(ctx.program().ToText(), HasSubstr("vrf operand"));
  }, 1);
  EXPECT_EQ(results[0], results[1]);
  for (int i = 0; i < 16; ++i) EXPECT_EQ(results[0][i], static_cast<uint32_t>(i + 100 * (i % 8 + 1))) << i;
}

TEST_F(VectorEngineTest, TracedProgramWithVrfOperandReplays) {
  // Trace records the VRF operand as a tensor of the op; Launch resolves it and replays both ops.
  Device device(1);
  interp::Interpreter interp;
  Context setup(device, interp);
  DmTensor in = Dm(setup, DType::kI32, Iota(0));
  HostTensor bias_host = *HostTensor::FromValues(DType::kI32, m("A"), {1, 2, 3, 4, 5, 6, 7, 8});
  DmTensor bias(*WriteAs(bias_host, device,
                         *Place(device, DType::kI32, Tier::kDm, {m("1"), m("1 # 2"), m("1 # 256"), m("A")}, 8192)));
  KernelOf kernel = [this](Context& ctx, const std::vector<DeviceTensor>& inputs)
      -> absl::StatusOr<std::vector<DeviceTensor>> {
    const DmTensor x(inputs[0]), b(inputs[1]);
    absl::StatusOr<VrfTensor> vrf =
        ctx.sub.begin(b.view()).fetch(DType::kI32, m("1"), m("A")).collect(m("1"), m("A")).to_vrf(m("A"), 0);
    if (!vrf.ok()) return vrf.status();
    absl::StatusOr<DmTensor> out = Enter(ctx, x).vector_clip(ClipBinaryOpI32::kMax, *vrf).vector_final().commit(
        m("T, A"), 4096);
    if (!out.ok()) return out.status();
    return std::vector<DeviceTensor>{*out};
  };
  absl::StatusOr<Program> program = Trace(kernel, {in, bias});
  ASSERT_TRUE(program.ok()) << program.status();
  for (int b = 0; b < 2; ++b) {
    std::unique_ptr<Backend> backend = test::MakeBackend(b, 1);
    absl::StatusOr<std::vector<DeviceTensor>> outputs = Launch(*program, device, *backend, {in, bias});
    ASSERT_TRUE(outputs.ok()) << outputs.status();
    std::vector<uint32_t> got = ReadAs((*outputs)[0], m("T, A"))->ToBits();
    for (int i = 0; i < 16; ++i) EXPECT_EQ(got[i], static_cast<uint32_t>(std::max(i, i % 8 + 1))) << i;
  }
}

TEST_F(VectorEngineTest, VectorFinalExitsToCastTransposeOrCommit) {
  std::vector<double> x = Iota(-8);
  test::OnBothBackends([&](int, Context& ctx) {
    DmTensor in = Dm(ctx, DType::kF32, x);
    // ReLU, then the Cast Engine narrows to bf16 (exact for these integers).
    absl::StatusOr<DmTensor> cast = Enter(ctx, in)
                                        .vector_clip(ClipBinaryOpF32::kMax, 0.0f)
                                        .vector_final()
                                        .cast(DType::kBF16, m("A # 16"))
                                        .commit(m("T, A"), 4096);
    ASSERT_TRUE(cast.ok()) << cast.status();
    std::vector<double> got = ReadAs(*cast, m("T, A"))->ToValues();
    for (int i = 0; i < 16; ++i) EXPECT_EQ(got[i], std::max(x[i], 0.0)) << i;
    // The Transpose Engine after the Vector Engine: the same values by index.
    absl::StatusOr<DmTensor> transposed = Enter(ctx, in)
                                              .vector_clip(ClipBinaryOpF32::kMax, 0.0f)
                                              .vector_final()
                                              .transpose(m("A"), m("T # 8"))
                                              .commit(m("A, T # 8"), 8192);
    ASSERT_TRUE(transposed.ok()) << transposed.status();
    got = ReadAs(*transposed, m("T, A"))->ToValues();
    for (int i = 0; i < 16; ++i) EXPECT_EQ(got[i], std::max(x[i], 0.0)) << i;
  }, 1);
  Device device(1);
  interp::Interpreter interp;
  Context ctx(device, interp);
  DmTensor in = Dm(ctx, DType::kF32, x);
  EXPECT_THAT(Enter(ctx, in).vector_final().to_vrf(m("T, A"), 0).status().message(),
              HasSubstr("`to_vrf` is not allowed after Reduce"));
}

TEST_F(VectorEngineTest, VrfOperandMustLiveOnTheStreamsSlices) {
  Device device(1);
  interp::Interpreter interp;
  Context ctx(device, interp);
  DmTensor in = Dm(ctx, DType::kI32, Iota(0));
  HostTensor h = *HostTensor::FromValues(DType::kI32, m("H, A"), std::vector<double>(32, 1.0));
  Placement placement = *Place(device, DType::kI32, Tier::kDm, {m("1"), m("1 # 2"), m("H # 256"), m("A")}, 8192);
  DmTensor other(*WriteAs(h, device, placement));
  absl::StatusOr<VrfTensor> vrf =
      ctx.sub.begin(other.view()).fetch(DType::kI32, m("1"), m("A")).collect(m("1"), m("A")).to_vrf(m("A"), 0);
  ASSERT_TRUE(vrf.ok()) << vrf.status();
  absl::Status status = Enter(ctx, in).vector_fxp(FxpBinaryOp::kAddFxp, *vrf).vector_final().commit(m("T, A"), 4096).status();
  EXPECT_THAT(status.message(), HasSubstr("VRF Input: each slice reads its own VRF, so the VRF tensor's Slice must equal"));
}

}  // namespace
}  // namespace visa
