// The asymmetric placement (the asymmetric slice's inverse, which the AllGather of the manual's
// ReduceScatter Step 6 needs): chip c's value written into slot `indices[c]` of the outermost
// Element axis of a destination on chip c. Expected values are the host input at the indices
// (and zero in the slots nothing placed, a fresh device holding zero); both backends; each rule's
// refusal names it.
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
#include "runtime/parallel_copy.h"
#include "runtime/tensor.h"
#include "runtime/tensor_unit.h"

namespace visa {
namespace {

using ::testing::HasSubstr;

std::string Msg(const absl::Status& status) { return std::string(status.message()); }

// i8 [A = 4, B = 4] on chip A, each B value on its own 8-byte word (the manual's ReduceScatter
// input), and the diagonal slice chip c = B c of it (one word per chip).
struct Placed {
  MappingScope s = *MappingScope::Parse("A = 4, B = 4");
  std::optional<HostTensor> host;
  std::optional<DmTensor> in, word, out;
  explicit Placed(Context& ctx) {
    host = *HostTensor::Random(DType::kI8, s.m("A, B"), 23);
    HbmTensor hbm = *host->to_hbm(ctx.pdma, 0, s.m("A"), s.m("B, 1 # 8"));
    in = *hbm.to_dm(ctx.tdma, 0, s.m("A"), s.m("1 # 2"), s.m("1 # 256"), s.m("B, 1 # 8"));
    word = *AsymmetricSlice(ctx.sub, *in, SliceLevel::kChip, "B", s.m("1 # 8"), {0, 1, 2, 3}, 0x1000);
    out = *DmTensor::Create(ctx.device(), DType::kI8, s.m("A"), s.m("1 # 2"), s.m("1 # 256"), s.m("B, 1 # 8"),
                            0x2000);
  }
  double At(int64_t a, int64_t b) const { return *host->Get(a * 4 + b); }
};

void PlacesEveryRotation(Backend& backend) {
  for (int64_t k = 0; k < 4; ++k) {
    SCOPED_TRACE(absl::StrCat("rotation ", k));
    Device device(4);
    Context ctx(device, backend);
    Placed p(ctx);
    std::vector<int64_t> slots;
    for (int64_t chip = 0; chip < 4; ++chip) slots.push_back((chip + k) % 4);
    ASSERT_TRUE(ctx.sub.memset(*p.out, 0).ok());  // the slots nothing places hold zero
    absl::Status placed = AsymmetricPlaceInto(ctx.sub, *p.word, SliceLevel::kChip, "B", p.s.m("1 # 8"), slots, *p.out);
    ASSERT_TRUE(placed.ok()) << placed;
    absl::StatusOr<HostTensor> back = p.out->to_host(ctx, p.s.m("A, B"));
    ASSERT_TRUE(back.ok()) << back.status();
    for (int64_t chip = 0; chip < 4; ++chip) {
      for (int64_t b = 0; b < 4; ++b) {
        // Chip c's word is its diagonal value (c, c); only slot (c + k) % 4 receives it.
        const double want = b == slots[chip] ? p.At(chip, chip) : 0;
        EXPECT_EQ(*back->Get(chip * 4 + b), want) << "chip " << chip << ", B " << b;
      }
    }
  }
}

TEST(AsymmetricPlaceTest, PlacesEachChipsWordInItsSlotOnTheInterpreter) {
  interp::Interpreter interp;
  PlacesEveryRotation(interp);
}

TEST(AsymmetricPlaceTest, PlacesEachChipsWordInItsSlotOnTheJit) {
  std::unique_ptr<jit::JitBackend> jit = *jit::JitBackend::Create();
  PlacesEveryRotation(*jit);
}

TEST(AsymmetricPlaceTest, OneSubContextParallelCopyPerChip) {
  Device device(4);
  interp::Interpreter interp;
  Context ctx(device, interp);
  Placed p(ctx);
  const size_t before = ctx.program().ops.size();
  ASSERT_TRUE(AsymmetricPlaceInto(ctx.sub, *p.word, SliceLevel::kChip, "B", p.s.m("1 # 8"), {1, 2, 3, 0}, *p.out).ok());
  ASSERT_EQ(ctx.program().ops.size(), before + 4);
  for (int chip = 0; chip < 4; ++chip) {
    const auto& pipe = std::get<PipelineOp>(ctx.program().ops[before + chip].body);
    EXPECT_EQ(pipe.operation, absl::StrCat("AsymmetricPlace chip ", chip, ": B = ", (chip + 1) % 4, " (ParallelCopy)"));
  }
}

TEST(AsymmetricPlaceTest, TheDestinationElementIsTheSlotAxisThenTheSlot) {
  Device device(4);
  interp::Interpreter interp;
  Context ctx(device, interp);
  Placed p(ctx);
  DmTensor inner = *DmTensor::Create(device, DType::kI8, p.s.m("A"), p.s.m("1 # 2"), p.s.m("1 # 256"),
                                     p.s.m("B / 2, 1 # 8, B % 2"), 0x3000);
  absl::Status status = AsymmetricPlaceInto(ctx.sub, *p.word, SliceLevel::kChip, "B", p.s.m("1 # 8"), {0, 1, 2, 3}, inner);
  EXPECT_THAT(Msg(status), HasSubstr("Asymmetric Place (chip)"));
  EXPECT_THAT(Msg(status), HasSubstr("the slot axis outermost"));
}

TEST(AsymmetricPlaceTest, TheSlotMustHoldEverythingLiveOfTheSource) {
  Device device(4);
  interp::Interpreter interp;
  Context ctx(device, interp);
  Placed p(ctx);
  // The whole input (four live words) does not fit one 8-byte slot.
  absl::Status status = AsymmetricPlaceInto(ctx.sub, *p.in, SliceLevel::kChip, "B", p.s.m("1 # 8"), {0, 1, 2, 3}, *p.out);
  EXPECT_THAT(Msg(status), HasSubstr("the slot must be the Element's first positions and everything live"));
}

TEST(AsymmetricPlaceTest, OneIndexPerChipInsideTheAxis) {
  Device device(4);
  interp::Interpreter interp;
  Context ctx(device, interp);
  Placed p(ctx);
  EXPECT_THAT(Msg(AsymmetricPlaceInto(ctx.sub, *p.word, SliceLevel::kChip, "B", p.s.m("1 # 8"), {0, 1, 2}, *p.out)),
              HasSubstr("one slice index per chip (4), got 3"));
  EXPECT_THAT(Msg(AsymmetricPlaceInto(ctx.sub, *p.word, SliceLevel::kChip, "B", p.s.m("1 # 8"), {0, 1, 2, 4}, *p.out)),
              HasSubstr("slice index 4 is outside B = 4"));
}

TEST(AsymmetricPlaceTest, SlotsAreWholeEightByteWords) {
  Device device(4);
  interp::Interpreter interp;
  Context ctx(device, interp);
  Placed p(ctx);
  DmTensor halves = *DmTensor::Create(device, DType::kI8, p.s.m("A"), p.s.m("1 # 2"), p.s.m("1 # 256"),
                                      p.s.m("B, 1 # 4"), 0x3000);
  EXPECT_THAT(Msg(AsymmetricPlaceInto(ctx.sub, *p.word, SliceLevel::kChip, "B", p.s.m("1 # 4"), {0, 1, 2, 3}, halves)),
              HasSubstr("ParallelCopy moves whole 8-byte words"));
}

TEST(AsymmetricPlaceTest, RunsOnTheSubContextOnly) {
  Device device(4);
  interp::Interpreter interp;
  Context ctx(device, interp);
  Placed p(ctx);
  EXPECT_THAT(Msg(AsymmetricPlaceInto(ctx.main, *p.word, SliceLevel::kChip, "B", p.s.m("1 # 8"), {0, 1, 2, 3}, *p.out)),
              HasSubstr("ParallelCopy runs on the sub context"));
}

}  // namespace
}  // namespace visa
