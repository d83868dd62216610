// Move kernels whose outer loops' counts and strides are parameters (ParameterLevels in
// jit/move_kernel.h, LoadParameters in jit/shared_body.h): which levels the rule picks, and that a
// program's moves differing only there compile one shared body, each still moving its own nest
// (the host loop's bytes), while moves differing in level 0 or in a written-out level do not share.
#include <cstdint>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "jit/element_op.h"
#include "jit/kernel_cache.h"
#include "jit/move_kernel.h"
#include "jit/move_nest.h"
#include "tests/move_kernel_harness.h"

namespace visa::jit {
namespace {

using testing_moves::Buffer;
using testing_moves::Bytes;
using testing_moves::HostMove;

constexpr int64_t kNever = std::numeric_limits<int64_t>::max();

MoveNest Nest(std::vector<NestLevel> levels) { return MoveNest{std::move(levels)}; }

MoveSpec Copy(MoveNest nest, DType type = DType::kBF16) { return MoveSpec{std::move(nest), CopyOp(type)}; }

// ---- The rule ------------------------------------------------------------------------------------

TEST(ParameterLevels, LoopsAboveLevelZeroAreParameters) {
  EXPECT_EQ(ParameterLevels(Copy(Nest({{64, 1, 1}, {16, 64, 128}, {5, 1024, 4096}}))),
            (std::vector<bool>{false, true, true}));
  EXPECT_EQ(ParameterLevels(Copy(Nest({{8192, 1, 1}}))), (std::vector<bool>{false}));
}

TEST(ParameterLevels, WrittenOutLevelsStayConstants) {
  // Level 1 (two trips of 32 elements) is written out: its stride is an offset in straight-line code.
  EXPECT_EQ(ParameterLevels(Copy(Nest({{32, 1, 1}, {2, 32, 4096}, {128, 64, 32}, {4, 8192, 8192}}))),
            (std::vector<bool>{false, false, true, true}));
}

TEST(ParameterLevels, TransposedTilesKeepTheirLevels) {
  const MoveSpec transpose = Copy(Nest({{32, 1, 48}, {16, 32, 1}, {3, 1024, 1536}}));
  ASSERT_TRUE(TransposesInBlocks(transpose));
  EXPECT_EQ(ParameterLevels(transpose), (std::vector<bool>{false, false, true}));
}

TEST(ParameterLevels, TheKernelHoldsItsParametersAsATable) {
  // Level 1's count and strides, level 2's strides (its count is the caller's [begin, end)).
  const std::string ir = MoveFunctionIr(Copy(Nest({{64, 1, 1}, {16, 64, 128}, {5, 1024, 4096}})));
  EXPECT_NE(ir.find("@visa.parameters = private constant [5 x i64] [i64 16, i64 64, i64 128, i64 1024, i64 4096]"),
            std::string::npos)
      << ir;
  EXPECT_EQ(MoveFunctionIr(Copy(Nest({{8192, 1, 1}}))).find("visa.parameters"), std::string::npos);
}

// ---- Shared bodies -------------------------------------------------------------------------------

struct Compiled {
  std::unique_ptr<KernelCache> cache;
  JitStats stats;
};

// Compiles `nests` (bf16 copies) as one program on a fresh one-thread cache.
Compiled CompileTogether(const std::vector<MoveNest>& nests) {
  absl::StatusOr<std::unique_ptr<KernelCache>> cache = KernelCache::Create(1);
  EXPECT_TRUE(cache.ok()) << cache.status();
  (*cache)->set_streaming_min_bytes(kNever);
  (*cache)->CollectKernels();
  for (const MoveNest& nest : nests) EXPECT_TRUE((*cache)->CompileNest(nest, CopyOp(DType::kBF16)).ok());
  EXPECT_TRUE((*cache)->CompileCollected().ok());
  JitStats stats = (*cache)->stats();
  return Compiled{*std::move(cache), stats};
}

// Runs `nest` on the cache (its kernel compiled before) and checks the host loop's bytes.
void ExpectMovesLikeTheHost(KernelCache& cache, const MoveNest& nest) {
  const int64_t src_positions = nest.max_src() + 1, dst_positions = nest.max_dst() + 1;
  Buffer src(Bytes(src_positions, 16), 0, 0);
  for (int64_t i = 0; i < Bytes(src_positions, 16); ++i) src.data()[i] = static_cast<uint8_t>(i * 131 + i / 251);
  Buffer dst(Bytes(dst_positions, 16), 0, 0xA5);
  Buffer expected(Bytes(dst_positions, 16), 0, 0xA5);
  const int64_t compiles = cache.stats().compiles;
  absl::StatusOr<int64_t> moved = cache.RunNest(nest, CopyOp(DType::kBF16), dst.data(), dst_positions, src.data(),
                                                src_positions);
  ASSERT_TRUE(moved.ok()) << moved.status();
  EXPECT_EQ(*moved, nest.elements());
  EXPECT_EQ(cache.stats().compiles, compiles) << "compiled with the program";
  HostMove(nest, 16, 16, [](uint32_t v) { return v; }, expected.data(), src.data());
  const size_t bytes = static_cast<size_t>(Bytes(dst_positions, 16));
  EXPECT_EQ(std::vector<uint8_t>(dst.data(), dst.data() + bytes),
            std::vector<uint8_t>(expected.data(), expected.data() + bytes))
      << nest.ToString();
}

TEST(MoveParameters, MovesDifferingInOuterCountsAndStridesShareOneBody) {
  const std::vector<MoveNest> nests = {
      Nest({{64, 1, 1}, {16, 64, 128}, {5, 1024, 4096}}),
      Nest({{64, 1, 1}, {24, 64, 256}, {3, 2048, 8192}}),
      Nest({{64, 1, 1}, {10, 64, 96}, {7, 1024, 2000}}),
  };
  Compiled compiled = CompileTogether(nests);
  EXPECT_EQ(compiled.stats.compiles, 3);
  EXPECT_EQ(compiled.stats.shared_bodies, 2);  // one body, two more kernels around it
  for (const MoveNest& nest : nests) ExpectMovesLikeTheHost(*compiled.cache, nest);
}

TEST(MoveParameters, MovesDifferingInLevelZeroOrAWrittenOutLevelDoNotShare) {
  const std::vector<MoveNest> nests = {
      Nest({{64, 1, 1}, {16, 64, 128}, {5, 1024, 4096}}),
      Nest({{32, 1, 1}, {16, 64, 128}, {5, 1024, 4096}}),            // level 0's count
      Nest({{64, 1, 2}, {16, 64, 128}, {5, 1024, 4096}}),            // level 0's source stride
      Nest({{32, 1, 1}, {2, 32, 4096}, {16, 64, 32}, {3, 1024, 8192}}),  // a written-out level
      Nest({{32, 1, 1}, {2, 32, 2048}, {16, 64, 32}, {3, 1024, 8192}}),  // its stride differs
  };
  Compiled compiled = CompileTogether(nests);
  EXPECT_EQ(compiled.stats.compiles, 5);
  EXPECT_EQ(compiled.stats.shared_bodies, 0);
  for (const MoveNest& nest : nests) ExpectMovesLikeTheHost(*compiled.cache, nest);
}

TEST(MoveParameters, AMoveAloneWithItsShapeKeepsItsConstants) {
  // Compiled lazily (not in a program): one kernel, its parameters folded, the same bytes.
  absl::StatusOr<std::unique_ptr<KernelCache>> cache = KernelCache::Create(1);
  ASSERT_TRUE(cache.ok()) << cache.status();
  (*cache)->set_streaming_min_bytes(kNever);
  const MoveNest nest = Nest({{64, 1, 1}, {16, 64, 128}, {5, 1024, 4096}});
  ASSERT_TRUE((*cache)->CompileNest(nest, CopyOp(DType::kBF16)).ok());
  EXPECT_EQ((*cache)->stats().compiles, 1);
  EXPECT_EQ((*cache)->stats().shared_bodies, 0);
  ExpectMovesLikeTheHost(**cache, nest);
}

}  // namespace
}  // namespace visa::jit
