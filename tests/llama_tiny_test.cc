// The Llama-style model (samples/models/): the prefill's logits identical on the interpreter and
// the JIT and within the bf16-derived bound of the f32 host reference; prefill then decode
// launches of traced programs generating the reference's greedy tokens; bad step inputs refused.
#include <set>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "interp/interpreter.h"
#include "jit/jit_backend.h"
#include "samples/models/llama_check.h"
#include "samples/models/llama_program.h"
#include "samples/models/llama_reference.h"
#include "samples/sample.h"

namespace visa::models {
namespace {

using ::testing::HasSubstr;

class LlamaTinyTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    weights_ = new LlamaWeights(MakeWeights(LlamaConfig{}));
    jit_ = jit::JitBackend::Create({.threads = 0})->release();
  }
  static void TearDownTestSuite() {
    delete weights_;
    delete jit_;
  }

  // The prefill's logits on `backend`.
  static std::vector<float> Prefill(Backend& backend, const std::vector<int32_t>& prompt) {
    const LlamaConfig c;
    absl::StatusOr<LlamaDeviceState> state = UploadModel(c, *weights_);
    EXPECT_TRUE(state.ok()) << state.status();
    if (!state.ok()) return {};
    absl::StatusOr<LlamaPhase> phase = TracePhase(c, *state, c.prompt);
    EXPECT_TRUE(phase.ok()) << phase.status();
    if (!phase.ok()) return {};
    absl::StatusOr<std::vector<float>> logits = RunPhase(c, *state, *phase, backend, prompt, 0);
    EXPECT_TRUE(logits.ok()) << logits.status();
    return logits.ok() ? *logits : std::vector<float>{};
  }

  static LlamaWeights* weights_;
  static jit::JitBackend* jit_;
};
LlamaWeights* LlamaTinyTest::weights_ = nullptr;
jit::JitBackend* LlamaTinyTest::jit_ = nullptr;

TEST_F(LlamaTinyTest, PrefillOnTheJitIsWithinTheBoundOfTheReference) {
  const LlamaConfig c;
  const std::vector<int32_t> prompt = MakePrompt(c, kPromptSeed);
  const std::vector<float> on_jit = Prefill(*jit_, prompt);
  ASSERT_EQ(on_jit.size(), static_cast<size_t>(c.vocab));
  LlamaReference reference(c, *weights_);
  const std::vector<float> want = reference.Forward(prompt, 0);
  const LogitsComparison compared = CompareLogits(c, *weights_, on_jit, want, reference.last_hidden());
  EXPECT_FALSE(compared.mismatch.has_value()) << *compared.mismatch;
  EXPECT_GT(compared.max_error, 0.0);  // the orders of addition do differ: the bound is exercised
  // The greedy choice is not a near tie, so the token comparisons mean something.
  EXPECT_GT(TopMargin(want), compared.max_bound);
}

// Prefill, then 8 launches of the one traced decode program, each token fed back: the device's
// caches persist between launches, and the tokens are the reference's greedy tokens.
TEST_F(LlamaTinyTest, DecodeGeneratesTheReferenceTokensOnTheJit) {
  const LlamaConfig c;
  const std::vector<int32_t> prompt = MakePrompt(c, kPromptSeed);
  constexpr int64_t kSteps = 8;
  absl::StatusOr<Generation> g = Generate(c, *weights_, *jit_, prompt, kSteps);
  ASSERT_TRUE(g.ok()) << g.status();
  LlamaReference reference(c, *weights_);
  std::vector<int32_t> want = {Argmax(reference.Forward(prompt, 0))};
  for (int64_t s = 0; s < kSteps; ++s) {
    const std::vector<float> logits = reference.Forward({want.back()}, c.prompt + s);
    const LogitsComparison compared =
        CompareLogits(c, *weights_, g->logits[static_cast<size_t>(s + 1)], logits, reference.last_hidden());
    EXPECT_FALSE(compared.mismatch.has_value()) << "step " << s << ": " << *compared.mismatch;
    want.push_back(Argmax(logits));
  }
  EXPECT_EQ(g->tokens, want);
  EXPECT_EQ(g->decode_seconds.size(), static_cast<size_t>(kSteps));
  // Not one token repeated: each step's choice depends on what the cache holds.
  EXPECT_GT(std::set<int32_t>(want.begin(), want.end()).size(), 2u);
}

// The interpreter is slower: a smaller variant (8 prompt tokens, a cache of 32 positions, every
// other shape kept) runs prefill and 2 decode steps on both backends, bit for bit the same, and
// generates the reference's tokens.
TEST_F(LlamaTinyTest, TheInterpreterAndTheJitAreIdenticalOnASmallVariant) {
  LlamaConfig c;
  c.prompt = 8;
  c.max_positions = 32;
  const LlamaWeights weights = MakeWeights(c);
  const std::vector<int32_t> prompt = MakePrompt(c, kPromptSeed);
  constexpr int64_t kSteps = 2;
  interp::Interpreter interpreter;
  absl::StatusOr<Generation> on_interp = Generate(c, weights, interpreter, prompt, kSteps);
  ASSERT_TRUE(on_interp.ok()) << on_interp.status();
  absl::StatusOr<Generation> on_jit = Generate(c, weights, *jit_, prompt, kSteps);
  ASSERT_TRUE(on_jit.ok()) << on_jit.status();
  EXPECT_EQ(on_interp->logits, on_jit->logits);  // bit for bit (no NaN among logits)
  LlamaReference reference(c, weights);
  std::vector<int32_t> want = {Argmax(reference.Forward(prompt, 0))};
  for (int64_t s = 0; s < kSteps; ++s) want.push_back(Argmax(reference.Forward({want.back()}, c.prompt + s)));
  EXPECT_EQ(on_interp->tokens, want);
}

TEST_F(LlamaTinyTest, ATokenOutsideTheVocabularyFailsTheEmbeddingGather) {
  const LlamaConfig c;
  absl::StatusOr<LlamaDeviceState> state = UploadModel(c, *weights_);
  ASSERT_TRUE(state.ok()) << state.status();
  absl::StatusOr<LlamaPhase> decode = TracePhase(c, *state, 1);
  ASSERT_TRUE(decode.ok()) << decode.status();
  absl::StatusOr<std::vector<float>> logits =
      RunPhase(c, *state, *decode, *jit_, {static_cast<int32_t>(c.vocab)}, 0);
  ASSERT_FALSE(logits.ok());
  EXPECT_THAT(logits.status().message(), HasSubstr("Indirect Access"));
}

TEST_F(LlamaTinyTest, APositionPastTheCacheIsRefused) {
  const LlamaConfig c;
  absl::StatusOr<LlamaDeviceState> state = UploadModel(c, *weights_);
  ASSERT_TRUE(state.ok()) << state.status();
  absl::StatusOr<LlamaPhase> decode = TracePhase(c, *state, 1);
  ASSERT_TRUE(decode.ok()) << decode.status();
  absl::StatusOr<std::vector<float>> logits = RunPhase(c, *state, *decode, *jit_, {1}, c.max_positions);
  ASSERT_FALSE(logits.ok());
  EXPECT_THAT(logits.status().message(), HasSubstr("do not fit"));
}

TEST(LlamaSamplesTest, TheModelsProgramsAreSamplesTheCommandsFind) {
  for (const char* name : {"llama_tiny_prefill", "llama_tiny_decode", "llama_tiny_generate", "llama_small_generate"}) {
    const samples::Sample* sample = samples::FindSample(name);
    ASSERT_NE(sample, nullptr) << name;
    EXPECT_TRUE(static_cast<bool>(sample->runner)) << name;
  }
}

}  // namespace
}  // namespace visa::models
