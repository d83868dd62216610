// The host read-back hook (runtime/host_read_hook.h) and WriteIntoWindow (runtime/window_write.h),
// what a distributed run gathers other ranks' chips with.
#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "dsl/mapping_parser.h"
#include "gtest/gtest.h"
#include "interp/interpreter.h"
#include "runtime/chip_view.h"
#include "runtime/device.h"
#include "runtime/host_read_hook.h"
#include "runtime/host_tensor.h"
#include "runtime/tensor_unit.h"
#include "runtime/transfer.h"
#include "runtime/window_write.h"

namespace visa {
namespace {

struct FourChips {
  Device device{4};
  interp::Interpreter interp;
  Context ctx{device, interp};
  MappingScope m = *MappingScope::Parse("A = 4, B = 8");
  HostTensor host = *HostTensor::Iota(DType::kI8, m.m("A, B"));
  HbmTensor hbm = *host.to_hbm(ctx.pdma, 0, m.m("A"), m.m("B"));
};

TEST(HostReadHook, ReadAsRunsItAndFailsWithIt) {
  FourChips f;
  int calls = 0;
  SetHostReadHook([&](const DeviceTensor&) {
    ++calls;
    return calls == 2 ? absl::UnavailableError("MPI: rank 1 did not answer") : absl::OkStatus();
  });
  absl::StatusOr<HostTensor> first = ReadAs(f.hbm, f.m.m("A, B"));
  absl::StatusOr<HostTensor> second = ReadAs(f.hbm, f.m.m("A, B"));
  SetHostReadHook({});
  ASSERT_TRUE(first.ok()) << first.status();
  EXPECT_EQ(*first, f.host);
  ASSERT_FALSE(second.ok());
  EXPECT_NE(second.status().message().find("rank 1 did not answer"), std::string::npos) << second.status();
  EXPECT_EQ(calls, 2);
}

TEST(HostReadHook, ToHostRunsIt) {
  FourChips f;
  int calls = 0;
  SetHostReadHook([&](const DeviceTensor&) {
    ++calls;
    return absl::OkStatus();
  });
  absl::StatusOr<HostTensor> read = f.hbm.to_host(f.ctx.pdma, f.m.m("A, B"));
  SetHostReadHook({});
  ASSERT_TRUE(read.ok()) << read.status();
  EXPECT_EQ(calls, 1);
}

TEST(WriteIntoWindow, AChipViewChangesThatChipAlone) {
  FourChips f;
  absl::StatusOr<DeviceTensor> chip2 = ChipView(f.hbm, 2);
  ASSERT_TRUE(chip2.ok()) << chip2.status();
  ASSERT_TRUE(chip2->is_view());
  absl::StatusOr<HostTensor> sevens = HostTensor::FromValues(DType::kI8, f.m.m("B"), std::vector<double>(8, 7));
  ASSERT_TRUE(sevens.ok()) << sevens.status();
  // The chip's own positions (no chip padding), as a rank receives them.
  ASSERT_TRUE(WriteIntoWindow(*sevens, *chip2).ok());
  absl::StatusOr<HostTensor> after = ReadAs(f.hbm, f.m.m("A, B"));
  ASSERT_TRUE(after.ok()) << after.status();
  for (int64_t a = 0; a < 4; ++a) {
    for (int64_t b = 0; b < 8; ++b) {
      const uint32_t want = a == 2 ? 7 : static_cast<uint32_t>(a * 8 + b);
      EXPECT_EQ(*after->GetBits(a * 8 + b), want) << "A = " << a << ", B = " << b;
    }
  }
}

TEST(WriteIntoWindow, RefusesAnotherType) {
  FourChips f;
  absl::StatusOr<DeviceTensor> chip2 = ChipView(f.hbm, 2);
  ASSERT_TRUE(chip2.ok()) << chip2.status();
  absl::StatusOr<HostTensor> wide = HostTensor::Zeros(DType::kI32, f.m.m("B"));
  ASSERT_TRUE(wide.ok());
  absl::Status status = WriteIntoWindow(*wide, *chip2);
  ASSERT_FALSE(status.ok());
  EXPECT_NE(status.message().find("a move keeps the element type"), std::string::npos) << status;
}

}  // namespace
}  // namespace visa
