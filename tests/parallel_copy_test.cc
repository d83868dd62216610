// ParallelCopy (stos on the sub context) and the asymmetric slice: data checked against the host
// input itself (a copy is the identity on the tensor; a slice picks host elements by index), on
// both backends, and every rule's refusal naming the rule.
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

// An input of `dtype` laid out by `element` in DM, one cluster and slice.
DmTensor Upload(Context& ctx, const MappingScope& s, DType dtype, const std::string& element, std::optional<HostTensor>& host) {
  host = *HostTensor::Random(dtype, s.m(element), 7);
  HbmTensor hbm = *host->to_hbm(ctx.pdma, 0, s.m("1"), s.m(element));
  return *hbm.to_dm(ctx.tdma, 0, s.m("1 # 2"), s.m("1 # 256"), s.m(element));
}

void CopiesEveryDtype(Backend& backend) {
  for (DType dtype : {DType::kI8, DType::kF8E4M3, DType::kF8E5M2, DType::kI16, DType::kBF16, DType::kF16,
                      DType::kI32, DType::kF32, DType::kI4}) {
    SCOPED_TRACE(std::string(Name(dtype)));
    MappingScope s = *MappingScope::Parse("A = 4, B = 32");
    Device device(1);
    Context ctx(device, backend);
    std::optional<HostTensor> host;
    DmTensor src = Upload(ctx, s, dtype, "A, B", host);
    // The relayout swaps A with the outer part of B: whole 8-byte words move.
    const int64_t per_word = 64 / StorageBits(dtype);
    const std::string element = absl::StrCat("B / ", per_word, ", A, B % ", per_word);
    absl::StatusOr<DmTensor> copy = ParallelCopy(ctx.sub, src, s.m(element), 1 << 16);
    ASSERT_TRUE(copy.ok()) << copy.status();
    EXPECT_EQ(copy->address(), 1 << 16);
    absl::StatusOr<HostTensor> back = copy->to_host(ctx, s.m("A, B"));
    ASSERT_TRUE(back.ok()) << back.status();
    EXPECT_EQ(back->ToBits(), host->ToBits());
  }
}

TEST(ParallelCopyTest, CopiesEveryByteSizedDtypeAndI4OnTheInterpreter) {
  interp::Interpreter interp;
  CopiesEveryDtype(interp);
}

TEST(ParallelCopyTest, CopiesEveryByteSizedDtypeAndI4OnTheJit) {
  std::unique_ptr<jit::JitBackend> jit = *jit::JitBackend::Create();
  CopiesEveryDtype(*jit);
}

TEST(ParallelCopyTest, IsOneSubContextOpWithItsDescription) {
  MappingScope s = *MappingScope::Parse("A = 4, B = 32");
  Device device(1);
  interp::Interpreter interp;
  Context ctx(device, interp);
  std::optional<HostTensor> host;
  DmTensor src = Upload(ctx, s, DType::kI8, "A, B", host);
  const size_t before = ctx.program().ops.size();
  ASSERT_TRUE(ParallelCopy(ctx.sub, src, s.m("B / 8, A, B % 8"), 1 << 16).ok());
  ASSERT_EQ(ctx.program().ops.size(), before + 1);
  const Op& op = ctx.program().ops.back();
  const auto& pipe = std::get<PipelineOp>(op.body);
  EXPECT_EQ(pipe.context, ContextKind::kSub);
  EXPECT_EQ(pipe.operation, "ParallelCopy");
  EXPECT_THAT(OpText(op, 0), HasSubstr("operation ParallelCopy"));
  OpDescription d = Describe(op);
  EXPECT_EQ(d.resource, Resource::kSub);
  // 128 bytes read and written in the one slice.
  ASSERT_EQ(d.reads.size(), 1u);
  ASSERT_EQ(d.writes.size(), 1u);
  // The manual's sub-context fetch (8-byte reads) and commit (8-byte writes): 16 words, one each.
  ASSERT_TRUE(d.cycles.has_value());
  EXPECT_EQ(*d.cycles, 16);
}

TEST(ParallelCopyTest, RunsOnTheSubContextOnly) {
  MappingScope s = *MappingScope::Parse("A = 4, B = 32");
  Device device(1);
  interp::Interpreter interp;
  Context ctx(device, interp);
  std::optional<HostTensor> host;
  DmTensor src = Upload(ctx, s, DType::kI8, "A, B", host);
  absl::StatusOr<DmTensor> copy = ParallelCopy(ctx.main, src, s.m("A, B"), 1 << 16);
  ASSERT_FALSE(copy.ok());
  EXPECT_THAT(Msg(copy.status()), HasSubstr("ParallelCopy runs on the sub context"));
}

TEST(ParallelCopyTest, WritesWholeEightByteWords) {
  MappingScope s = *MappingScope::Parse("A = 3, B = 4");
  Device device(1);
  interp::Interpreter interp;
  Context ctx(device, interp);
  std::optional<HostTensor> host;
  DmTensor src = Upload(ctx, s, DType::kI8, "A, B # 8", host);
  absl::StatusOr<DmTensor> copy = ParallelCopy(ctx.sub, src, s.m("A, B"), 1 << 16);  // 12 bytes
  ASSERT_FALSE(copy.ok());
  EXPECT_THAT(Msg(copy.status()), HasSubstr("commit_size is 8 bytes"));
  EXPECT_THAT(Msg(copy.status()), HasSubstr("`A, B`"));
}

TEST(ParallelCopyTest, EachWordMustBeContiguousInTheSource) {
  MappingScope s = *MappingScope::Parse("A = 8, B = 8");
  Device device(1);
  interp::Interpreter interp;
  Context ctx(device, interp);
  std::optional<HostTensor> host;
  DmTensor src = Upload(ctx, s, DType::kI8, "A, B", host);
  // A transpose: each destination word (8 values of A) is strided in the source.
  absl::StatusOr<DmTensor> copy = ParallelCopy(ctx.sub, src, s.m("B, A"), 1 << 16);
  ASSERT_FALSE(copy.ok());
  EXPECT_THAT(Msg(copy.status()), HasSubstr("must be contiguous"));
  EXPECT_THAT(Msg(copy.status()), HasSubstr("ParallelCopy"));
}

TEST(ParallelCopyTest, SubContextCommitsFollowFetchOnly) {
  MappingScope s = *MappingScope::Parse("A = 4, B = 32");
  Device device(1);
  interp::Interpreter interp;
  Context ctx(device, interp);
  std::optional<HostTensor> host;
  DmTensor src = Upload(ctx, s, DType::kF32, "A, B", host);
  absl::StatusOr<DmTensor> out = ctx.sub.begin(src)
                                     .fetch(DType::kF32, s.m("A, B / 8"), s.m("B % 8"))
                                     .collect(s.m("A, B / 8"), s.m("B % 8"))
                                     .cast(DType::kBF16, s.m("B % 8 # 16"))
                                     .commit(s.m("A, B"), 1 << 16);
  ASSERT_FALSE(out.ok());
  EXPECT_THAT(Msg(out.status()), HasSubstr("Sub-context commits can only follow fetch"));
}

TEST(ParallelCopyTest, IntoAnExistingTensorWritesItsLivePositions) {
  MappingScope s = *MappingScope::Parse("A = 4, B = 32");
  Device device(1);
  interp::Interpreter interp;
  Context ctx(device, interp);
  std::optional<HostTensor> host;
  DmTensor src = Upload(ctx, s, DType::kI16, "A, B", host);
  DmTensor dst = *DmTensor::Create(device, DType::kI16, {.cluster = s.m("1 # 2"), .slice = s.m("1 # 256"),
                                                         .element = s.m("B / 4, A, B % 4")}, 1 << 16);
  ASSERT_TRUE(ParallelCopyInto(ctx.sub, src, dst).ok());
  EXPECT_EQ(dst.to_host(ctx, s.m("A, B"))->ToBits(), host->ToBits());
}

}  // namespace
}  // namespace visa
