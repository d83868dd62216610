// Small inner levels of a move nest written out as straight-line code (UnrolledLevels in
// jit/move_kernel.h): which levels the rule picks, that the kernel's IR really has no loop for
// them, and that the written-out kernels give the host loop's bytes, streaming or not, for every
// element width and for element ops, on one and two threads.
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "jit/element_op.h"
#include "jit/move_kernel.h"
#include "jit/move_nest.h"
#include "jit/parallel.h"
#include "jit/streaming_move.h"
#include "tests/move_kernel_harness.h"

namespace visa::jit {
namespace {

using testing_moves::Case;
using testing_moves::RunCase;

constexpr int64_t kNever = std::numeric_limits<int64_t>::max();

MoveNest Nest(std::vector<NestLevel> levels) { return MoveNest{std::move(levels)}; }

MoveSpec Ordinary(MoveNest nest) { return MoveSpec{std::move(nest), CopyOp(DType::kI8)}; }

uint32_t Same(uint32_t v) { return v; }

int Count(const std::string& text, const std::string& what) {
  int n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

// ---- The rule ------------------------------------------------------------------------------------

TEST(UnrolledLevels, TheBenchmarksMoveBackWritesOutItsTwoRows) {
  // [32 : 1 <- 1, 2 : 32 <- 65536, 2048 : 64 <- 32, 256 : 524288 <- 524288]: level 1 is written out.
  const MoveNest back = Nest({{32, 1, 1}, {2, 32, 65536}, {2048, 64, 32}, {256, 524288, 524288}});
  EXPECT_EQ(UnrolledLevels(Ordinary(back)), 2);
  EXPECT_EQ(UnrolledLevels(MoveSpec{back, CopyOp(DType::kI8), true}), 2);
}

TEST(UnrolledLevels, ALongLevelStopsTheRun) {
  // The pipeline's move: level 1 has 2048 trips, so nothing is written out, not even level 2.
  EXPECT_EQ(UnrolledLevels(Ordinary(Nest({{32, 1, 1}, {2048, 32, 64}, {2, 65536, 32}, {256, 524288, 524288}}))), 1);
}

TEST(UnrolledLevels, CountsMultiplyUpToTheLimit) {
  // 2 x 2 x 2 = 8 bodies: three levels; a fourth level of 2 would make 16.
  EXPECT_EQ(UnrolledLevels(Ordinary(Nest({{4, 1, 1}, {2, 4, 8}, {2, 8, 16}, {2, 16, 32}, {2, 32, 64}, {9, 64, 128}}))),
            4);
  EXPECT_EQ(UnrolledLevels(Ordinary(Nest({{4, 1, 1}, {kMaxUnrolledBodies, 4, 4}, {9, 32, 32}}))), 2);
  EXPECT_EQ(UnrolledLevels(Ordinary(Nest({{4, 1, 1}, {kMaxUnrolledBodies + 1, 4, 4}, {9, 36, 36}}))), 1);
  EXPECT_EQ(UnrolledLevels(Ordinary(Nest({{4, 1, 1}, {3, 4, 4}, {3, 12, 12}, {9, 36, 36}}))), 2);  // 9 > 8
}

TEST(UnrolledLevels, ALongElementLoopIsNotCopied) {
  // matmul_f8's move: eight rows of 256 bytes stay a loop around the vectorized row.
  EXPECT_EQ(UnrolledLevels(Ordinary(Nest({{256, 1, 1}, {8, 8192, 256}, {8, 65536, 524288}}))), 1);
  EXPECT_EQ(UnrolledLevels(Ordinary(Nest({{kMaxUnrolledElements / 2, 1, 1}, {2, 128, 256}, {9, 512, 512}}))), 2);
  EXPECT_EQ(UnrolledLevels(Ordinary(Nest({{kMaxUnrolledElements / 2 + 1, 1, 1}, {2, 129, 256}, {9, 512, 512}}))), 1);
  // A streamed level 0 is one vector: 32 bytes, so eight copies fit.
  EXPECT_EQ(UnrolledLevels(MoveSpec{Nest({{32, 1, 1}, {8, 32, 64}, {9, 256, 512}}), CopyOp(DType::kI8), true}), 2);
}

TEST(UnrolledLevels, NeverTheOutermostNorTheInnermost) {
  EXPECT_EQ(UnrolledLevels(Ordinary(Nest({{2, 1, 1}}))), 1);
  EXPECT_EQ(UnrolledLevels(Ordinary(Nest({{2, 1, 1}, {2, 2, 2}}))), 1);  // level 1 is the outermost
  EXPECT_EQ(UnrolledLevels(Ordinary(Nest({{2, 1, 1}, {2, 2, 2}, {2, 4, 4}}))), 2);
}

// ---- The IR --------------------------------------------------------------------------------------

TEST(UnrolledKernelIr, WrittenOutLevelsHaveNoLoop) {
  // 64-byte rows cut into two vectors (level 1), two rows (level 2) written out: four vector
  // stores, and loops (conditional branches, two per loop in ir_loops.h) only for levels 3 and 4.
  const MoveNest rows = StreamingNest(Nest({{64, 1, 1}, {2, 64, 4096}, {128, 128, 64}, {4, 16384, 16384}}),
                                      CopyOp(DType::kI8));
  ASSERT_EQ(rows, Nest({{32, 1, 1}, {2, 32, 32}, {2, 64, 4096}, {128, 128, 64}, {4, 16384, 16384}}));
  const std::string written_out = MoveFunctionIr(MoveSpec{rows, CopyOp(DType::kI8), true});
  EXPECT_EQ(Count(written_out, "!nontemporal"), 4) << written_out;
  EXPECT_EQ(Count(written_out, "br i1"), 4) << written_out;
  // Sixteen rows are too many to write out: one store, a loop for every level above level 0.
  const MoveNest many = StreamingNest(Nest({{32, 1, 1}, {16, 32, 4096}, {128, 512, 32}}), CopyOp(DType::kI8));
  const std::string looped = MoveFunctionIr(MoveSpec{many, CopyOp(DType::kI8), true});
  EXPECT_EQ(Count(looped, "!nontemporal"), 1) << looped;
  EXPECT_EQ(Count(looped, "br i1"), 2 * (static_cast<int>(many.levels.size()) - 1)) << looped;
}

TEST(UnrolledKernelIr, TheElementLoopStaysForTheVectorizer) {
  // Level 0 of an ordinary kernel is a loop of 32 elements even below kMaxUnrolledBodies' product.
  const std::string text = MoveFunctionIr(Ordinary(Nest({{32, 1, 1}, {2, 32, 4096}, {128, 64, 32}})));
  EXPECT_EQ(Count(text, "store i8"), 2) << text;  // one per written-out row, inside the element loop
}

// ---- The bytes -----------------------------------------------------------------------------------

// The case streamed (where its shape allows) and not, against the host loop.
void ExpectHostBytes(const Case& c, int threads) {
  RunCase(c, threads, 0, 0);
  RunCase(c, threads, kNever, 0);
}

class UnrolledMoveThreads : public testing::TestWithParam<int> {};

TEST_P(UnrolledMoveThreads, TwoRowsReadIntoOneLikeTheBenchmark) {
  const int64_t rows = GetParam() == 1 ? 5 : 1025;
  ExpectHostBytes({Nest({{32, 1, 1}, {2, 32, rows * 32}, {rows, 64, 32}, {3, rows * 64 + 96, rows * 64}}),
                   CopyOp(DType::kI8), Same},
                  GetParam());
}

TEST_P(UnrolledMoveThreads, ThreeLevelsOfOddCounts) {
  // 2 x 3 = 6 bodies written out, odd strides, over an outer level the threads split.
  const int64_t outer = GetParam() == 1 ? 3 : 700;
  ExpectHostBytes({Nest({{32, 1, 1}, {2, 32, 1000}, {3, 64, 333}, {outer, 7 * 64, 3 * 333 + 1000}}),
                   CopyOp(DType::kI8), Same},
                  GetParam());
}

TEST_P(UnrolledMoveThreads, EveryElementWidth) {
  const int64_t outer = GetParam() == 1 ? 4 : 2049;
  for (DType type : {DType::kI16, DType::kBF16, DType::kI32}) {
    const int64_t lanes = 256 / StorageBits(type);  // one 32-byte vector
    ExpectHostBytes({Nest({{lanes, 1, 1}, {4, lanes, 5 * lanes}, {outer, 4 * lanes, 20 * lanes + 3}}), CopyOp(type),
                     Same},
                    GetParam());
  }
}

TEST_P(UnrolledMoveThreads, ElementOpsAndNibbles) {
  const int64_t outer = GetParam() == 1 ? 4 : 2049;
  std::vector<uint32_t> table(256);
  for (uint32_t i = 0; i < 256; ++i) table[i] = (i * 37 + 11) & 255;
  ExpectHostBytes({Nest({{32, 1, 1}, {2, 32, 512}, {outer, 64, 32}}), TableOp(DType::kI8, DType::kI8, table),
                   [table](uint32_t v) { return table[v]; }},
                  GetParam());
  // A 4-bit destination (one thread, whatever is asked): nibbles written out two rows at a time.
  ExpectHostBytes({Nest({{3, 1, 1}, {2, 3, 100}, {outer, 6, 7}}), CopyOp(DType::kI4), Same}, GetParam());
}

TEST_P(UnrolledMoveThreads, ShortElementLoops) {
  // Level 0 of 1 and of 3 elements under written-out levels of 2, 2 and 2.
  const int64_t outer = GetParam() == 1 ? 5 : 8200;
  for (int64_t lanes : {1, 3}) {
    ExpectHostBytes({Nest({{lanes, 1, 1}, {2, lanes, 50}, {2, 2 * lanes, 101}, {2, 4 * lanes, 203},
                           {outer, 8 * lanes, 409}}),
                     CopyOp(DType::kI8), Same},
                    GetParam());
  }
}

INSTANTIATE_TEST_SUITE_P(Threads, UnrolledMoveThreads, testing::Values(1, 2));

TEST(UnrolledMoveThreadsUsed, TwoThreadCasesAreLargeEnoughToSplit) {
  EXPECT_EQ(ThreadsFor(32 * 2 * 1025 * 3, 2), 2);
  EXPECT_EQ(ThreadsFor(32 * 6 * 700, 2), 2);
  EXPECT_EQ(ThreadsFor(8 * 4 * 2049, 2), 2);  // the narrowest width: i32, 8 lanes
  EXPECT_EQ(ThreadsFor(32 * 2 * 2049, 2), 2);
  EXPECT_EQ(ThreadsFor(1 * 8 * 8200, 2), 2);
}

}  // namespace
}  // namespace visa::jit
