// The 4-chip collective samples: their results (the runner compares every chip with the host sum
// and the manual's listed operands) and the program they record, step by step as the manual
// lays the algorithms out.
#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "interp/interpreter.h"
#include "runtime/op_description.h"
#include "samples/sample.h"

namespace visa::samples {
namespace {

using ::testing::ElementsAreArray;

// The named operation of every op that has one, in program order.
std::vector<std::string> Operations(const Program& program) {
  std::vector<std::string> names;
  for (const Op& op : program.ops) {
    const std::string& name = std::visit([](const auto& body) -> const std::string& { return body.operation; }, op.body);
    if (!name.empty()) names.push_back(name);
  }
  return names;
}

SampleRun RunOnInterpreter(const std::string& name) {
  const Sample* sample = FindSample(name);
  EXPECT_NE(sample, nullptr);
  interp::Interpreter interp;
  absl::StatusOr<SampleRun> run = sample->Run(interp);
  EXPECT_TRUE(run.ok()) << run.status();
  return *run;
}

std::vector<std::string> ShuffleMoves(const std::vector<int64_t>& pattern) {
  std::string name = "ChipShuffle(";
  for (size_t i = 0; i < pattern.size(); ++i) absl::StrAppend(&name, i ? ", " : "", pattern[i]);
  absl::StrAppend(&name, ")");
  std::vector<std::string> moves = {name + ": DM -> HBM"};
  for (int target = 0; target < 4; ++target) {
    moves.push_back(absl::StrCat(name, ": chip ", pattern[target], " -> chip ", target));
  }
  moves.push_back(name + ": HBM -> DM");
  return moves;
}

TEST(CollectiveSamplesTest, ReduceScatterFollowsTheManualsStepsOneToFive) {
  SampleRun run = RunOnInterpreter("reduce_scatter_4chip");
  EXPECT_FALSE(run.mismatch.has_value()) << *run.mismatch;
  EXPECT_EQ(run.elements, 4);  // one sum per chip
  std::vector<std::string> want;
  const std::vector<std::vector<int64_t>> slices = {{0, 1, 2, 3}, {3, 0, 1, 2}, {2, 3, 0, 1}, {1, 2, 3, 0}};
  const std::vector<std::vector<int64_t>> shuffles = {{}, {1, 2, 3, 0}, {2, 3, 0, 1}, {3, 0, 1, 2}};
  for (size_t k = 0; k < 4; ++k) {
    for (int chip = 0; chip < 4; ++chip) {
      want.push_back(absl::StrCat("AsymmetricSlice chip ", chip, ": B = ", slices[k][chip], " (ParallelCopy)"));
    }
    if (!shuffles[k].empty()) {
      for (const std::string& move : ShuffleMoves(shuffles[k])) want.push_back(move);
    }
  }
  for (int i = 0; i < 3; ++i) want.push_back("TensorAddition");
  EXPECT_THAT(Operations(run.program), ElementsAreArray(want));
}

TEST(CollectiveSamplesTest, AllReduceShufflesThreeRotationsAndAdds) {
  SampleRun run = RunOnInterpreter("all_reduce_4chip");
  EXPECT_FALSE(run.mismatch.has_value()) << *run.mismatch;
  EXPECT_EQ(run.elements, 16);  // every chip holds the four column sums
  std::vector<std::string> want;
  for (const std::vector<int64_t>& rotation : std::vector<std::vector<int64_t>>{{1, 2, 3, 0}, {2, 3, 0, 1}, {3, 0, 1, 2}}) {
    for (const std::string& move : ShuffleMoves(rotation)) want.push_back(move);
  }
  for (int i = 0; i < 3; ++i) want.push_back("TensorAddition");
  EXPECT_THAT(Operations(run.program), ElementsAreArray(want));
}

// The manual's Step 6 read as an AllGather after Steps 1-5 (samples/collective_samples.cc): the
// runner compares every chip's four values with the host's column sums over A.
TEST(CollectiveSamplesTest, AllGatherAfterReduceScatterLeavesEveryColumnSumOnEveryChip) {
  SampleRun run = RunOnInterpreter("reduce_scatter_all_gather_4chip");
  EXPECT_FALSE(run.mismatch.has_value()) << *run.mismatch;
  EXPECT_EQ(run.elements, 16);  // as all_reduce_4chip: 4 chips x 4 column sums
  std::vector<std::string> steps = Operations(run.program);
  std::vector<std::string> gather(steps.begin() + 4 * 4 + 3 * 6 + 3, steps.end());
  std::vector<std::string> want;
  for (int k = 0; k < 4; ++k) {
    std::vector<int64_t> rotation;
    for (int chip = 0; chip < 4; ++chip) rotation.push_back((chip + k) % 4);
    if (k > 0) {
      for (const std::string& move : ShuffleMoves(rotation)) want.push_back(move);
    }
    for (int chip = 0; chip < 4; ++chip) {
      want.push_back(absl::StrCat("AsymmetricPlace chip ", chip, ": B = ", rotation[chip], " (ParallelCopy)"));
    }
  }
  EXPECT_THAT(gather, ElementsAreArray(want));
}

TEST(CollectiveSamplesTest, SlicesRunOnTheSubContextShufflesOnDma) {
  SampleRun run = RunOnInterpreter("reduce_scatter_all_gather_4chip");
  for (const Op& op : run.program.ops) {
    const std::string& name = std::visit([](const auto& body) -> const std::string& { return body.operation; }, op.body);
    if (absl::StartsWith(name, "AsymmetricSlice") || absl::StartsWith(name, "AsymmetricPlace")) { EXPECT_EQ(Describe(op).resource, Resource::kSub) << name; }
    if (absl::StartsWith(name, "ChipShuffle")) { EXPECT_EQ(Describe(op).resource, Resource::kDma) << name; }
    if (name == "TensorAddition") { EXPECT_EQ(Describe(op).resource, Resource::kMain); }
  }
}

}  // namespace
}  // namespace visa::samples
