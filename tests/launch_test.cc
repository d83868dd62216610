// Trace once, launch again: a traced Program replays on another device with other input data.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "dsl/mapping_parser.h"
#include "interp/interpreter.h"
#include "runtime/launch.h"
#include "runtime/transfer.h"

namespace visa {
namespace {

using ::testing::HasSubstr;

class LaunchTest : public ::testing::Test {
 protected:
  Mapping m(const std::string& text) { return s_.m(text); }

  // The input of the kernel: [A, B] in HBM at address 0 of `device`, random with `seed`.
  std::pair<HostTensor, HbmTensor> Input(Device& device, uint64_t seed) {
    HostTensor host = *HostTensor::Random(DType::kI8, m("A, B"), seed);
    Dma pdma = Dma::Pcie(device);
    return {host, *host.to_hbm(pdma, 0, m("1"), m("A, B"))};
  }

  // HBM -> DM, a transposing fetch/collect/commit, DM -> HBM.
  KernelOf Kernel() {
    return [this](Context& ctx, const std::vector<DeviceTensor>& in) -> absl::StatusOr<std::vector<DeviceTensor>> {
      HbmTensor hbm(in[0]);
      absl::StatusOr<DmTensor> dm = hbm.to_dm(ctx.tdma, 0, m("1 # 2"), m("1 # 256"), m("A, B"));
      if (!dm.ok()) return dm.status();
      absl::StatusOr<DmTensor> out = ctx.main.begin(dm->view())
                                         .fetch(DType::kI8, m("B / 8, A"), m("B % 8"))
                                         .collect(m("B / 8, A"), m("B % 8 # 32"))
                                         .commit(m("B / 8, A, B % 8"), 0x1000);
      if (!out.ok()) return out.status();
      absl::StatusOr<HbmTensor> back = out->to_hbm(ctx.tdma, 0x10000, m("A, B"));
      if (!back.ok()) return back.status();
      return std::vector<DeviceTensor>{*back};
    };
  }

  MappingScope s_{*Axes::Parse("A = 4, B = 16")};
};

TEST_F(LaunchTest, ATracedProgramReplaysOnAnotherDeviceWithOtherData) {
  Device traced_on(1);
  auto [host, hbm] = Input(traced_on, 1);
  absl::StatusOr<Program> program = Trace(Kernel(), {hbm});
  ASSERT_TRUE(program.ok()) << program.status();
  ASSERT_EQ(program->ops.size(), 3u);
  EXPECT_THAT(program->ToText(), HasSubstr("op 0: dma tdma"));
  EXPECT_THAT(program->ToText(), HasSubstr("op 1: pipeline main"));

  Device device(1);
  auto [other_host, other_hbm] = Input(device, 2);
  ASSERT_NE(other_host.ToBits(), host.ToBits());
  interp::Interpreter interpreter;
  absl::StatusOr<std::vector<DeviceTensor>> outputs = Launch(*program, device, interpreter, {other_hbm});
  ASSERT_TRUE(outputs.ok()) << outputs.status();
  ASSERT_EQ(outputs->size(), 1u);
  absl::StatusOr<HostTensor> result = ReadAs((*outputs)[0], m("A, B"));
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(result->ToBits(), other_host.ToBits());
}

// Every run reserves its ops' outputs anew; once no handle names a run's tensors (its scratch at
// once, its outputs when the caller drops them), the device's address book forgets them, so a
// program launched again and again keeps a constant number of records.
TEST_F(LaunchTest, RepeatedLaunchesLeaveNoRecordsBehind) {
  Device device(1);
  auto [host, hbm] = Input(device, 1);
  absl::StatusOr<Program> program = Trace(Kernel(), {hbm});
  ASSERT_TRUE(program.ok()) << program.status();
  interp::Interpreter interpreter;
  int64_t after_first = 0;
  for (int run = 0; run < 5; ++run) {
    absl::StatusOr<std::vector<DeviceTensor>> outputs = Launch(*program, device, interpreter, {hbm});
    ASSERT_TRUE(outputs.ok()) << outputs.status();
    if (run == 0) after_first = device.book().size();
    EXPECT_EQ(device.book().size(), after_first) << "run " << run;
  }
  // A held output is live: the next run, which would write over it, is refused before writing,
  // naming it, and the held output stays readable (launch_live_tensor_test.cc).
  absl::StatusOr<std::vector<DeviceTensor>> held = Launch(*program, device, interpreter, {hbm});
  ASSERT_TRUE(held.ok()) << held.status();
  held->at(0).SetName("held");
  absl::StatusOr<std::vector<DeviceTensor>> refused = Launch(*program, device, interpreter, {hbm});
  ASSERT_FALSE(refused.ok());
  EXPECT_THAT(refused.status().message(), HasSubstr("Address Collision"));
  EXPECT_THAT(refused.status().message(), HasSubstr("`held`"));
  EXPECT_TRUE(held->at(0).CheckReadable().ok());
}

// A relaunch places its tensors where the previous run's were, which those released when their
// last handles went: every unit claim takes the released range over in place (the data-movement
// benchmark's per-run cost), and the ownership maps do not grow.
TEST_F(LaunchTest, RelaunchesClaimReleasedRangesInPlace) {
  Device device(1);
  auto [host, hbm] = Input(device, 1);
  absl::StatusOr<Program> program = Trace(Kernel(), {hbm});
  ASSERT_TRUE(program.ok()) << program.status();
  interp::Interpreter interpreter;
  ASSERT_TRUE(Launch(*program, device, interpreter, {hbm}).ok());
  const int64_t pieces = device.book().pieces(Tier::kDm, 0);
  for (int run = 0; run < 3; ++run) {
    const int64_t inserted = device.book().claims_inserted();
    const int64_t in_place = device.book().claims_in_place();
    absl::StatusOr<std::vector<DeviceTensor>> outputs = Launch(*program, device, interpreter, {hbm});
    ASSERT_TRUE(outputs.ok()) << outputs.status();
    EXPECT_EQ(device.book().claims_inserted(), inserted) << "run " << run;
    EXPECT_GT(device.book().claims_in_place(), in_place) << "run " << run;
    EXPECT_EQ(device.book().pieces(Tier::kDm, 0), pieces) << "run " << run;
    EXPECT_EQ(ReadAs((*outputs)[0], m("A, B"))->ToBits(), host.ToBits());
  }
}

// A tensor's record goes with its last handle; the bytes it owned become free, and a collision
// message naming it as the writer keeps its name.
TEST(AddressBookLease, TheLastHandleForgetsTheTensor) {
  AddressBook book;
  const int64_t victim = book.Add("victim", Tier::kDm);
  book.Claim(victim, {0}, {0, 64});
  {
    const int64_t writer = book.Add("writer", Tier::kDm);
    std::shared_ptr<const void> lease = book.Lease(writer);
    book.Claim(writer, {0}, {32, 96});
    EXPECT_EQ(book.size(), 2);
  }
  EXPECT_EQ(book.size(), 1);
  // The writer took [32, 96) (cutting the victim to [0, 32)): all of it is free again.
  EXPECT_EQ(book.FindFree(Tier::kDm, {0}, 64, 32, 1024), 32);
  absl::Status read = book.CheckReadable(victim, {0}, {0, 64});
  EXPECT_THAT(read.message(), HasSubstr("overwritten by tensor `writer`"));
  // A lease outliving its book does nothing.
  std::shared_ptr<const void> late;
  {
    AddressBook gone;
    late = gone.Lease(gone.Add("t", Tier::kHbm));
  }
  late.reset();
}

TEST_F(LaunchTest, InputsMustMatchTheTracedPlacements) {
  Device traced_on(1);
  auto [host, hbm] = Input(traced_on, 1);
  absl::StatusOr<Program> program = Trace(Kernel(), {hbm});
  ASSERT_TRUE(program.ok()) << program.status();
  Device device(1);
  Dma pdma = Dma::Pcie(device);
  HbmTensor elsewhere = *host.to_hbm(pdma, 4096, m("1"), m("A, B"));
  interp::Interpreter interpreter;
  absl::StatusOr<std::vector<DeviceTensor>> outputs = Launch(*program, device, interpreter, {elsewhere});
  ASSERT_FALSE(outputs.ok());
  EXPECT_THAT(outputs.status().message(), HasSubstr("does not match the traced"));
  EXPECT_FALSE(Launch(*program, device, interpreter, {}).ok());
}

}  // namespace
}  // namespace visa
