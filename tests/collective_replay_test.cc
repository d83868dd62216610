// A traced program of chip collectives (asymmetric slice, chip shuffle, asymmetric placement)
// replays through Launch with new inputs on both backends: the tensors those operations create
// outside any recorded op are made again by the replay at their traced placements. Expected
// values come from the host input of the replay.
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "dsl/mapping_parser.h"
#include "dsl/status_macros.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "interp/interpreter.h"
#include "jit/jit_backend.h"
#include "runtime/chip_shuffle.h"
#include "runtime/device.h"
#include "runtime/host_tensor.h"
#include "runtime/launch.h"
#include "runtime/parallel_copy.h"
#include "runtime/tensor.h"
#include "runtime/tensor_unit.h"

namespace visa {
namespace {

// i8 [A = 4, B = 4] on chip A in DM, each B value on its own 8-byte word.
DmTensor Upload(Device& device, const MappingScope& s, const HostTensor& host) {
  interp::Interpreter interp;
  Context ctx(device, interp);
  HbmTensor hbm = *host.to_hbm(ctx.pdma, 0, s.m("A"), s.m("B, 1 # 8"));
  return *hbm.to_dm(ctx.tdma, 0, s.m("A"), s.m("1 # 2"), s.m("1 # 256"), s.m("B, 1 # 8"));
}

// Chip c takes its B = c + 1 word, the shuffle brings chip c + 1's pick to chip c, and every chip
// places what it received into slot B = c of a fresh tensor, all other slots set to zero first.
KernelOf SliceShufflePlace(const MappingScope& s) {
  return [&s](Context& ctx, const std::vector<DeviceTensor>& in) -> absl::StatusOr<std::vector<DeviceTensor>> {
    const DmTensor src(in[0]);
    ASSIGN_OR_RETURN(DmTensor picked, AsymmetricSlice(ctx.sub, src, SliceLevel::kChip, "B", s.m("1 # 8"),
                                                      {1, 2, 3, 0}, 0x1000));
    ASSIGN_OR_RETURN(DmTensor moved, ChipShuffle(ctx.tdma, picked, {1, 2, 3, 0}, 0x2000));
    ASSIGN_OR_RETURN(DmTensor placed, DmTensor::Create(ctx.device(), DType::kI8, src.chip(), src.cluster(),
                                                       src.slice(), s.m("B, 1 # 8"), 0x3000));
    RETURN_IF_ERROR(ctx.sub.memset(placed, 0));
    RETURN_IF_ERROR(AsymmetricPlaceInto(ctx.sub, moved, SliceLevel::kChip, "B", s.m("1 # 8"), {0, 1, 2, 3}, placed));
    return std::vector<DeviceTensor>{moved, placed};
  };
}

using Prepare = std::function<absl::StatusOr<Program>(const KernelOf&, const std::vector<DeviceTensor>&)>;

void ReplaysWithNewInputs(Backend& backend, const Prepare& prepare) {
  MappingScope s = *MappingScope::Parse("A = 4, B = 4");
  Device traced_on(4);
  DmTensor traced_input = Upload(traced_on, s, *HostTensor::Random(DType::kI8, s.m("A, B"), 5));
  absl::StatusOr<Program> program = prepare(SliceShufflePlace(s), {traced_input});
  ASSERT_TRUE(program.ok()) << program.status();

  for (uint64_t seed : {6, 7}) {
    SCOPED_TRACE(seed);
    Device device(4);
    HostTensor host = *HostTensor::Random(DType::kI8, s.m("A, B"), seed);
    DmTensor input = Upload(device, s, host);
    absl::StatusOr<std::vector<DeviceTensor>> out = Launch(*program, device, backend, {input});
    ASSERT_TRUE(out.ok()) << out.status();
    interp::Interpreter interp;
    Context ctx(device, interp);
    HostTensor moved = *DmTensor((*out)[0]).to_host(ctx, s.m("A"));
    HostTensor placed = *DmTensor((*out)[1]).to_host(ctx, s.m("A, B"));
    auto at = [&](int64_t a, int64_t b) { return *host.Get(a * 4 + b); };
    for (int64_t chip = 0; chip < 4; ++chip) {
      // Chip c + 1 picked its B = c + 2 word; the shuffle brought it to chip c.
      const int64_t from = (chip + 1) % 4;
      const double want = at(from, (from + 1) % 4);
      EXPECT_EQ(*moved.Get(chip), want) << "chip " << chip;
      for (int64_t b = 0; b < 4; ++b) {
        EXPECT_EQ(*placed.Get(chip * 4 + b), b == chip ? want : 0) << "chip " << chip << ", B " << b;
      }
    }
  }
}

TEST(CollectiveReplayTest, SliceShuffleAndPlaceReplayWithNewInputsOnTheInterpreter) {
  interp::Interpreter interp;
  ReplaysWithNewInputs(interp, [](const KernelOf& kernel, const std::vector<DeviceTensor>& in) {
    return Trace(kernel, in);
  });
}

TEST(CollectiveReplayTest, SliceShuffleAndPlaceReplayWithNewInputsOnTheJit) {
  std::unique_ptr<jit::JitBackend> jit = *jit::JitBackend::Create();
  ReplaysWithNewInputs(*jit, [&](const KernelOf& kernel, const std::vector<DeviceTensor>& in) {
    return jit->Prepare(kernel, in);
  });
}

}  // namespace
}  // namespace visa
