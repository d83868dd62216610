// One-unit views (runtime/chip_view.h) and DeviceTensor::Relabel: a view reads the unit's bytes
// under the relabeled levels, stays the same tensor, and refuses what would leave the tensor.
#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "dsl/mapping_parser.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "interp/interpreter.h"
#include "runtime/chip_view.h"
#include "runtime/device.h"
#include "runtime/host_tensor.h"
#include "runtime/tensor.h"
#include "runtime/tensor_unit.h"
#include "runtime/transfer.h"

namespace visa {
namespace {

using ::testing::HasSubstr;

std::string Msg(const absl::Status& status) { return std::string(status.message()); }

class ChipViewTest : public ::testing::Test {
 protected:
  MappingScope s = *MappingScope::Parse("A = 4, B = 16");
  Device device{4};
  interp::Interpreter interp;
  Context ctx{device, interp};
  HostTensor host = *HostTensor::Iota(DType::kI8, s.m("A, B"));
  HbmTensor in = *host.to_hbm(ctx.pdma, 0x100, s.m("A"), s.m("B"));
};

TEST_F(ChipViewTest, AChipsViewHoldsThatChipsRow) {
  for (int64_t chip = 0; chip < 4; ++chip) {
    absl::StatusOr<DeviceTensor> view = ChipView(in, chip);
    ASSERT_TRUE(view.ok()) << view.status();
    EXPECT_EQ(view->id(), in.id());  // the same tensor
    EXPECT_TRUE(view->is_view());
    EXPECT_EQ(view->placement().units, std::vector<int64_t>{chip});
    HostTensor row = *ReadAs(*view, s.m("B"));
    for (int64_t b = 0; b < 16; ++b) EXPECT_EQ(*row.Get(b), chip * 16 + b);
  }
}

TEST_F(ChipViewTest, AnOffsetElementReadsInsideTheRow) {
  absl::StatusOr<DeviceTensor> view = ChipView(in, 2, s.m("B = 8"), 8);
  ASSERT_TRUE(view.ok()) << view.status();
  HostTensor half = *ReadAs(*view, s.m("B = 8"));
  for (int64_t b = 0; b < 8; ++b) EXPECT_EQ(*half.Get(b), 2 * 16 + 8 + b);
}

TEST_F(ChipViewTest, RefusesWhatLeavesTheTensor) {
  EXPECT_THAT(Msg(ChipView(in, 4).status()), HasSubstr("chip 4 is outside [0, 4)"));
  EXPECT_THAT(Msg(ChipView(in, 1, s.m("B"), 8).status()), HasSubstr("lie outside its 16 bytes per unit"));
  // Levels placing bytes on chips the tensor is not on.
  HbmTensor one = *HbmTensor::Create(device, DType::kI8, s.m("1 # 4"), s.m("B"), 0x1000);
  EXPECT_THAT(Msg(one.Relabel({s.m("A"), s.m("B")}, 0).status()), HasSubstr("where"));
  EXPECT_THAT(Msg(one.Relabel({s.m("B")}, 0).status()), HasSubstr("has 2 levels, the relabeling 1"));
  EXPECT_THAT(Msg(ClusterView(in, 0, s.m("B"), 0).status()), HasSubstr("has no Cluster level"));
}

}  // namespace
}  // namespace visa
