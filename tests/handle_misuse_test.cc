// API misuse of tensor handles (issue 30, items 5 and 9): a handle of one tier taken as another,
// a handle used after its Device is gone, and host read-backs (ReadAs, a traced program's reserved
// outputs) of memory nothing wrote. Each fails with a Status naming its rule; none aborts.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <memory>
#include <type_traits>

#include "dsl/mapping_parser.h"
#include "dsl/status_macros.h"
#include "interp/interpreter.h"
#include "runtime/launch.h"
#include "runtime/tensor_unit.h"
#include "runtime/transfer.h"

namespace visa {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;

// A handle of one tier cannot be taken as another's type: the conversion does not compile.
static_assert(!std::is_constructible_v<DmTensor, HbmTensor>);
static_assert(!std::is_constructible_v<HbmTensor, DmTensor>);
static_assert(!std::is_constructible_v<TrfTensor, VrfTensor>);
static_assert(!std::is_constructible_v<VrfTensor, DmTensor>);
static_assert(std::is_constructible_v<DmTensor, DmTensor>);

class HandleMisuseTest : public ::testing::Test {
 protected:
  HandleMisuseTest() : scope_(*Axes::Parse("A = 32")) {}
  Mapping m(const std::string& text) { return scope_.m(text); }

  absl::StatusOr<HbmTensor> Hbm(Device& device, int64_t address) {
    return HbmTensor::Create(device, DType::kI8, m("1"), m("A"), address);
  }

  MappingScope scope_;
  interp::Interpreter interp_;
};

TEST_F(HandleMisuseTest, DmTensorFromAnHbmTensorIsATierError) {
  Device device(1);
  absl::StatusOr<HbmTensor> hbm = Hbm(device, 0);
  ASSERT_TRUE(hbm.ok()) << hbm.status();
  hbm->SetName("weights");
  // A tier known only at run time (a DeviceTensor): From checks it.
  const DeviceTensor& any = *hbm;
  absl::StatusOr<DmTensor> dm = DmTensor::From(any);
  ASSERT_FALSE(dm.ok());
  EXPECT_EQ(dm.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(dm.status().message(),
              AllOf(HasSubstr("Tensor Tier"), HasSubstr("`weights`"), HasSubstr("lives in HBM"), HasSubstr("DmTensor")));
  EXPECT_FALSE(TrfTensor::From(any).ok());
  EXPECT_FALSE(VrfTensor::From(any).ok());
  absl::StatusOr<HbmTensor> same = HbmTensor::From(any);
  ASSERT_TRUE(same.ok()) << same.status();
  EXPECT_EQ(same->id(), hbm->id());
  // A DM tensor is not an HBM tensor either.
  absl::StatusOr<DmTensor> real = DmTensor::Create(device, DType::kI8, m("1"), m("1 # 2"), m("1 # 256"), m("A"), 0);
  ASSERT_TRUE(real.ok()) << real.status();
  absl::StatusOr<HbmTensor> wrong = HbmTensor::From(*real);
  ASSERT_FALSE(wrong.ok());
  EXPECT_THAT(wrong.status().message(), AllOf(HasSubstr("Tensor Tier"), HasSubstr("lives in DM")));
  EXPECT_TRUE(DmTensor::From(*real).ok());
}

TEST_F(HandleMisuseTest, AHandleUsedAfterItsDeviceIsDestroyedFailsWithAStatus) {
  absl::StatusOr<std::unique_ptr<Device>> first = Device::Create(1);
  ASSERT_TRUE(first.ok());
  absl::StatusOr<HbmTensor> hbm = Hbm(**first, 0x100);
  ASSERT_TRUE(hbm.ok()) << hbm.status();
  ASSERT_TRUE(WriteInto(*HostTensor::Random(DType::kI8, m("A"), 3), *hbm).ok());
  hbm->SetName("orphan");
  first->reset();  // the handle outlives its device

  EXPECT_THAT(hbm->CheckDeviceAlive().message(), HasSubstr("Tensor Lifetime"));
  EXPECT_THAT(hbm->CheckReadable().message(), AllOf(HasSubstr("Tensor Lifetime"), HasSubstr("destroyed")));
  EXPECT_THAT(hbm->name(), HasSubstr("destroyed Device"));
  EXPECT_THAT(hbm->ToString(), HasSubstr("destroyed Device"));
  hbm->SetName("ignored");  // no record to name: harmless
  hbm->Release();           // nothing left to release: harmless
  // The moves on a new device (which may sit where the old one was) refuse it.
  Device second(1);
  Context ctx(second, interp_);
  absl::StatusOr<HostTensor> back = hbm->to_host(ctx.pdma, m("A"));
  ASSERT_FALSE(back.ok());
  EXPECT_THAT(back.status().message(), HasSubstr("Tensor Lifetime"));
  absl::StatusOr<HbmTensor> moved = hbm->to_hbm(ctx.tdma, 0x1000, m("A"));
  ASSERT_FALSE(moved.ok());
  EXPECT_THAT(moved.status().message(), HasSubstr("Tensor Lifetime"));
  absl::StatusOr<HostTensor> read = ReadAs(*hbm, m("A"));
  ASSERT_FALSE(read.ok());
  EXPECT_THAT(read.status().message(), HasSubstr("Tensor Lifetime"));
  EXPECT_FALSE(DmTensor::From(*hbm).ok());
}

TEST_F(HandleMisuseTest, ReadAsOfNeverWrittenMemoryFailsAsToHostDoes) {
  Device device(1);
  Context ctx(device, interp_);
  absl::StatusOr<HbmTensor> hbm = Hbm(device, 0x4000);
  ASSERT_TRUE(hbm.ok()) << hbm.status();
  hbm->SetName("never_written");
  absl::StatusOr<HostTensor> via_to_host = hbm->to_host(ctx.pdma, m("A"));
  ASSERT_FALSE(via_to_host.ok());
  absl::StatusOr<HostTensor> via_read_as = ReadAs(*hbm, m("A"));
  ASSERT_FALSE(via_read_as.ok());
  EXPECT_EQ(via_read_as.status().code(), via_to_host.status().code());
  EXPECT_THAT(via_read_as.status().message(),
              AllOf(HasSubstr("Uninitialized Read"), HasSubstr("HBM bytes [0x4000, 0x4001)"), HasSubstr("`never_written`")));
  // Written, it reads back what was written.
  HostTensor data = *HostTensor::Random(DType::kI8, m("A"), 5);
  ASSERT_TRUE(WriteInto(data, *hbm).ok());
  absl::StatusOr<HostTensor> again = ReadAs(*hbm, m("A"));
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(again->ToBits(), data.ToBits());
  // A device that does not track reads what memory holds, as to_host does there.
  Device untracked(1, DeviceOptions{.uninitialized_reads = UninitializedReads::kOff});
  absl::StatusOr<HbmTensor> plain = Hbm(untracked, 0x4000);
  ASSERT_TRUE(plain.ok());
  EXPECT_TRUE(ReadAs(*plain, m("A")).ok());
}

TEST_F(HandleMisuseTest, ATracedProgramsReservedOutputReadBeforeAnyLaunchFails) {
  Device device(1);
  absl::StatusOr<Placement> placement = Place(device, DType::kI8, Tier::kDm, {m("1"), m("1 # 2"), m("1 # 256"), m("A")}, Address(0));
  ASSERT_TRUE(placement.ok()) << placement.status();
  absl::StatusOr<DeviceTensor> input = WriteAs(*HostTensor::Random(DType::kI8, m("A"), 4), device, *placement);
  ASSERT_TRUE(input.ok()) << input.status();
  absl::StatusOr<Program> program = Trace(
      [&](Context& ctx, const std::vector<DeviceTensor>& in) -> absl::StatusOr<std::vector<DeviceTensor>> {
        ASSIGN_OR_RETURN(DmTensor dm, DmTensor::From(in[0]));
        ASSIGN_OR_RETURN(DmTensor out, ctx.main.begin(dm)
                                           .fetch(DType::kI8, m("1"), m("A"))
                                           .collect(m("1"), m("A # 32"))
                                           .commit(m("A"), 0x8000));
        return std::vector<DeviceTensor>{out};
      },
      {*input});
  ASSERT_TRUE(program.ok()) << program.status();
  ASSERT_EQ(program->outputs.size(), 1u);
  ASSERT_TRUE(program->outputs[0].handle.has_value());
  absl::StatusOr<HostTensor> early = ReadAs(*program->outputs[0].handle, m("A"));
  ASSERT_FALSE(early.ok());
  EXPECT_THAT(early.status().message(), HasSubstr("Uninitialized Read"));
  // Launched, its outputs read back the input.
  absl::StatusOr<std::vector<DeviceTensor>> outputs = Launch(*program, device, interp_, {*input});
  ASSERT_TRUE(outputs.ok()) << outputs.status();
  absl::StatusOr<HostTensor> late = ReadAs((*outputs)[0], m("A"));
  ASSERT_TRUE(late.ok()) << late.status();
  EXPECT_EQ(late->ToBits(), ReadAs(*input, m("A"))->ToBits());
}

}  // namespace
}  // namespace visa
