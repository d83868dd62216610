// The Mixture of Experts index generation on the device (samples/models/moe_blocks.h): every
// stage (histogram, blocks, global and local offsets, Scatter_Idx, Expert_IDs) equal to the host
// reference's sequential loops on the 4 cases, the interpreter and the JIT identical; and the
// rules it rejects (the shape rules, and the dispatch's scatter past the slots).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <sstream>

#include "dsl/mapping_parser.h"
#include "interp/interpreter.h"
#include "jit/jit_backend.h"
#include "runtime/host_tensor.h"
#include "runtime/indirect_dma.h"
#include "runtime/program.h"
#include "runtime/transfer.h"
#include "samples/models/moe_blocks.h"
#include "samples/models/moe_cases.h"
#include "samples/models/moe_experts.h"
#include "samples/models/moe_reference.h"
#include "samples/sample.h"
#include "tests/common/sample_check_helpers.h"
#include "tools/check_command.h"

namespace visa::models {
namespace {

// The reference's Expert_IDs padded to the device's grid capacity with E (the "no expert" count).
std::vector<int32_t> PaddedExpertIds(const MoeShape& shape, const MoeBlocks& want) {
  std::vector<int32_t> padded = want.expert_ids;
  padded.resize(static_cast<size_t>(MoeGridCapacity(shape)), static_cast<int32_t>(shape.experts));
  return padded;
}

void ExpectBlocksEqual(const MoeShape& shape, const MoeBlocksRun& got, const MoeBlocks& want) {
  EXPECT_EQ(got.blocks.count, want.count);
  EXPECT_EQ(got.blocks.num_blocks, want.num_blocks);
  EXPECT_EQ(got.blocks.global_offset, want.global_offset);
  EXPECT_EQ(got.blocks.local_offset, want.local_offset);
  EXPECT_EQ(got.blocks.scatter_idx, want.scatter_idx);
  EXPECT_EQ(got.expert_ids_capacity, PaddedExpertIds(shape, want));
  EXPECT_EQ(got.blocks.grid, want.grid);
}

class MoeBlocksTest : public ::testing::TestWithParam<MoeCase> {};

TEST_P(MoeBlocksTest, EveryStageEqualsTheReferenceOnBothBackends) {
  const MoeShape shape;
  const MoeInputs in = MakeMoeInputs(shape, GetParam());
  const MoeRouting routing = ReferenceRouting(shape, ReferenceScores(shape, in.x, in.w_router));
  const MoeBlocks want = ReferenceBlocks(shape, routing);
  interp::Interpreter interpreter;
  absl::StatusOr<MoeBlocksRun> got = RunMoeBlocks(interpreter, shape, in.x, in.w_router);
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(got->topk, routing.topk);
  ExpectBlocksEqual(shape, *got, want);
  absl::StatusOr<std::unique_ptr<jit::JitBackend>> jit = jit::JitBackend::Create({.threads = 2});
  ASSERT_TRUE(jit.ok()) << jit.status();
  absl::StatusOr<MoeBlocksRun> compiled = RunMoeBlocks(**jit, shape, in.x, in.w_router);
  ASSERT_TRUE(compiled.ok()) << compiled.status();
  EXPECT_EQ(compiled->topk, got->topk);
  EXPECT_EQ(compiled->blocks.count, got->blocks.count);
  EXPECT_EQ(compiled->blocks.num_blocks, got->blocks.num_blocks);
  EXPECT_EQ(compiled->blocks.global_offset, got->blocks.global_offset);
  EXPECT_EQ(compiled->blocks.local_offset, got->blocks.local_offset);
  EXPECT_EQ(compiled->blocks.scatter_idx, got->blocks.scatter_idx);
  EXPECT_EQ(compiled->expert_ids_capacity, got->expert_ids_capacity);
}

INSTANTIATE_TEST_SUITE_P(Cases, MoeBlocksTest,
                         ::testing::Values(MoeCase::kRandom, MoeCase::kSkewed, MoeCase::kTied, MoeCase::kWorstGrid),
                         [](const auto& info) { return std::string(MoeCaseName(info.param)); });

// Another block size: B = 4 doubles the blocks (and the grid) of the same routing.
TEST(MoeBlocksTest, ABlockSizeOfFourEqualsTheReference) {
  const MoeShape shape{.block = 4};
  const MoeInputs in = MakeMoeInputs(shape, MoeCase::kRandom);
  const MoeBlocks want = ReferenceBlocks(shape, ReferenceRouting(shape, ReferenceScores(shape, in.x, in.w_router)));
  interp::Interpreter interpreter;
  absl::StatusOr<MoeBlocksRun> got = RunMoeBlocks(interpreter, shape, in.x, in.w_router);
  ASSERT_TRUE(got.ok()) << got.status();
  ExpectBlocksEqual(shape, *got, want);
}

// The layer's output within the bound against the f64 reference: the device rounds the SwiGLU
// activation to bf16 (the down projection's operand), a relative 2^-9 of each term; the f32
// sums, SiLU and routing weights add a few f32 ulps. 2^-8 of the sum of |terms| bounds both.
void ExpectOutputNear(const MoeOutput& want, const std::vector<double>& got) {
  ASSERT_EQ(got.size(), want.out.size());
  double largest = 0;
  for (double v : want.out) largest = std::max(largest, std::fabs(v));
  EXPECT_GT(largest, 0.1);  // the experts' outputs are not all near zero: the bound is not vacuous
  for (size_t i = 0; i < got.size(); ++i) {
    EXPECT_LE(std::fabs(got[i] - want.out[i]), 0x1p-8 * want.magnitude[i] + 1e-6)
        << i << ": got " << got[i] << ", want " << want.out[i];
  }
}

class MoeLayerBlockwiseTest : public ::testing::TestWithParam<MoeCase> {};

TEST_P(MoeLayerBlockwiseTest, OutputNearTheReferenceAndIdenticalOnBothBackends) {
  const MoeShape shape;
  const MoeInputs in = MakeMoeInputs(shape, GetParam());
  const MoeExpertWeights w = MakeMoeExpertWeights(shape);
  const MoeRouting routing = ReferenceRouting(shape, ReferenceScores(shape, in.x, in.w_router));
  const MoeOutput want = ReferenceMoe(shape, routing, in.x, w.w_gate, w.w_up, w.w_down);
  interp::Interpreter interpreter;
  absl::StatusOr<MoeLayerRun> got = RunMoeLayer(interpreter, shape, in.x, in.w_router, w);
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(got->blocks.topk, routing.topk);
  ExpectBlocksEqual(shape, got->blocks, ReferenceBlocks(shape, routing));
  ExpectOutputNear(want, got->out);
  absl::StatusOr<std::unique_ptr<jit::JitBackend>> jit = jit::JitBackend::Create({.threads = 2});
  ASSERT_TRUE(jit.ok()) << jit.status();
  absl::StatusOr<MoeLayerRun> compiled = RunMoeLayer(**jit, shape, in.x, in.w_router, w);
  ASSERT_TRUE(compiled.ok()) << compiled.status();
  EXPECT_EQ(compiled->out, got->out);
  EXPECT_EQ(compiled->blocks.blocks.scatter_idx, got->blocks.blocks.scatter_idx);
  EXPECT_EQ(compiled->blocks.expert_ids_capacity, got->blocks.expert_ids_capacity);
}

INSTANTIATE_TEST_SUITE_P(Cases, MoeLayerBlockwiseTest,
                         ::testing::Values(MoeCase::kRandom, MoeCase::kSkewed, MoeCase::kTied, MoeCase::kWorstGrid),
                         [](const auto& info) { return std::string(MoeCaseName(info.param)); });

// The layer samples: checked against the reference by the sample itself, and `visa check` finds
// every op's result identical on the two backends.
TEST(MoeLayerSampleTest, TheWorstGridSampleMatchesTheReferenceAndIsIdenticalOnBothBackends) {
  sample_test::ExpectMatchesReferenceAndBackendsAgree("moe_layer_worst_grid");
}

TEST(MoeBlocksRuleTest, ABlockSizeNotAPowerOfTwoIsRejected) {
  const MoeShape shape{.block = 6};
  const MoeInputs in = MakeMoeInputs(MoeShape{}, MoeCase::kRandom);
  interp::Interpreter interpreter;
  absl::StatusOr<MoeBlocksRun> got = RunMoeBlocks(interpreter, shape, in.x, in.w_router);
  ASSERT_FALSE(got.ok());
  EXPECT_EQ(got.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(got.status().message(), ::testing::HasSubstr("B = 6 must be a power of two"));
}

// The dispatch's rule: a Scatter_Idx past the blocked tensor's G * B slots (here S itself) fails
// the scatter, naming the rule, instead of writing outside x_blocked.
TEST(MoeBlocksRuleTest, AScatterIndexPastTheSlotsIsRejected) {
  const MoeShape shape;
  absl::StatusOr<Axes> axes = Axes::Parse(MoeBlockAxes(shape));
  ASSERT_TRUE(axes.ok()) << axes.status();
  MappingScope m(*axes);
  absl::StatusOr<std::unique_ptr<Device>> device = Device::Create(1);
  ASSERT_TRUE(device.ok()) << device.status();
  interp::Interpreter interpreter;
  Context ctx(**device, interpreter);
  const int64_t A = shape.tokens * shape.top_k, S = m.m("S").size();
  std::vector<double> index(static_cast<size_t>(A));
  for (int64_t a = 0; a < A; ++a) index[static_cast<size_t>(a)] = static_cast<double>(a);
  index.back() = static_cast<double>(S);
  auto upload = [&](DType dtype, const std::string& element, const std::vector<double>& values) {
    absl::StatusOr<HostTensor> host = HostTensor::FromValues(dtype, m.m(element), values);
    EXPECT_TRUE(host.ok()) << host.status();
    absl::StatusOr<HbmTensor> hbm = host->to_hbm(ctx.pdma, Address::Any(), m.m("1"), m.m(element));
    EXPECT_TRUE(hbm.ok()) << hbm.status();
    return *hbm;
  };
  const HbmTensor rows = upload(DType::kBF16, "A, D", std::vector<double>(static_cast<size_t>(A * shape.hidden), 1.0));
  const HbmTensor idx = upload(DType::kI32, "A", index);
  const HbmTensor empty = upload(DType::kBF16, "S, D", std::vector<double>(static_cast<size_t>(S * shape.hidden), 0.0));
  absl::Status status = absl::OkStatus();
  absl::StatusOr<DeviceTensor> blocked =
      Scatter(ctx.tdma, rows, idx, empty, "S", Destination{Tier::kHbm, Address::Any(), {m.m("1"), m.m("S, D")}});
  if (!blocked.ok()) {
    status = blocked.status();
  } else {
    status = ReadAs(*blocked, m.m("S, D")).status();
  }
  EXPECT_FALSE(status.ok());
  EXPECT_THAT(status.message(), ::testing::HasSubstr("Indirect Access"));
}

TEST(MoeBlocksRuleTest, ExpertsNotAMultipleOfEightAreRejected) {
  const MoeShape shape{.experts = 12};
  const absl::Status status = CheckMoeBlockShape(shape);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(status.message(), ::testing::HasSubstr("multiples of 8"));
}

TEST(MoeBlocksRuleTest, TooManyAssignmentsForTheKeysAreRejected) {
  const MoeShape shape{.tokens = 4096};
  const absl::Status status = CheckMoeBlockShape(shape);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(status.message(), ::testing::HasSubstr("must be below 4096"));
}

}  // namespace
}  // namespace visa::models
