// The Mixture of Experts kernel (samples/models/moe_layer.h): its host reference on the page's
// worked examples, and the device's branchless TopK stages against the reference on every case,
// identical on the interpreter and the JIT.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <memory>
#include <sstream>

#include "interp/interpreter.h"
#include "jit/jit_backend.h"
#include "samples/models/moe_cases.h"
#include "samples/models/moe_layer.h"
#include "samples/models/moe_reference.h"
#include "samples/sample.h"
#include "tests/common/sample_check_helpers.h"
#include "tools/check_command.h"

namespace visa::models {
namespace {

// The page's example of the expert id expansion: expert 0 two blocks, expert 1 three, expert 3
// three (expert 2 none): Expert_IDs = [0, 0, 1, 1, 1, 3, 3, 3].
TEST(MoeReferenceTest, BlocksFollowThePagesExample) {
  const MoeShape shape{.tokens = 7, .hidden = 8, .ffn = 8, .experts = 4, .top_k = 2, .block = 2};
  MoeRouting routing;
  // 14 assignments: expert 0 x3 (2 blocks), expert 1 x5 (3 blocks), expert 3 x6 (3 blocks).
  routing.topk = {0, 1, 0, 3, 0, 3, 1, 3, 1, 3, 1, 3, 1, 3};
  const MoeBlocks b = ReferenceBlocks(shape, routing);
  EXPECT_THAT(b.count, ::testing::ElementsAre(3, 5, 0, 6));
  EXPECT_THAT(b.num_blocks, ::testing::ElementsAre(2, 3, 0, 3));
  EXPECT_THAT(b.global_offset, ::testing::ElementsAre(0, 2, 5, 5));
  EXPECT_THAT(b.expert_ids, ::testing::ElementsAre(0, 0, 1, 1, 1, 3, 3, 3));
  EXPECT_EQ(b.grid, 8);
  // Token 0 is expert 0's first and expert 1's first: slots 0 and 2 * 2 = 4.
  EXPECT_EQ(b.scatter_idx[0], 0);
  EXPECT_EQ(b.scatter_idx[1], 4);
}

TEST(MoeReferenceTest, TiesGoToTheHigherExpertId) {
  const MoeShape shape{.tokens = 1, .hidden = 1, .ffn = 1, .experts = 4, .top_k = 2, .block = 1};
  const MoeRouting r = ReferenceRouting(shape, {1.0f, 2.0f, 1.0f, 2.0f});
  EXPECT_THAT(r.topk, ::testing::ElementsAre(3, 1));
  EXPECT_THAT(r.rank, ::testing::ElementsAre(3, 1, 2, 0));
  EXPECT_NEAR(r.weights[0], 0.5, 1e-12);
}

TEST(MoeReferenceTest, TheWorstGridCaseNeedsThePagesGridSize) {
  const MoeShape shape;
  const MoeInputs in = MakeMoeInputs(shape, MoeCase::kWorstGrid);
  const MoeRouting r = ReferenceRouting(shape, ReferenceScores(shape, in.x, in.w_router));
  const MoeBlocks b = ReferenceBlocks(shape, r);
  for (int32_t c : b.count) EXPECT_EQ(c % shape.block, 1);
  EXPECT_EQ(b.grid, shape.WorstGrid());
  EXPECT_EQ(b.grid, (64 * 2 - 32) / 8 + 32);
}

TEST(MoeReferenceTest, TheSkewedCaseSendsEveryTokenToExpert3) {
  const MoeShape shape;
  const MoeInputs in = MakeMoeInputs(shape, MoeCase::kSkewed);
  const MoeBlocks b = ReferenceBlocks(shape, ReferenceRouting(shape, ReferenceScores(shape, in.x, in.w_router)));
  EXPECT_EQ(b.count[3], shape.tokens);
}

class MoeRoutingTest : public ::testing::TestWithParam<MoeCase> {};

TEST_P(MoeRoutingTest, TopKEqualsTheReferenceOnBothBackends) {
  const MoeShape shape;
  const MoeInputs in = MakeMoeInputs(shape, GetParam());
  const MoeRouting want = ReferenceRouting(shape, ReferenceScores(shape, in.x, in.w_router));
  interp::Interpreter interpreter;
  absl::StatusOr<MoeRoutingRun> got = RunMoeRouting(interpreter, shape, in.x, in.w_router);
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(got->scores, want.scores);
  EXPECT_EQ(got->rank, want.rank);
  EXPECT_EQ(got->topk, want.topk);
  ASSERT_EQ(got->weights.size(), want.weights.size());
  // f32 exp, sum and division of the K = 2 weights: a few f32 ulps of values at most 1.
  for (size_t i = 0; i < want.weights.size(); ++i) EXPECT_NEAR(got->weights[i], want.weights[i], 1e-6) << i;
  absl::StatusOr<std::unique_ptr<jit::JitBackend>> jit = jit::JitBackend::Create({.threads = 2});
  ASSERT_TRUE(jit.ok()) << jit.status();
  absl::StatusOr<MoeRoutingRun> compiled = RunMoeRouting(**jit, shape, in.x, in.w_router);
  ASSERT_TRUE(compiled.ok()) << compiled.status();
  EXPECT_EQ(compiled->rank, got->rank);
  EXPECT_EQ(compiled->scores, got->scores);
  EXPECT_EQ(compiled->topk, got->topk);
  EXPECT_EQ(compiled->weights, got->weights);
}

INSTANTIATE_TEST_SUITE_P(Cases, MoeRoutingTest,
                         ::testing::Values(MoeCase::kRandom, MoeCase::kSkewed, MoeCase::kTied, MoeCase::kWorstGrid),
                         [](const auto& info) { return std::string(MoeCaseName(info.param)); });

// The samples: each case checked against the reference, and `visa check` finds every op's result
// identical on the two backends.
TEST(MoeSampleTest, RoutingSamplesMatchTheReferenceAndAreIdenticalOnBothBackends) {
  for (const char* name : {"moe_routing", "moe_routing_worst_grid"}) {
    SCOPED_TRACE(name);
    sample_test::ExpectMatchesReferenceAndBackendsAgree(name);
  }
}

}  // namespace
}  // namespace visa::models
