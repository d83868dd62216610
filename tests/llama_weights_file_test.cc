// The Llama-style model's weights through a `.safetensors` file (samples/models/
// llama_weights_file.h): the seeded weights written and read back are the same values, the model
// run on them generates the same tokens as on the seeded weights in memory, and the samples take
// their weights from the file VISA_LLAMA_WEIGHTS names; a missing tensor or a wrong shape is an
// error naming the tensor.
#include <cstdlib>
#include <filesystem>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "jit/jit_backend.h"
#include "runtime/safetensors.h"
#include "samples/models/llama_check.h"
#include "samples/models/llama_program.h"
#include "samples/models/llama_weights_file.h"
#include "samples/sample.h"

namespace visa::models {
namespace {

using ::testing::HasSubstr;

std::string TempPath(const std::string& name) {
  return (std::filesystem::temp_directory_path() / (name + "_" + std::to_string(::getpid()) + ".safetensors")).string();
}

TEST(LlamaWeightsFileTest, WrittenWeightsReadBackAndGenerateTheSameTokens) {
  const LlamaConfig c;
  const LlamaWeights seeded = MakeWeights(c);
  const std::string path = TempPath("llama_tiny");
  ASSERT_TRUE(WriteLlamaWeightsFile(c, seeded, path).ok());
  absl::StatusOr<SafetensorsFile> file = SafetensorsFile::Open(path);
  ASSERT_TRUE(file.ok()) << file.status();
  absl::StatusOr<const SafetensorsEntry*> q = file->Find("model.layers.1.self_attn.q_proj.weight");
  ASSERT_TRUE(q.ok()) << q.status();
  EXPECT_EQ((*q)->shape, (std::vector<int64_t>{c.q_heads() * c.head_dim, c.hidden}));
  EXPECT_EQ((*q)->dtype_name, "BF16");
  absl::StatusOr<LlamaWeights> read = ReadLlamaWeightsFile(c, path);
  ASSERT_TRUE(read.ok()) << read.status();
  EXPECT_EQ(read->embedding, seeded.embedding);
  EXPECT_EQ(read->layers[1].wq, seeded.layers[1].wq);
  EXPECT_EQ(read->layers[0].down, seeded.layers[0].down);
  EXPECT_EQ(read->rope, seeded.rope);

  std::unique_ptr<jit::JitBackend> jit = *jit::JitBackend::Create({.threads = 0});
  const std::vector<int32_t> prompt = MakePrompt(c, kPromptSeed);
  absl::StatusOr<Generation> from_memory = Generate(c, seeded, *jit, prompt, 3);
  ASSERT_TRUE(from_memory.ok()) << from_memory.status();
  absl::StatusOr<Generation> from_file = Generate(c, *read, *jit, prompt, 3);
  ASSERT_TRUE(from_file.ok()) << from_file.status();
  EXPECT_EQ(from_file->tokens, from_memory->tokens);

  // The sample reads the file VISA_LLAMA_WEIGHTS names.
  ::setenv("VISA_LLAMA_WEIGHTS", path.c_str(), 1);
  const samples::Sample* sample = nullptr;
  const std::vector<samples::Sample> all = samples::ModelSamples();
  for (const samples::Sample& s : all) {
    if (s.name == "llama_tiny_decode") sample = &s;
  }
  ASSERT_NE(sample, nullptr);
  absl::StatusOr<samples::SampleRun> run = sample->runner(*jit, DeviceOptions{});
  ::unsetenv("VISA_LLAMA_WEIGHTS");
  ASSERT_TRUE(run.ok()) << run.status();
  EXPECT_FALSE(run->mismatch.has_value()) << *run->mismatch;
  std::filesystem::remove(path);
}

TEST(LlamaWeightsFileTest, AFileOfAnotherShapeOrMissingATensorIsRefused) {
  LlamaConfig small;
  small.hidden = 128;  // the same names, D = 128
  small.ffn = 256;
  const std::string path = TempPath("llama_small_d");
  ASSERT_TRUE(WriteLlamaWeightsFile(small, MakeWeights(small), path).ok());
  absl::StatusOr<LlamaWeights> read = ReadLlamaWeightsFile(LlamaConfig{}, path);
  ASSERT_FALSE(read.ok());
  EXPECT_THAT(read.status().message(), HasSubstr("model.embed_tokens.weight"));
  std::filesystem::remove(path);

  LlamaConfig one_layer;
  one_layer.layers = 1;
  ASSERT_TRUE(WriteLlamaWeightsFile(one_layer, MakeWeights(one_layer), path).ok());
  read = ReadLlamaWeightsFile(LlamaConfig{}, path);
  ASSERT_FALSE(read.ok());
  EXPECT_THAT(read.status().message(), HasSubstr("model.layers.1.input_layernorm.weight"));
  std::filesystem::remove(path);

  EXPECT_FALSE(ReadLlamaWeightsFile(LlamaConfig{}, TempPath("no_such_file")).ok());
}

}  // namespace
}  // namespace visa::models
