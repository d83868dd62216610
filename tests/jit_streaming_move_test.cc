// Streaming moves (jit/streaming_move.h): the choice rule as a pure function, the vector-cut nest,
// the kernel's IR (aligned !nontemporal vector stores), and the streaming kernel writing the same
// bytes as the ordinary kernel and as a host loop, on one and two threads, with the fallbacks
// (a misaligned base, a 4-bit destination, runs that are not whole vectors) told by the counters.
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "jit/element_op.h"
#include "jit/kernel_cache.h"
#include "jit/move_kernel.h"
#include "jit/move_nest.h"
#include "jit/parallel.h"
#include "jit/streaming_move.h"
#include "tests/move_kernel_harness.h"

namespace visa::jit {
namespace {

constexpr int64_t kMiB = int64_t{1} << 20;
constexpr int64_t kNever = std::numeric_limits<int64_t>::max();

MoveNest Nest(std::vector<NestLevel> levels) { return MoveNest{std::move(levels)}; }

using testing_moves::Buffer;
using testing_moves::Case;
using testing_moves::Outcome;
using testing_moves::RunCase;

// ---- The choice rule -----------------------------------------------------------------------------

TEST(StreamingShape, WholeVectorsAtVectorStrides) {
  // The benchmark's two moves (32 bytes contiguous innermost, the rest whole vectors apart).
  EXPECT_TRUE(HasStreamingShape(Nest({{32, 1, 1}, {2048, 32, 64}, {2, 65536, 32}, {256, 524288, 524288}}),
                                CopyOp(DType::kI8)));
  EXPECT_TRUE(HasStreamingShape(Nest({{32, 1, 1}, {2, 32, 65536}, {2048, 64, 32}, {256, 524288, 524288}}),
                                CopyOp(DType::kI8)));
  EXPECT_TRUE(HasStreamingShape(Nest({{64, 1, 3}, {7, 64, 1}}), CopyOp(DType::kI8)));   // strided source
  EXPECT_TRUE(HasStreamingShape(Nest({{16, 1, 1}, {5, 16, 16}}), CopyOp(DType::kBF16)));  // 32 bytes of i16
  EXPECT_TRUE(HasStreamingShape(Nest({{8, 1, 1}, {9, 24, 8}}), CopyOp(DType::kI32)));     // 32 bytes of i32
  EXPECT_TRUE(HasStreamingShape(Nest({{96, 1, 1}}), CopyOp(DType::kI8)));                // one level: cut later
  // A level of one iteration never moves the destination, whatever its stride.
  EXPECT_TRUE(HasStreamingShape(Nest({{32, 1, 1}, {1, 7, 7}, {3, 32, 32}}), CopyOp(DType::kI8)));
}

TEST(StreamingShape, RefusesPartialVectors) {
  EXPECT_FALSE(HasStreamingShape(Nest({{48, 1, 1}, {4, 48, 48}}), CopyOp(DType::kI8)));   // 1.5 vectors a run
  EXPECT_FALSE(HasStreamingShape(Nest({{16, 1, 1}, {4, 16, 16}}), CopyOp(DType::kI8)));   // half a vector
  EXPECT_FALSE(HasStreamingShape(Nest({{32, 1, 1}, {4, 40, 32}}), CopyOp(DType::kI8)));   // runs 40 bytes apart
  EXPECT_FALSE(HasStreamingShape(Nest({{32, 2, 1}, {4, 64, 32}}), CopyOp(DType::kI8)));   // gaps in the run
  EXPECT_FALSE(HasStreamingShape(Nest({{4, 32, 1}, {32, 1, 4}}), CopyOp(DType::kI8)));    // a transpose's inner column
  EXPECT_FALSE(HasStreamingShape(Nest({{4, 1, 1}, {9, 4, 4}}), CopyOp(DType::kI32)));     // 16 bytes of i32
  EXPECT_FALSE(HasStreamingShape(Nest({{8, 1, 1}, {9, 12, 8}}), CopyOp(DType::kI32)));    // 48-byte steps
}

TEST(StreamingShape, RefusesFourBitDestinations) {
  // Two i4 elements share a byte: a nibble store reads and rewrites it, never a vector of its own.
  EXPECT_FALSE(HasStreamingShape(Nest({{64, 1, 1}, {8, 64, 64}}), CopyOp(DType::kI4)));
  EXPECT_FALSE(HasStreamingShape(Nest({{64, 1, 1}, {8, 64, 64}}), TableOp(DType::kI8, DType::kI4, std::vector<uint32_t>(256))));
  // A 4-bit source written as bytes streams (its loads are nibbles, its stores bytes).
  EXPECT_TRUE(HasStreamingShape(Nest({{32, 1, 1}, {8, 32, 32}}), TableOp(DType::kI4, DType::kI8, std::vector<uint32_t>(16))));
}

TEST(StreamingChoice, ThresholdThenAlignment) {
  const MoveNest nest = Nest({{32, 1, 1}, {1024, 32, 32}});  // 32 KiB of i8
  alignas(64) static uint8_t block[128];
  EXPECT_EQ(ChooseStreaming(nest, CopyOp(DType::kI8), block, 32 * 1024), StreamingChoice::kStream);
  EXPECT_EQ(ChooseStreaming(nest, CopyOp(DType::kI8), block + 32, 32 * 1024), StreamingChoice::kStream);
  EXPECT_EQ(ChooseStreaming(nest, CopyOp(DType::kI8), block, 32 * 1024 + 1), StreamingChoice::kTooSmall);
  EXPECT_EQ(ChooseStreaming(nest, CopyOp(DType::kI8), block + 16, 32 * 1024), StreamingChoice::kMisaligned);
  EXPECT_EQ(ChooseStreaming(nest, CopyOp(DType::kI8), block + 1, 0), StreamingChoice::kMisaligned);
  // The shape is judged first: a nest that never streams is not counted as misaligned.
  EXPECT_EQ(ChooseStreaming(Nest({{16, 1, 1}, {4096, 16, 16}}), CopyOp(DType::kI8), block + 1, 0),
            StreamingChoice::kShape);
  // The destination's bytes, not its elements, meet the threshold: 8192 i32 are 32 KiB.
  EXPECT_EQ(ChooseStreaming(Nest({{8, 1, 1}, {1024, 8, 8}}), CopyOp(DType::kI32), block, 32 * 1024),
            StreamingChoice::kStream);
  EXPECT_EQ(ChooseStreaming(Nest({{8, 1, 1}, {1024, 8, 8}}), CopyOp(DType::kI8), block, 32 * 1024),
            StreamingChoice::kShape);  // 8 i8 are a quarter vector
  EXPECT_STREQ(ToString(StreamingChoice::kMisaligned), "misaligned base");
}

TEST(StreamingChoice, ThresholdIsAQuarterOfTheCache) {
  EXPECT_EQ(StreamingMinBytes(32 * kMiB), 8 * kMiB);
  EXPECT_EQ(StreamingMinBytes(384 * kMiB), 96 * kMiB);
  EXPECT_EQ(StreamingMinBytes(0), 8 * kMiB);   // unknown cache: 32 MiB assumed
  EXPECT_EQ(StreamingMinBytes(-1), 8 * kMiB);
  EXPECT_GT(HostLastLevelCacheBytes(), 0);
  // The benchmark's moves on a 32 MiB cache: the 2 MiB one stays in the cache, the 32 MiB one streams.
  alignas(64) static uint8_t block[64];
  const int64_t min_bytes = StreamingMinBytes(32 * kMiB);
  EXPECT_EQ(ChooseStreaming(Nest({{32, 1, 1}, {128, 32, 64}, {2, 4096, 32}, {256, 524288, 524288}}),
                            CopyOp(DType::kI8), block, min_bytes),
            StreamingChoice::kTooSmall);
  EXPECT_EQ(ChooseStreaming(Nest({{32, 1, 1}, {2048, 32, 64}, {2, 65536, 32}, {256, 524288, 524288}}),
                            CopyOp(DType::kI8), block, min_bytes),
            StreamingChoice::kStream);
}

TEST(StreamingChoice, EnvironmentThreshold) {
  EXPECT_EQ(ParseStreamingMinBytes("0"), 0);
  EXPECT_EQ(ParseStreamingMinBytes("33554432"), 32 * kMiB);
  EXPECT_EQ(ParseStreamingMinBytes("off"), kNever);
  EXPECT_EQ(ParseStreamingMinBytes("-1"), std::nullopt);
  EXPECT_EQ(ParseStreamingMinBytes("8M"), std::nullopt);
  EXPECT_EQ(ParseStreamingMinBytes(""), std::nullopt);
  EXPECT_GE(DefaultStreamingMinBytes(), 0);
}

TEST(StreamingNestCut, InnermostLevelBecomesOneVector) {
  EXPECT_EQ(StreamingNest(Nest({{64, 1, 2}}), CopyOp(DType::kI8)), Nest({{32, 1, 2}, {2, 32, 64}}));
  EXPECT_EQ(StreamingNest(Nest({{32, 1, 1}}), CopyOp(DType::kI8)), Nest({{32, 1, 1}, {1, 32, 32}}));
  EXPECT_EQ(StreamingNest(Nest({{96, 1, 1}, {3, 96, 100}}), CopyOp(DType::kI8)),
            Nest({{32, 1, 1}, {3, 32, 32}, {3, 96, 100}}));
  EXPECT_EQ(StreamingNest(Nest({{16, 1, 1}, {5, 16, 16}}), CopyOp(DType::kI16)), Nest({{16, 1, 1}, {5, 16, 16}}));
  EXPECT_EQ(StreamingNest(Nest({{24, 1, 1}, {5, 24, 24}}), CopyOp(DType::kI32)),
            Nest({{8, 1, 1}, {3, 8, 8}, {5, 24, 24}}));
  const MoveNest cut = StreamingNest(Nest({{64, 1, 3}, {7, 64, 1}}), CopyOp(DType::kI8));
  EXPECT_EQ(cut.elements(), 64 * 7);
  EXPECT_EQ(cut.max_src(), Nest({{64, 1, 3}, {7, 64, 1}}).max_src());
}

// ---- The kernel's IR ---------------------------------------------------------------------------

std::string ModuleText(const MoveSpec& spec) { return MoveFunctionIr(spec); }

TEST(StreamingKernelIr, StoresAlignedVectorsMarkedNontemporal) {
  const std::string streaming =
      ModuleText(MoveSpec{StreamingNest(Nest({{64, 1, 1}, {5, 64, 128}}), CopyOp(DType::kI8)), CopyOp(DType::kI8), true});
  EXPECT_NE(streaming.find("store <32 x i8>"), std::string::npos) << streaming;
  EXPECT_NE(streaming.find("align 32, !nontemporal"), std::string::npos) << streaming;
  const std::string wide =
      ModuleText(MoveSpec{StreamingNest(Nest({{8, 1, 2}, {5, 8, 16}}), CopyOp(DType::kI32)), CopyOp(DType::kI32), true});
  EXPECT_NE(wide.find("store <8 x i32>"), std::string::npos) << wide;
  EXPECT_NE(wide.find("align 32, !nontemporal"), std::string::npos) << wide;
  const std::string ordinary = ModuleText(MoveSpec{Nest({{64, 1, 1}, {5, 64, 128}}), CopyOp(DType::kI8)});
  EXPECT_EQ(ordinary.find("nontemporal"), std::string::npos) << ordinary;
}

TEST(StreamingKernelIr, KeyTellsTheVariantsApart) {
  const MoveNest nest = Nest({{32, 1, 1}, {5, 32, 32}});
  EXPECT_NE((MoveSpec{nest, CopyOp(DType::kI8), true}).Key(), (MoveSpec{nest, CopyOp(DType::kI8)}).Key());
}

// ---- The kernel's bytes --------------------------------------------------------------------------

// Streaming (threshold 0) and ordinary (never) give the host loop's bytes; returns the streaming
// run's counters.
JitStats ExpectSameBytes(const Case& c, int threads) {
  const Outcome streamed = RunCase(c, threads, 0, 0);
  const Outcome ordinary = RunCase(c, threads, kNever, 0);
  EXPECT_EQ(streamed.bytes, ordinary.bytes) << c.nest.ToString();
  EXPECT_EQ(ordinary.stats.streaming_moves, 0);
  return streamed.stats;
}

uint32_t Same(uint32_t v) { return v; }

std::vector<uint32_t> ByteTable() {
  std::vector<uint32_t> table(256);
  for (uint32_t i = 0; i < 256; ++i) table[i] = (i * 37 + 11) & 255;
  return table;
}

class StreamingMoveThreads : public testing::TestWithParam<int> {};

TEST_P(StreamingMoveThreads, ThirtyTwoByteRunsLikeTheBenchmark) {
  // The benchmark's relayout at 5 rows of 2 vectors a slice, over an odd 7 slices 96 bytes apart
  // more than their data (two threads need more than kParallelMinElements: 1025 rows).
  const int64_t rows = GetParam() == 1 ? 5 : 1025;
  const MoveNest nest = Nest({{32, 1, 1}, {rows, 32, 64}, {2, rows * 32, 32}, {7, rows * 64 + 96, rows * 64}});
  const JitStats stats = ExpectSameBytes({nest, CopyOp(DType::kI8), Same}, GetParam());
  EXPECT_EQ(stats.streaming_moves, 1);
  EXPECT_EQ(stats.streaming_misaligned, 0);
  // And back.
  const MoveNest back = Nest({{32, 1, 1}, {2, 32, rows * 32}, {rows, 64, 32}, {7, rows * 64, rows * 64 + 96}});
  EXPECT_EQ(ExpectSameBytes({back, CopyOp(DType::kI8), Same}, GetParam()).streaming_moves, 1);
}

TEST_P(StreamingMoveThreads, SixtyFourByteRunsOddCounts) {
  const int64_t outer = GetParam() == 1 ? 3 : 1031;
  const MoveNest nest = Nest({{64, 1, 1}, {5, 64, 96}, {outer, 5 * 64 + 32, 5 * 96 + 7}});
  EXPECT_EQ(ExpectSameBytes({nest, CopyOp(DType::kI8), Same}, GetParam()).streaming_moves, 1);
}

TEST_P(StreamingMoveThreads, OneLevelCopy) {
  const int64_t count = GetParam() == 1 ? 96 : 70016;  // whole vectors: 3, or 2188
  EXPECT_EQ(ExpectSameBytes({Nest({{count, 1, 1}}), CopyOp(DType::kI8), Same}, GetParam()).streaming_moves, 1);
}

TEST_P(StreamingMoveThreads, StridedSourceBuildsTheVectorByLanes) {
  const int64_t outer = GetParam() == 1 ? 9 : 2049;
  const MoveNest nest = Nest({{32, 1, 3}, {outer, 32, 97}});
  EXPECT_EQ(ExpectSameBytes({nest, CopyOp(DType::kI8), Same}, GetParam()).streaming_moves, 1);
}

TEST_P(StreamingMoveThreads, SixteenAndThirtyTwoBitElements) {
  const int64_t outer = GetParam() == 1 ? 5 : 4097;
  // 16-bit: 16 elements a vector; a bf16 copy is its raw bits.
  EXPECT_EQ(ExpectSameBytes({Nest({{16, 1, 1}, {outer, 48, 16}}), CopyOp(DType::kBF16), Same}, GetParam()).streaming_moves, 1);
  // 32-bit: 8 elements a vector, 3 vectors a run, the source transposed (a strided source).
  EXPECT_EQ(ExpectSameBytes({Nest({{24, 1, outer}, {outer, 24, 1}}), CopyOp(DType::kI32), Same}, GetParam())
                .streaming_moves,
            1);
}

TEST_P(StreamingMoveThreads, ElementOpsStream) {
  const int64_t outer = GetParam() == 1 ? 7 : 2049;
  const std::vector<uint32_t> table = ByteTable();
  const Case byte_table{Nest({{32, 1, 1}, {outer, 32, 40}}), TableOp(DType::kI8, DType::kI8, table),
                        [table](uint32_t v) { return table[v]; }};
  EXPECT_EQ(ExpectSameBytes(byte_table, GetParam()).streaming_moves, 1);
  // A 4-bit source written as bytes: nibble loads, byte stores.
  std::vector<uint32_t> nibbles(16);
  for (uint32_t i = 0; i < 16; ++i) nibbles[i] = 200 + i;
  const Case widened{Nest({{64, 1, 1}, {outer, 64, 64}}), TableOp(DType::kI4, DType::kI8, nibbles),
                     [nibbles](uint32_t v) { return nibbles[v]; }};
  EXPECT_EQ(ExpectSameBytes(widened, GetParam()).streaming_moves, 1);
}

TEST_P(StreamingMoveThreads, MisalignedBaseFallsBack) {
  // The shape streams, but the destination starts 16 (then 1) bytes past a 32-byte boundary: the
  // ordinary kernel runs (streaming_moves stays 0, streaming_misaligned counts it), same bytes.
  const int64_t outer = GetParam() == 1 ? 3 : 2049;
  const Case c{Nest({{32, 1, 1}, {outer, 32, 64}}), CopyOp(DType::kI8), Same};
  for (int64_t offset : {16, 1}) {
    const Outcome misaligned = RunCase(c, GetParam(), 0, offset);
    EXPECT_EQ(misaligned.stats.streaming_moves, 0);
    EXPECT_EQ(misaligned.stats.streaming_misaligned, 1);
    EXPECT_EQ(misaligned.stats.nest_moves, 1);
    EXPECT_EQ(misaligned.bytes, RunCase(c, GetParam(), kNever, 0).bytes);
  }
  // 32 bytes past a 64-byte boundary is vector-aligned: it streams.
  EXPECT_EQ(RunCase(c, GetParam(), 0, 32).stats.streaming_moves, 1);
}

TEST_P(StreamingMoveThreads, RefusedShapesRunOrdinarily) {
  const int64_t outer = GetParam() == 1 ? 3 : 4097;
  // 4-bit destination, runs of 48 bytes, 16 bytes of i32: right bytes, never streamed.
  for (const Case& c : {Case{Nest({{64, 1, 1}, {outer, 64, 64}}), CopyOp(DType::kI4), Same},
                        Case{Nest({{63, 1, 1}, {outer, 64, 63}}), CopyOp(DType::kI4), Same},
                        Case{Nest({{48, 1, 1}, {outer, 48, 48}}), CopyOp(DType::kI8), Same},
                        Case{Nest({{4, 1, 1}, {outer, 4, 8}}), CopyOp(DType::kI32), Same}}) {
    const Outcome out = RunCase(c, GetParam(), 0, 0);
    EXPECT_EQ(out.stats.streaming_moves, 0) << c.nest.ToString();
    EXPECT_EQ(out.stats.streaming_misaligned, 0) << c.nest.ToString();
  }
}

TEST_P(StreamingMoveThreads, BelowTheThresholdRunsOrdinarily) {
  const Case c{Nest({{32, 1, 1}, {GetParam() == 1 ? 3 : 2049, 32, 64}}), CopyOp(DType::kI8), Same};
  EXPECT_EQ(RunCase(c, GetParam(), c.nest.elements() + 1, 0).stats.streaming_moves, 0);
  EXPECT_EQ(RunCase(c, GetParam(), c.nest.elements(), 0).stats.streaming_moves, 1);
}

INSTANTIATE_TEST_SUITE_P(Threads, StreamingMoveThreads, testing::Values(1, 2));

TEST(StreamingMoveThreadsUsed, TwoThreadCasesAreLargeEnoughToSplit) {
  // The two-thread cases above have more elements than one thread keeps to itself.
  EXPECT_GE(32 * 1025 * 2 * 7, kParallelMinElements);
  EXPECT_GE(32 * 2049, kParallelMinElements);
  EXPECT_GE(70016, kParallelMinElements);
  EXPECT_EQ(ThreadsFor(32 * 2049, 2), 2);
}

TEST(StreamingMoveCompile, PrepareCompilesBothVariantsOfALargeMove) {
  absl::StatusOr<std::unique_ptr<KernelCache>> cache = KernelCache::Create(1);
  ASSERT_TRUE(cache.ok()) << cache.status();
  (*cache)->set_streaming_min_bytes(0);
  const MoveNest nest = Nest({{32, 1, 1}, {9, 32, 64}});
  ASSERT_TRUE((*cache)->CompileNest(nest, CopyOp(DType::kI8)).ok());
  EXPECT_EQ((*cache)->stats().compiles, 2);
  // Running it (aligned or not) compiles nothing more.
  Buffer src(9 * 64, 0, 1), dst(9 * 32 + 16, 0, 0);
  ASSERT_TRUE((*cache)->RunNest(nest, CopyOp(DType::kI8), dst.data(), 9 * 32, src.data(), 9 * 64).ok());
  ASSERT_TRUE((*cache)->RunNest(nest, CopyOp(DType::kI8), dst.data() + 16, 9 * 32, src.data(), 9 * 64).ok());
  EXPECT_EQ((*cache)->stats().compiles, 2);
  EXPECT_EQ((*cache)->stats().streaming_moves, 1);
  EXPECT_EQ((*cache)->stats().streaming_misaligned, 1);
}

}  // namespace
}  // namespace visa::jit
