// Launch and live tensors (issue 30, item 4): a launch never writes over a live tensor it does not
// take as an input (a user's tensor, an output kept from an earlier launch); it is refused before
// writing anything, naming both tensors, and the live tensor keeps its data. Tensors the program
// writes in place (its inputs) and the placeholders its Trace made are not in the way.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "dsl/mapping_parser.h"
#include "dsl/status_macros.h"
#include "interp/interpreter.h"
#include "jit/jit_backend.h"
#include "runtime/launch.h"
#include "runtime/transfer.h"

namespace visa {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;

class LaunchLiveTensorTest : public ::testing::TestWithParam<bool> {
 protected:
  Mapping m(const std::string& text) { return s_.m(text); }

  Backend& backend() {
    if (!GetParam()) return interp_;
    if (!jit_) jit_ = *jit::JitBackend::Create();
    return *jit_;
  }

  absl::StatusOr<HbmTensor> Input(Device& device, const HostTensor& host) {
    Dma pdma = Dma::Pcie(device);
    return host.to_hbm(pdma, 0, m("1"), m("A, B"));
  }

  // HBM -> DM at 0 -> a copy committed at DM 0x1000 -> HBM at 0x10000, the output.
  KernelOf Kernel() {
    return [this](Context& ctx, const std::vector<DeviceTensor>& in) -> absl::StatusOr<std::vector<DeviceTensor>> {
      ASSIGN_OR_RETURN(HbmTensor hbm, HbmTensor::From(in[0]));
      ASSIGN_OR_RETURN(DmTensor dm, hbm.to_dm(ctx.tdma, 0, m("1 # 2"), m("1 # 256"), m("A, B")));
      ASSIGN_OR_RETURN(DmTensor out, ctx.main.begin(dm)
                                         .fetch(DType::kI8, m("A"), m("B"))
                                         .collect(m("A"), m("B # 32"))
                                         .commit(m("A, B"), 0x1000));
      ASSIGN_OR_RETURN(HbmTensor back, out.to_hbm(ctx.tdma, 0x10000, m("A, B")));
      return std::vector<DeviceTensor>{back};
    };
  }

  MappingScope s_{*Axes::Parse("A = 4, B = 16")};
  interp::Interpreter interp_;
  std::unique_ptr<jit::JitBackend> jit_;
};

TEST_P(LaunchLiveTensorTest, AKeptOutputIsNotOverwrittenByTheNextLaunch) {
  Device device(1);
  HostTensor first_data = *HostTensor::Random(DType::kI8, m("A, B"), 1);
  absl::StatusOr<HbmTensor> in = Input(device, first_data);
  ASSERT_TRUE(in.ok()) << in.status();
  absl::StatusOr<Program> program = Trace(Kernel(), {*in});
  ASSERT_TRUE(program.ok()) << program.status();
  absl::StatusOr<std::vector<DeviceTensor>> kept = Launch(*program, device, backend(), {*in});
  ASSERT_TRUE(kept.ok()) << kept.status();
  kept->at(0).SetName("last_logits");
  // New data, launched again while the first output is kept: refused before writing.
  ASSERT_TRUE(WriteInto(*HostTensor::Random(DType::kI8, m("A, B"), 2), *in).ok());
  absl::StatusOr<std::vector<DeviceTensor>> next = Launch(*program, device, backend(), {*in});
  ASSERT_FALSE(next.ok());
  EXPECT_EQ(next.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(next.status().message(), AllOf(HasSubstr("Address Collision"), HasSubstr("`last_logits`"),
                                             HasSubstr("op 2's output"), HasSubstr("HBM bytes [0x10000, 0x10040)")));
  // The kept output still reads what the first launch wrote.
  absl::StatusOr<HostTensor> back = ReadAs(kept->at(0), m("A, B"));
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->ToBits(), first_data.ToBits());
  // Read and dropped, the output is out of the way: the next launch runs.
  kept->clear();
  EXPECT_TRUE(Launch(*program, device, backend(), {*in}).ok());
}

TEST_P(LaunchLiveTensorTest, AUserTensorWhereTheProgramWritesIsNotOverwritten) {
  Device device(1);
  HostTensor data = *HostTensor::Random(DType::kI8, m("A, B"), 3);
  absl::StatusOr<HbmTensor> in = Input(device, data);
  ASSERT_TRUE(in.ok()) << in.status();
  absl::StatusOr<Program> program = Trace(Kernel(), {*in});
  ASSERT_TRUE(program.ok()) << program.status();
  // A user tensor placed (after tracing) over the program's DM scratch.
  HostTensor mine = *HostTensor::Random(DType::kI8, m("A, B"), 4);
  absl::StatusOr<Placement> at = Place(device, DType::kI8, Tier::kDm, {m("1"), m("1 # 2"), m("1 # 256"), m("A, B")}, Address(0x1000));
  ASSERT_TRUE(at.ok()) << at.status();
  absl::StatusOr<DeviceTensor> user = WriteAs(mine, device, *at);
  ASSERT_TRUE(user.ok()) << user.status();
  user->SetName("kv_cache");
  absl::StatusOr<std::vector<DeviceTensor>> refused = Launch(*program, device, backend(), {*in});
  ASSERT_FALSE(refused.ok());
  EXPECT_THAT(refused.status().message(),
              AllOf(HasSubstr("Address Collision"), HasSubstr("`kv_cache`"), HasSubstr("op 1's output"),
                    HasSubstr("DM bytes [0x1000, 0x1040)")));
  absl::StatusOr<HostTensor> still = ReadAs(*user, m("A, B"));
  ASSERT_TRUE(still.ok()) << still.status();
  EXPECT_EQ(still->ToBits(), mine.ToBits());
}

TEST_P(LaunchLiveTensorTest, RelaunchesWithoutKeptOutputsAndTheTracedPlaceholdersRun) {
  Device device(1);
  HostTensor data = *HostTensor::Random(DType::kI8, m("A, B"), 5);
  absl::StatusOr<HbmTensor> in = Input(device, data);
  ASSERT_TRUE(in.ok()) << in.status();
  absl::StatusOr<Program> program = Trace(Kernel(), {*in});
  ASSERT_TRUE(program.ok()) << program.status();
  for (int run = 0; run < 3; ++run) {
    absl::StatusOr<std::vector<DeviceTensor>> out = Launch(*program, device, backend(), {*in});
    ASSERT_TRUE(out.ok()) << "run " << run << ": " << out.status();
    EXPECT_EQ(ReadAs(out->at(0), m("A, B"))->ToBits(), data.ToBits());
  }
}

INSTANTIATE_TEST_SUITE_P(Backends, LaunchLiveTensorTest, ::testing::Bool(),
                         [](const ::testing::TestParamInfo<bool>& info) { return info.param ? "Jit" : "Interpreter"; });

}  // namespace
}  // namespace visa
