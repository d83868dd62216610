// The Vector Engine's branch modes ValidCount and Vrf and its Filter stage (manual, "Branch
// (vector_intra_slice_branch)", "Filter (vector_filter)"; the ids they give are decided in
// dsl/vector_branch_ids.h and dsl/vector_filter.cc) on both backends, against hand-derived ids and
// host computations, and their rules as negative tests.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <bit>

#include "dsl/mapping_parser.h"
#include "dsl/status_macros.h"
#include "dsl/vector_branch_ids.h"
#include "interp/interpreter.h"
#include "jit/jit_backend.h"
#include "runtime/tensor_unit.h"
#include "runtime/transfer.h"
#include "tests/common/dm_input.h"
#include "tests/common/backends.h"

namespace visa {
namespace {

using ::testing::HasSubstr;
constexpr BitReq kOne = BitReq::kOne, kZero = BitReq::kZero, kAny = BitReq::kIgnore;

class VectorBranchModesTest : public ::testing::Test {
 protected:
  void Use(const std::string& axes) { scope_ = std::make_unique<MappingScope>(*Axes::Parse(axes)); }
  Mapping m(const std::string& text) { return scope_->m(text); }
  StreamShape Shape(const std::string& slice, const std::string& time, const std::string& packet) {
    return StreamShape{DType::kI32, m("1"), m("1"), m(slice), m(time), m(packet), std::nullopt};
  }

  DmTensor Dm(Context& ctx, DType dtype, const std::string& element, const std::vector<uint32_t>& bits,
              int64_t address) {
    return test::WriteDm(ctx.device(), *HostTensor::FromBits(dtype, m(element), bits), m(element), address);
  }

  // `chain` on the interpreter and on the JIT; both results (or both failures) must agree.
  using Chain = std::function<absl::StatusOr<std::vector<uint32_t>>(Context&)>;
  absl::StatusOr<std::vector<uint32_t>> OnBoth(const Chain& chain) {
    absl::StatusOr<std::vector<uint32_t>> results[2];
    test::OnBothBackends([&](int b, Context& ctx) {
      results[b] = chain(ctx);
    });
    EXPECT_EQ(results[0].ok(), results[1].ok()) << results[0].status() << " / " << results[1].status();
    if (results[0].ok() && results[1].ok()) { EXPECT_EQ(*results[0], *results[1]) << "the interpreter and the JIT differ"; }
    if (!results[0].ok() && !results[1].ok()) {
      EXPECT_EQ(results[0].status().message(), results[1].status().message());
    }
    return results[0];
  }

  // A [T = 2, A = 8] i32 stream with the values `x`, entered with `enter`, through `ops`.
  absl::StatusOr<std::vector<uint32_t>> Run16(const std::vector<uint32_t>& x, const std::vector<uint32_t>& ids,
                                              const std::function<Stream(Stream, const VrfTensor&)>& ops) {
    return OnBoth([&](Context& ctx) -> absl::StatusOr<std::vector<uint32_t>> {
      DmTensor in = Dm(ctx, DType::kI32, "T, A", x, 0);
      DmTensor id_source = Dm(ctx, DType::kI32, "T, A", ids, 4096);
      ASSIGN_OR_RETURN(VrfTensor vrf, ctx.sub.begin(id_source.view())
                                          .fetch(DType::kI32, m("T"), m("A"))
                                          .collect(m("T"), m("A"))
                                          .to_vrf(m("T, A"), 0));
      ASSIGN_OR_RETURN(DmTensor out, ops(ctx.main.begin(in.view())
                                             .fetch(DType::kI32, m("T"), m("A"))
                                             .collect(m("T"), m("A"))
                                             .vector_init(),
                                         vrf)
                                         .vector_final()
                                         .commit(m("T, A"), 8192));
      ASSIGN_OR_RETURN(HostTensor host, ReadAs(out, m("T, A")));
      return host.ToBits();
    });
  }

  std::unique_ptr<MappingScope> scope_;
};

std::vector<uint32_t> Iota(int n, int first) {
  std::vector<uint32_t> v;
  for (int i = 0; i < n; ++i) v.push_back(static_cast<uint32_t>(first + i));
  return v;
}

// ---- ValidCount ---------------------------------------------------------------------------------

TEST_F(VectorBranchModesTest, ValidCountIdsMarkTheAxissRealLanes) {
  Use("R = 13, A = 8, X = 2");
  // Time + Packet: R = 13 as [R # 16 / 8] x [R # 16 % 8]: flit 0 is full, flit 1 holds 5 lanes.
  absl::StatusOr<std::vector<uint8_t>> ids = ValidCountIds(Shape("1", "R # 16 / 8", "R # 16 % 8"), "R");
  ASSERT_TRUE(ids.ok()) << ids.status();
  EXPECT_EQ(*ids, (std::vector<uint8_t>{1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0}));
  // Packet only: R in the lanes of every flit, 13 of 16 in two halves [R # 16 % 8] per time step.
  ids = ValidCountIds(Shape("1", "X", "R # 8"), "R");
  EXPECT_FALSE(ids.ok());  // R = 13 does not fit one flit: the VCG's rule says so
  EXPECT_THAT(ids.status().message(), HasSubstr("Branch: BranchMode::ValidCount(R)"));
  Use("R = 5, A = 8, X = 2");
  ids = ValidCountIds(Shape("1", "X", "R # 8"), "R");
  ASSERT_TRUE(ids.ok()) << ids.status();
  EXPECT_EQ(*ids, (std::vector<uint8_t>{1, 1, 1, 1, 1, 0, 0, 0, 1, 1, 1, 1, 1, 0, 0, 0}));
  // Time only: R = 3 in Time [R # 4], A in Packet: step 3 is the axis's padding.
  Use("R = 3, A = 8");
  ids = ValidCountIds(Shape("1", "R # 4", "A"), "R");
  ASSERT_TRUE(ids.ok()) << ids.status();
  std::vector<uint8_t> expected(32, 1);
  for (int p = 24; p < 32; ++p) expected[p] = 0;
  EXPECT_EQ(*ids, expected);
}

TEST_F(VectorBranchModesTest, ValidCountRules) {
  Use("R = 13, X = 2");
  absl::StatusOr<VectorChain> chain = VectorChain::Init(Shape("1", "R # 16 / 8", "R # 16 % 8"), StreamPosition::kCollect);
  ASSERT_TRUE(chain.ok());
  EXPECT_THAT(chain->Branch(BranchMode::ValidCount()).message(),
              HasSubstr("Branch: BranchMode::ValidCount names the padded axis"));
  EXPECT_THAT(chain->Branch(BranchMode::ValidCount("X")).message(), HasSubstr("BranchMode::ValidCount(X)"));
  // The manual's "Non-Outer/Inner Ordering (Not Supported)" placement.
  Use("R = 13, X = 2");
  chain = VectorChain::Init(Shape("X, R # 16 / 2 % 4, R # 16 / 8", "R # 16 % 2", "1 # 8"), StreamPosition::kCollect);
  ASSERT_TRUE(chain.ok());
  absl::Status status = chain->Branch(BranchMode::ValidCount("R"));
  EXPECT_THAT(status.message(), HasSubstr("Branch: BranchMode::ValidCount(R)"));
  EXPECT_THAT(status.message(), HasSubstr("Non-outer/inner ordering"));
}

TEST_F(VectorBranchModesTest, ValidCountGuardsOnBothBackends) {
  Use("R = 13");
  auto run = [&](TagGuard guard) {
    return OnBoth([&](Context& ctx) -> absl::StatusOr<std::vector<uint32_t>> {
      DmTensor in = Dm(ctx, DType::kI32, "R", Iota(13, 1), 0);
      ASSIGN_OR_RETURN(DmTensor out, ctx.main.begin(in.view())
                                         .fetch(DType::kI32, m("R # 16 / 8"), m("R # 16 % 8"))
                                         .collect(m("R # 16 / 8"), m("R # 16 % 8"))
                                         .vector_init()
                                         .vector_intra_slice_branch(BranchMode::ValidCount("R"))
                                         .vector_fxp(FxpBinaryOp::kAddFxp, VeBranchOperand().imm(guard, VeRhs(100)))
                                         .vector_final()
                                         .commit(m("R # 16"), 8192));
      ASSIGN_OR_RETURN(HostTensor host, ReadAs(out, m("R")));
      return host.ToBits();
    });
  };
  // Every element of R is real data: bit 0 is set on each, so the guarded add reaches all and the
  // guard on bit 0 = 0 (the padding lanes) none.
  absl::StatusOr<std::vector<uint32_t>> valid = run(TagGuard::Matches({kOne, kAny, kAny, kAny}));
  ASSERT_TRUE(valid.ok()) << valid.status();
  EXPECT_EQ(*valid, Iota(13, 101));
  absl::StatusOr<std::vector<uint32_t>> padding = run(TagGuard::Matches({kZero, kAny, kAny, kAny}));
  ASSERT_TRUE(padding.ok()) << padding.status();
  EXPECT_EQ(*padding, Iota(13, 1));
}

// ---- Vrf ----------------------------------------------------------------------------------------

TEST_F(VectorBranchModesTest, VrfIdsSelectSlotsOnBothBackends) {
  Use("T = 2, A = 8");
  std::vector<uint32_t> ids;
  for (int i = 0; i < 16; ++i) ids.push_back(static_cast<uint32_t>((i * 7) % 16));
  absl::StatusOr<std::vector<uint32_t>> out = Run16(Iota(16, 0), ids, [](Stream s, const VrfTensor& vrf) {
    return std::move(s)
        .vector_intra_slice_branch(vrf)
        .vector_fxp(FxpBinaryOp::kAddFxp, VeBranchOperand()
                                              .imm(TagGuard::Matches({kOne, kAny, kAny, kAny}), VeRhs(100))
                                              .imm(TagGuard::Matches({kAny, kOne, kAny, kAny}), VeRhs(1000)));
  });
  ASSERT_TRUE(out.ok()) << out.status();
  for (int i = 0; i < 16; ++i) {
    const uint32_t id = ids[i];
    const uint32_t add = (id & 1) ? 100 : (id & 2) ? 1000 : 0;  // first match
    EXPECT_EQ((*out)[i], static_cast<uint32_t>(i) + add) << "element " << i << " id " << id;
  }
}

TEST_F(VectorBranchModesTest, VrfIdsAreFourBits) {
  Use("T = 2, A = 8");
  std::vector<uint32_t> ids(16, 3);
  ids[11] = 16;
  absl::StatusOr<std::vector<uint32_t>> out = Run16(Iota(16, 0), ids, [](Stream s, const VrfTensor& vrf) {
    return std::move(s).vector_intra_slice_branch(vrf).vector_fxp(FxpBinaryOp::kAddFxp, VeRhs(1));
  });
  ASSERT_FALSE(out.ok());
  EXPECT_THAT(out.status().message(), HasSubstr("Branch: BranchMode::Vrf loads 4-bit ExecutionIds (0-15"));
  EXPECT_THAT(out.status().message(), HasSubstr("holds 16 at"));
}

TEST_F(VectorBranchModesTest, VrfRules) {
  Use("T = 2, A = 8");
  Device device(1);
  interp::Interpreter interp;
  Context ctx(device, interp);
  DmTensor in = Dm(ctx, DType::kI32, "T, A", Iota(16, 0), 0);
  DmTensor f = Dm(ctx, DType::kF32, "T, A", std::vector<uint32_t>(16, 0), 4096);
  absl::StatusOr<VrfTensor> f_vrf =
      ctx.sub.begin(f.view()).fetch(DType::kF32, m("T"), m("A")).collect(m("T"), m("A")).to_vrf(m("T, A"), 0);
  ASSERT_TRUE(f_vrf.ok()) << f_vrf.status();
  auto entered = [&] {
    return ctx.main.begin(in.view()).fetch(DType::kI32, m("T"), m("A")).collect(m("T"), m("A")).vector_init();
  };
  EXPECT_THAT(entered().vector_intra_slice_branch(BranchMode::Vrf()).status().message(),
              HasSubstr("Branch: BranchMode::Vrf loads the ExecutionIds from a VRF tensor: pass it"));
  EXPECT_THAT(entered().vector_intra_slice_branch(*f_vrf).status().message(),
              HasSubstr("Branch: BranchMode::Vrf reads ExecutionIds (0-15) from an i32 VRF tensor"));
}

// ---- Filter -------------------------------------------------------------------------------------

TEST_F(VectorBranchModesTest, FilterKeepsWhatItsGuardAdmits) {
  Use("T = 2, A = 8");
  std::vector<uint32_t> x = Iota(16, -8);
  absl::StatusOr<std::vector<uint32_t>> out = Run16(x, std::vector<uint32_t>(16, 0), [](Stream s, const VrfTensor&) {
    return std::move(s)
        .vector_intra_slice_branch(BranchMode::Comparison(
            {InputCmp::Greater(0), InputCmp::Less(-4), InputCmp::False(), InputCmp::False()}))
        .vector_fxp(FxpBinaryOp::kMulInt, 3)
        .vector_filter(TagGuard::NotMatches({kZero, kZero, kAny, kAny}));  // x > 0 or x < -4
  });
  ASSERT_TRUE(out.ok()) << out.status();
  for (int i = 0; i < 16; ++i) {
    const int32_t v = static_cast<int32_t>(x[i]);
    EXPECT_EQ(static_cast<int32_t>((*out)[i]), v > 0 || v < -4 ? 3 * v : 0) << v;
  }
  // With ids from the VRF: keep id 5 only.
  std::vector<uint32_t> ids;
  for (int i = 0; i < 16; ++i) ids.push_back(i % 3 == 0 ? 5 : 4);
  out = Run16(x, ids, [](Stream s, const VrfTensor& vrf) {
    return std::move(s).vector_intra_slice_branch(vrf).vector_filter(TagGuard::Matches({kOne, kZero, kOne, kZero}));
  });
  ASSERT_TRUE(out.ok()) << out.status();
  for (int i = 0; i < 16; ++i) EXPECT_EQ((*out)[i], i % 3 == 0 ? x[i] : 0u) << i;
}

TEST_F(VectorBranchModesTest, FilterRules) {
  Use("T = 2, A = 8");
  auto plan = [&](const std::function<Stream(Stream)>& ops) {
    Device device(1);
    interp::Interpreter interp;
    Context ctx(device, interp);
    DmTensor in = Dm(ctx, DType::kF32, "T, A", std::vector<uint32_t>(16, 0), 0);
    return ops(ctx.main.begin(in.view())
                   .fetch(DType::kF32, m("T"), m("A"))
                   .collect(m("T"), m("A"))
                   .vector_init()
                   .vector_intra_slice_branch(BranchMode::Comparison(
                       {InputCmp::Greater(0.0f), InputCmp::False(), InputCmp::False(), InputCmp::False()})))
        .vector_final()
        .commit(m("T, A"), 8192)
        .status();
  };
  const TagGuard positive = TagGuard::Matches({kOne, kAny, kAny, kAny});
  EXPECT_TRUE(plan([&](Stream s) {
                return std::move(s).vector_clip(ClipBinaryOpF32::kMax, 1.0f).vector_filter(positive);
              }).ok());
  EXPECT_THAT(plan([&](Stream s) { return std::move(s).vector_filter(TagGuard::NotMatches({kAny, kAny, kAny, kAny})); })
                  .message(),
              HasSubstr("Filter: `vector_filter` keeps the elements whose execution id its guard admits, but"));
  EXPECT_THAT(plan([&](Stream s) { return std::move(s).vector_filter(TagGuard::All()); }).message(),
              HasSubstr("Filter: `vector_filter`'s guard admits every execution id, so it would drop nothing"));
  // Its place: after Clip, before Output, once.
  EXPECT_THAT(plan([&](Stream s) {
                return std::move(s).vector_filter(positive).vector_clip(ClipBinaryOpF32::kMax, 1.0f);
              }).message(),
              HasSubstr("`vector_clip` is the Clip stage, which cannot follow the Filter stage"));
  EXPECT_THAT(plan([&](Stream s) { return std::move(s).vector_filter(positive).vector_filter(positive); }).message(),
              HasSubstr("`vector_filter` is the Filter stage, which cannot follow the Filter stage"));
  // Way8 only.
  EXPECT_THAT(plan([&](Stream s) {
                return std::move(s).vector_split(m("T, A / 4"), m("A % 4")).vector_filter(positive);
              }).message(),
              HasSubstr("Vector Engine Way: `vector_filter` requires Way8"));
  // Not a Stashable stage.
  EXPECT_THAT(plan([&](Stream s) { return std::move(s).vector_filter(positive).vector_stash(); }).message(),
              HasSubstr("Stash: `vector_stash` is available only at the Stashable stages"));
}

TEST_F(VectorBranchModesTest, FilterIsUnavailableInTwoGroupMode) {
  Use("A = 8, I = 2");
  Device device(1);
  interp::Interpreter interp;
  Context ctx(device, interp);
  DmTensor lhs = Dm(ctx, DType::kI32, "A", Iota(8, 0), 0), rhs = Dm(ctx, DType::kI32, "A", Iota(8, 0), 1024);
  auto paired = [&] {
    return ctx.main.begin_interleaved(m("I"), lhs.view(), rhs.view())
        .fetch(DType::kI32, m("I"), m("A"))
        .collect(m("I"), m("A"))
        .vector_init()
        .vector_intra_slice_unzip("I", m("1 # 2"), m("1"));
  };
  const TagGuard group1 = TagGuard::Group(GroupId::kOne);
  EXPECT_THAT(paired().vector_filter(group1).status().message(),
              HasSubstr("Two-Group Mode: `vector_filter` is unavailable while the two groups are paired"));
  EXPECT_THAT(paired().vector_clip_zip(ClipBinaryOpI32::kAddFxp).vector_filter(group1).status().message(),
              HasSubstr("Two-Group Mode: `vector_filter` is unavailable after a _zip op merged the pair"));
}

}  // namespace
}  // namespace visa
