// Memset on the sub context (Commit Engine > Sub-Context Operations, "Generate Mode"; notes,
// engine-semantics 5.2): every byte-sized type and i4 filled through a view on both backends
// against a host fill, the rules (sub context, DM, 32-bit word alignment, an exact value, no
// staging types) each refused with its name, and the op as `visa explain` and the scheduler see it.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <vector>

#include "dsl/mapping_parser.h"
#include "interp/interpreter.h"
#include "jit/jit_backend.h"
#include "runtime/memset.h"
#include "runtime/op_description.h"
#include "runtime/scheduler.h"
#include "runtime/tensor_unit.h"
#include "runtime/transfer.h"
#include "tests/common/backends.h"

namespace visa {
namespace {

using ::testing::HasSubstr;

// The value each type is filled with: negative where the type has a sign, a fraction for floats.
double FillValue(DType dtype) {
  switch (dtype) {
    case DType::kI4: return -3;
    case DType::kI8: return -100;
    case DType::kI16: return 30000;
    case DType::kI32: return -2000000000;
    default: return -1.5;
  }
}

// The value the input holds at (a, b), distinct from the fill.
double Original(int64_t a, int64_t b) { return static_cast<double>((a * 16 + b) % 7); }

class MemsetTest : public ::testing::Test {
 protected:
  MemsetTest() : scope_(*Axes::Parse("A = 4, B = 16, C = 6")) {}
  Mapping m(const std::string& text) { return scope_.m(text); }

  DmTensor Input(Device& device, DType dtype, const std::string& element = "A, B") {
    std::vector<double> values;
    const Mapping layout = m(element);
    for (int64_t p = 0; p < layout.size(); ++p) {
      const Index index = layout.map(p).index;
      values.push_back(Original(index["A"], index["B"]));
    }
    HostTensor host = *HostTensor::FromValues(dtype, layout, values);
    Placement placement = *Place(device, dtype, Tier::kDm, {m("1"), m("1 # 2"), m("1 # 256"), layout}, 0x100);
    return DmTensor(*WriteAs(host, device, placement));
  }

  MappingScope scope_;
  Device device_{1};
  interp::Interpreter interp_;
};

// Rows A = 1 and 2 of every slice are filled; rows 0 and 3 keep their values (host fill).
TEST_F(MemsetTest, FillsTheViewOfEveryTypeOnBothBackends) {
  for (DType dtype : {DType::kI4, DType::kI8, DType::kI16, DType::kI32, DType::kF8E4M3, DType::kF8E5M2,
                      DType::kBF16, DType::kF16, DType::kF32}) {
    test::OnBothBackends([&](int b, Context& ctx) {
      DmTensor x = Input(ctx.device(), dtype);
      absl::StatusOr<DmTensor> rows = x.tile(m("A"), 2, 1);
      ASSERT_TRUE(rows.ok()) << rows.status();
      absl::Status done = ctx.sub.memset(*rows, FillValue(dtype));
      ASSERT_TRUE(done.ok()) << Name(dtype) << ": " << done;
      HostTensor got = *ReadAs(x, m("A, B"));
      for (int64_t a = 0; a < 4; ++a) {
        for (int64_t v = 0; v < 16; ++v) {
          const double want = a == 1 || a == 2 ? FillValue(dtype) : Original(a, v);
          EXPECT_EQ(*got.Get(a * 16 + v), want)
              << Name(dtype) << (b == 0 ? " interpreter" : " JIT") << " at A = " << a << ", B = " << v;
        }
      }
    });
  }
}

// Padding inside the view is not a live cell: only live cells take the value (the words over the
// tensor's own padding are allowed).
TEST_F(MemsetTest, WritesOnlyLiveCells) {
  test::OnBothBackends([&](int b, Context& ctx) {
    DmTensor x = Input(ctx.device(), DType::kI8, "A, C # 8");
    ASSERT_TRUE(ctx.sub.memset(x.view(), 9).ok());
    std::vector<uint8_t> bytes(32);
    ASSERT_TRUE(ctx.device().Read(Tier::kDm, 0, 0x100, absl::MakeSpan(bytes)).ok());
    for (int64_t p = 0; p < 32; ++p) {
      EXPECT_EQ(bytes[p], p % 8 < 6 ? 9 : 0) << (b == 0 ? "interpreter" : "JIT") << " byte " << p;
    }
  });
}

TEST_F(MemsetTest, RunsOnTheSubContextOnly) {
  Context ctx(device_, interp_);
  DmTensor x = Input(device_, DType::kI8);
  absl::Status done = ctx.main.memset(x.view(), 1);
  ASSERT_FALSE(done.ok());
  EXPECT_THAT(done.message(), HasSubstr("memset: Generate Mode runs on the sub context only"));
}

TEST_F(MemsetTest, RefusesAValueTheTypeDoesNotHold) {
  Context ctx(device_, interp_);
  absl::Status wide = ctx.sub.memset(Input(device_, DType::kI8), 300);
  EXPECT_THAT(wide.message(), HasSubstr("the value 300 is not a i8 value"));
  EXPECT_THAT(wide.message(), HasSubstr("Generate Mode"));
  absl::Status inexact = ctx.sub.memset(Input(device_, DType::kBF16).view(), 1.3);
  EXPECT_THAT(inexact.message(), HasSubstr("is not a bf16 value; memset writes its value as it is"));
  absl::Status nibble = ctx.sub.memset(Input(device_, DType::kI4).view(), 8);
  EXPECT_THAT(nibble.message(), HasSubstr("not a i4 value"));
}

// A row of C = 6 i8 is 6 bytes: the view of row 1 starts at byte 0x106, inside the word of row 0's last bytes.
TEST_F(MemsetTest, RefusesAViewOffWordBoundaries) {
  Context ctx(device_, interp_);
  DmTensor x = Input(device_, DType::kI8, "A, C");
  absl::StatusOr<DmTensor> row = x.tile(m("A"), 1, 1);
  ASSERT_TRUE(row.ok()) << row.status();
  absl::Status done = ctx.sub.memset(*row, 1);
  ASSERT_FALSE(done.ok());
  EXPECT_THAT(std::string(done.message()),
              HasSubstr("ITOS commands write whole aligned 32-bit words, and the word at DM byte 260 of each slice "
                        "also holds a live cell of the tensor outside the view"));
}

TEST_F(MemsetTest, RefusesSpm) {
  Context ctx(device_, interp_);
  HostTensor host = *HostTensor::FromValues(DType::kI8, m("A, B"), std::vector<double>(64, 1));
  Placement placement = *Place(device_, DType::kI8, Tier::kSpm, {m("1"), m("1 # 2"), m("1 # 256"), m("A, B")}, 0);
  DmTensor spm(*WriteAs(host, device_, placement));
  absl::Status done = ctx.sub.memset(spm, 0);
  ASSERT_FALSE(done.ok());
  EXPECT_THAT(std::string(done.message()), HasSubstr("memset: Generate Mode writes DM, but"));
}

TEST_F(MemsetTest, IsASubContextOpWritingTheView) {
  Context ctx(device_, interp_);
  DmTensor x = Input(device_, DType::kI8);
  ASSERT_TRUE(ctx.sub.memset(*x.tile(m("A"), 2, 1), -3).ok());
  const Op& op = ctx.program().ops.back();
  const std::string text = OpText(op, 0);
  EXPECT_THAT(text, HasSubstr("op 0: memset sub DmTensor<i8"));
  EXPECT_THAT(text, HasSubstr("view +16"));
  EXPECT_THAT(text, HasSubstr("memset i8 = -3 (pattern 0xfd, ITOS word 0xfdfdfdfd): 8 words per slice x 1 slices"));
  OpDescription d = Describe(op);
  EXPECT_EQ(d.resource, Resource::kSub);
  EXPECT_TRUE(d.reads.empty());
  ASSERT_EQ(d.writes.size(), 1u);
  EXPECT_EQ(d.writes[0].total_bytes(), 32) << d.writes[0].ToString();  // the window in the one live slice
}

// The manual gives no ITOS throughput: the estimate is the Commit Engine's one write per cycle,
// one 32-bit word per ITOS, every slice at once.
TEST_F(MemsetTest, CostsOneCycleForEachThirtyTwoBitWordOfASlice) {
  Context ctx(device_, interp_);
  DmTensor x = Input(device_, DType::kI8);
  ASSERT_TRUE(ctx.sub.memset(*x.tile(m("A"), 2, 1), -3).ok());
  OpDescription d = Describe(ctx.program().ops.back());
  ASSERT_TRUE(d.cycles.has_value());
  EXPECT_EQ(*d.cycles, 32 / 4);  // the 32-byte window in 4-byte ITOS words
  EXPECT_THAT(d.ToString(), HasSubstr("sub memset: 8 cycles"));
  EXPECT_THAT(d.ToString(), HasSubstr("derived: the manual gives no ITOS throughput"));
  Schedule schedule = MakeSchedule(ctx.program());
  ASSERT_EQ(schedule.ops.size(), ctx.program().ops.size());
  EXPECT_TRUE(schedule.ops.back().estimated);
  EXPECT_EQ(schedule.ops.back().end - schedule.ops.back().start, 8);
}

}  // namespace
}  // namespace visa
