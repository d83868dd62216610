// The Vector Engine's Inter-Slice Block: the manual's Output Mapping Rule examples (dummy
// replacement, broadcast into a new slice axis, promotion from Time) planned and evaluated against
// host sums by tensor index, every rule as a negative test, and the order of combination.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <bit>
#include <limits>
#include <map>
#include <random>

#include "dsl/inter_slice_reduce.h"
#include "dsl/mapping_parser.h"
#include "interp/vector_reduce.h"

namespace visa {
namespace {

using ::testing::HasSubstr;

uint32_t B(int32_t v) { return std::bit_cast<uint32_t>(v); }
uint32_t B(float v) { return std::bit_cast<uint32_t>(v); }
float F(uint32_t v) { return std::bit_cast<float>(v); }
int32_t I(uint32_t v) { return std::bit_cast<int32_t>(v); }

class InterSliceReduceTest : public ::testing::Test {
 protected:
  void Use(const std::string& axes) { scope_ = std::make_unique<MappingScope>(*Axes::Parse(axes)); }
  Mapping m(const std::string& text) { return scope_->m(text); }
  absl::StatusOr<InterSliceReduceStage> Plan(DType dtype, const std::string& slice, const std::string& time,
                                             const std::string& packet, const std::string& out_slice,
                                             const std::string& out_time, VeReduceOp op) {
    StreamShape in{dtype, m("1"), m("1 # 2"), m(slice), m(time), m(packet), std::nullopt};
    return PlanInterSliceReduce(in, m(out_slice), m(out_time), op);
  }
  // Runs the stage on data placed by tensor index (padding gets `garbage`); returns the output and
  // the input-index -> value table.
  static std::vector<uint32_t> Run(const InterSliceReduceStage& stage, std::map<Index, int32_t>& data, uint32_t garbage) {
    const Mapping full = Pair({stage.in.slice, stage.in.time, stage.in.packet});
    std::mt19937 rng(3);
    std::uniform_int_distribution<int32_t> dist(-1000, 1000);
    std::vector<uint32_t> in(full.size());
    for (int64_t i = 0; i < full.size(); ++i) {
      const Cell cell = full.map(i);
      if (!cell.live()) {
        in[i] = garbage;
        continue;
      }
      auto [it, fresh] = data.try_emplace(cell.index, 0);
      if (fresh) it->second = dist(rng);
      in[i] = B(it->second);
    }
    std::vector<uint32_t> out(stage.out.slice.size() * stage.out.time.size() * kVeLanes);
    interp::InterSliceReduce(stage, in, absl::MakeSpan(out));
    return out;
  }
  // Every live output holds the sum of the inputs whose index agrees on the input's axes other
  // than the reduced `axis`; padding outputs hold the identity (0).
  static void ExpectSums(const InterSliceReduceStage& stage, const std::map<Index, int32_t>& data,
                         const std::vector<uint32_t>& out, const std::string& axis) {
    const Mapping full_out = Pair({stage.out.slice, stage.out.time, stage.out.packet});
    const std::vector<std::string> input_axes = Pair({stage.in.slice, stage.in.time, stage.in.packet}).axis_names();
    auto key = [&](const Index& index) {
      Index kept;
      for (const std::string& a : input_axes) {
        if (a != axis) kept.Set(a, index[a]);
      }
      return kept;
    };
    std::map<Index, int64_t> sums;
    for (const auto& [index, v] : data) sums[key(index)] += v;
    int checked = 0;
    for (int64_t o = 0; o < full_out.size(); ++o) {
      const Cell cell = full_out.map(o);
      if (!cell.live()) {
        EXPECT_EQ(out[o], 0u) << "padding output " << o;
        continue;
      }
      ASSERT_EQ(I(out[o]), sums[key(cell.index)]) << "output " << o << " " << cell.index.ToString();
      ++checked;
    }
    EXPECT_GT(checked, 0);
  }
  std::unique_ptr<MappingScope> scope_;
};

// "Dummy Replacement": Slice [A / 8, R] -> [A / 8, 1 # 4]: the sum at R's position 0, padding at
// 1..3 (also the Vector Engine page's "Inter-Slice Reduce" example and notes V62).
TEST_F(InterSliceReduceTest, DummyReplacement) {
  Use("R = 4, A = 512");
  auto stage = Plan(DType::kI32, "A / 8, R", "1", "A % 8", "A / 8, 1 # 4", "1", VeReduceOp::kAddSat);
  ASSERT_TRUE(stage.ok()) << stage.status();
  EXPECT_EQ(stage->ratio, 4);
  EXPECT_EQ(stage->fills, (std::vector<std::string>{"dummy [1 # 4]"}));
  EXPECT_THAT(stage->Describe(), HasSubstr("inter_slice_reduce AddSat i32: slice [A / 8, R] -> [A / 8, 1 # 4], "
                                           "time [1] -> [1], reduced [R] (ratio 4), fill dummy [1 # 4]"));
  std::map<Index, int32_t> data;
  std::vector<uint32_t> out = Run(*stage, data, B(int32_t{123456789}));
  ExpectSums(*stage, data, out, "R");
}

// "Broadcast Into a New Slice Axis": Slice [W, R] -> [W, X]: every X position holds the sum.
TEST_F(InterSliceReduceTest, BroadcastIntoNewSliceAxis) {
  Use("W = 64, R = 4, X = 4, P = 8");
  auto stage = Plan(DType::kI32, "W, R", "1", "P", "W, X", "1", VeReduceOp::kAdd);
  ASSERT_TRUE(stage.ok()) << stage.status();
  EXPECT_EQ(stage->fills, (std::vector<std::string>{"broadcast [X]"}));
  std::map<Index, int32_t> data;
  std::vector<uint32_t> out = Run(*stage, data, 0);
  ExpectSums(*stage, data, out, "R");
  for (int x = 1; x < 4; ++x) EXPECT_EQ(out[(7 * 4 + x) * 8 + 5], out[(7 * 4) * 8 + 5]);
  // The manual's f32 form plans too.
  ASSERT_TRUE(Plan(DType::kF32, "W, R", "1", "P", "W, X", "1", VeReduceOp::kAdd).ok());
}

// "Promotion from Time into SliceOut": Slice [W, R], Time [T0, T2, T1] -> Slice [W, T2],
// Time [T0, T1]; T2 comes from the middle of Time.
TEST_F(InterSliceReduceTest, PromotionFromTime) {
  Use("W = 32, R = 4, T0 = 2, T2 = 4, T1 = 2, P = 8");
  auto stage = Plan(DType::kI32, "W, R", "T0, T2, T1", "P", "W, T2", "T0, T1", VeReduceOp::kAdd);
  ASSERT_TRUE(stage.ok()) << stage.status();
  EXPECT_EQ(stage->fills, (std::vector<std::string>{"promotion [T2] from Time"}));
  std::map<Index, int32_t> data;
  std::vector<uint32_t> out = Run(*stage, data, 0);
  ExpectSums(*stage, data, out, "R");
  ASSERT_TRUE(Plan(DType::kF32, "W, R", "T0, T2, T1", "P", "W, T2", "T0, T1", VeReduceOp::kAdd).ok());
  // The promoted factor must leave Time, and the others keep their order.
  EXPECT_THAT(Plan(DType::kI32, "W, R", "T0, T2, T1", "P", "W, T2", "T1, T0", VeReduceOp::kAdd).status().message(),
              HasSubstr("TimeOut must be Time [T0, T2, T1] without the factors promoted into SliceOut"));
}

// The three fills mixed (notes rule 3): R = 8 as a dummy half and a promoted half.
TEST_F(InterSliceReduceTest, FillsMix) {
  Use("W = 32, R = 8, T = 2, P = 8");
  auto stage = Plan(DType::kI32, "W, R", "T", "P", "W, T, 1 # 4", "1", VeReduceOp::kAdd);
  ASSERT_TRUE(stage.ok()) << stage.status();
  EXPECT_EQ(stage->fills.size(), 2u);
  std::map<Index, int32_t> data;
  ExpectSums(*stage, data, Run(*stage, data, 0), "R");
}

TEST_F(InterSliceReduceTest, Rules) {
  Use("R = 4, A = 512, B = 2");
  // Ops per data type.
  EXPECT_THAT(Plan(DType::kI32, "A / 8, R", "1", "A % 8", "A / 8, 1 # 4", "1", VeReduceOp::kMul).status().message(),
              HasSubstr("InterSliceReduceOpI32 is Add, AddSat, Max or Min"));
  EXPECT_THAT(Plan(DType::kF32, "A / 8, R", "1", "A % 8", "A / 8, 1 # 4", "1", VeReduceOp::kAddSat).status().message(),
              HasSubstr("InterSliceReduceOpF32 is Add, Max, Min or Mul"));
  EXPECT_THAT(Plan(DType::kBF16, "A / 8, R", "1", "A % 8", "A / 8, 1 # 4", "1", VeReduceOp::kAdd).status().message(),
              HasSubstr("Data types: i32 and f32 only"));
  for (VeReduceOp op : {VeReduceOp::kAdd, VeReduceOp::kAddSat, VeReduceOp::kMax, VeReduceOp::kMin}) {
    EXPECT_TRUE(Plan(DType::kI32, "A / 8, R", "1", "A % 8", "A / 8, 1 # 4", "1", op).ok());
  }
  for (VeReduceOp op : {VeReduceOp::kAdd, VeReduceOp::kMax, VeReduceOp::kMin, VeReduceOp::kMul}) {
    EXPECT_TRUE(Plan(DType::kF32, "A / 8, R", "1", "A % 8", "A / 8, 1 # 4", "1", op).ok());
  }
  // The reduced part must be innermost in Slice.
  EXPECT_THAT(Plan(DType::kI32, "R, A / 8", "1", "A % 8", "1 # 4, A / 8", "1", VeReduceOp::kAdd).status().message(),
              HasSubstr("the reduced part of Slice must be its innermost factors"));
  // Kept Slice factors stay in place.
  Use("R = 4, C = 4, D = 16, P = 8");
  EXPECT_THAT(Plan(DType::kI32, "C, D, R", "1", "P", "D, C, 1 # 4", "1", VeReduceOp::kAdd).status().message(),
              HasSubstr("factors outside the reduced [R] in place"));
  // A fill that is neither dummy, broadcast nor promotion (a Packet axis).
  Use("R = 4, A = 64, B = 4, P = 2");
  EXPECT_THAT(Plan(DType::kI32, "A, R", "1", "B, P", "A, B", "1", VeReduceOp::kAdd).status().message(),
              HasSubstr("Output Mapping Rule: each reduced Slice position"));
  // Nothing reduced; Packet not 8 lanes; SliceOut of another size; a Time factor dropped.
  Use("R = 4, A = 512, T = 2");
  EXPECT_THAT(Plan(DType::kI32, "A / 8, R", "1", "A % 8", "A / 8, R", "1", VeReduceOp::kAdd).status().message(),
              HasSubstr("nothing to reduce"));
  EXPECT_THAT(Plan(DType::kI32, "A / 8, R", "1", "A % 8 % 4", "A / 8, 1 # 4", "1", VeReduceOp::kAdd).status().message(),
              HasSubstr("8-way flits"));
  EXPECT_THAT(Plan(DType::kI32, "A / 8, R", "1", "A % 8", "A / 8", "1", VeReduceOp::kAdd).status().message(),
              HasSubstr("Scope: reduction happens within one cluster"));
  EXPECT_THAT(Plan(DType::kI32, "A / 4, R", "1", "A % 4 # 8", "A / 4, 1 # 4", "1", VeReduceOp::kAdd).status().message(),
              HasSubstr("within one 256-slice cluster"));
  EXPECT_THAT(Plan(DType::kI32, "A / 8, R", "T", "A % 8", "A / 8, 1 # 4", "1", VeReduceOp::kAdd).status().message(),
              HasSubstr("inter-slice reduce reduces Slice factors only"));
}

// Values (notes V60, V61) and the order: combined in increasing slice order, first as is.
TEST_F(InterSliceReduceTest, ValuesAndOrder) {
  Use("R = 4, A = 512");
  auto one = [&](DType dtype, VeReduceOp op, std::vector<uint32_t> per_slice) {
    auto stage = Plan(dtype, "A / 8, R", "1", "A % 8", "A / 8, 1 # 4", "1", op);
    EXPECT_TRUE(stage.ok()) << stage.status();
    std::vector<uint32_t> in(256 * 8, interp::ReduceIdentity(op, dtype));
    for (size_t r = 0; r < per_slice.size(); ++r) in[r * 8 + 3] = per_slice[r];
    std::vector<uint32_t> out(256 * 8);
    interp::InterSliceReduce(*stage, in, absl::MakeSpan(out));
    return out[3];  // output slice 0 (A / 8 = 0, dummy position 0), lane 3
  };
  constexpr int32_t kMax = std::numeric_limits<int32_t>::max();
  EXPECT_EQ(I(one(DType::kI32, VeReduceOp::kAdd, {B(kMax), B(1), B(0), B(0)})), std::numeric_limits<int32_t>::min());
  EXPECT_EQ(I(one(DType::kI32, VeReduceOp::kAddSat, {B(kMax), B(1), B(0), B(0)})), kMax);
  EXPECT_EQ(F(one(DType::kF32, VeReduceOp::kMul, {B(2.0f), B(3.0f), B(0.5f), B(4.0f)})), 12.0f);
  // ((1e8 + 1) - 1e8) + 1 = 1 in f32, slice order; any other order of these four gives 0 or 2.
  EXPECT_EQ(F(one(DType::kF32, VeReduceOp::kAdd, {B(1e8f), B(1.0f), B(-1e8f), B(1.0f)})), 1.0f);
  EXPECT_EQ(I(one(DType::kI32, VeReduceOp::kMin, {B(5), B(-7), B(3), B(9)})), -7);
  EXPECT_EQ(F(one(DType::kF32, VeReduceOp::kMax, {B(-5.0f), B(std::numeric_limits<float>::quiet_NaN()), B(3.0f),
                                                  B(-9.0f)})),
            3.0f);
}

}  // namespace
}  // namespace visa
