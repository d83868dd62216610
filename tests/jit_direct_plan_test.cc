// The JIT's data-movement pipelines: planned once per op and ends (DirectPipelineKey), and the
// key tells apart what the plan depends on.
#include <gtest/gtest.h>

#include "jit/direct_pipeline.h"
#include "jit/jit_backend.h"
#include "samples/sample.h"

namespace visa::jit {
namespace {

TEST(JitDirectPlans, ASecondRunOfTheSameProgramPlansNothing) {
  const samples::Sample* sample = samples::FindSample("fetch_commit_permutation");
  ASSERT_NE(sample, nullptr);
  absl::StatusOr<std::unique_ptr<JitBackend>> jit = JitBackend::Create({.threads = 1});
  ASSERT_TRUE(jit.ok()) << jit.status();
  absl::StatusOr<samples::SampleRun> first = sample->Run(**jit);
  ASSERT_TRUE(first.ok()) << first.status();
  EXPECT_FALSE(first->mismatch) << *first->mismatch;
  const int64_t planned = (*jit)->stats().direct_plans;
  const int64_t moved = (*jit)->stats().direct_pipelines;
  EXPECT_GT(planned, 0);
  EXPECT_GT(moved, 0);
  absl::StatusOr<samples::SampleRun> second = sample->Run(**jit);
  ASSERT_TRUE(second.ok()) << second.status();
  EXPECT_FALSE(second->mismatch) << *second->mismatch;
  EXPECT_EQ((*jit)->stats().direct_plans, planned);  // every plan came from the cache
  EXPECT_EQ((*jit)->stats().direct_pipelines, 2 * moved);
}

// The collectives' ParallelCopy pipelines copy one chip's slice through chip views, whose ends sit
// behind a left-padded Chip level (`# c + Chip + # n`): planned without the pad, each is one move
// from its chip's first position, not a stage-by-stage walk over every chip's units; the sample
// checks its result against its host reference (and `visa check`'s test, the interpreter's bits).
TEST(JitDirectPlans, AChipViewsCopyIsOneMoveFromItsChip) {
  const samples::Sample* sample = samples::FindSample("reduce_scatter_4chip");
  ASSERT_NE(sample, nullptr);
  absl::StatusOr<std::unique_ptr<JitBackend>> jit = JitBackend::Create({.threads = 1});
  ASSERT_TRUE(jit.ok()) << jit.status();
  absl::StatusOr<samples::SampleRun> run = sample->Run(**jit);
  ASSERT_TRUE(run.ok()) << run.status();
  EXPECT_FALSE(run->mismatch) << *run->mismatch;
  // 12 ParallelCopy pipelines (3 asymmetric placements of 4 chips' slices) and 3 plain copies.
  EXPECT_GE((*jit)->stats().direct_pipelines, 12);
}

TEST(JitDirectPlans, TheKeyNamesEachEndsPlacementAndTheirOverlap) {
  Device device(1);
  MappingScope s(*Axes::Parse("S = 4, A = 16"));
  auto place = [&](int64_t address, DType dtype) {
    absl::StatusOr<Placement> placement =
        Place(device, dtype, Tier::kDm, {s.m("1"), s.m("1 # 2"), s.m("S # 256"), s.m("A")}, Address::At(address));
    EXPECT_TRUE(placement.ok()) << placement.status();
    return DeviceTensor::Claim(device, *placement);
  };
  const DeviceTensor input = place(0, DType::kI8);
  const DeviceTensor output = place(0x100, DType::kI8);
  const DeviceTensor elsewhere = place(0x200, DType::kI8);
  const DeviceTensor wider = place(0x300, DType::kI16);
  PipelineOp op;  // the stages are PipelineKey's; here only the ends vary
  const std::string key = DirectPipelineKey(op, input, output);
  EXPECT_EQ(DirectPipelineKey(op, input, output), key);
  EXPECT_NE(DirectPipelineKey(op, input, elsewhere), key);
  EXPECT_NE(DirectPipelineKey(op, output, input), key);
  EXPECT_NE(DirectPipelineKey(op, input, wider), key);
  // The same bytes at both ends: the plan refuses such a pair, so the key must differ.
  EXPECT_NE(DirectPipelineKey(op, input, input).find("overlapping"), std::string::npos);
  EXPECT_EQ(key.find("overlapping"), std::string::npos);
}

}  // namespace
}  // namespace visa::jit
