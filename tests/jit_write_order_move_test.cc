// Write order (jit/write_order.h): the plan's rules on small nests, and moves run through it (a
// first copy then broadcast copies of the destination's own bytes) against the nest's meaning as
// a host loop, on 1 and 2 threads, ordinary and streaming.
#include "jit/write_order.h"

#include <limits>

#include "gtest/gtest.h"
#include "move_kernel_harness.h"

namespace visa::jit {
namespace {

using testing_moves::Case;
using testing_moves::RunCase;

constexpr int64_t kNeverStream = std::numeric_limits<int64_t>::max();

MoveNest Nest(std::vector<NestLevel> levels) { return MoveNest{std::move(levels)}; }

TEST(WriteOrder, DistinctWritesAcceptsMixedRadixNestsInAnyOrder) {
  EXPECT_TRUE(DistinctWrites(Nest({{4, 1, 1}, {3, 4, 0}})));
  EXPECT_TRUE(DistinctWrites(Nest({{3, 4, 0}, {4, 1, 1}})));  // order of the levels does not matter
  EXPECT_TRUE(DistinctWrites(Nest({{4, 1, 1}, {3, 100, 0}})));  // gaps are fine
}

TEST(WriteOrder, DistinctWritesRejectsRepeatedOrNegativeDestinations) {
  EXPECT_FALSE(DistinctWrites(Nest({{4, 1, 1}, {3, 0, 4}})));  // a level writing one position again
  EXPECT_FALSE(DistinctWrites(Nest({{4, 1, 1}, {3, 2, 4}})));  // overlapping rows
  EXPECT_FALSE(DistinctWrites(Nest({{4, -1, 1}})));
}

TEST(WriteOrder, InWriteOrderWalksTheDestinationSequentially) {
  // The GEMM broadcast's shape: rows of a slice outermost, slices inside; then merged rows.
  EXPECT_EQ(InWriteOrder(Nest({{8, 1, 1}, {4, 16, 16}, {2, 8, 64}})).ToString(), "[8 : 1 <- 1, 2 : 8 <- 64, 4 : 16 <- 16]");
  EXPECT_EQ(InWriteOrder(Nest({{8, 1, 1}, {4, 16, 16}, {2, 8, 8}})).ToString(), "[64 : 1 <- 1]");
}

TEST(WriteOrder, PlanTakesBroadcastLevelsOutAsCopiesOfWhatWasWritten) {
  const WritePlan plan = PlanWrites(Nest({{8, 1, 1}, {3, 64, 0}, {2, 8, 8}, {2, 256, 0}}));
  EXPECT_EQ(plan.first.ToString(), "[16 : 1 <- 1]");
  ASSERT_EQ(plan.copies.size(), 2u);
  EXPECT_EQ(plan.copies[0].nest.ToString(), "[16 : 1 <- 1, 2 : 64 <- 0]");
  EXPECT_EQ(plan.copies[0].dst_offset, 64);
  // The last level's one copy leaves no loop of its own: its offset places it.
  EXPECT_EQ(plan.copies[1].nest.ToString(), "[16 : 1 <- 1, 3 : 64 <- 64]");
  EXPECT_EQ(plan.copies[1].dst_offset, 256);
}

TEST(WriteOrder, PlanKeepsANestThatWritesAPositionTwice) {
  const MoveNest nest = Nest({{4, 1, 1}, {3, 0, 0}});
  const WritePlan plan = PlanWrites(nest);
  EXPECT_EQ(plan.first, nest);
  EXPECT_TRUE(plan.copies.empty());
}

// Moves through KernelCache::RunNest, bytes against the host loop of the nest as given.
std::vector<Case> Cases() {
  return {
      // A broadcast of 2-byte rows over "slices" with rows outermost (the GEMM's op 0 in small).
      {Nest({{64, 1, 1}, {4, 4096, 0}, {4, 16384, 512}, {8, 64, 64}}), CopyOp(DType::kBF16), [](uint32_t v) { return v; }},
      // A transposing broadcast (the GEMM's op 1 in small): the destination row is a source column.
      {Nest({{32, 1, 64}, {32, 32, 1}, {4, 1024, 0}, {2, 4096, 32}}), CopyOp(DType::kBF16), [](uint32_t v) { return v; }},
      // Two broadcast levels (slices and clusters) around a byte copy.
      {Nest({{96, 1, 1}, {3, 128, 0}, {2, 512, 96}, {2, 1024, 0}}), CopyOp(DType::kI8), [](uint32_t v) { return v; }},
      // Everything a broadcast of one element.
      {Nest({{5, 8, 0}, {3, 64, 0}}), CopyOp(DType::kF32), [](uint32_t v) { return v; }},
      // 4-bit elements keep their nest (no plan for them): still right.
      {Nest({{16, 1, 1}, {4, 64, 0}}), CopyOp(DType::kI4), [](uint32_t v) { return v; }},
  };
}

TEST(WriteOrderMove, BroadcastMovesMatchTheHostLoopOnOneAndTwoThreads) {
  for (const Case& c : Cases()) {
    for (int threads : {1, 2}) RunCase(c, threads, kNeverStream, 0);
  }
}

TEST(WriteOrderMove, BroadcastMovesMatchTheHostLoopWhenStreaming) {
  for (const Case& c : Cases()) {
    for (int threads : {1, 2}) RunCase(c, threads, /*min_bytes=*/0, 0);
  }
}

TEST(WriteOrderMove, BroadcastMovesMatchTheHostLoopAtAMisalignedBase) {
  for (const Case& c : Cases()) RunCase(c, 2, /*min_bytes=*/0, 2);
}

// Transposing copies (level 0 contiguous in the destination, level 1 in the source) of every
// whole-byte width: moved as 8 x 8 tiles, and the bytes those of the host loop.
std::vector<Case> TransposingCases() {
  auto same = [](uint32_t v) { return v; };
  return {
      {Nest({{32, 1, 48}, {16, 40, 1}, {3, 1024, 1536}}), CopyOp(DType::kBF16), same},
      {Nest({{8, 1, 24}, {24, 8, 1}, {2, 192, 192}}), CopyOp(DType::kI8), same},
      {Nest({{16, 1, 16}, {8, 16, 1}, {4, 128, 256}}), CopyOp(DType::kF32), same},
  };
}

TEST(WriteOrderMove, TransposingCopiesMoveAsTiles) {
  for (const Case& c : TransposingCases()) {
    EXPECT_TRUE(TransposesInBlocks(MoveSpec{Simplify(c.nest, 1), c.op})) << c.nest.ToString();
  }
  // Not whole tiles, a level 1 that is the outermost, or a cast: element by element.
  EXPECT_FALSE(TransposesInBlocks(MoveSpec{Nest({{12, 1, 48}, {16, 12, 1}, {3, 1024, 1536}}), CopyOp(DType::kBF16)}));
  EXPECT_FALSE(TransposesInBlocks(MoveSpec{Nest({{32, 1, 48}, {16, 40, 1}}), CopyOp(DType::kBF16)}));
  EXPECT_FALSE(TransposesInBlocks(MoveSpec{Nest({{32, 1, 48}, {16, 40, 1}, {3, 1024, 1536}}), CopyOp(DType::kI4)}));
}

TEST(WriteOrderMove, TransposingCopiesMatchTheHostLoop) {
  for (const Case& c : TransposingCases()) {
    for (int threads : {1, 2}) {
      RunCase(c, threads, kNeverStream, 0);
      RunCase(c, threads, /*min_bytes=*/0, 2);
    }
  }
}

// The GEMM's transposing broadcast in small: a transposed first copy, then copies of it.
TEST(WriteOrderMove, TransposingBroadcastMatchesTheHostLoop) {
  const Case c{Nest({{64, 1, 32}, {16, 64, 1}, {4, 2048, 0}, {2, 1024, 16}}), CopyOp(DType::kBF16),
               [](uint32_t v) { return v; }};
  for (int threads : {1, 2}) RunCase(c, threads, kNeverStream, 0);
}

}  // namespace
}  // namespace visa::jit
