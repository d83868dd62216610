// Which parts of a lane contraction kernel's step run as loops (lane_contraction_kernel.h:
// StepShapeOf): full blocks of Rows when there are two or more, tree groups whose live positions
// are alike, and chunks of a tree group whose live positions are alike; everything else written
// out as before. (That the looped kernels give the interpreter's bits: lane_kernel_shapes_test,
// and `visa check` on every contraction sample.)
#include <cstdint>
#include <vector>

#include "gtest/gtest.h"
#include "jit/lane_contraction_kernel.h"

namespace visa::jit {
namespace {

// A bf16 x bf16 -> f32 sum spec (always 32-bit values, whatever the host) of `rows` live Rows and
// a packet of `packet` positions in tree groups of `group`, every position and group live.
LaneContractionSpec FloatSpec(int64_t rows, int64_t packet, int64_t group) {
  LaneContractionSpec spec;
  spec.rows = rows;
  spec.packet = packet;
  spec.group = group;
  spec.live_outer = {1};
  spec.live_row.assign(rows, 1);
  spec.live_packet.assign(packet, 1);
  for (int64_t g = 0; g < packet / group; ++g) spec.target.push_back(g);
  return spec;
}

TEST(LaneStepShape, EightRowsOfOneWideTreeLoopOverRowBlocksAndChunks) {
  const StepShape shape = StepShapeOf(FloatSpec(8, 32, 32));
  EXPECT_TRUE(shape.row_block_loop);
  EXPECT_FALSE(shape.group_loop);  // one tree group
  EXPECT_EQ(shape.chunk_leaves, 8);
}

TEST(LaneStepShape, OneBlockOfRowsIsWrittenOut) {
  EXPECT_FALSE(StepShapeOf(FloatSpec(4, 32, 32)).row_block_loop);
  LaneContractionSpec six = FloatSpec(8, 32, 32);
  six.live_row = {1, 1, 1, 0, 1, 1, 1, 0};  // 6 live Rows: one full block and a partial one
  EXPECT_FALSE(StepShapeOf(six).row_block_loop);
}

TEST(LaneStepShape, AlikeGroupsLoopAndNarrowGroupsAreWrittenOut) {
  const StepShape shape = StepShapeOf(FloatSpec(4, 32, 8));
  EXPECT_TRUE(shape.group_loop);
  EXPECT_EQ(shape.chunk_leaves, 0);  // a group of 8 is one chunk
}

TEST(LaneStepShape, GroupsLiveDifferentlyAreWrittenOut) {
  LaneContractionSpec spec = FloatSpec(4, 32, 8);
  spec.live_packet[9] = 0;  // group 1 differs from group 0
  EXPECT_FALSE(StepShapeOf(spec).group_loop);
  LaneContractionSpec dropped = FloatSpec(4, 32, 8);
  dropped.target[1] = -1;  // a dropped group is not computed: the others are still alike
  dropped.live_packet[9] = 0;
  EXPECT_TRUE(StepShapeOf(dropped).group_loop);
}

TEST(LaneStepShape, ChunksLiveDifferentlyAreWrittenOut) {
  LaneContractionSpec spec = FloatSpec(8, 32, 32);
  spec.live_packet[31] = 0;  // the last chunk differs from the first
  EXPECT_EQ(StepShapeOf(spec).chunk_leaves, 0);
  LaneContractionSpec periodic = FloatSpec(8, 32, 32);
  for (int64_t p = 7; p < 32; p += 8) periodic.live_packet[p] = 0;  // every chunk alike
  EXPECT_EQ(StepShapeOf(periodic).chunk_leaves, 8);
}

TEST(LaneStepShape, FloatKernelsPackValuesAndIntegerOnesLoopOnlyWhenTheyDo) {
  EXPECT_TRUE(PacksValues(FloatSpec(8, 32, 32)));
  LaneContractionSpec integer = FloatSpec(8, 64, 64);
  integer.dm_type = integer.x_type = integer.w_type = DType::kI8;
  integer.acc_type = DType::kI32;
  // Pairs or quads (AVX512BW hosts) are multiply-add chains, written out; 32-bit values loop.
  const StepShape shape = StepShapeOf(integer);
  EXPECT_EQ(shape.row_block_loop, PacksValues(integer));
  EXPECT_EQ(shape.chunk_leaves, PacksValues(integer) ? 8 : 0);
}

}  // namespace
}  // namespace visa::jit
