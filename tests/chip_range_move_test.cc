// ChipRangeMove (mpi/chip_range_move.h): a move between tensors on every chip, each element staying
// on its chip, run for chips 2-3 alone writes exactly those chips' part of the destination (the
// host input's rows), and chips 0-1 keep what they held, on both backends; moves that cross chips,
// gathers and ranges outside the device are refused naming the rule.
#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "dsl/mapping_parser.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "interp/interpreter.h"
#include "jit/jit_backend.h"
#include "mpi/chip_range_move.h"
#include "runtime/device.h"
#include "runtime/dma.h"
#include "runtime/host_tensor.h"
#include "runtime/tensor_unit.h"

namespace visa::mpi {
namespace {

using ::testing::HasSubstr;

// A backend limited to chips 2 and 3 of 4 for the moves that split by chip, as a rank of two is.
class ChipsTwoAndThree : public Backend {
 public:
  explicit ChipsTwoAndThree(Backend& inner) : inner_(inner) {}
  const char* name() const override { return inner_.name(); }
  absl::Status Run(const PipelineOp& op, const PipelineTensors& tensors) override { return inner_.Run(op, tensors); }
  absl::Status Run(const DmaOp& op, const DmaTensors& tensors) override {
    absl::StatusOr<bool> splits = SplitsByChip(op, tensors);
    if (!splits.ok()) return splits.status();
    if (!*splits) return inner_.Run(op, tensors);
    ++split;
    return RunChipRange(inner_, op, tensors, 2, 2);
  }
  int split = 0;

 private:
  Backend& inner_;
};

void WritesOnlyChipsTwoAndThree(Backend& backend) {
  MappingScope s = *MappingScope::Parse("A = 4, B = 40");
  Device device(4);
  Context whole(device, backend);
  ChipsTwoAndThree limited_backend(backend);
  Context limited(device, limited_backend);
  HostTensor before = *HostTensor::Random(DType::kI8, s.m("A, B"), 11);
  HostTensor after = *HostTensor::Random(DType::kI8, s.m("A, B"), 12);
  HbmTensor old_rows = *before.to_hbm(whole.pdma, 0, s.m("A"), s.m("B # 64"));
  HbmTensor new_rows = *after.to_hbm(whole.pdma, 0x1000, s.m("A"), s.m("B # 64"));
  DmTensor dm = *old_rows.to_dm(whole.tdma, 0, s.m("A"), s.m("1 # 2"), s.m("1 # 256"), s.m("B # 64"));
  // HBM -> DM on every chip, then DM -> HBM: both keep each element on its chip.
  ASSERT_TRUE(MoveInto(limited.tdma, new_rows, dm).ok());
  EXPECT_EQ(limited_backend.split, 1) << backend.name();
  HbmTensor back_in_hbm = *HbmTensor::Create(device, DType::kI8, s.m("A"), s.m("B # 64"), 0x2000);
  ASSERT_TRUE(MoveInto(whole.tdma, old_rows, back_in_hbm).ok());
  ASSERT_TRUE(MoveInto(limited.tdma, dm, back_in_hbm).ok());
  EXPECT_EQ(limited_backend.split, 2) << backend.name();
  const HostTensor in_dm = *dm.to_host(whole, s.m("A, B"));
  const HostTensor in_hbm = *back_in_hbm.to_host(whole.pdma, s.m("A, B"));
  for (int64_t chip = 0; chip < 4; ++chip) {
    const HostTensor& want = chip >= 2 ? after : before;
    for (int64_t b = 0; b < 40; ++b) {
      ASSERT_EQ(*in_dm.Get(chip * 40 + b), *want.Get(chip * 40 + b)) << backend.name() << " DM chip " << chip;
      ASSERT_EQ(*in_hbm.Get(chip * 40 + b), *want.Get(chip * 40 + b)) << backend.name() << " HBM chip " << chip;
    }
  }
}

TEST(ChipRangeMove, WritesOnlyItsChipsOnTheInterpreter) {
  interp::Interpreter interpreter;
  WritesOnlyChipsTwoAndThree(interpreter);
}

TEST(ChipRangeMove, WritesOnlyItsChipsOnTheJit) {
  std::unique_ptr<jit::JitBackend> jit = *jit::JitBackend::Create({.threads = 1});
  WritesOnlyChipsTwoAndThree(*jit);
}

TEST(ChipRangeMove, RefusesMovesThatDoNotSplitAndRangesOutsideTheDevice) {
  MappingScope s = *MappingScope::Parse("A = 4, C = 4, B = 40");
  Device device(4);
  interp::Interpreter interpreter;
  HbmTensor by_a = *HbmTensor::Create(device, DType::kI8, s.m("A"), s.m("B # 64"), 0);
  HbmTensor by_c = *HbmTensor::Create(device, DType::kI8, s.m("C"), s.m("A, B # 64"), 0x1000);
  HbmTensor also_by_a = *HbmTensor::Create(device, DType::kI8, s.m("A"), s.m("B # 64"), 0x2000);
  const DmaOp move;
  // Another Chip axis: A's rows spread over chip C's elements, so elements change chips.
  EXPECT_FALSE(*SplitsByChip(move, DmaTensors{.src = by_a, .dst = by_c}));
  const absl::Status crossing = RunChipRange(interpreter, move, DmaTensors{.src = by_a, .dst = by_c}, 2, 2);
  EXPECT_EQ(crossing.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(crossing.message()), HasSubstr("each element staying on its chip"));
  // A memset is no move between two tensors.
  const DmaOp memset{.work = DmaMemset{}};
  EXPECT_FALSE(*SplitsByChip(memset, DmaTensors{.src = by_a, .dst = also_by_a}));
  // Chips past the device's.
  const absl::Status outside = RunChipRange(interpreter, move, DmaTensors{.src = by_a, .dst = also_by_a}, 3, 2);
  EXPECT_EQ(outside.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(outside.message()), HasSubstr("the chips [3, 5) leave the device's chips [0, 4)"));
  EXPECT_TRUE(*SplitsByChip(move, DmaTensors{.src = by_a, .dst = also_by_a}));
}

}  // namespace
}  // namespace visa::mpi
