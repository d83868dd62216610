// The JIT reports reads of memory nothing wrote as the interpreter does (issue 30, item 2): a
// fetch of never-written DM, a DMA move of it, a DM read-back through the context, a Launch whose
// input was placed but never written. Each case runs on both backends and the messages agree.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "dsl/mapping_parser.h"
#include "dsl/status_macros.h"
#include "interp/interpreter.h"
#include "jit/jit_backend.h"
#include "runtime/launch.h"
#include "runtime/tensor_unit.h"
#include "runtime/transfer.h"

namespace visa {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;

class JitUninitializedReadTest : public ::testing::Test {
 protected:
  JitUninitializedReadTest() : scope_(*Axes::Parse("A = 32")) {}
  Mapping m(const std::string& text) { return scope_.m(text); }

  Backend& BackendOf(bool jit) {
    if (!jit) return interp_;
    if (!jit_) jit_ = *jit::JitBackend::Create();
    return *jit_;
  }

  // Runs `body` on a fresh tracking device with each backend; returns the two statuses' messages
  // (interpreter first) after checking both failed with the rule's name.
  std::vector<std::string> OnBothBackends(
      const std::function<absl::Status(Device&, Context&, Backend&)>& body) {
    std::vector<std::string> messages;
    for (bool jit : {false, true}) {
      Device device(1);
      Context ctx(device, BackendOf(jit));
      absl::Status status = body(device, ctx, BackendOf(jit));
      EXPECT_FALSE(status.ok()) << (jit ? "jit" : "interpreter");
      EXPECT_EQ(status.code(), absl::StatusCode::kFailedPrecondition) << status;
      EXPECT_THAT(status.message(), HasSubstr("Uninitialized Read")) << (jit ? "jit" : "interpreter");
      messages.push_back(std::string(status.message()));
    }
    return messages;
  }

  absl::StatusOr<DmTensor> Unwritten(Device& device) {
    ASSIGN_OR_RETURN(DmTensor t, DmTensor::Create(device, DType::kI8, m("1"), m("1 # 2"), m("1 # 256"), m("A"), 0x100));
    t.SetName("never_written");
    return t;
  }

  absl::StatusOr<DmTensor> Copy(Context& ctx, const DmTensor& in) {
    return ctx.main.begin(in).fetch(DType::kI8, m("1"), m("A")).collect(m("1"), m("A # 32")).commit(m("A"), 0x8000);
  }

  MappingScope scope_;
  interp::Interpreter interp_;
  std::unique_ptr<jit::JitBackend> jit_;
};

TEST_F(JitUninitializedReadTest, AFetchOfNeverWrittenDm) {
  std::vector<std::string> messages = OnBothBackends([&](Device& device, Context& ctx, Backend&) -> absl::Status {
    ASSIGN_OR_RETURN(DmTensor in, Unwritten(device));
    return Copy(ctx, in).status();
  });
  EXPECT_THAT(messages[1], AllOf(HasSubstr("the fetch of a main-context pipeline"), HasSubstr("`never_written`"),
                                 HasSubstr("DM bytes [0x100, 0x101)")));
  EXPECT_EQ(messages[0], messages[1]);
}

TEST_F(JitUninitializedReadTest, ADmaMoveOfNeverWrittenDm) {
  std::vector<std::string> messages = OnBothBackends([&](Device& device, Context& ctx, Backend&) -> absl::Status {
    ASSIGN_OR_RETURN(DmTensor in, Unwritten(device));
    return in.to_hbm(ctx.tdma, 0x1000, m("A")).status();
  });
  EXPECT_THAT(messages[1], AllOf(HasSubstr("a tdma move reads DM bytes [0x100, 0x101)"), HasSubstr("`never_written`")));
  EXPECT_EQ(messages[0], messages[1]);
}

TEST_F(JitUninitializedReadTest, ADmReadBackThroughTheContext) {
  // The read-back's scratch HBM move must not hide the read: it fails on that move.
  std::vector<std::string> messages = OnBothBackends([&](Device& device, Context& ctx, Backend&) -> absl::Status {
    ASSIGN_OR_RETURN(DmTensor in, Unwritten(device));
    return in.to_host(ctx, m("A")).status();
  });
  EXPECT_THAT(messages[1], HasSubstr("`never_written`"));
  EXPECT_EQ(messages[0], messages[1]);
}

TEST_F(JitUninitializedReadTest, ALaunchWhoseInputWasPlacedButNeverWritten) {
  Device trace_device(1);
  absl::StatusOr<Placement> placement =
      Place(trace_device, DType::kI8, Tier::kDm, {m("1"), m("1 # 2"), m("1 # 256"), m("A")}, Address(0x100));
  ASSERT_TRUE(placement.ok()) << placement.status();
  absl::StatusOr<DeviceTensor> example = WriteAs(*HostTensor::Random(DType::kI8, m("A"), 2), trace_device, *placement);
  ASSERT_TRUE(example.ok()) << example.status();
  absl::StatusOr<Program> program = Trace(
      [&](Context& ctx, const std::vector<DeviceTensor>& in) -> absl::StatusOr<std::vector<DeviceTensor>> {
        ASSIGN_OR_RETURN(DmTensor dm, DmTensor::From(in[0]));
        ASSIGN_OR_RETURN(DmTensor out, Copy(ctx, dm));
        return std::vector<DeviceTensor>{out};
      },
      {*example});
  ASSERT_TRUE(program.ok()) << program.status();
  std::vector<std::string> messages = OnBothBackends([&](Device& device, Context&, Backend& backend) -> absl::Status {
    ASSIGN_OR_RETURN(DmTensor in, Unwritten(device));
    return Launch(*program, device, backend, {in}).status();
  });
  EXPECT_THAT(messages[1], HasSubstr("the fetch of a main-context pipeline"));
  EXPECT_EQ(messages[0], messages[1]);
}

TEST_F(JitUninitializedReadTest, WrittenInputsRunCleanOnTheJit) {
  Device device(1);
  Context ctx(device, BackendOf(true));
  HostTensor data = *HostTensor::Random(DType::kI8, m("A"), 7);
  absl::StatusOr<HbmTensor> hbm = data.to_hbm(ctx.pdma, 0, m("1"), m("A"));
  ASSERT_TRUE(hbm.ok()) << hbm.status();
  absl::StatusOr<DmTensor> dm = hbm->to_dm(ctx.tdma, 0x100, m("1 # 2"), m("1 # 256"), m("A"));
  ASSERT_TRUE(dm.ok()) << dm.status();
  absl::StatusOr<DmTensor> out = Copy(ctx, *dm);
  ASSERT_TRUE(out.ok()) << out.status();
  absl::StatusOr<HostTensor> back = out->to_host(ctx, m("A"));
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->ToBits(), data.ToBits());
}

}  // namespace
}  // namespace visa

namespace visa {
namespace {

// A DM tensor over 256 slices moved to HBM on the JIT (the GEMM sample's last move): the HBM
// destination is marked written, so the host reads it back without a report.
TEST(JitUninitializedReadMoves, ADmToHbmMoveOnTheJitMarksItsDestination) {
  MappingScope s = *MappingScope::Parse("I = 512, J = 512");
  std::unique_ptr<jit::JitBackend> jit = *jit::JitBackend::Create();
  Device device(1);
  Context ctx(device, *jit);
  HostTensor host = *HostTensor::Random(DType::kBF16, s.m("I, J"), 3);
  absl::StatusOr<HbmTensor> hbm = host.to_hbm(ctx.pdma, 0, s.m("1"), s.m("I, J"));
  ASSERT_TRUE(hbm.ok()) << hbm.status();
  absl::StatusOr<DmTensor> dm = hbm->to_dm(ctx.tdma, 0x1000, s.m("1 # 2"), s.m("I / 32, J / 32"), s.m("I % 32, J % 32"));
  ASSERT_TRUE(dm.ok()) << dm.status();
  absl::StatusOr<HbmTensor> out = dm->to_hbm(ctx.tdma, 2 << 28, s.m("I, J"));
  ASSERT_TRUE(out.ok()) << out.status();
  absl::StatusOr<HostTensor> back = ReadAs(*out, s.m("I, J"));
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->ToBits(), host.ToBits());
}

}  // namespace
}  // namespace visa

