// The fused contraction's epilogue (jit/contraction_epilogue.h): the accumulators written straight
// into DM through the cast and the Commit Sequencer's addresses. Its nest search against tables
// written out by hand, its plan's refusals, and whole pipelines compared bit for bit with the
// interpreter (which walks accumulate, cast and commit stage by stage), on one and two threads.
#include "jit/contraction_epilogue.h"

#include <gtest/gtest.h>

#include "dsl/mapping_parser.h"
#include "interp/interpreter.h"
#include "jit/jit_backend.h"
#include "runtime/launch.h"
#include "runtime/transfer.h"
#include "samples/sample.h"

namespace visa::jit {
namespace {

using Pairs = std::vector<std::pair<int64_t, int64_t>>;

// The GEMM's per-slice commit order: time (i, j4) outer, the packet's 8 Rows inner; the
// accumulators [row][time], so each output row of 8 reads 8 slots 128 apart.
Pairs GemmSlicePairs() {
  Pairs pairs;
  for (int64_t t = 0; t < 128; ++t) {
    for (int64_t r = 0; r < 8; ++r) pairs.emplace_back(t * 8 + r, r * 128 + t);
  }
  return pairs;
}

TEST(NestOfPairs, FindsTheTransposeOfTheGemmSlice) {
  std::optional<MoveNest> nest = NestOfPairs(GemmSlicePairs());
  ASSERT_TRUE(nest.has_value());
  EXPECT_EQ(nest->ToString(), "[8 : 1 <- 128, 128 : 8 <- 1]");
}

TEST(NestOfPairs, CoalescesAContiguousRun) {
  Pairs pairs;
  for (int64_t i = 0; i < 64; ++i) pairs.emplace_back(100 + i, 7 + i);
  std::optional<MoveNest> nest = NestOfPairs(pairs);
  ASSERT_TRUE(nest.has_value());
  // Offsets from the first pair (the epilogue moves its pointers there).
  EXPECT_EQ(nest->ToString(), "[64 : 1 <- 1]");
}

TEST(NestOfPairs, EnumeratesThePairsInOrder) {
  // Three levels, one with a zero destination step (never produced by a commit, but a nest).
  Pairs pairs;
  for (int64_t a = 0; a < 3; ++a) {
    for (int64_t b = 0; b < 5; ++b) {
      for (int64_t c = 0; c < 2; ++c) pairs.emplace_back(a * 40 + b * 3 + c, a + b * 6 + c * 30);
    }
  }
  std::optional<MoveNest> nest = NestOfPairs(pairs);
  ASSERT_TRUE(nest.has_value());
  Pairs walked;
  ForEachPair(*nest, [&](int64_t dst, int64_t src) { walked.emplace_back(dst, src); });
  EXPECT_EQ(walked, pairs);
}

TEST(NestOfPairs, RefusesWhatNoNestEnumerates) {
  EXPECT_FALSE(NestOfPairs({}).has_value());
  // A permutation without strides.
  EXPECT_FALSE(NestOfPairs({{0, 3}, {1, 0}, {2, 2}, {3, 1}}).has_value());
  // A block that repeats but leaves a short tail.
  EXPECT_FALSE(NestOfPairs({{0, 0}, {1, 1}, {4, 4}, {5, 5}, {8, 8}}).has_value());
}

TEST(NestOfPairs, OnePairIsOneLevel) {
  std::optional<MoveNest> nest = NestOfPairs({{0, 0}});
  ASSERT_TRUE(nest.has_value());
  EXPECT_EQ(nest->elements(), 1);
}

TEST(SlotsWritten, FollowsLanesRowsAndTargets) {
  LaneContractionSpec spec;
  spec.rows = 2;
  spec.packet = 4;
  spec.group = 2;  // two tree groups
  spec.out_times = 20;
  spec.out_packet = 2;
  spec.live_row = {1, 0};       // Row 1 is padding
  spec.target = {1, -1};        // group 0 lands at packet position 1, group 1 is dropped
  spec.acc_lane.assign(2 * kLanes, -1);
  for (int64_t d = 0; d < kLanes; ++d) spec.acc_lane[d] = d;  // block 0: retained 0 .. 15
  spec.acc_lane[kLanes] = 19;                                 // block 1: one lane, never stepped
  spec.step_acc = {0, 0};
  std::vector<uint8_t> expected(2 * 20 * 2, 0);
  for (int64_t t = 0; t < 16; ++t) expected[(0 * 20 + t) * 2 + 1] = 1;
  EXPECT_EQ(SlotsWritten(spec), expected);
}

// x [A, K] contracted with w [R, K] through the TRF on every slice of a cluster, accumulated into
// [A] x packet `out_packet`, optionally cast to bf16 with packet `cast_packet`, committed as
// `element`; what DM then holds, read back as [S, element], as bit patterns.
struct Pipeline {
  DType type = DType::kBF16;
  int rows = 8, k = 128;
  std::string out_packet = "R";
  std::string cast_packet;  // empty: no cast, the f32 sums committed
  std::string element = "A, R";
  bool commit_cast = false;
  bool two_slices = false;  // the Slice Bitmap enables slices 0 and 2 only
};

std::vector<uint32_t> RunPipeline(Backend& backend, const MappingScope& s, const Pipeline& p, const HostTensor& x,
                                  const HostTensor& w) {
  auto device = std::make_unique<Device>(1);
  Context ctx(*device, backend);
  const Mapping cluster = s.m("1 # 2"), slice = s.m("S # 256");
  absl::StatusOr<HbmTensor> xh = x.to_hbm(ctx.pdma, 0, s.m("1"), x.mapping());
  absl::StatusOr<HbmTensor> wh = w.to_hbm(ctx.pdma, 1 << 20, s.m("1"), w.mapping());
  EXPECT_TRUE(xh.ok() && wh.ok());
  absl::StatusOr<DmTensor> xd = xh->to_dm(ctx.tdma, 0, cluster, slice, s.m("A, K"));
  absl::StatusOr<DmTensor> wd = wh->to_dm(ctx.tdma, 1 << 15, cluster, slice, s.m("R, K"));
  EXPECT_TRUE(xd.ok()) << xd.status();
  EXPECT_TRUE(wd.ok()) << wd.status();
  absl::StatusOr<TrfTensor> trf = ctx.sub.begin(wd->view())
                                      .fetch(p.type, s.m("R, K / 16"), s.m("K % 16"))
                                      .collect(s.m("R, K / 16"), s.m("K % 16"))
                                      .to_trf(s.m("R"), s.m("K"), TrfAddress::kFull);
  EXPECT_TRUE(trf.ok()) << trf.status();
  Stream sums = ctx.main.begin(xd->view())
                    .fetch(p.type, s.m("A, K / 16"), s.m("K % 16"))
                    .collect(s.m("A, K / 16"), s.m("K % 16"))
                    .align(s.m("A, K / 32"), s.m("K % 32"), *trf)
                    .contract(s.m("1"))
                    .accumulate(s.m("A"), s.m(p.out_packet), AccumulationKind::kInterleaved);
  if (!p.cast_packet.empty()) sums = std::move(sums).cast(DType::kBF16, s.m(p.cast_packet));
  if (p.commit_cast) sums = std::move(sums).commit_cast(DType::kBF16);
  absl::StatusOr<DmTensor> out = p.two_slices ? std::move(sums).commit(s.m(p.element), 1 << 16, SliceBitmap::Only({0, 2}))
                                              : std::move(sums).commit(s.m(p.element), 1 << 16);
  EXPECT_TRUE(out.ok()) << out.status();
  if (!out.ok()) return {};
  // The bytes as they are: slices a Slice Bitmap left out were never written (ReadAs would refuse).
  absl::StatusOr<HostTensor> host = ReadImage(*out, Pair({s.m("S"), s.m(p.element)}));
  EXPECT_TRUE(host.ok()) << host.status();
  return host.ok() ? host->ToBits() : std::vector<uint32_t>{};
}

struct Case {
  std::string name;
  Pipeline pipeline;
  bool fused_epilogue;  // whether the epilogue applies (else the stages run on the image)
};

class EpilogueAgrees : public testing::TestWithParam<Case> {};

TEST_P(EpilogueAgrees, WithTheInterpreterOnOneAndTwoThreads) {
  const Case& c = GetParam();
  MappingScope s(*Axes::Parse(absl::StrCat("S = 4, A = 32, K = ", c.pipeline.k, ", R = ", c.pipeline.rows)));
  HostTensor x = *HostTensor::Random(c.pipeline.type, s.m("S, A, K"), 61);
  HostTensor w = *HostTensor::Random(c.pipeline.type, s.m("S, R, K"), 62);
  interp::Interpreter interpreter;
  const std::vector<uint32_t> expected = RunPipeline(interpreter, s, c.pipeline, x, w);
  ASSERT_FALSE(expected.empty());
  for (int threads : {1, 2}) {
    absl::StatusOr<std::unique_ptr<JitBackend>> jit = JitBackend::Create({.threads = threads});
    ASSERT_TRUE(jit.ok()) << jit.status();
    const std::vector<uint32_t> got = RunPipeline(**jit, s, c.pipeline, x, w);
    EXPECT_EQ((*jit)->stats().fused_pipelines, 1) << threads << " threads";
    EXPECT_EQ((*jit)->stats().fused_epilogues, c.fused_epilogue ? 1 : 0) << threads << " threads";
    EXPECT_EQ(got, expected) << threads << " threads";
  }
}

INSTANTIATE_TEST_SUITE_P(
    All, EpilogueAgrees,
    testing::Values(
        // The GEMM's shape: the f32 sums cast to bf16 (packet padded to a flit), committed
        // row-major: each slice's [R][A] accumulators transposed into [A, R].
        Case{"cast_transposed", {.cast_packet = "R # 16"}, true},
        // No cast: the f32 sums committed as they are.
        Case{"f32_sums", {}, true},
        // The Commit Adapter's cast instead of the Cast Engine's.
        Case{"commit_cast", {.commit_cast = true}, true},
        // A Slice Bitmap: the disabled slices keep their bytes, which the per-slice walk of the
        // Commit Sequencer's entries does not express; the cast and commit run on the image.
        Case{"slice_bitmap", {.cast_packet = "R # 16", .two_slices = true}, false},
        // Fewer Rows than the Reducer's packet: the padding Rows are never committed.
        Case{"padded_rows", {.rows = 4, .out_packet = "R # 8", .cast_packet = "R # 8 # 16"}, true}),
    [](const testing::TestParamInfo<Case>& info) { return info.param.name; });

// The GEMM sample (cluster `1 # 2`: half the slices dead) runs its cast and commit fused and
// still agrees with its Eigen reference within the bound of its summation order (`visa check
// --all` compares it with the interpreter byte for byte).
TEST(EpilogueSamples, GemmK64RunsFused) {
  const samples::Sample* sample = samples::FindSample("gemm_k64");
  ASSERT_NE(sample, nullptr);
  for (int threads : {1, 2}) {
    absl::StatusOr<std::unique_ptr<JitBackend>> jit = JitBackend::Create({.threads = threads});
    ASSERT_TRUE(jit.ok()) << jit.status();
    absl::StatusOr<samples::SampleRun> run = sample->Run(**jit);
    ASSERT_TRUE(run.ok()) << run.status();
    EXPECT_FALSE(run->mismatch.has_value()) << *run->mismatch;
    EXPECT_EQ((*jit)->stats().fused_epilogues, 1) << threads << " threads";
  }
}

}  // namespace
}  // namespace visa::jit
