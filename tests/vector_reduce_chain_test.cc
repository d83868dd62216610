// The Vector Engine's reductions inside a vector chain: where vector_intra_slice_reduce and
// vector_inter_slice_reduce may stand (the typed stage order, Way4 / Way8, the manual's IntraFirst
// and InterFirst orders), every rule of "Intra-Slice Reduce", the Valid Count Generator and the
// Inter-Slice Block as a negative test naming it at the call, the recorded configuration as
// `visa explain` prints it, and small hand-computed results on both backends (the 2-level tree,
// the notes' V57 and V63).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <bit>
#include <limits>

#include "dsl/mapping_parser.h"
#include "dsl/status_macros.h"
#include "interp/interpreter.h"
#include "jit/jit_backend.h"
#include "runtime/tensor_unit.h"
#include "runtime/transfer.h"
#include "tests/common/backends.h"

namespace visa {
namespace {

using ::testing::HasSubstr;

constexpr int32_t kMax = std::numeric_limits<int32_t>::max();
constexpr int32_t kMin = std::numeric_limits<int32_t>::min();

// A DM tensor over `slice` x `element` (cluster [1 # 2]) fetched as `time` x `packet`.
struct Layout {
  std::string axes, slice, element, time, packet;
};

class VectorReduceChainTest : public ::testing::Test {
 protected:
  using Chain = std::function<Stream(Stream, const MappingScope&)>;

  // Plans (and runs, on `backend`) fetch, collect, vector_init, `chain`, vector_final, commit.
  absl::StatusOr<DmTensor> Build(Context& ctx, const Layout& l, DType dtype, const std::vector<double>& values,
                                 const Chain& chain, const std::string& commit) {
    ASSIGN_OR_RETURN(Axes axes, Axes::Parse(l.axes));
    MappingScope s(axes);
    // Fewer values than positions: the same values in every slice.
    const Mapping whole = Pair({s.m(l.slice), s.m(l.element)});
    std::vector<double> all(static_cast<size_t>(whole.size()));
    for (size_t p = 0; p < all.size(); ++p) all[p] = values[p % values.size()];
    ASSIGN_OR_RETURN(HostTensor host, HostTensor::FromValues(dtype, whole, all));
    ASSIGN_OR_RETURN(Placement placement,
                     Place(ctx.device(), dtype, Tier::kDm, {s.m("1"), s.m("1 # 2"), s.m(l.slice), s.m(l.element)}, 0));
    ASSIGN_OR_RETURN(DeviceTensor written, WriteAs(host, ctx.device(), placement));
    DmTensor in(written);
    Stream stream = ctx.main.begin(in.view()).fetch(dtype, s.m(l.time), s.m(l.packet)).collect(s.m(l.time), s.m(l.packet));
    return chain(std::move(stream).vector_init(), s).vector_final().commit(s.m(commit), 1 << 16);
  }

  absl::Status Plan(const Layout& l, DType dtype, const Chain& chain, const std::string& commit = "1") {
    Device device(1);
    interp::Interpreter interp;
    Context ctx(device, interp);
    ASSIGN_OR_RETURN(Axes axes, Axes::Parse(l.axes));
    MappingScope s(axes);
    const int64_t n = Pair({s.m(l.slice), s.m(l.element)}).size();
    return Build(ctx, l, dtype, std::vector<double>(n, 1.0), chain, commit).status();
  }

  std::string Explain(const Layout& l, DType dtype, const Chain& chain, const std::string& commit = "1") {
    Device device(1);
    interp::Interpreter interp;
    Context ctx(device, interp);
    MappingScope s(*Axes::Parse(l.axes));
    const int64_t n = Pair({s.m(l.slice), s.m(l.element)}).size();
    absl::StatusOr<DmTensor> out = Build(ctx, l, dtype, std::vector<double>(n, 1.0), chain, commit);
    if (!out.ok()) return std::string(out.status().message());
    return ctx.program().ToText();
  }

  // The result read back as `readback`, identical on the interpreter and the JIT.
  std::vector<uint32_t> Run(const Layout& l, DType dtype, const std::vector<double>& values, const Chain& chain,
                            const std::string& commit, const std::string& readback) {
    std::vector<uint32_t> results[2];
    for (int b = 0; b < 2; ++b) {
      Device device(1);
      std::unique_ptr<Backend> backend = test::MakeBackend(b, 2);
      Context ctx(device, *backend);
      absl::StatusOr<DmTensor> out = Build(ctx, l, dtype, values, chain, commit);
      EXPECT_TRUE(out.ok()) << out.status();
      if (!out.ok()) return {};
      MappingScope s(*Axes::Parse(l.axes));
      results[b] = ReadAs(*out, s.m(readback))->ToBits();
    }
    EXPECT_EQ(results[0], results[1]) << "the interpreter and the JIT differ";
    return results[0];
  }
};

Stream Branch(Stream s) { return std::move(s).vector_intra_slice_branch(BranchMode::Unconditional()); }

// The manual's "Reduce in Time" layout and chain.
const Layout kTime{"A = 8, R = 16", "A / 2 # 256", "R, A % 2", "R", "A % 2 # 8"};
Stream ReduceTime(Stream s, const MappingScope& m) {
  return Branch(std::move(s))
      .vector_trim_way4(m.m("A % 2 # 4"))
      .vector_intra_slice_reduce("R", m.m("1"), m.m("A % 2 # 4"), IntraSliceReduceOpI32::kAddSat)
      .vector_pad_way8(m.m("A % 2 # 8"));
}

// ---- Placement in the chain -------------------------------------------------------------------------

TEST_F(VectorReduceChainTest, IntraSliceReduceNeedsTheWay4Stream) {
  absl::Status status = Plan(kTime, DType::kI32, [](Stream s, const MappingScope& m) {
    return Branch(std::move(s)).vector_intra_slice_reduce("R", m.m("1"), m.m("A % 2 # 8"), IntraSliceReduceOpI32::kAddSat);
  });
  EXPECT_THAT(status.message(), HasSubstr("Vector Engine Way: `vector_intra_slice_reduce` requires Way4"));
  EXPECT_THAT(status.message(), HasSubstr("narrow first"));
}

TEST_F(VectorReduceChainTest, IntraSliceReduceSitsBetweenFloatAndFpDivOnce) {
  const Layout l{"A = 8, R = 16", "A / 2 # 256", "R, A % 2", "R", "A % 2 # 8"};
  // Float before and FpDiv after: the manual's order.
  EXPECT_TRUE(Plan(l, DType::kF32, [](Stream s, const MappingScope& m) {
                return Branch(std::move(s))
                    .vector_trim_way4(m.m("A % 2 # 4"))
                    .vector_fp_unary(FpUnaryOp::kExp)
                    .vector_intra_slice_reduce("R", m.m("1"), m.m("A % 2 # 4"), IntraSliceReduceOpF32::kAdd)
                    .vector_fp_div(FpDivBinaryOp::kDivF, 2.0f)
                    .vector_pad_way8(m.m("A % 2 # 8"));
              }, "A % 2").ok());
  absl::Status after_div = Plan(l, DType::kF32, [](Stream s, const MappingScope& m) {
    return Branch(std::move(s))
        .vector_trim_way4(m.m("A % 2 # 4"))
        .vector_fp_div(FpDivBinaryOp::kDivF, 2.0f)
        .vector_intra_slice_reduce("R", m.m("1"), m.m("A % 2 # 4"), IntraSliceReduceOpF32::kAdd);
  });
  EXPECT_THAT(after_div.message(),
              HasSubstr("`vector_intra_slice_reduce` is the IntraSliceReduce stage, which cannot follow the FpDiv stage"));
  absl::Status twice = Plan(l, DType::kF32, [](Stream s, const MappingScope& m) {
    return Branch(std::move(s))
        .vector_trim_way4(m.m("A % 2 # 4"))
        .vector_intra_slice_reduce("R", m.m("1"), m.m("A % 2 # 4"), IntraSliceReduceOpF32::kAdd)
        .vector_intra_slice_reduce("A", m.m("1"), m.m("A % 2 # 4"), IntraSliceReduceOpF32::kAdd);
  });
  EXPECT_THAT(twice.message(), HasSubstr("cannot follow the IntraSliceReduce stage"));
  // A float op after the reduce is a step back in the order.
  absl::Status float_after = Plan(l, DType::kF32, [](Stream s, const MappingScope& m) {
    return Branch(std::move(s))
        .vector_trim_way4(m.m("A % 2 # 4"))
        .vector_intra_slice_reduce("R", m.m("1"), m.m("A % 2 # 4"), IntraSliceReduceOpF32::kAdd)
        .vector_fp_unary(FpUnaryOp::kExp);
  });
  EXPECT_THAT(float_after.message(), HasSubstr("the Float stage, which cannot follow the IntraSliceReduce stage"));
}

TEST_F(VectorReduceChainTest, OpEnumMustMatchTheStreamsType) {
  absl::Status status = Plan(kTime, DType::kF32, [](Stream s, const MappingScope& m) {
    return Branch(std::move(s))
        .vector_trim_way4(m.m("A % 2 # 4"))
        .vector_intra_slice_reduce("R", m.m("1"), m.m("A % 2 # 4"), IntraSliceReduceOpI32::kMax);
  });
  EXPECT_THAT(status.message(), HasSubstr("Vector Engine data type: `vector_intra_slice_reduce` with "
                                          "IntraSliceReduceOpI32 takes i32 but the stream is f32"));
  absl::Status inter = Plan({"R = 4, A = 512", "A / 8, R", "A % 8", "1", "A % 8"}, DType::kI32,
                            [](Stream s, const MappingScope& m) {
                              return std::move(s).vector_inter_slice_reduce(m.m("A / 8, 1 # 4"), m.m("1"),
                                                                            InterSliceReduceOpF32::kMul);
                            });
  EXPECT_THAT(inter.message(), HasSubstr("`vector_inter_slice_reduce` with InterSliceReduceOpF32 takes f32"));
}

// ---- The rules of "Intra-Slice Reduce", named at the call -------------------------------------------

TEST_F(VectorReduceChainTest, TheManualsSlotLimitExampleIsRejected) {
  // "Invalid: Accumulator Slot Limit Exceeded": Time [R, A % 3, B % 4] needs 3 x 4 = 12 slots.
  const Layout l{"A = 6, B = 8, R = 16", "A / 3 # 256", "R, A % 3, B % 4, B / 4", "R, A % 3, B % 4", "B / 4 # 8"};
  absl::Status status = Plan(l, DType::kI32, [](Stream s, const MappingScope& m) {
    return Branch(std::move(s))
        .vector_trim_way4(m.m("B / 4 # 4"))
        .vector_intra_slice_reduce("R", m.m("A % 3, B % 4"), m.m("B / 4 # 4"), IntraSliceReduceOpI32::kAddSat);
  });
  EXPECT_THAT(status.message(), HasSubstr("Accumulator Slot Limit"));
  EXPECT_THAT(status.message(), HasSubstr("need 12 accumulator slots, but only 8"));
  EXPECT_THAT(status.message(), HasSubstr("at `vector_intra_slice_reduce::<R, [A % 3, B % 4]"));
  // The valid variant of the same section: Time [R, A % 2, B % 4] -> 2 x 4 = 8 slots.
  const Layout ok{"A = 4, B = 8, R = 16", "A / 2 # 256", "R, A % 2, B % 4, B / 4", "R, A % 2, B % 4", "B / 4 # 8"};
  EXPECT_TRUE(Plan(ok, DType::kI32, [](Stream s, const MappingScope& m) {
                return Branch(std::move(s))
                    .vector_trim_way4(m.m("B / 4 # 4"))
                    .vector_intra_slice_reduce("R", m.m("A % 2, B % 4"), m.m("B / 4 # 4"), IntraSliceReduceOpI32::kAddSat)
                    .vector_pad_way8(m.m("B / 4 # 8"));
              }, "A % 2, B % 4, B / 4").ok());
}

TEST_F(VectorReduceChainTest, OutputShapeRules) {
  absl::Status kept = Plan(kTime, DType::kI32, [](Stream s, const MappingScope& m) {
    return Branch(std::move(s))
        .vector_trim_way4(m.m("A % 2 # 4"))
        .vector_intra_slice_reduce("R", m.m("R"), m.m("A % 2 # 4"), IntraSliceReduceOpI32::kAddSat);
  });
  EXPECT_THAT(kept.message(), HasSubstr("Intra-Slice Reduce"));
  EXPECT_THAT(kept.message(), HasSubstr("R is still present in OTime"));
  absl::Status packet = Plan(kTime, DType::kI32, [](Stream s, const MappingScope& m) {
    return Branch(std::move(s))
        .vector_trim_way4(m.m("A % 2 # 4"))
        .vector_intra_slice_reduce("R", m.m("1"), m.m("1 # 4"), IntraSliceReduceOpI32::kAddSat);
  });
  EXPECT_THAT(packet.message(), HasSubstr("Packet should be either preserved or reduced to [1 # 4]"));
  absl::Status nowhere = Plan(kTime, DType::kI32, [](Stream s, const MappingScope& m) {
    return Branch(std::move(s))
        .vector_trim_way4(m.m("A % 2 # 4"))
        .vector_intra_slice_reduce("B", m.m("R"), m.m("A % 2 # 4"), IntraSliceReduceOpI32::kAddSat);
  });
  EXPECT_THAT(nowhere.message(), HasSubstr("the reduce axis B is in neither Time"));
  absl::Status wrapping = Plan(kTime, DType::kF32, [](Stream s, const MappingScope& m) {
    return Branch(std::move(s))
        .vector_trim_way4(m.m("A % 2 # 4"))
        .vector_intra_slice_reduce("R", m.m("1"), m.m("A % 2 # 4"), IntraSliceReduceOpF32::kMin)
        .vector_pad_way8(m.m("A % 2 # 8"));
  }, "A % 2");
  EXPECT_TRUE(wrapping.ok()) << wrapping;
}

TEST_F(VectorReduceChainTest, UnsupportedValidCountPlacementNamesTheVcgAndTheWayOut) {
  // The manual's R = 13 over Slice, Time and Packet: the boundary slice needs its own partial packet
  // count, which the VCG's slice-independent packet dim cannot give; identity padding (the fetch
  // fills R >= 13 with the op's identity) is the way the Padding Strategy table offers.
  const Layout stp{"R = 13", "R # 32 / 8 # 256", "R # 32 % 8", "R # 32 / 4 % 2", "R # 32 % 4 # 8"};
  auto chain = [](ReducePadding padding) {
    return [padding](Stream s, const MappingScope& m) {
      return Branch(std::move(s))
          .vector_trim_way4(m.m("R # 32 % 4"))
          .vector_intra_slice_reduce("R", m.m("1"), m.m("1 # 4"), IntraSliceReduceOpI32::kMin, padding)
          .vector_pad_way8(m.m("1 # 8"));
    };
  };
  absl::Status status = Plan(stp, DType::kI32, chain(ReducePadding::kValidCount));
  EXPECT_THAT(status.message(), HasSubstr("Intra-Slice Reduce: Valid Count Generator: Slice + Packet"));
  EXPECT_THAT(status.message(), HasSubstr("reduce with identity padding"));
  EXPECT_THAT(status.message(), HasSubstr("at `vector_intra_slice_reduce::<R, [1], [1 # 4]>(Min)`"));
  EXPECT_TRUE(Plan(stp, DType::kI32, chain(ReducePadding::kIdentity), "1 # 2").ok());
}

// ---- The Inter-Slice Block's orders -------------------------------------------------------------------

const Layout kSlices{"R = 4, A = 512", "A / 8, R", "A % 8", "1", "A % 8"};
Stream InterAddSat(Stream s, const MappingScope& m) {
  return std::move(s).vector_inter_slice_reduce(m.m("A / 8, 1 # 4"), m.m("1"), InterSliceReduceOpI32::kAddSat);
}

TEST_F(VectorReduceChainTest, IntraFirstEntersTheReducerOnlyFromWay8Stages) {
  const Layout f32{"R = 4, A = 512", "A / 8, R", "A % 8", "1", "A % 8"};
  absl::Status way4 = Plan(f32, DType::kF32, [](Stream s, const MappingScope& m) {
    return Branch(std::move(s))
        .vector_split(m.m("A % 8 / 4"), m.m("A % 4"))
        .vector_fp_unary(FpUnaryOp::kExp)
        .vector_inter_slice_reduce(m.m("A / 8, 1 # 4"), m.m("A % 8 / 4"), InterSliceReduceOpF32::kAdd);
  }, "A % 8");
  EXPECT_THAT(way4.message(), HasSubstr("Inter-Slice Block: in the IntraFirst path, vector_inter_slice_reduce() is "
                                        "available only from the Way8 stages Branch, Logic, Fxp, FxpToFp, Widen, "
                                        "FpToFxp and Clip, not after the Float stage"));
  // From Branch, Clip and Widen it is.
  EXPECT_TRUE(Plan(kSlices, DType::kI32, [](Stream s, const MappingScope& m) { return InterAddSat(Branch(std::move(s)), m); },
                   "A % 8").ok());
  EXPECT_TRUE(Plan(kSlices, DType::kI32, [](Stream s, const MappingScope& m) {
                return InterAddSat(Branch(std::move(s)).vector_clip(ClipBinaryOpI32::kMax, 0), m);
              }, "A % 8").ok());
  EXPECT_TRUE(Plan(f32, DType::kF32, [](Stream s, const MappingScope& m) {
                return Branch(std::move(s))
                    .vector_split(m.m("A % 8 / 4"), m.m("A % 4"))
                    .vector_fp_unary(FpUnaryOp::kExp)
                    .vector_concat(m.m("1"), m.m("A % 8"))
                    .vector_inter_slice_reduce(m.m("A / 8, 1 # 4"), m.m("1"), InterSliceReduceOpF32::kAdd);
              }, "A % 8").ok());
}

TEST_F(VectorReduceChainTest, AfterAnIntraFirstReduceOnlyOutputFollows) {
  absl::Status status = Plan(kSlices, DType::kI32, [](Stream s, const MappingScope& m) {
    return InterAddSat(Branch(std::move(s)).vector_fxp(FxpBinaryOp::kAddFxp, 1), m).vector_clip(ClipBinaryOpI32::kMax, 0);
  }, "A % 8");
  EXPECT_THAT(status.message(), HasSubstr("Vector Engine ordering: IntraFirst runs the Intra-Slice Block, then the "
                                          "Inter-Slice Block; after vector_inter_slice_reduce only vector_filter or "
                                          "vector_final may follow, not `vector_clip`"));
  absl::Status stash = Plan(kSlices, DType::kI32, [](Stream s, const MappingScope& m) {
    return InterAddSat(Branch(std::move(s)).vector_fxp(FxpBinaryOp::kAddFxp, 1), m).vector_stash();
  }, "A % 8");
  EXPECT_THAT(stash.message(), HasSubstr("Stash: `vector_stash` is available only at the Stashable stages"));
  EXPECT_THAT(stash.message(), HasSubstr("not after the InterSliceReduce stage"));
  absl::Status branch_again = Plan(kSlices, DType::kI32, [](Stream s, const MappingScope& m) {
    return Branch(InterAddSat(Branch(std::move(s)), m));
  }, "A % 8");
  EXPECT_THAT(branch_again.message(), HasSubstr("`vector_intra_slice_branch` enters the intra-slice block once"));
}

TEST_F(VectorReduceChainTest, InterFirstThenTheIntraSliceBlock) {
  // The reducer once per pass; then vector_intra_slice_branch (not unzip) continues, and the ALU set
  // starts afresh.
  absl::Status twice = Plan(kSlices, DType::kI32, [](Stream s, const MappingScope& m) {
    return InterAddSat(InterAddSat(std::move(s), m), m);
  }, "A % 8");
  EXPECT_THAT(twice.message(), HasSubstr("the Inter-Slice Block runs once per pass"));
  absl::Status unzip = Plan(kSlices, DType::kI32, [](Stream s, const MappingScope& m) {
    return InterAddSat(std::move(s), m).vector_intra_slice_unzip("A", m.m("1 # 2"), m.m("1"));
  }, "A % 8");
  EXPECT_THAT(unzip.message(), HasSubstr("`vector_intra_slice_unzip` is only available directly from vector_init()"));
  absl::Status no_branch = Plan(kSlices, DType::kI32, [](Stream s, const MappingScope& m) {
    return InterAddSat(std::move(s), m).vector_fxp(FxpBinaryOp::kAddFxp, 1);
  }, "A % 8");
  EXPECT_THAT(no_branch.message(), HasSubstr("call vector_intra_slice_branch(...)"));
  EXPECT_TRUE(Plan(kSlices, DType::kI32, [](Stream s, const MappingScope& m) { return InterAddSat(std::move(s), m); },
                   "A % 8").ok());
}

TEST_F(VectorReduceChainTest, InterFirstRefusesIdsTakenOnTheInputStream) {
  // ValidCount and Vrf ids describe the stage's input stream, which an InterFirst reduce replaced.
  absl::Status valid_count = Plan(kSlices, DType::kI32, [](Stream s, const MappingScope& m) {
    return InterAddSat(std::move(s), m).vector_intra_slice_branch(BranchMode::ValidCount("A"));
  }, "A % 8");
  EXPECT_THAT(valid_count.message(), HasSubstr("not supported after an InterFirst `vector_inter_slice_reduce`"));
  EXPECT_TRUE(Plan(kSlices, DType::kI32, [](Stream s, const MappingScope& m) {
    return InterAddSat(std::move(s), m).vector_intra_slice_branch(BranchMode::AxisToggle("A"));
  }, "A % 8").ok());
}

TEST_F(VectorReduceChainTest, OutputMappingRuleIsCheckedAtTheCall) {
  // The reduced part of Slice must be innermost: [R, A / 8] reduces R from the outside.
  const Layout outer{"R = 4, A = 512", "R, A / 8", "A % 8", "1", "A % 8"};
  absl::Status status = Plan(outer, DType::kI32, [](Stream s, const MappingScope& m) {
    return std::move(s).vector_inter_slice_reduce(m.m("1 # 4, A / 8"), m.m("1"), InterSliceReduceOpI32::kAdd);
  }, "A % 8");
  EXPECT_THAT(status.message(), HasSubstr("Inter-Slice Reduce"));
  EXPECT_THAT(status.message(), HasSubstr("at `vector_inter_slice_reduce::<[1 # 4, A / 8], [1]>(Add)`"));
}

// ---- Explain ----------------------------------------------------------------------------------------

TEST_F(VectorReduceChainTest, ExplainShowsTheDerivedConfigurations) {
  const std::string text = Explain(kTime, DType::kI32, ReduceTime, "A % 2");
  EXPECT_THAT(text, HasSubstr("IntraSliceReduce: intra_slice_reduce R AddSat i32: time [R] -> [1], packet "
                              "[A % 2 # 4] -> [A % 2 # 4], temporal accumulation, slots 1 of 8, after trim_way4"));
  EXPECT_THAT(text, HasSubstr("on ReduceAccTree"));
  const std::string inter = Explain(kSlices, DType::kI32, [](Stream s, const MappingScope& m) {
    return Branch(InterAddSat(std::move(s), m)).vector_fxp(FxpBinaryOp::kAddFxp, 100);
  }, "A % 8");
  EXPECT_THAT(inter, HasSubstr("InterSliceReduce: inter_slice_reduce AddSat i32: slice [A / 8, R] -> [A / 8, 1 # 4]"));
  EXPECT_THAT(inter, HasSubstr("fill dummy [1 # 4]"));
  // The VCG's configuration for R = 5 padded to 8 in Packet.
  const Layout padded{"R = 5", "1 # 256", "R # 8", "1", "R # 8"};
  const std::string vcg = Explain(padded, DType::kI32, [](Stream s, const MappingScope& m) {
    return Branch(std::move(s))
        .vector_split(m.m("R # 8 / 4"), m.m("R # 8 % 4"))
        .vector_intra_slice_reduce("R", m.m("1"), m.m("1 # 4"), IntraSliceReduceOpI32::kMin)
        .vector_pad_way8(m.m("1 # 8"));
  }, "1 # 2");
  EXPECT_THAT(vcg, HasSubstr("valid count generator: Packet Reduce"));
  EXPECT_THAT(vcg, HasSubstr("R = 5 padded to 8"));
}

// ---- Results on both backends --------------------------------------------------------------------------

TEST_F(VectorReduceChainTest, PacketTreeIsTheManualsTwoLevelTree) {
  // V57: [MAX, MAX, MIN, MIN] by the tree op(op(a, b), op(c, d)) is AddSat(MAX, MIN) = -1 (a linear
  // fold would give MIN); the second row [MAX, 1, -1, 5] is AddSat(MAX, 4) = MAX.
  const Layout l{"A = 2, R = 4", "1 # 256", "A, R", "A", "R # 8"};
  std::vector<double> values = {kMax, kMax, kMin, kMin, kMax, 1, -1, 5};
  std::vector<uint32_t> got = Run(l, DType::kI32, values, [](Stream s, const MappingScope& m) {
    return Branch(std::move(s))
        .vector_trim_way4(m.m("R"))
        .vector_intra_slice_reduce("R", m.m("A"), m.m("1 # 4"), IntraSliceReduceOpI32::kAddSat)
        .vector_pad_way8(m.m("1 # 8"));
  }, "A, 1 # 2", "A");
  EXPECT_EQ(got, (std::vector<uint32_t>{static_cast<uint32_t>(-1), static_cast<uint32_t>(kMax)}));
}

TEST_F(VectorReduceChainTest, ValidCountLeavesPaddingOut) {
  // R = 5 padded to 8 in Packet (Packet Reduce mode, vc = 5): lanes 5..7 hold data the DM tensor
  // has there (its padding) and must not count; Min over [9, 7, 8, 6, 10] is 6.
  const Layout l{"R = 5", "1 # 256", "R # 8", "1", "R # 8"};
  std::vector<double> values = {9, 7, 8, 6, 10, -100, -100, -100};
  std::vector<uint32_t> got = Run(l, DType::kI32, values, [](Stream s, const MappingScope& m) {
    return Branch(std::move(s))
        .vector_split(m.m("R # 8 / 4"), m.m("R # 8 % 4"))
        .vector_intra_slice_reduce("R", m.m("1"), m.m("1 # 4"), IntraSliceReduceOpI32::kMin)
        .vector_pad_way8(m.m("1 # 8"));
  }, "1 # 2", "1");
  EXPECT_EQ(got, (std::vector<uint32_t>{6}));
}

TEST_F(VectorReduceChainTest, InterFirstReduceThenAdd) {
  // V63: R values [1, 2, 3, 4] AddSat across slices, then AddFxp 100: 110 (for every A).
  std::vector<double> values(2048);
  for (int64_t p = 0; p < 2048; ++p) values[p] = static_cast<double>((p / 8) % 4 + 1);  // slice [A / 8, R], R = slice % 4
  std::vector<uint32_t> got = Run(kSlices, DType::kI32, values, [](Stream s, const MappingScope& m) {
    return Branch(InterAddSat(std::move(s), m)).vector_fxp(FxpBinaryOp::kAddFxp, 100);
  }, "A % 8", "A");
  ASSERT_EQ(got.size(), 512u);
  for (uint32_t v : got) EXPECT_EQ(v, 110u);
}

}  // namespace
}  // namespace visa
