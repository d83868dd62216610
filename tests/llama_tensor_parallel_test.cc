// The Llama-style model split over chips, tensor parallel (samples/models/llama_chip_split.h,
// chip_all_reduce.h): the split refuses shapes it cannot divide (naming the rule); each chip's
// weights are the model's heads and F columns (host loops: the chips' partial products sum to the
// one-chip product); the AllReduce leaves the same f32 sum, ((x0 + x1) + (x2 + x3)), on every chip
// on both backends; the 4-chip prefill's logits are within the one-chip sample's bound of the host
// reference (and of the one-chip logits); the 4-chip decode generates the reference's tokens; the
// interpreter and the JIT agree bit for bit on 4 chips.
#include <cmath>
#include <cstdint>
#include <iostream>
#include <memory>
#include <set>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "dsl/mapping_parser.h"
#include "interp/interpreter.h"
#include "jit/jit_backend.h"
#include "runtime/transfer.h"
#include "samples/models/chip_all_reduce.h"
#include "samples/models/llama_check.h"
#include "samples/models/llama_chip_split.h"
#include "samples/models/llama_program.h"
#include "samples/models/llama_reference.h"
#include "samples/sample.h"
#include "tests/common/backends.h"

namespace visa::models {
namespace {

using ::testing::HasSubstr;

LlamaConfig OnChips(LlamaConfig c, int64_t chips) {
  c.chips = chips;
  return c;
}

TEST(LlamaChipSplitTest, FourChipsHoldOneQueryHeadAndAQuarterOfF) {
  const LlamaConfig c = OnChips(LlamaConfig{}, 4);  // 2 KV heads x 2 groups, F = 512
  absl::StatusOr<LlamaConfig> local = ChipConfig(c);
  ASSERT_TRUE(local.ok()) << local.status();
  EXPECT_EQ(local->kv_heads, 1);
  EXPECT_EQ(local->groups, 1);
  EXPECT_EQ(local->ffn, 128);
  EXPECT_EQ(local->hidden, c.hidden);
  for (int64_t chip = 0; chip < 4; ++chip) {
    absl::StatusOr<ChipHeads> heads = HeadsOfChip(c, chip);
    ASSERT_TRUE(heads.ok()) << heads.status();
    // Query head g * h_kv + h is chip `chip`'s: chip p computes query head p.
    EXPECT_EQ(heads->g_begin * c.kv_heads + heads->h_begin, chip);
  }
  // Two chips divide the KV heads: one KV head with both its groups each.
  absl::StatusOr<LlamaConfig> two = ChipConfig(OnChips(LlamaConfig{}, 2));
  ASSERT_TRUE(two.ok()) << two.status();
  EXPECT_EQ(two->kv_heads, 1);
  EXPECT_EQ(two->groups, 2);
  EXPECT_EQ(two->ffn, 256);
}

TEST(LlamaChipSplitTest, ShapesThatDoNotSplitAreRefusedNamingTheRule) {
  EXPECT_THAT(ChipConfig(OnChips(LlamaConfig{}, 3)).status().message(), HasSubstr("power of two"));
  // 8 chips over 2 KV heads: 4 chips per KV head, but only 2 groups to share among them.
  EXPECT_THAT(ChipConfig(OnChips(LlamaConfig{}, 8)).status().message(), HasSubstr("do not split over 8 chips"));
  LlamaConfig narrow = OnChips(LlamaConfig{}, 4);
  narrow.ffn = 96;
  EXPECT_THAT(ChipConfig(narrow).status().message(), HasSubstr("multiple of 32 columns per chip"));
  // The upload refuses it too, before any device is made.
  const LlamaConfig three = OnChips(LlamaConfig{}, 3);
  EXPECT_THAT(UploadModel(three, MakeWeights(LlamaConfig{})).status().message(), HasSubstr("power of two"));
}

// out[n] = sum_k w_t[n, k] * x[k] in double (w_t is [N, K]).
std::vector<double> Product(const std::vector<float>& w_t, const std::vector<double>& x) {
  const size_t k = x.size(), n = w_t.size() / k;
  std::vector<double> out(n, 0.0);
  for (size_t i = 0; i < n; ++i) {
    for (size_t j = 0; j < k; ++j) out[i] += static_cast<double>(w_t[i * k + j]) * x[j];
  }
  return out;
}

// The Megatron split on the host: each chip's column-split projections are the model's rows of its
// heads, and the row-split projections' partial products over the chips sum to the model's.
TEST(LlamaChipSplitTest, TheChipsWeightsAreTheModelsHeadsAndFColumns) {
  const LlamaConfig c = OnChips(LlamaConfig{}, 4);
  const LlamaWeights w = MakeWeights(LlamaConfig{});
  const LlamaLayerWeights& layer = w.layers[1];
  const int64_t D = c.hidden, K = c.head_dim, Q = c.q_heads();
  std::vector<double> attn(static_cast<size_t>(Q * K)), act(static_cast<size_t>(c.ffn));
  for (size_t i = 0; i < attn.size(); ++i) attn[i] = std::sin(0.37 * static_cast<double>(i));
  for (size_t i = 0; i < act.size(); ++i) act[i] = std::cos(0.11 * static_cast<double>(i));
  std::vector<double> o_sum(static_cast<size_t>(D), 0.0), down_sum(static_cast<size_t>(D), 0.0);
  const int64_t F = c.ffn / c.chips;
  for (int64_t chip = 0; chip < c.chips; ++chip) {
    const ChipHeads heads = *HeadsOfChip(c, chip);
    const LlamaLayerWeights share = ChipLayerWeights(c, heads, layer, chip);
    // wq [G, H, C, D]: chip p's rows are query head p's (q head = g * h_kv + h).
    ASSERT_EQ(share.wq.size(), static_cast<size_t>(K * D));
    EXPECT_TRUE(std::equal(share.wq.begin(), share.wq.end(), layer.wq.begin() + chip * K * D));
    // Its K and V rows are KV head h's.
    EXPECT_TRUE(std::equal(share.wk.begin(), share.wk.end(), layer.wk.begin() + heads.h_begin * K * D));
    EXPECT_TRUE(std::equal(share.wv.begin(), share.wv.end(), layer.wv.begin() + heads.h_begin * K * D));
    EXPECT_TRUE(std::equal(share.up.begin(), share.up.end(), layer.up.begin() + chip * F * D));
    EXPECT_TRUE(std::equal(share.gate.begin(), share.gate.end(), layer.gate.begin() + chip * F * D));
    EXPECT_EQ(share.attn_norm, layer.attn_norm);
    // The row-split projections on the chip's part of the input (query head p's E values, F
    // columns chip * F ..).
    const std::vector<double> attn_part(attn.begin() + chip * K, attn.begin() + (chip + 1) * K);
    const std::vector<double> act_part(act.begin() + chip * F, act.begin() + (chip + 1) * F);
    const std::vector<double> o_part = Product(share.wo, attn_part), down_part = Product(share.down, act_part);
    for (int64_t d = 0; d < D; ++d) {
      o_sum[static_cast<size_t>(d)] += o_part[static_cast<size_t>(d)];
      down_sum[static_cast<size_t>(d)] += down_part[static_cast<size_t>(d)];
    }
  }
  const std::vector<double> o_full = Product(layer.wo, attn), down_full = Product(layer.down, act);
  for (int64_t d = 0; d < D; ++d) {
    EXPECT_NEAR(o_sum[static_cast<size_t>(d)], o_full[static_cast<size_t>(d)], 1e-9) << d;
    EXPECT_NEAR(down_sum[static_cast<size_t>(d)], down_full[static_cast<size_t>(d)], 1e-9) << d;
  }
}

// The AllReduce of f32 GEMM tiles (Slice [D / 32], [S, D % 32] per slice) on 4 chips, on both
// backends: every chip holds (x0 + x1) + (x2 + x3) in f32, the same bits, from host loops.
TEST(ChipAllReduceTest, EveryChipHoldsTheSameSumOnBothBackends) {
  absl::StatusOr<MappingScope> scope = MappingScope::Parse("S = 3, D = 64, K = 32, P = 4");
  ASSERT_TRUE(scope.ok()) << scope.status();
  const MappingScope& m = *scope;
  const MatmulSpec spec{"test", "D / 32", "S", "D", Over("", "K")};
  absl::StatusOr<HostTensor> host = HostTensor::Random(DType::kF32, m.m("P, S, D"), 11);
  ASSERT_TRUE(host.ok()) << host.status();
  const std::vector<double> x = host->ToValues();
  const size_t part = x.size() / 4;
  std::vector<float> want(part);
  for (size_t i = 0; i < part; ++i) {
    const float x0 = static_cast<float>(x[i]), x1 = static_cast<float>(x[part + i]),
                x2 = static_cast<float>(x[2 * part + i]), x3 = static_cast<float>(x[3 * part + i]);
    want[i] = (x0 + x1) + (x2 + x3);
  }
  for (int b = 0; b < test::kBackendCount; ++b) {
    SCOPED_TRACE(b == 0 ? "interpreter" : "jit");
    std::unique_ptr<Backend> backend = test::MakeBackend(b);
    absl::StatusOr<std::unique_ptr<Device>> device = Device::Create(4);
    ASSERT_TRUE(device.ok()) << device.status();
    Context ctx(**device, *backend);
    absl::StatusOr<HbmTensor> hbm = host->to_hbm(ctx.pdma, Address::Any(), m.m("P"), m.m("S, D"));
    ASSERT_TRUE(hbm.ok()) << hbm.status();
    absl::StatusOr<DmTensor> tile = hbm->to_dm(ctx.tdma, Address::Any(), m.m("P"), Cluster(m), Slices(m, spec.slice),
                                               m.m("S, D % 32"));
    ASSERT_TRUE(tile.ok()) << tile.status();
    absl::StatusOr<DmTensor> sum = AllReduceTiles(ctx, m, spec, *tile, 4, "sum");
    ASSERT_TRUE(sum.ok()) << sum.status();
    absl::StatusOr<HostTensor> got = ReadAs(*sum, m.m("P, S, D"));
    ASSERT_TRUE(got.ok()) << got.status();
    const std::vector<double> values = got->ToValues();
    for (size_t i = 0; i < values.size(); ++i) {
      ASSERT_EQ(static_cast<float>(values[i]), want[i % part]) << "chip " << i / part << ", element " << i % part;
    }
  }
}

TEST(ChipAllReduceTest, AShuffleOfANonChipAxisTensorIsRefused) {
  absl::StatusOr<MappingScope> scope = MappingScope::Parse("S = 3, D = 64, K = 32, P = 4");
  ASSERT_TRUE(scope.ok());
  const MappingScope& m = *scope;
  const MatmulSpec spec{"test", "D / 32", "S", "D", Over("", "K")};
  interp::Interpreter interpreter;
  absl::StatusOr<std::unique_ptr<Device>> device = Device::Create(4);
  ASSERT_TRUE(device.ok());
  Context ctx(**device, interpreter);
  // On chip 0 alone (`1 # 4`): the chip shuffle's rule wants the Chip level to be one axis of
  // every chip.
  absl::StatusOr<HostTensor> host = HostTensor::Random(DType::kF32, m.m("S, D"), 3);
  ASSERT_TRUE(host.ok());
  absl::StatusOr<HbmTensor> hbm = host->to_hbm(ctx.pdma, Address::Any(), m.m("1 # 4"), m.m("S, D"));
  ASSERT_TRUE(hbm.ok()) << hbm.status();
  absl::StatusOr<DmTensor> tile =
      hbm->to_dm(ctx.tdma, Address::Any(), Cluster(m), Slices(m, spec.slice), m.m("S, D % 32"));
  ASSERT_TRUE(tile.ok()) << tile.status();
  absl::StatusOr<DmTensor> sum = AllReduceTiles(ctx, m, spec, *tile, 4, "sum");
  ASSERT_FALSE(sum.ok());
  EXPECT_THAT(sum.status().message(), HasSubstr("Chip Shuffle: ChipShuffle(1, 0, 3, 2)"));
}

class LlamaTensorParallelTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    weights_ = new LlamaWeights(MakeWeights(LlamaConfig{}));
    jit_ = jit::JitBackend::Create({.threads = 0})->release();
  }
  static void TearDownTestSuite() {
    delete weights_;
    delete jit_;
  }

  static std::vector<float> Prefill(const LlamaConfig& c, Backend& backend, const std::vector<int32_t>& prompt) {
    absl::StatusOr<LlamaDeviceState> state = UploadModel(c, *weights_);
    EXPECT_TRUE(state.ok()) << state.status();
    if (!state.ok()) return {};
    EXPECT_EQ(state->device->chips(), c.chips);
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
LlamaWeights* LlamaTensorParallelTest::weights_ = nullptr;
jit::JitBackend* LlamaTensorParallelTest::jit_ = nullptr;

// The oracle of llama_tiny_prefill: the f32 host reference, within the same bf16-derived bound;
// and the one-chip program's logits within that bound too.
TEST_F(LlamaTensorParallelTest, FourChipPrefillIsWithinTheOneChipBoundOfTheReference) {
  const LlamaConfig one;
  const std::vector<int32_t> prompt = MakePrompt(one, kPromptSeed);
  const std::vector<float> four_chips = Prefill(OnChips(one, 4), *jit_, prompt);
  const std::vector<float> one_chip = Prefill(one, *jit_, prompt);
  ASSERT_EQ(four_chips.size(), static_cast<size_t>(one.vocab));
  LlamaReference reference(one, *weights_);
  const std::vector<float> want = reference.Forward(prompt, 0);
  const LogitsComparison compared = CompareLogits(one, *weights_, four_chips, want, reference.last_hidden());
  EXPECT_FALSE(compared.mismatch.has_value()) << *compared.mismatch;
  EXPECT_GT(compared.max_error, 0.0);
  const LogitsComparison against_one = CompareLogits(one, *weights_, four_chips, one_chip, reference.last_hidden());
  EXPECT_FALSE(against_one.mismatch.has_value()) << *against_one.mismatch;
  std::cout << "4 chips against 1 chip: max |difference| " << against_one.max_error << " (bound "
            << against_one.max_bound << "); against the reference " << compared.max_error << "\n";
}

// The decode step split over chips, the KV caches split by heads (each chip keeps its KV head's
// cache): prefill, then 8 launches of the traced decode program generate the reference's tokens.
TEST_F(LlamaTensorParallelTest, FourChipDecodeGeneratesTheReferenceTokens) {
  const LlamaConfig c = OnChips(LlamaConfig{}, 4);
  const std::vector<int32_t> prompt = MakePrompt(c, kPromptSeed);
  constexpr int64_t kSteps = 8;
  absl::StatusOr<Generation> g = Generate(c, *weights_, *jit_, prompt, kSteps);
  ASSERT_TRUE(g.ok()) << g.status();
  LlamaReference reference(LlamaConfig{}, *weights_);
  std::vector<int32_t> want = {Argmax(reference.Forward(prompt, 0))};
  for (int64_t s = 0; s < kSteps; ++s) {
    const std::vector<float> logits = reference.Forward({want.back()}, c.prompt + s);
    const LogitsComparison compared =
        CompareLogits(c, *weights_, g->logits[static_cast<size_t>(s + 1)], logits, reference.last_hidden());
    EXPECT_FALSE(compared.mismatch.has_value()) << "step " << s << ": " << *compared.mismatch;
    want.push_back(Argmax(logits));
  }
  EXPECT_EQ(g->tokens, want);
  EXPECT_GT(std::set<int32_t>(want.begin(), want.end()).size(), 2u);
}

// One layer at half the tiny model's widths (llama_tiny_layer_4chip's shapes), 8 prompt tokens, a
// cache of 32, one decode step on 4 chips: both backends, bit for bit.
TEST_F(LlamaTensorParallelTest, TheInterpreterAndTheJitAreIdenticalOnFourChips) {
  LlamaConfig c = OnChips(LlamaConfig{}, 4);
  c.layers = 1;
  c.prompt = 8;
  c.max_positions = 32;
  c.hidden = 128;
  c.ffn = 256;
  c.head_dim = 32;
  c.vocab = 256;
  const LlamaWeights weights = MakeWeights(c);
  const std::vector<int32_t> prompt = MakePrompt(c, kPromptSeed);
  interp::Interpreter interpreter;
  absl::StatusOr<Generation> on_interp = Generate(c, weights, interpreter, prompt, 1);
  ASSERT_TRUE(on_interp.ok()) << on_interp.status();
  absl::StatusOr<Generation> on_jit = Generate(c, weights, *jit_, prompt, 1);
  ASSERT_TRUE(on_jit.ok()) << on_jit.status();
  EXPECT_EQ(on_interp->logits, on_jit->logits);
  LlamaReference reference(c, weights);
  std::vector<int32_t> want = {Argmax(reference.Forward(prompt, 0))};
  want.push_back(Argmax(reference.Forward({want.back()}, c.prompt)));
  EXPECT_EQ(on_interp->tokens, want);
}

TEST(LlamaTensorParallelSamplesTest, TheFourChipSamplesAreFound) {
  for (const char* name : {"llama_tiny_prefill_4chip", "llama_tiny_decode_4chip", "llama_tiny_layer_4chip"}) {
    const samples::Sample* sample = samples::FindSample(name);
    ASSERT_NE(sample, nullptr) << name;
    EXPECT_TRUE(static_cast<bool>(sample->runner)) << name;
  }
}

}  // namespace
}  // namespace visa::models
