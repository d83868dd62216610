// HBM in place (jit/in_place.h, runtime/hbm_memory.h): the JIT's compiled DMAs read and write HBM
// where it lies, HBM -> DM, DM -> HBM (transposing) and HBM -> HBM over two chips, bit for bit as
// the interpreter, and keep the move for a relaunch as they do between SRAM memories. The pages
// they write in place count in Device::resident_bytes, on another device too; a rank of several
// stages HBM so that other ranks' chips are never written (runtime/kept_chips.h).
#include <cstdint>
#include <memory>
#include <vector>

#include "dsl/mapping_parser.h"
#include "dsl/status_macros.h"
#include "gtest/gtest.h"
#include "interp/interpreter.h"
#include "jit/in_place.h"
#include "jit/jit_backend.h"
#include "runtime/kept_chips.h"
#include "runtime/launch.h"
#include "runtime/transfer.h"

namespace visa {
namespace {

class JitHbmInPlaceTest : public ::testing::Test {
 protected:
  static constexpr int64_t kChipBytes = 256 * 4 * 64;  // the input's bytes per chip

  JitHbmInPlaceTest() {
    jit_ = *jit::JitBackend::Create({.threads = 1});
    program_ = TraceOn(*device_);
  }

  Mapping m(const char* text) const { return scope_.m(text); }
  DeviceTensor Input(Device& device, uint64_t seed) const {
    HostTensor host = *HostTensor::Random(DType::kI8, m("C, S, A, B"), seed);
    return *WriteAs(host, device, *Place(device, DType::kI8, Tier::kHbm, {m("C"), m("S, A, B")}, Address::At(0)));
  }
  // HBM -> DM (every slice of a cluster), DM -> HBM transposed, HBM -> HBM.
  Program TraceOn(Device& device) const {
    const MappingScope& s = scope_;
    KernelOf kernel = [&s](Context& ctx, const std::vector<DeviceTensor>& in) -> absl::StatusOr<std::vector<DeviceTensor>> {
      HbmTensor hbm(in[0]);
      ASSIGN_OR_RETURN(DmTensor dm, hbm.to_dm(ctx.tdma, Address::At(0), s.m("C"), s.m("1 # 2"), s.m("S"), s.m("A, B")));
      ASSIGN_OR_RETURN(HbmTensor back, dm.to_hbm(ctx.tdma, Address::At(1 << 20), s.m("C"), s.m("B, S, A")));
      ASSIGN_OR_RETURN(HbmTensor again, back.to_hbm(ctx.tdma, Address::At(8 << 20), s.m("C"), s.m("S, A, B")));
      return std::vector<DeviceTensor>{dm, back, again};
    };
    absl::StatusOr<Program> traced = Trace(kernel, {Input(device, 99)});
    EXPECT_TRUE(traced.ok()) << traced.status();
    return *std::move(traced);
  }
  // Runs the program on the JIT on `device` and on the interpreter on a device of its own, over
  // input `seed`, and expects the same outputs.
  void RunAndCompare(Device& device, uint64_t seed) {
    absl::StatusOr<std::vector<DeviceTensor>> got = Launch(program_, device, *jit_, {Input(device, seed)});
    ASSERT_TRUE(got.ok()) << got.status();
    Device reference_device(2);
    interp::Interpreter interpreter;
    absl::StatusOr<std::vector<DeviceTensor>> want =
        Launch(program_, reference_device, interpreter, {Input(reference_device, seed)});
    ASSERT_TRUE(want.ok()) << want.status();
    ASSERT_EQ(got->size(), want->size());
    for (size_t k = 0; k < want->size(); ++k) {
      const Mapping full = (*want)[k].full_mapping();
      EXPECT_EQ(*ReadAs((*got)[k], full), *ReadAs((*want)[k], full)) << "output " << k << ", input seed " << seed;
    }
  }

  MappingScope scope_{*Axes::Parse("C = 2, S = 256, A = 4, B = 64")};
  std::unique_ptr<Device> device_ = std::make_unique<Device>(2);
  std::unique_ptr<jit::JitBackend> jit_;
  Program program_;
};

TEST_F(JitHbmInPlaceTest, MovesFromAndIntoHbmMatchTheInterpreterAndAreKept) {
  RunAndCompare(*device_, 1);
  EXPECT_EQ(jit_->stats().ready_moves, 0);
  EXPECT_EQ(jit_->stats().derived_dmas, 0);
  for (uint64_t seed = 2; seed < 4; ++seed) RunAndCompare(*device_, seed);
  // All three moves ran from what the first run kept: only moves with both ends in place are.
  EXPECT_EQ(jit_->stats().ready_moves, 3 * 2);
}

TEST_F(JitHbmInPlaceTest, PagesWrittenInPlaceCountOnAnotherDeviceToo) {
  RunAndCompare(*device_, 1);
  Device other(2);
  RunAndCompare(other, 2);  // the kept moves, on this device's memory
  EXPECT_EQ(jit_->stats().ready_moves, 3);
  // `dm` takes a 4 KiB page in each of the 512 slices' DM; the input, `back` and `again` take
  // kChipBytes of HBM on each chip (random bytes: none is all zero). Uncounted, the two HBM
  // outputs the kept moves wrote in place would be missing.
  EXPECT_GE(other.resident_bytes(), 512 * 4096 + 3 * 2 * kChipBytes);
}

TEST_F(JitHbmInPlaceTest, HbmIsInPlaceOnlyInAProcessKeepingEveryChip) {
  const DeviceTensor input = Input(*device_, 5);
  EXPECT_TRUE(jit::InPlaceLayout(input).has_value());
  KeepOwnChipsOf(1, 2);
  EXPECT_FALSE(jit::InPlaceLayout(input).has_value());
  EXPECT_FALSE(jit::InPlaceOf(input).has_value());
  KeepOwnChipsOf(0, 1);
}

// As rank 1 of 2 (chip 1), the JIT's moves into HBM leave chip 0's HBM unwritten: staged, their
// write-back is dropped there, while chip 1 gets the interpreter's bytes.
TEST_F(JitHbmInPlaceTest, ARankWritesOnlyItsOwnChipsHbm) {
  KeepOwnChipsOf(1, 2);
  Device device(2, {.uninitialized_reads = UninitializedReads::kOff});
  absl::StatusOr<std::vector<DeviceTensor>> got = Launch(program_, device, *jit_, {Input(device, 7)});
  KeepOwnChipsOf(0, 1);
  ASSERT_TRUE(got.ok()) << got.status();
  Device reference(2);
  interp::Interpreter interpreter;
  absl::StatusOr<std::vector<DeviceTensor>> want = Launch(program_, reference, interpreter, {Input(reference, 7)});
  ASSERT_TRUE(want.ok()) << want.status();
  for (int64_t address : {int64_t{1} << 20, int64_t{8} << 20}) {
    std::vector<uint8_t> chip0(kChipBytes, 0xff), chip1(kChipBytes), expected(kChipBytes);
    ASSERT_TRUE(device.ReadHbm(0, address, absl::MakeSpan(chip0)).ok());
    ASSERT_TRUE(device.ReadHbm(1, address, absl::MakeSpan(chip1)).ok());
    ASSERT_TRUE(reference.ReadHbm(1, address, absl::MakeSpan(expected)).ok());
    EXPECT_EQ(chip0, std::vector<uint8_t>(kChipBytes, 0)) << "another rank's chip was written at " << address;
    EXPECT_EQ(chip1, expected) << "at " << address;
  }
}

}  // namespace
}  // namespace visa
