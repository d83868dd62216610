// The tiled attention (samples/models/tiled_attention.h): its host reference on cases with known
// answers, the reduced sample on both backends (identical, within the reference's bound, with the
// running max moving between tiles), and the shapes it refuses.
#include <cmath>
#include <sstream>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "interp/interpreter.h"
#include "runtime/dma.h"
#include "samples/models/tiled_attention.h"
#include "tools/check_command.h"

namespace visa::models {
namespace {

using ::testing::HasSubstr;

// Keys all alike: every weight is 1/T, the output is V's column means.
TEST(TiledAttentionReferenceTest, EqualScoresAverageTheValues) {
  const AttentionTiles shape{.queries = 1, .head_dim = 32, .keys = 64, .tile = 32};
  std::vector<double> q(32, 0.5), k(64 * 32, 1.0), v(64 * 32);
  for (int64_t t = 0; t < 64; ++t) {
    for (int64_t d = 0; d < 32; ++d) v[static_cast<size_t>(t * 32 + d)] = static_cast<double>(t + d);
  }
  const AttentionReference r = ReferenceAttention(shape, q, k, v);
  for (int64_t d = 0; d < 32; ++d) EXPECT_NEAR(r.out[static_cast<size_t>(d)], 31.5 + static_cast<double>(d), 1e-9);
  EXPECT_EQ(r.max_moves, 0);
}

// One key far above the rest takes all the weight; its tile (the second) raises the running max.
TEST(TiledAttentionReferenceTest, ADominantKeySelectsItsValue) {
  const AttentionTiles shape{.queries = 1, .head_dim = 32, .keys = 64, .tile = 32};
  std::vector<double> q(32, 1.0), k(64 * 32, 0.0), v(64 * 32, 0.0);
  for (int64_t d = 0; d < 32; ++d) {
    k[static_cast<size_t>(40 * 32 + d)] = 10.0;  // score 320 / sqrt(32)
    v[static_cast<size_t>(40 * 32 + d)] = 7.0;
  }
  const AttentionReference r = ReferenceAttention(shape, q, k, v);
  EXPECT_NEAR(r.out[0], 7.0, 1e-9);
  EXPECT_EQ(r.max_moves, 1);
}

TEST(TiledAttentionTest, ReducedSampleMatchesTheReferenceAndIsIdenticalOnBothBackends) {
  const samples::Sample* sample = samples::FindSample("tiled_attention_reduced");
  ASSERT_NE(sample, nullptr);
  interp::Interpreter interpreter;
  absl::StatusOr<samples::SampleRun> run = sample->Run(interpreter);
  ASSERT_TRUE(run.ok()) << run.status();
  EXPECT_FALSE(run->mismatch.has_value()) << run->Summary(sample->name);
  EXPECT_EQ(run->elements, 8 * 64);
  // The online softmax's rescaling ran: some tile after the first raised some row's max.
  EXPECT_THAT(run->note, ::testing::Not(HasSubstr("moved in 0 ")));
  std::ostringstream out, err;
  EXPECT_EQ(cli::CheckSampleCommand({.sample = "tiled_attention_reduced", .progress = false}, out, err), 0)
      << out.str() << err.str();
  EXPECT_THAT(out.str(), HasSubstr("identical"));
}

TEST(TiledAttentionTest, RefusesAKeyTileThatDoesNotDivideTheSequence) {
  const AttentionTiles shape{.queries = 8, .head_dim = 64, .keys = 1000, .tile = 128};
  absl::StatusOr<MappingScope> m = MappingScope::Parse(shape.Axes());
  ASSERT_TRUE(m.ok());
  Device device(1);
  interp::Interpreter interpreter;
  Context ctx(device, interpreter);
  absl::StatusOr<HbmTensor> q = HbmTensor::Create(device, DType::kBF16, m->m("1"), m->m("S, D"), 0);
  ASSERT_TRUE(q.ok()) << q.status();
  absl::StatusOr<HbmTensor> out = TiledAttention(ctx, *m, shape, *q, *q, *q);
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(out.status().message(), HasSubstr("tiled attention"));
  EXPECT_THAT(out.status().message(), HasSubstr("J a multiple of 32 up to 1024 dividing T"));
}

}  // namespace
}  // namespace visa::models
