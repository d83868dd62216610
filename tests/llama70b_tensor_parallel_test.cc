// The 70B layer's decode step split over chips, tensor parallel (samples/models/llama70b_chip_split.h),
// at the reduced configuration: on the JIT within the host reference's bound (the reference of the
// unsplit layer: the split changes only the order of the f32 sums), every chip ending with the same
// output (RunLlama70bDecode checks it), the one-chip run of the same configuration within the same
// bound; and the configurations that do not split refused with the rule named.
#include <cmath>
#include <iostream>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "jit/jit_backend.h"
#include "runtime/scheduler.h"
#include "samples/models/llama70b_chip_split.h"
#include "samples/models/llama70b_layer.h"

namespace visa::models {
namespace {

using ::testing::HasSubstr;

TEST(Llama70bTensorParallelTest, FourChipDecodeStepIsWithinTheReferenceBoundOnTheJit) {
  const Llama70bConfig split = ReducedLlama70bOnChips(4);
  Llama70bConfig one_chip = split;
  one_chip.chips = 1;
  const Llama70bWeights w = MakeLlama70bWeights(split);
  absl::StatusOr<std::unique_ptr<jit::JitBackend>> jit = jit::JitBackend::Create({.threads = 0});
  ASSERT_TRUE(jit.ok()) << jit.status();
  absl::StatusOr<Llama70bRun> on_chips = RunLlama70bDecode(split, w, **jit);
  ASSERT_TRUE(on_chips.ok()) << on_chips.status();
  absl::StatusOr<Llama70bRun> on_one = RunLlama70bDecode(one_chip, w, **jit);
  ASSERT_TRUE(on_one.ok()) << on_one.status();
  const Llama70bReference want = ReferenceDecode(split, w);
  ASSERT_EQ(on_chips->out.size(), want.out.size());
  double magnitude = 0, from_one_chip = 0;
  for (size_t i = 0; i < want.out.size(); ++i) {
    EXPECT_LE(std::fabs(on_chips->out[i] - want.out[i]), want.bound[i]) << "element " << i;
    EXPECT_LE(std::fabs(on_one->out[i] - want.out[i]), want.bound[i]) << "element " << i;
    magnitude = std::max(magnitude, static_cast<double>(std::fabs(want.out[i])));
    from_one_chip = std::max(from_one_chip, static_cast<double>(std::fabs(on_chips->out[i] - on_one->out[i])));
  }
  EXPECT_GT(magnitude, 1.0);  // the output is not trivially zero
  std::cout << "4 chips against 1 chip: max |difference| " << from_one_chip << " (the AllReduce's order of sums)\n";
  // The partial sums of the output and down projections are added over the chips.
  const std::string timeline = MakeSchedule(on_chips->program).ToText();
  EXPECT_THAT(timeline, HasSubstr("output projection + residual [g0 k0] AllReduce round 2 add"));
  EXPECT_THAT(timeline, HasSubstr("down projection + residual [g0 k0] AllReduce round 1"));
}

TEST(Llama70bTensorParallelTest, SplitNeedsWholeKvHeadsPerChip) {
  Llama70bConfig c = ReducedLlama70b();  // 2 KV heads
  c.ffn = 4096;
  c.chips = 4;
  const absl::StatusOr<Llama70bConfig> local = Llama70bChipConfig(c);
  ASSERT_FALSE(local.ok());
  EXPECT_THAT(local.status().message(), HasSubstr("each chip needs whole KV heads"));
}

TEST(Llama70bTensorParallelTest, SplitNeedsFPerChipToTile) {
  Llama70bConfig c = ReducedLlama70bOnChips(4);
  c.ffn = 3072;  // 768 per chip: not a tile depth
  const absl::StatusOr<Llama70bConfig> local = Llama70bChipConfig(c);
  ASSERT_FALSE(local.ok());
  EXPECT_THAT(local.status().message(), HasSubstr("F / chips a multiple of 1024"));
}

TEST(Llama70bTensorParallelTest, SplitNeedsAPowerOfTwoChips) {
  Llama70bConfig c = ReducedLlama70bOnChips(3);
  const absl::StatusOr<Llama70bConfig> local = Llama70bChipConfig(c);
  ASSERT_FALSE(local.ok());
  EXPECT_THAT(local.status().message(), HasSubstr("butterfly needs a power of two"));
}

}  // namespace
}  // namespace visa::models
