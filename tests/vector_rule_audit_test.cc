// The rules of the Vector Engine chapter's elementwise part (manual, "Vector Engine": Branch,
// Stages, Stage Details, Operands, VRF Input, Argument Modes, Two-Group Mode, Constraints) that
// tests/vector_engine_test.cc, vector_pair_test.cc and vector_branch_modes_test.cc leave out, each
// as a negative test checking that the message names the rule and the operation.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "dsl/mapping_parser.h"
#include "interp/interpreter.h"
#include "runtime/tensor_unit.h"
#include "runtime/transfer.h"
#include "tests/common/dm_input.h"

namespace visa {
namespace {

using ::testing::HasSubstr;

class VectorRuleAuditTest : public ::testing::Test {
 protected:
  VectorRuleAuditTest() : scope_(*Axes::Parse("T = 2, A = 8, H = 4, I = 2")), ctx_(device_, interp_) {}
  Mapping m(const std::string& text) { return scope_.m(text); }

  DmTensor Dm(DType dtype, const std::string& element, int64_t address, Device* device = nullptr) {
    Device& d = device ? *device : device_;
    const int64_t n = m(element).size();
    return test::WriteDm(d, *HostTensor::FromValues(dtype, m(element), std::vector<double>(static_cast<size_t>(n), 1.0)), m(element), address);
  }
  VrfTensor Vrf(DType dtype, const std::string& time, const std::string& element, int64_t address) {
    DmTensor source = Dm(dtype, element, 16384);
    return *ctx_.sub.begin(source.view()).fetch(dtype, m(time), m("A")).collect(m(time), m("A")).to_vrf(m(element), address);
  }
  // [T] [A] entered, with `mode`.
  Stream Entered(DType dtype, BranchMode mode = BranchMode::Unconditional()) {
    return Init(dtype).vector_intra_slice_branch(mode);
  }
  Stream Init(DType dtype) {
    in_ = Dm(dtype, "T, A", 0);
    return ctx_.main.begin(in_->view()).fetch(dtype, m("T"), m("A")).collect(m("T"), m("A")).vector_init();
  }
  std::string Message(Stream s) { return std::move(s).vector_final().commit(m("T, A"), 4096).status().ToString(); }
  StreamShape Shape(const std::string& time, const std::string& packet) {
    return StreamShape{DType::kI32, m("1"), m("1 # 2"), m("1 # 256"), m(time), m(packet), std::nullopt};
  }

  MappingScope scope_;
  Device device_{1};
  interp::Interpreter interp_;
  Context ctx_;
  std::optional<DmTensor> in_;
};

// ---- Entry and Branch ---------------------------------------------------------------------------

TEST_F(VectorRuleAuditTest, EntryRules) {
  EXPECT_THAT(Message(Init(DType::kI32).vector_init()), HasSubstr("`vector_init` enters the Vector Engine once"));
  EXPECT_THAT(Message(Entered(DType::kI32).vector_intra_slice_branch(BranchMode::Unconditional())),
              HasSubstr("`vector_intra_slice_branch` enters the intra-slice block once"));
  DmTensor x = Dm(DType::kI32, "T, A", 0);
  EXPECT_THAT(ctx_.main.begin(x.view()).fetch(DType::kI32, m("T"), m("A")).collect(m("T"), m("A")).vector_final()
                  .status()
                  .message(),
              HasSubstr("`vector_final` closes a chain that vector_init() opened"));
  // Way8 entry: 8 elements a packet (a Way4 packet cannot enter; only the planner sees one).
  absl::StatusOr<VectorChain> chain = VectorChain::Init(Shape("T, A / 4", "A % 4"), StreamPosition::kCollect);
  ASSERT_TRUE(chain.ok());
  EXPECT_THAT(chain->Branch(BranchMode::Unconditional()).message(),
              HasSubstr("`vector_intra_slice_branch` needs Way8 packets of 8 elements"));
  chain = VectorChain::Init(Shape("I, A / 4", "A % 4"), StreamPosition::kCollect);
  EXPECT_THAT(chain->Unzip("I", m("A / 4")).message(),
              HasSubstr("Two-Group Mode: `vector_intra_slice_unzip` needs Way8 packets of 8 elements"));
}

TEST_F(VectorRuleAuditTest, BranchModeRules) {
  EXPECT_THAT(Message(Entered(DType::kI32, BranchMode::AxisToggle("H"))),
              HasSubstr("Branch: AxisToggle toggles on axis `H`, which the stream"));
  EXPECT_THAT(Message(Entered(DType::kI32, BranchMode::Comparison({InputCmp::Less(0.5f), InputCmp::True(),
                                                                    InputCmp::False(), InputCmp::False()}))),
              HasSubstr("Branch: the comparison Less(0.5) has a f32 value, the stream is i32"));
}

// ---- Operands -----------------------------------------------------------------------------------

TEST_F(VectorRuleAuditTest, SlotRules) {
  const TagGuard bit0 = TagGuard::Matches({BitReq::kOne});
  VrfTensor vrf = Vrf(DType::kI32, "T", "T, A", 0);
  EXPECT_THAT(Message(Entered(DType::kI32).vector_fxp(FxpBinaryOp::kAddFxp,
                                                      VeBranchOperand().rf(bit0, VeRhs::vrf(vrf)).imm(TagGuard::All(), 1))),
              HasSubstr("Operands: the rf slot is filled, and it is the last slot: no slot may follow it"));
  EXPECT_THAT(Message(Entered(DType::kI32).vector_fxp(
                  FxpBinaryOp::kAddFxp, VeBranchOperand().rf(bit0, VeRhs::vrf(vrf)).rf(TagGuard::All(), VeRhs::vrf(vrf)))),
              HasSubstr("Operands: slot rf is already filled"));
  EXPECT_THAT(Message(Entered(DType::kI32).vector_fxp(FxpBinaryOp::kAddFxp, VeBranchOperand().rf(TagGuard::All(), 3))),
              HasSubstr("Operands: the rf slot reads a VRF tensor or the stash, not the constant 3"));
  EXPECT_THAT(Message(Entered(DType::kI32).vector_stash().vector_fxp(FxpBinaryOp::kAddFxp,
                                                                     VeBranchOperand().imm(TagGuard::All(), Stash))),
              HasSubstr("Operands: an immediate slot holds a constant, not Stash"));
  EXPECT_THAT(Message(Entered(DType::kF32)
                          .vector_split(m("T, A / 4"), m("A % 4"))
                          .vector_fp_unary(TagGuard::NotMatches({}), FpUnaryOp::kExp)
                          .vector_concat(m("T"), m("A"))),
              HasSubstr("Operands: `vector_fp_unary` Exp: this op's guard is satisfied by no execution id at all"));
  // A ternary op in a mode that reads operand1 needs it in every slot.
  EXPECT_THAT(Message(Entered(DType::kF32)
                          .vector_split(m("T, A / 4"), m("A % 4"))
                          .vector_fp_ternary_with_mode(FpTernaryOp::kFmaF, TernaryArgMode::kMode012,
                                                       VeBranchOperand(VeRhs(2.0f)))
                          .vector_concat(m("T"), m("A"))),
              HasSubstr("Operands: `vector_fp_ternary` FmaF in Mode012 reads operand1, which slot reg0 does not give"));
}

TEST_F(VectorRuleAuditTest, VrfInputRules) {
  VrfTensor f32 = Vrf(DType::kF32, "T", "T, A", 0);
  EXPECT_THAT(Message(Entered(DType::kI32).vector_fxp(FxpBinaryOp::kAddFxp, f32)),
              HasSubstr("VRF Input: `vector_fxp` AddFxp on i32 reads a f32 VRF tensor"));
  // The VRF tensor's Element holds only axes of the stream.
  VrfTensor h = Vrf(DType::kI32, "H", "H, A", 2048);
  EXPECT_THAT(Message(Entered(DType::kI32).vector_fxp(FxpBinaryOp::kAddFxp, h)),
              HasSubstr("VRF Input: the VRF tensor"));
  EXPECT_THAT(Message(Entered(DType::kI32).vector_fxp(FxpBinaryOp::kAddFxp, h)), HasSubstr("holds axis `H`"));
  // A VRF tensor of another device.
  Device other(1);
  interp::Interpreter interp;
  Context other_ctx(other, interp);
  DmTensor source = Dm(DType::kI32, "T, A", 16384, &other);
  VrfTensor foreign =
      *other_ctx.sub.begin(source.view()).fetch(DType::kI32, m("T"), m("A")).collect(m("T"), m("A")).to_vrf(m("T, A"), 0);
  EXPECT_THAT(Message(Entered(DType::kI32).vector_fxp(FxpBinaryOp::kAddFxp, foreign)),
              HasSubstr("VRF Input: the VRF operand is on another device"));
}

// ---- Stages -------------------------------------------------------------------------------------

TEST_F(VectorRuleAuditTest, OneWay4RegionAndSingleStages) {
  EXPECT_THAT(Message(Entered(DType::kF32)
                          .vector_split(m("T, A / 4"), m("A % 4"))
                          .vector_concat(m("T"), m("A"))
                          .vector_split(m("T, A / 4"), m("A % 4"))),
              HasSubstr("`vector_split` is the Narrow stage, which cannot follow the Widen stage"));
  EXPECT_THAT(Message(Entered(DType::kF32)
                          .vector_split(m("T, A / 4"), m("A % 4"))
                          .vector_fp_div(FpDivBinaryOp::kDivF, 2.0f)
                          .vector_fp_div(FpDivBinaryOp::kDivF, 2.0f)
                          .vector_concat(m("T"), m("A"))),
              HasSubstr("`vector_fp_div` is the FpDiv stage, which cannot follow the FpDiv stage"));
  EXPECT_THAT(Message(Entered(DType::kI32).vector_split(m("T, A / 4"), m("A % 4")).vector_fp_unary(FpUnaryOp::kExp)
                          .vector_concat(m("T"), m("A"))),
              HasSubstr("Vector Engine data type: `vector_fp_unary` takes f32 but the stream is i32"));
  EXPECT_THAT(Message(Entered(DType::kF32).vector_fp_to_fxp(3).vector_fp_to_fxp(3)),
              HasSubstr("`vector_fp_to_fxp` is the FpToFxp stage, which cannot follow the FpToFxp stage"));
}

TEST_F(VectorRuleAuditTest, ConversionAndReinterpretRules) {
  EXPECT_THAT(Message(Entered(DType::kI32).vector_fxp_to_fp(32)), HasSubstr("FxpToFp: int_width is 0 to 31"));
  EXPECT_THAT(Message(Entered(DType::kF32).vector_fp_to_fxp(-1)), HasSubstr("FpToFxp: int_width is 0 to 31"));
  EXPECT_THAT(Message(Entered(DType::kI32).vector_reinterpret(DType::kI8)),
              HasSubstr("`vector_reinterpret` re-reads the 32 bits as i32 or f32, not i8"));
}

TEST_F(VectorRuleAuditTest, NarrowWidenShapeRules) {
  auto trimmed = [&] {
    DmTensor x = Dm(DType::kF32, "T, H", 0);
    return ctx_.main.begin(x.view())
        .fetch(DType::kF32, m("T"), m("H # 8"))
        .collect(m("T"), m("H # 8"))
        .vector_init()
        .vector_intra_slice_branch(BranchMode::Unconditional());
  };
  auto message = [&](Stream s) { return std::move(s).vector_final().commit(m("T, H # 8"), 4096).status().ToString(); };
  EXPECT_THAT(message(trimmed().vector_trim_way4(m("H # 8"))),
              HasSubstr("Narrow / Widen: `vector_trim_way4` output Packet [H # 8] must have 4 elements, it has 8"));
  EXPECT_THAT(message(trimmed().vector_trim_way4(m("H")).vector_pad_way8(m("H # 16"))),
              HasSubstr("Narrow / Widen: `vector_pad_way8` output Packet [H # 16] must have 8 elements, it has 16"));
  EXPECT_THAT(message(trimmed().vector_split(m("T, [H # 8] / 4"), m("[H # 8] % 4")).vector_pad_way8(m("A"))),
              HasSubstr("Narrow / Widen: `vector_pad_way8` Packet (the Way4 packet padded to 8) must be"));
  EXPECT_THAT(Message(Entered(DType::kF32).vector_split(m("T, A / 4"), m("A % 4")).vector_concat(m("A / 4"), m("A"))),
              HasSubstr("Narrow / Widen: `vector_concat` Time (Time / 2) must be"));
  EXPECT_THAT(Message(Entered(DType::kF32).vector_split(m("T, A / 4"), m("A / 2 % 4"))),
              HasSubstr("Narrow / Widen: `vector_split` Packet (the front half of each flit) must be"));
}

// The masked ops run (semantics decided in dsl/vector_ops.h, tests/vector_round_mask_ops_test.cc);
// MaskMulF keeps to the two multiplier ALUs the manual's table lists.
TEST_F(VectorRuleAuditTest, MaskMulFOnlyOnTheMultiplierAlus) {
  auto way4 = [&](std::function<Stream(Stream)> op) {
    return Message(op(Entered(DType::kF32).vector_split(m("T, A / 4"), m("A % 4"))).vector_concat(m("T"), m("A")));
  };
  EXPECT_THAT(way4([](Stream s) { return std::move(s).vector_fp_binary(FpBinaryOp::MaskMulF(FpMulAlu::kFma), 1.0f); }),
              HasSubstr("Float Cluster: MaskMulF runs on FpMul0 or FpMul1"));
}

TEST_F(VectorRuleAuditTest, UnzipTileTimeIsTheGroupAxisTile) {
  DmTensor a = Dm(DType::kI32, "A", 0), b = Dm(DType::kI32, "A", 1024);
  EXPECT_THAT(ctx_.main.begin_interleaved(m("I"), a.view(), b.view())
                  .fetch(DType::kI32, m("I"), m("A"))
                  .collect(m("I"), m("A"))
                  .vector_init()
                  .vector_intra_slice_unzip("I", m("1 # 4"), m("1"))
                  .status()
                  .message(),
              HasSubstr("Two-Group Mode: TileTime is the group axis as a tile of its two groups ([1 # 2])"));
}

}  // namespace
}  // namespace visa
