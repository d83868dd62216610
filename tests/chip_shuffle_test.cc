// Chip shuffle (manual, Chip/Cluster Reduce > "Shuffle"): out[target] = in[pattern[target]], by DMA
// through HBM. Expected values are the host input's rows at the permuted chips (the manual's three
// rotations of the AllReduce example among them), on both backends; each rule's refusal names it.
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "dsl/mapping_parser.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "interp/interpreter.h"
#include "jit/jit_backend.h"
#include "runtime/chip_shuffle.h"
#include "runtime/device.h"
#include "runtime/host_tensor.h"
#include "runtime/launch.h"
#include "runtime/op_description.h"
#include "runtime/tensor.h"
#include "runtime/tensor_unit.h"

namespace visa {
namespace {

using ::testing::HasSubstr;

std::string Msg(const absl::Status& status) { return std::string(status.message()); }

const std::vector<std::vector<int64_t>>& Patterns() {
  static const std::vector<std::vector<int64_t>> patterns = {{1, 2, 3, 0}, {2, 3, 0, 1}, {3, 0, 1, 2}, {0, 2, 1, 3}};
  return patterns;
}

void ShufflesHbm(Backend& backend) {
  MappingScope s = *MappingScope::Parse("A = 4, B = 16");
  for (const std::vector<int64_t>& pattern : Patterns()) {
    Device device(4);
    Context ctx(device, backend);
    HostTensor host = *HostTensor::Random(DType::kBF16, s.m("A, B"), 9);
    HbmTensor in = *host.to_hbm(ctx.pdma, 0x1000, s.m("A"), s.m("B"));
    absl::StatusOr<HbmTensor> out = ChipShuffle(ctx.tdma, in, pattern, 0x8000);
    ASSERT_TRUE(out.ok()) << out.status();
    HostTensor back = *out->to_host(ctx.pdma, s.m("A, B"));
    for (int64_t target = 0; target < 4; ++target) {
      for (int64_t b = 0; b < 16; ++b) {
        ASSERT_EQ(*back.GetBits(target * 16 + b), *host.GetBits(pattern[target] * 16 + b))
            << ChipShuffleName(pattern) << " chip " << target;
      }
    }
  }
}

void ShufflesDm(Backend& backend) {
  MappingScope s = *MappingScope::Parse("A = 4, B = 4");
  for (const std::vector<int64_t>& pattern : Patterns()) {
    Device device(4);
    Context ctx(device, backend);
    HostTensor host = *HostTensor::Random(DType::kI8, s.m("A, B"), 4);
    HbmTensor hbm = *host.to_hbm(ctx.pdma, 0, s.m("A"), s.m("B, 1 # 8"));
    DmTensor in = *hbm.to_dm(ctx.tdma, 0, s.m("A"), s.m("1 # 2"), s.m("1 # 256"), s.m("B, 1 # 8"));
    absl::StatusOr<DmTensor> out = ChipShuffle(ctx.tdma, in, pattern, 0x4000);
    ASSERT_TRUE(out.ok()) << out.status();
    HostTensor back = *out->to_host(ctx, s.m("A, B"));
    for (int64_t target = 0; target < 4; ++target) {
      for (int64_t b = 0; b < 4; ++b) {
        ASSERT_EQ(*back.Get(target * 4 + b), *host.Get(pattern[target] * 4 + b))
            << ChipShuffleName(pattern) << " chip " << target;
      }
    }
  }
}

// A DM tensor whose data lies on both clusters and several slices of each chip (issue 30, item 3):
// staged through HBM with its Cluster and Slice levels kept, out[target] = in[pattern[target]] on
// every cluster and slice.
void ShufflesDmOnManySlices(Backend& backend) {
  MappingScope s = *MappingScope::Parse("A = 2, C = 2, S = 4, B = 8");
  for (const std::vector<int64_t>& pattern : {std::vector<int64_t>{1, 0}, std::vector<int64_t>{0, 1}}) {
    Device device(2);
    Context ctx(device, backend);
    HostTensor host = *HostTensor::Random(DType::kI8, s.m("A, C, S, B"), 11);
    HbmTensor hbm = *host.to_hbm(ctx.pdma, 0, s.m("A"), s.m("C, S, B"));
    DmTensor in = *hbm.to_dm(ctx.tdma, 0, s.m("A"), s.m("C"), s.m("S # 256"), s.m("B"));
    absl::StatusOr<DmTensor> out = ChipShuffle(ctx.tdma, in, pattern, 0x4000);
    ASSERT_TRUE(out.ok()) << out.status();
    EXPECT_EQ(Pair(out->levels()), Pair(in.levels()));
    HostTensor back = *out->to_host(ctx, s.m("A, C, S, B"));
    const int64_t per_chip = 2 * 4 * 8;
    for (int64_t target = 0; target < 2; ++target) {
      for (int64_t k = 0; k < per_chip; ++k) {
        ASSERT_EQ(*back.Get(target * per_chip + k), *host.Get(pattern[target] * per_chip + k))
            << ChipShuffleName(pattern) << " chip " << target << " position " << k;
      }
    }
  }
}

TEST(ChipShuffleTest, DmOnManySlicesAndBothClustersOnTheInterpreter) {
  interp::Interpreter interpreter;
  ShufflesDmOnManySlices(interpreter);
}

TEST(ChipShuffleTest, DmOnManySlicesAndBothClustersOnTheJit) {
  std::unique_ptr<jit::JitBackend> jit = *jit::JitBackend::Create();
  ShufflesDmOnManySlices(*jit);
}

TEST(ChipShuffleTest, HbmOnTheInterpreter) {
  interp::Interpreter interp;
  ShufflesHbm(interp);
}

TEST(ChipShuffleTest, HbmOnTheJit) {
  std::unique_ptr<jit::JitBackend> jit = *jit::JitBackend::Create();
  ShufflesHbm(*jit);
}

TEST(ChipShuffleTest, DmThroughHbmOnTheInterpreter) {
  interp::Interpreter interp;
  ShufflesDm(interp);
}

TEST(ChipShuffleTest, DmThroughHbmOnTheJit) {
  std::unique_ptr<jit::JitBackend> jit = *jit::JitBackend::Create();
  ShufflesDm(*jit);
}

TEST(ChipShuffleTest, OneNamedCrossChipMovePerTarget) {
  MappingScope s = *MappingScope::Parse("A = 4, B = 16");
  Device device(4);
  interp::Interpreter interp;
  Context ctx(device, interp);
  HbmTensor in = *HostTensor::Random(DType::kI8, s.m("A, B"), 1)->to_hbm(ctx.pdma, 0, s.m("A"), s.m("B"));
  const size_t before = ctx.program().ops.size();
  ASSERT_TRUE(ChipShuffle(ctx.tdma, in, {1, 2, 3, 0}, 0x8000).ok());
  ASSERT_EQ(ctx.program().ops.size(), before + 4);
  for (int target = 0; target < 4; ++target) {
    const Op& op = ctx.program().ops[before + target];
    const auto& dma = std::get<DmaOp>(op.body);
    EXPECT_EQ(dma.operation, absl::StrCat("ChipShuffle(1, 2, 3, 0): chip ", (target + 1) % 4, " -> chip ", target));
    EXPECT_THAT(OpText(op, 0), HasSubstr("operation ChipShuffle(1, 2, 3, 0)"));
    OpDescription d = Describe(op);
    EXPECT_EQ(d.resource, Resource::kDma);
    ASSERT_EQ(d.reads.size(), 1u);
    ASSERT_EQ(d.writes.size(), 1u);
    EXPECT_THAT(d.reads[0].ToString(), HasSubstr(absl::StrCat("HBM chips ", (target + 1) % 4, " bytes")));
    EXPECT_THAT(d.writes[0].ToString(), HasSubstr(absl::StrCat("HBM chips ", target, " bytes")));
    ASSERT_TRUE(d.cycles.has_value());
    EXPECT_GE(*d.cycles, 500);  // the DMA start-up at least
  }
}

// A traced shuffle into a kernel input replays through Launch: the one-chip views rebind to the
// launched tensors.
TEST(ChipShuffleTest, ATracedShuffleIntoAnInputReplaysOnTheJit) {
  MappingScope s = *MappingScope::Parse("A = 4, B = 16");
  Device device(4);
  interp::Interpreter interp;
  Context setup(device, interp);
  HostTensor host = *HostTensor::Random(DType::kI8, s.m("A, B"), 2);
  HbmTensor in = *host.to_hbm(setup.pdma, 0, s.m("A"), s.m("B"));
  HbmTensor out = *HbmTensor::Create(device, DType::kI8, s.m("A"), s.m("B"), 0x8000);
  KernelOf kernel = [](Context& ctx, const std::vector<DeviceTensor>& t) -> absl::StatusOr<std::vector<DeviceTensor>> {
    absl::Status done = ChipShuffleInto(ctx.tdma, HbmTensor(t[0]), {3, 0, 1, 2}, HbmTensor(t[1]));
    if (!done.ok()) return done;
    return std::vector<DeviceTensor>{t[1]};
  };
  std::unique_ptr<jit::JitBackend> jit = *jit::JitBackend::Create();
  absl::StatusOr<Program> program = jit->Prepare(kernel, {in, out});
  ASSERT_TRUE(program.ok()) << program.status();
  absl::StatusOr<std::vector<DeviceTensor>> result = Launch(*program, device, *jit, {in, out});
  ASSERT_TRUE(result.ok()) << result.status();
  HostTensor back = *HbmTensor((*result)[0]).to_host(setup.pdma, s.m("A, B"));
  for (int64_t target = 0; target < 4; ++target) {
    for (int64_t b = 0; b < 16; ++b) {
      ASSERT_EQ(*back.Get(target * 16 + b), *host.Get(((target + 3) % 4) * 16 + b)) << "chip " << target;
    }
  }
}

class ChipShuffleRulesTest : public ::testing::Test {
 protected:
  MappingScope s = *MappingScope::Parse("A = 4, B = 16");
  Device device{4};
  interp::Interpreter interp;
  Context ctx{device, interp};
  HbmTensor in = *HostTensor::Random(DType::kI8, s.m("A, B"), 1)->to_hbm(ctx.pdma, 0, s.m("A"), s.m("B"));
};

TEST_F(ChipShuffleRulesTest, ThePatternIsAPermutation) {
  absl::StatusOr<HbmTensor> twice = ChipShuffle(ctx.tdma, in, {1, 1, 3, 0}, 0x8000);
  ASSERT_FALSE(twice.ok());
  EXPECT_THAT(Msg(twice.status()), HasSubstr("Chip Shuffle: ChipShuffle(1, 1, 3, 0)"));
  EXPECT_THAT(Msg(twice.status()), HasSubstr("must be a permutation of the chips, but chip 1 appears 2 times"));
  EXPECT_THAT(Msg(ChipShuffle(ctx.tdma, in, {1, 2, 3}, 0x8000).status()),
              HasSubstr("one source chip per chip of the device (4), got 3"));
  EXPECT_THAT(Msg(ChipShuffle(ctx.tdma, in, {1, 2, 3, 4}, 0x8000).status()),
              HasSubstr("chip 4 is outside the device's chips [0, 4)"));
}

TEST_F(ChipShuffleRulesTest, TheOutputMatchesTheInputsShape) {
  HbmTensor other = *HbmTensor::Create(device, DType::kI8, s.m("A"), s.m("B # 32"), 0x8000);
  absl::Status done = ChipShuffleInto(ctx.tdma, in, {1, 2, 3, 0}, other);
  EXPECT_THAT(Msg(done), HasSubstr("the output must match the input's shape"));
  HbmTensor wider = *HbmTensor::Create(device, DType::kI16, s.m("A"), s.m("B"), 0x9000);
  EXPECT_THAT(Msg(ChipShuffleInto(ctx.tdma, in, {1, 2, 3, 0}, wider)), HasSubstr("the output must match"));
}

TEST_F(ChipShuffleRulesTest, TheChipLevelIsOneAxisOfEveryChip) {
  MappingScope t = *MappingScope::Parse("A = 2, B = 16");
  HbmTensor half = *HostTensor::Random(DType::kI8, t.m("A, B"), 1)->to_hbm(ctx.pdma, 0x4000, t.m("A # 4"), t.m("B"));
  absl::StatusOr<HbmTensor> out = ChipShuffle(ctx.tdma, half, {1, 2, 3, 0}, 0x8000);
  ASSERT_FALSE(out.ok());
  EXPECT_THAT(Msg(out.status()), HasSubstr("needs a single axis of 4 values"));
}

}  // namespace
}  // namespace visa
