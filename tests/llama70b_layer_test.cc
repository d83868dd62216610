// The Llama 3 70B layer's decode step (samples/models/llama70b_layer.h) at the reduced
// configuration that runs the same tiling code (weights streamed tile by tile, the contracted axis
// in chunks chained through the VRF, attention per KV head): the interpreter and the JIT give the
// same output bit for bit, within the rounding-derived bound of the host reference; and the
// tiled projection alone against plain loops, and its refusal of weights that do not tile.
#include <cmath>
#include <filesystem>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "dsl/status_macros.h"
#include "interp/interpreter.h"
#include "jit/jit_backend.h"
#include "runtime/dma.h"
#include "runtime/launch.h"
#include "runtime/scheduler.h"
#include "runtime/transfer.h"
#include "samples/models/llama70b_layer.h"
#include "samples/models/tiled_projection.h"

namespace visa::models {
namespace {

using ::testing::HasSubstr;

TEST(Llama70bLayerTest, ReducedDecodeStepIsIdenticalOnBothBackendsAndWithinTheReferenceBound) {
  const Llama70bConfig c = ReducedLlama70b();
  const Llama70bWeights w = MakeLlama70bWeights(c);
  interp::Interpreter interpreter;
  absl::StatusOr<std::unique_ptr<jit::JitBackend>> jit = jit::JitBackend::Create({.threads = 0});
  ASSERT_TRUE(jit.ok()) << jit.status();
  absl::StatusOr<Llama70bRun> on_interp = RunLlama70bDecode(c, w, interpreter);
  ASSERT_TRUE(on_interp.ok()) << on_interp.status();
  absl::StatusOr<Llama70bRun> on_jit = RunLlama70bDecode(c, w, **jit);
  ASSERT_TRUE(on_jit.ok()) << on_jit.status();
  ASSERT_EQ(on_jit->out.size(), static_cast<size_t>(c.hidden));
  const Llama70bReference want = ReferenceDecode(c, w);
  double magnitude = 0;
  for (size_t i = 0; i < want.out.size(); ++i) {
    EXPECT_EQ(on_interp->out[i], on_jit->out[i]) << "element " << i;
    EXPECT_LE(std::fabs(on_jit->out[i] - want.out[i]), want.bound[i]) << "element " << i;
    magnitude = std::max(magnitude, static_cast<double>(std::fabs(want.out[i])));
  }
  EXPECT_GT(magnitude, 1.0);  // the output is not trivially zero
  // The timeline reads by model step, the indirect moves (gather, scatter) included.
  const std::string timeline = MakeSchedule(on_jit->program).ToText();
  EXPECT_THAT(timeline, HasSubstr("RoPE table gather: tdma"));
  EXPECT_THAT(timeline, HasSubstr("K cache scatter: tdma"));
  EXPECT_THAT(timeline, HasSubstr("attention [head 1] scores: fetch > collect > align > contract"));
  EXPECT_THAT(timeline, HasSubstr("gate projection + SiLU x up [g0 k1]: fetch > collect > align > contract"));
}

// A projection of one 2048-column group (64 slices) by 3 chunks of the contracted axis.
TEST(Llama70bLayerTest, TiledProjectionMatchesPlainLoops) {
  const int64_t cols = 2048, depth = 3072;
  std::vector<uint16_t> w(static_cast<size_t>(cols * depth));
  std::vector<uint16_t> x(static_cast<size_t>(depth));
  // Small integers in bf16 (exact in f32 sums): w in -2..2, x in -3..3.
  auto bits = [](int v) {
    const float f = static_cast<float>(v);
    uint32_t u;
    std::memcpy(&u, &f, 4);
    return static_cast<uint16_t>(u >> 16);
  };
  for (size_t i = 0; i < w.size(); ++i) w[i] = bits(static_cast<int>(i * 7 % 5) - 2);
  for (size_t i = 0; i < x.size(); ++i) x[i] = bits(static_cast<int>(i * 3 % 7) - 3);
  Device device(1);
  absl::StatusOr<TiledWeights> tiles = UploadTiled(device, w, cols, depth);
  ASSERT_TRUE(tiles.ok()) << tiles.status();
  EXPECT_EQ(tiles->group, 2048);
  absl::StatusOr<MappingScope> m = MappingScope::Parse(TileAxes(1, depth));
  ASSERT_TRUE(m.ok());
  std::vector<uint8_t> bytes(x.size() * 2);
  std::memcpy(bytes.data(), x.data(), bytes.size());
  absl::StatusOr<HostTensor> host = HostTensor::FromBytes(DType::kBF16, m->m("S, N"), bytes);
  ASSERT_TRUE(host.ok());
  Dma pdma = Dma::Pcie(device);
  absl::StatusOr<HbmTensor> x_hbm = host->to_hbm(pdma, Address::Any(), m->m("1"), m->m("S, N"));
  ASSERT_TRUE(x_hbm.ok()) << x_hbm.status();
  std::vector<DeviceTensor> inputs = {*x_hbm};
  inputs.insert(inputs.end(), tiles->tiles.begin(), tiles->tiles.end());
  const TiledWeights shape = *tiles;
  KernelOf kernel = [shape, depth](Context& ctx, const std::vector<DeviceTensor>& in)
      -> absl::StatusOr<std::vector<DeviceTensor>> {
    const Activation act{{HbmTensor(in[0])}, depth, DType::kBF16};
    ASSIGN_OR_RETURN(Activation y, TiledProjection(ctx, 1, act, TilesOf(shape, in, 1), "projection"));
    return std::vector<DeviceTensor>{y.groups.begin(), y.groups.end()};
  };
  absl::StatusOr<Program> program = Trace(kernel, inputs);
  ASSERT_TRUE(program.ok()) << program.status();
  // `visa schedule` labels each op by the step it belongs to: the GEMM's pipeline by its name,
  // the weight tile's move by the ScopedDmaOperation around it.
  const Schedule schedule = MakeSchedule(*program);
  ASSERT_FALSE(schedule.ops.empty());
  EXPECT_THAT(schedule.ToText(), HasSubstr("projection [g0 k2]: fetch > collect > align > contract"));
  EXPECT_THAT(schedule.ToText(), HasSubstr("projection [g0 k1] operands: tdma hbm"));
  interp::Interpreter interpreter;
  absl::StatusOr<std::vector<DeviceTensor>> out = Launch(*program, device, interpreter, inputs);
  ASSERT_TRUE(out.ok()) << out.status();
  ASSERT_EQ(out->size(), 1u);
  absl::StatusOr<MappingScope> mo = MappingScope::Parse(TileAxes(1, 2048));
  absl::StatusOr<HostTensor> y = ReadAs((*out)[0], mo->m("S, N"));
  ASSERT_TRUE(y.ok()) << y.status();
  const std::vector<double> got = y->ToValues();
  for (int64_t r = 0; r < cols; ++r) {
    double want = 0;
    for (int64_t k = 0; k < depth; ++k) {
      want += static_cast<double>(Bf16ToFloat(w[static_cast<size_t>(r * depth + k)])) * Bf16ToFloat(x[static_cast<size_t>(k)]);
    }
    ASSERT_EQ(got[static_cast<size_t>(r)], want) << "row " << r;
  }
}

// The weights written to a `.safetensors` file and read back give the same output bit for bit;
// a file of another configuration is refused naming the tensor.
TEST(Llama70bLayerTest, WeightsFromAFileGiveTheSameOutput) {
  const Llama70bConfig c = ReducedLlama70b();
  const Llama70bWeights w = MakeLlama70bWeights(c);
  const std::string path = (std::filesystem::temp_directory_path() /
                            ("llama70b_reduced_" + std::to_string(::getpid()) + ".safetensors")).string();
  ASSERT_TRUE(WriteLlama70bWeightsFile(c, w, path).ok());
  absl::StatusOr<Llama70bWeights> read = ReadLlama70bWeightsFile(c, path);
  ASSERT_TRUE(read.ok()) << read.status();
  EXPECT_EQ(read->wq, w.wq);
  EXPECT_EQ(read->down, w.down);
  absl::StatusOr<std::unique_ptr<jit::JitBackend>> jit = jit::JitBackend::Create({.threads = 0});
  ASSERT_TRUE(jit.ok());
  absl::StatusOr<Llama70bRun> from_memory = RunLlama70bDecode(c, w, **jit);
  absl::StatusOr<Llama70bRun> from_file = RunLlama70bDecode(c, *read, **jit);
  ASSERT_TRUE(from_memory.ok() && from_file.ok());
  EXPECT_EQ(from_file->out, from_memory->out);
  Llama70bConfig other = c;
  other.ffn = 2048;
  absl::StatusOr<Llama70bWeights> refused = ReadLlama70bWeightsFile(other, path);
  ASSERT_FALSE(refused.ok());
  EXPECT_THAT(refused.status().message(), HasSubstr("model.layers.0.mlp.gate_proj.weight"));
  EXPECT_THAT(refused.status().message(), HasSubstr("must be BF16 [2048, 2048]"));
  std::filesystem::remove(path);
}

TEST(Llama70bLayerTest, WeightsThatDoNotTileAreRefused) {
  Device device(1);
  const std::vector<uint16_t> w(static_cast<size_t>(64 * 1000), 0);
  absl::StatusOr<TiledWeights> tiles = UploadTiled(device, w, 64, 1000);
  ASSERT_FALSE(tiles.ok());
  EXPECT_THAT(tiles.status().message(), HasSubstr("do not tile by 1024"));
}

TEST(Llama70bLayerTest, AConfigurationOutsideTheTilingIsRefused) {
  Llama70bConfig c = ReducedLlama70b();
  c.groups = 4;  // G x d_k = 512: a KV head's queries are not one chunk of the output projection
  interp::Interpreter interpreter;
  absl::StatusOr<Llama70bRun> run = RunLlama70bDecode(c, Llama70bWeights{}, interpreter);
  ASSERT_FALSE(run.ok());
  EXPECT_THAT(run.status().message(), HasSubstr("G x d_k must be 1024"));
}

}  // namespace
}  // namespace visa::models
