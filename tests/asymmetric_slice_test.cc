// The asymmetric slice (manual, Chip/Cluster Reduce > "Asymmetric Slice"; the notes'
// parallel_copy_chip_slice / _cluster_slice): chip (cluster) c receives slice `indices[c]` of the
// outermost Element axis. Expected values are the host input at the selected indices; both
// backends; each rule's refusal names it.
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
#include "runtime/device.h"
#include "runtime/host_tensor.h"
#include "runtime/op_description.h"
#include "runtime/parallel_copy.h"
#include "runtime/tensor.h"
#include "runtime/tensor_unit.h"

namespace visa {
namespace {

using ::testing::HasSubstr;

std::string Msg(const absl::Status& status) { return std::string(status.message()); }

// The manual's ReduceScatter input: i8 [A = 4, B = 4], chip A; each B value on its own 8-byte word.
struct ChipInput {
  MappingScope s = *MappingScope::Parse("A = 4, B = 4");
  std::optional<HostTensor> host;
  std::optional<DmTensor> dm;
  ChipInput(Context& ctx, const std::string& element = "B, 1 # 8") {
    host = *HostTensor::Random(DType::kI8, s.m("A, B"), 11);
    HbmTensor hbm = *host->to_hbm(ctx.pdma, 0, s.m("A"), s.m(element));
    dm = *hbm.to_dm(ctx.tdma, 0, s.m("A"), s.m("1 # 2"), s.m("1 # 256"), s.m(element));
  }
  double At(int64_t a, int64_t b) const { return *host->Get(a * 4 + b); }
};

void SlicesTheDiagonals(Backend& backend) {
  for (const std::vector<int64_t>& indices : std::vector<std::vector<int64_t>>{{0, 1, 2, 3}, {3, 0, 1, 2},
                                                                              {2, 3, 0, 1}, {1, 2, 3, 0}}) {
    Device device(4);
    Context ctx(device, backend);
    ChipInput in(ctx);
    absl::StatusOr<DmTensor> t = AsymmetricSlice(ctx.sub, *in.dm, SliceLevel::kChip, "B", in.s.m("1 # 8"),
                                                 indices, 1 << 16);
    ASSERT_TRUE(t.ok()) << t.status();
    absl::StatusOr<HostTensor> back = t->to_host(ctx, in.s.m("A"));
    ASSERT_TRUE(back.ok()) << back.status();
    for (int64_t chip = 0; chip < 4; ++chip) {
      EXPECT_EQ(*back->Get(chip), in.At(chip, indices[chip])) << "chip " << chip;
    }
  }
}

TEST(AsymmetricSliceTest, TheManualsDiagonalsOnTheInterpreter) {
  interp::Interpreter interp;
  SlicesTheDiagonals(interp);
}

TEST(AsymmetricSliceTest, TheManualsDiagonalsOnTheJit) {
  std::unique_ptr<jit::JitBackend> jit = *jit::JitBackend::Create();
  SlicesTheDiagonals(*jit);
}

TEST(AsymmetricSliceTest, OneSubContextParallelCopyPerChip) {
  Device device(4);
  interp::Interpreter interp;
  Context ctx(device, interp);
  ChipInput in(ctx);
  const size_t before = ctx.program().ops.size();
  ASSERT_TRUE(AsymmetricSlice(ctx.sub, *in.dm, SliceLevel::kChip, "B", in.s.m("1 # 8"), {3, 0, 1, 2}, 1 << 16).ok());
  ASSERT_EQ(ctx.program().ops.size(), before + 4);
  for (int chip = 0; chip < 4; ++chip) {
    const Op& op = ctx.program().ops[before + chip];
    const auto& pipe = std::get<PipelineOp>(op.body);
    EXPECT_EQ(pipe.operation, absl::StrCat("AsymmetricSlice chip ", chip, ": B = ", (chip + 3) % 4, " (ParallelCopy)"));
    OpDescription d = Describe(op);
    EXPECT_EQ(d.resource, Resource::kSub);
    // One 8-byte word read on that chip and written there.
    ASSERT_EQ(d.writes.size(), 1u);
    // Chip c's slice 0 is DM unit 512 c.
    EXPECT_THAT(d.writes[0].ToString(), HasSubstr(absl::StrCat("DM slices ", 512 * chip, " bytes")));
    ASSERT_EQ(d.reads.size(), 1u);
    EXPECT_THAT(d.reads[0].ToString(), HasSubstr(absl::StrCat("DM slices ", 512 * chip, " bytes")));
  }
}

TEST(AsymmetricSliceTest, ClusterSlicesOnBothBackends) {
  interp::Interpreter interp;
  std::unique_ptr<jit::JitBackend> jit = *jit::JitBackend::Create();
  for (Backend* backend : {static_cast<Backend*>(&interp), static_cast<Backend*>(jit.get())}) {
    MappingScope s = *MappingScope::Parse("K = 2, B = 3, C = 2");
    Device device(1);
    Context ctx(device, *backend);
    HostTensor host = *HostTensor::Random(DType::kI32, s.m("K, B, C"), 5);
    HbmTensor hbm = *host.to_hbm(ctx.pdma, 0, s.m("1"), s.m("K, B, C"));
    DmTensor dm = *hbm.to_dm(ctx.tdma, 0, s.m("K"), s.m("1 # 256"), s.m("B, C"));
    absl::StatusOr<DmTensor> t = AsymmetricSlice(ctx.sub, dm, SliceLevel::kCluster, "B", s.m("C"), {2, 0}, 1 << 16);
    ASSERT_TRUE(t.ok()) << t.status();
    HostTensor back = *t->to_host(ctx, s.m("K, C"));
    for (int64_t k = 0; k < 2; ++k) {
      for (int64_t c = 0; c < 2; ++c) {
        EXPECT_EQ(*back.Get(k * 2 + c), *host.Get(k * 6 + (k == 0 ? 2 : 0) * 2 + c)) << backend->name();
      }
    }
  }
}

class AsymmetricSliceRulesTest : public ::testing::Test {
 protected:
  Device device{4};
  interp::Interpreter interp;
  Context ctx{device, interp};
};

TEST_F(AsymmetricSliceRulesTest, TheAxisMustBeTheOutermostElementAxis) {
  ChipInput in(ctx, "B % 2, B / 2, 1 # 8");
  absl::StatusOr<DmTensor> t = AsymmetricSlice(ctx.sub, *in.dm, SliceLevel::kChip, "B", in.s.m("1 # 8"),
                                               {0, 1, 2, 3}, 1 << 16);
  ASSERT_FALSE(t.ok());
  EXPECT_THAT(Msg(t.status()), HasSubstr("Asymmetric Slice (chip)"));
  EXPECT_THAT(Msg(t.status()), HasSubstr("outermost Element axis"));
}

TEST_F(AsymmetricSliceRulesTest, OneIndexPerChipInsideTheAxis) {
  ChipInput in(ctx);
  absl::StatusOr<DmTensor> few = AsymmetricSlice(ctx.sub, *in.dm, SliceLevel::kChip, "B", in.s.m("1 # 8"),
                                                 {0, 1, 2}, 1 << 16);
  EXPECT_THAT(Msg(few.status()), HasSubstr("one slice index per chip (4), got 3"));
  absl::StatusOr<DmTensor> outside = AsymmetricSlice(ctx.sub, *in.dm, SliceLevel::kChip, "B", in.s.m("1 # 8"),
                                                     {0, 1, 4, 3}, 1 << 16);
  EXPECT_THAT(Msg(outside.status()), HasSubstr("slice index 4 is outside B = 4"));
}

TEST_F(AsymmetricSliceRulesTest, EachSliceIsWholeEightByteWords) {
  // i8 [A, B] with B contiguous: a slice of B is one byte, not a word stos can move.
  MappingScope s = *MappingScope::Parse("A = 4, B = 4, C = 4");
  HostTensor host = *HostTensor::Random(DType::kI8, s.m("A, B, C"), 3);
  HbmTensor hbm = *host.to_hbm(ctx.pdma, 0, s.m("A"), s.m("B, C"));
  DmTensor dm = *hbm.to_dm(ctx.tdma, 0, s.m("A"), s.m("1 # 2"), s.m("1 # 256"), s.m("B, C"));
  absl::StatusOr<DmTensor> t = AsymmetricSlice(ctx.sub, dm, SliceLevel::kChip, "B", s.m("C"), {0, 1, 2, 3}, 1 << 16);
  ASSERT_FALSE(t.ok());
  EXPECT_THAT(Msg(t.status()), HasSubstr("is 4 bytes; ParallelCopy moves whole 8-byte words"));
}

TEST_F(AsymmetricSliceRulesTest, TheChipLevelMustBeOneAxisOfEveryChip) {
  MappingScope s = *MappingScope::Parse("B = 4");
  HostTensor host = *HostTensor::Random(DType::kI8, s.m("B"), 3);
  HbmTensor hbm = *host.to_hbm(ctx.pdma, 0, s.m("1 # 4"), s.m("B, 1 # 8"));
  DmTensor dm = *hbm.to_dm(ctx.tdma, 0, s.m("1 # 4"), s.m("1 # 2"), s.m("1 # 256"), s.m("B, 1 # 8"));
  absl::StatusOr<DmTensor> t = AsymmetricSlice(ctx.sub, dm, SliceLevel::kChip, "B", s.m("1 # 8"), {0, 1, 2, 3}, 1 << 16);
  ASSERT_FALSE(t.ok());
  EXPECT_THAT(Msg(t.status()), HasSubstr("needs a single axis of 4 values"));
}

TEST_F(AsymmetricSliceRulesTest, RunsOnTheSubContext) {
  ChipInput in(ctx);
  absl::StatusOr<DmTensor> t = AsymmetricSlice(ctx.main, *in.dm, SliceLevel::kChip, "B", in.s.m("1 # 8"),
                                               {0, 1, 2, 3}, 1 << 16);
  ASSERT_FALSE(t.ok());
  EXPECT_THAT(Msg(t.status()), HasSubstr("ParallelCopy runs on the sub context"));
}

}  // namespace
}  // namespace visa
