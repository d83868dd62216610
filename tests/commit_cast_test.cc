// The Commit Adapter's cast (commit_cast / commit_cast_relu, f32 -> bf16): the notes' conversion
// vectors, the rules (f32 -> bf16 only, main context only, one-flit input, the 16-byte unit of
// the trimmed packet: mapping-algebra case 66), the stage `visa explain` prints, and the data path
// on the interpreter and the JIT, bit for bit, against the notes' expected patterns.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <bit>
#include <memory>
#include <vector>

#include "absl/strings/str_cat.h"
#include "dsl/commit_cast.h"
#include "dsl/mapping_parser.h"
#include "interp/interpreter.h"
#include "jit/jit_backend.h"
#include "runtime/tensor_unit.h"
#include "runtime/transfer.h"
#include "tests/common/backends.h"

namespace visa {
namespace {

using ::testing::HasSubstr;

// (f32 input, bf16 by commit_cast, bf16 by commit_cast_relu): notes 2.2 and 2.3.
struct Vector {
  uint32_t in;
  uint32_t cast;
  uint32_t relu;
};
const std::vector<Vector>& Vectors() {
  static const std::vector<Vector> v = {
      {0x3f808000, 0x3f80, 0x3f80},  // 1 + 2^-8: tie to even
      {0x3f818000, 0x3f82, 0x3f82},  // 1 + 3 * 2^-8: tie to even, upwards
      {0x3f808008, 0x3f81, 0x3f81},
      {0x7f7fffff, 0x7f80, 0x7f80},  // overflow to +inf
      {0x00400000, 0x0000, 0x0000},  // subnormal: flushed
      {0x80400000, 0x8000, 0x0000},  // negative subnormal: -0 (ReLU: +0)
      {0x00800000, 0x0080, 0x0080},
      {0xffc00001, 0x7fc0, 0x7fc0},  // NaN: canonical, sign dropped, ReLU keeps NaN
      {0x80000000, 0x8000, 0x0000},  // -0.0
      {std::bit_cast<uint32_t>(3.7f), 0x406d, 0x406d},
      {std::bit_cast<uint32_t>(-5.0f), 0xc0a0, 0x0000},
      {std::bit_cast<uint32_t>(-0.1f), 0xbdcd, 0x0000},
      {0x00000000, 0x0000, 0x0000},
      {0xffc00000, 0x7fc0, 0x7fc0},
      {0xff800000, 0xff80, 0x0000},  // -inf
      {0x7f800000, 0x7f80, 0x7f80},
  };
  return v;
}

CastStage Stage(CastKind kind) {
  CastStage stage;
  stage.kind = kind;
  stage.from = DType::kF32;
  stage.to = DType::kBF16;
  return stage;
}

TEST(CommitCastTest, ConvertsTheNotesVectors) {
  for (const Vector& v : Vectors()) {
    EXPECT_EQ(*ConvertByCastStage(Stage(CastKind::kCommit), v.in), v.cast) << std::hex << v.in;
    EXPECT_EQ(*ConvertByCastStage(Stage(CastKind::kCommitRelu), v.in), v.relu) << std::hex << v.in;
  }
}

class CommitCastPipelineTest : public ::testing::Test {
 protected:
  CommitCastPipelineTest() : scope_(*Axes::Parse("T = 2, A = 8, C = 6, D = 4")) {}
  Mapping m(const std::string& text) { return scope_.m(text); }

  DmTensor Input(Device& device, DType dtype) {
    std::vector<uint32_t> bits;
    for (const Vector& v : Vectors()) bits.push_back(v.in);
    HostTensor host = *HostTensor::FromBits(dtype, m("T, A"), bits);
    Placement placement = *Place(device, dtype, Tier::kDm, {m("1"), m("1 # 2"), m("1 # 256"), m("T, A")}, 0);
    return DmTensor(*WriteAs(host, device, placement));
  }

  Stream Collected(Context& ctx, const DmTensor& x, ContextKind context = ContextKind::kMain) {
    TensorUnit& unit = context == ContextKind::kMain ? ctx.main : ctx.sub;
    return unit.begin(x.view()).fetch(x.dtype(), m("T"), m("A")).collect(m("T"), m("A"));
  }

  MappingScope scope_;
  Device device_{1};
  interp::Interpreter interp_;
};

TEST_F(CommitCastPipelineTest, BothBackendsWriteTheExpectedBf16) {
  for (bool relu : {false, true}) {
    test::OnBothBackends([&](int b, Context& ctx) {
      DmTensor x = Input(ctx.device(), DType::kF32);
      Stream cast = relu ? Collected(ctx, x).commit_cast_relu(DType::kBF16) : Collected(ctx, x).commit_cast(DType::kBF16);
      absl::StatusOr<DmTensor> out = std::move(cast).commit(m("T, A"), 4096);
      ASSERT_TRUE(out.ok()) << out.status();
      EXPECT_EQ(out->dtype(), DType::kBF16);
      std::vector<uint32_t> got = ReadAs(*out, m("T, A"))->ToBits();
      ASSERT_EQ(got.size(), Vectors().size());
      for (size_t i = 0; i < got.size(); ++i) {
        EXPECT_EQ(got[i], relu ? Vectors()[i].relu : Vectors()[i].cast)
            << (b == 0 ? "interpreter" : "JIT") << (relu ? " relu" : "") << " at " << i;
      }
    });
  }
}

TEST_F(CommitCastPipelineTest, ExplainShowsTheStage) {
  Context ctx(device_, interp_);
  DmTensor x = Input(device_, DType::kF32);
  ASSERT_TRUE(Collected(ctx, x).commit_cast_relu(DType::kBF16).commit(m("T, A"), 4096).ok());
  const std::string text = ctx.program().ToText();
  EXPECT_THAT(text, HasSubstr("commit_cast_relu f32 -> bf16: packet [A] (8 x f32 = 32 B -> 16 B)"));
  EXPECT_THAT(text, HasSubstr("commit_in_size 16 B"));
}

TEST_F(CommitCastPipelineTest, RefusesAnotherPair) {
  Context ctx(device_, interp_);
  DmTensor x = Input(device_, DType::kI32);
  absl::StatusOr<DmTensor> out = Collected(ctx, x).commit_cast(DType::kBF16).commit(m("T, A"), 4096);
  ASSERT_FALSE(out.ok());
  EXPECT_THAT(out.status().message(), HasSubstr("commit_cast"));
  EXPECT_THAT(out.status().message(), HasSubstr("f32 -> bf16 only"));
}

TEST_F(CommitCastPipelineTest, RefusesAnotherTarget) {
  Context ctx(device_, interp_);
  DmTensor x = Input(device_, DType::kF32);
  absl::StatusOr<DmTensor> out = Collected(ctx, x).commit_cast(DType::kF8E4M3).commit(m("T, A"), 4096);
  ASSERT_FALSE(out.ok());
  EXPECT_THAT(out.status().message(), HasSubstr("f32 -> bf16 only"));
}

TEST_F(CommitCastPipelineTest, RefusesTheSubContext) {
  Context ctx(device_, interp_);
  DmTensor x = Input(device_, DType::kF32);
  absl::StatusOr<DmTensor> out =
      Collected(ctx, x, ContextKind::kSub).commit_cast_relu(DType::kBF16).commit(m("T, A"), 4096);
  ASSERT_FALSE(out.ok());
  EXPECT_THAT(out.status().message(), HasSubstr("commit_cast_relu runs on the main context only"));
}

TEST_F(CommitCastPipelineTest, RefusesTwoCasts) {
  Context ctx(device_, interp_);
  DmTensor x = Input(device_, DType::kF32);
  absl::StatusOr<DmTensor> out =
      Collected(ctx, x).commit_cast(DType::kBF16).commit_cast(DType::kBF16).commit(m("T, A"), 4096);
  ASSERT_FALSE(out.ok());
  EXPECT_THAT(out.status().message(), HasSubstr("`commit_cast` is not allowed after CommitCast"));
}

// Case 66: the trimmed packet, in f32, must be a multiple of 16 B: 4 f32 (16 B) and 8 (32 B)
// pass, 6 f32 (24 B) is refused with the sizes to re-trim to.
TEST_F(CommitCastPipelineTest, TrimmedPacketUnitIsSixteenBytes) {
  struct Case {
    const char* axis;
    bool ok;
  };
  for (const Case& c : {Case{"D", true}, Case{"C", false}}) {
    Context ctx(device_, interp_);
    const std::string packet = absl::StrCat(c.axis, " # 8");
    std::vector<uint32_t> bits(16, std::bit_cast<uint32_t>(1.5f));
    HostTensor host = *HostTensor::FromBits(DType::kF32, m(absl::StrCat("T, ", packet)), bits);
    Placement placement = *Place(device_, DType::kF32, Tier::kDm, {m("1"), m("1 # 2"), m("1 # 256"),
                                                                  m(absl::StrCat("T, ", packet))}, 0);
    DmTensor x(*WriteAs(host, device_, placement));
    absl::StatusOr<DmTensor> out = ctx.main.begin(x.view())
                                       .fetch(DType::kF32, m("T"), m(packet))
                                       .collect(m("T"), m(packet))
                                       .commit_cast(DType::kBF16)
                                       .commit(m(absl::StrCat("T, ", c.axis)), 4096);
    if (c.ok) {
      ASSERT_TRUE(out.ok()) << out.status();
      std::vector<uint32_t> got = ReadAs(*out, m(absl::StrCat("T, ", c.axis)))->ToBits();
      for (uint32_t g : got) EXPECT_EQ(g, 0x3fc0u);  // 1.5 in bf16
    } else {
      ASSERT_FALSE(out.ok());
      EXPECT_THAT(out.status().message(),
                  HasSubstr("commit_cast input packet is 24 B, not a multiple of 16 B; re-trim it to one of [16, 32] B"));
    }
  }
}

}  // namespace
}  // namespace visa
