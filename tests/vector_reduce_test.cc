// The Vector Engine's Intra-Slice Reduce: every example and rule of the manual's "Intra-Slice
// Reduce" page (planning, the slot limit, ops per dtype, OTime / OPacket), and its values against
// independent host computations: exact sums by tensor index for i32, and for f32 a reference that
// sums in the documented order (tree, then time) checked against a double-precision sum.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <limits>
#include <map>
#include <random>

#include "dsl/mapping_parser.h"
#include "dsl/vector_reduce.h"
#include "interp/vector_reduce.h"

namespace visa {
namespace {

using ::testing::HasSubstr;

constexpr int32_t kMaxI = std::numeric_limits<int32_t>::max();
constexpr int32_t kMinI = std::numeric_limits<int32_t>::min();

uint32_t B(int32_t v) { return std::bit_cast<uint32_t>(v); }
uint32_t B(float v) { return std::bit_cast<uint32_t>(v); }
float F(uint32_t v) { return std::bit_cast<float>(v); }
int32_t I(uint32_t v) { return std::bit_cast<int32_t>(v); }

class IntraSliceReduceTest : public ::testing::Test {
 protected:
  void Use(const std::string& axes) { scope_ = std::make_unique<MappingScope>(*Axes::Parse(axes)); }
  Mapping m(const std::string& text) { return scope_->m(text); }
  StreamShape Shape(DType dtype, const std::string& slice, const std::string& time, const std::string& packet) {
    return StreamShape{dtype, m("1"), m("1"), m(slice), m(time), m(packet), std::nullopt};
  }
  // The Way8 stream, its trimmed Way4 stream (same Time, Packet `way4_packet`), and the plan.
  absl::StatusOr<IntraSliceReduceStage> Trimmed(DType dtype, const std::string& slice, const std::string& time,
                                                const std::string& packet8, const std::string& packet4,
                                                const std::string& out_time, const std::string& out_packet,
                                                VeReduceOp op, ReducePadding padding = ReducePadding::kValidCount) {
    return PlanIntraSliceReduce(Shape(dtype, slice, time, packet8), Narrowing::kTrim,
                                Shape(dtype, slice, time, packet4), "R", m(out_time), m(out_packet), op, padding);
  }
  std::unique_ptr<MappingScope> scope_;
};

// ---------------------------------------------------------------------------------------------
// Planning: the manual's examples.

// "Reduce in Time (i32 Saturating Add)": Time [R] accumulated, Packet [A % 2 # 4] preserved.
TEST_F(IntraSliceReduceTest, ReduceInTime) {
  Use("A = 8, R = 16");
  auto stage = Trimmed(DType::kI32, "A / 2", "R", "A % 2 # 8", "A % 2 # 4", "1", "A % 2 # 4", VeReduceOp::kAddSat);
  ASSERT_TRUE(stage.ok()) << stage.status();
  EXPECT_TRUE(stage->time_reduced);
  EXPECT_FALSE(stage->packet_reduced);
  EXPECT_EQ(stage->slots, 1);
  EXPECT_EQ(stage->vcg->mode, VcgMode::kUnneeded);
  EXPECT_EQ(stage->out.time.size(), 1);
  EXPECT_THAT(stage->Describe(), HasSubstr("intra_slice_reduce R AddSat i32: time [R] -> [1], packet [A % 2 # 4] -> "
                                           "[A % 2 # 4], temporal accumulation, slots 1 of 8"));
}

// "Reduce in Packet Only (f32 Add)": Packet [R # 8] trimmed to [R], collapsed to [1 # 4]; vc = |R|.
TEST_F(IntraSliceReduceTest, ReduceInPacketOnly) {
  Use("A = 8, R = 4");
  auto stage = Trimmed(DType::kF32, "A / 2", "A % 2", "R # 8", "R", "A % 2", "1 # 4", VeReduceOp::kAdd);
  ASSERT_TRUE(stage.ok()) << stage.status();
  EXPECT_TRUE(stage->packet_reduced);
  EXPECT_FALSE(stage->time_reduced);
  EXPECT_EQ(stage->vcg->mode, VcgMode::kPacketReduce);
  EXPECT_EQ(interp::IntraSliceValidCounts(*stage, 0), (std::vector<int>{4, 4}));
  EXPECT_THAT(stage->Describe(), HasSubstr("packet tree (2 levels)"));
}

// "Reduce Split Across Time and Packet (f32 Max)": R % 4 in Packet (tree), R / 4 in Time.
TEST_F(IntraSliceReduceTest, ReduceSplitAcrossTimeAndPacket) {
  Use("A = 8, R = 16");
  auto stage = Trimmed(DType::kF32, "A / 2", "R / 4", "R % 4 # 8", "R % 4", "1", "1 # 4", VeReduceOp::kMax);
  ASSERT_TRUE(stage.ok()) << stage.status();
  EXPECT_TRUE(stage->packet_reduced);
  EXPECT_TRUE(stage->time_reduced);
  EXPECT_THAT(stage->Describe(), HasSubstr("packet tree (2 levels) + temporal accumulation"));
}

// "Reduce Axis Spanning Slice, Time, and Packet (i32 Min)": the VCG cannot give the boundary slice
// its own partial count (Slice + Packet), so the valid-count strategy is refused with the rule and
// identity padding is accepted.
TEST_F(IntraSliceReduceTest, ReduceSpanningSliceTimePacket) {
  Use("R = 13");
  auto refused = Trimmed(DType::kI32, "R # 32 / 8", "R # 32 / 4 % 2", "R # 32 % 4 # 8", "R # 32 % 4", "1", "1 # 4",
                         VeReduceOp::kMin);
  ASSERT_FALSE(refused.ok());
  EXPECT_THAT(refused.status().message(), HasSubstr("Intra-Slice Reduce: Valid Count Generator: Slice + Packet"));
  EXPECT_THAT(refused.status().message(), HasSubstr("identity padding"));
  auto identity = Trimmed(DType::kI32, "R # 32 / 8", "R # 32 / 4 % 2", "R # 32 % 4 # 8", "R # 32 % 4", "1", "1 # 4",
                          VeReduceOp::kMin, ReducePadding::kIdentity);
  ASSERT_TRUE(identity.ok()) << identity.status();
  EXPECT_FALSE(identity->vcg.has_value());
}

// VCG "Slice + Time" example through the reduce: the configuration is part of the description.
TEST_F(IntraSliceReduceTest, SliceTimeExampleCarriesItsVcg) {
  Use("A = 4, R = 17, X = 32");
  auto stage = Trimmed(DType::kI32, "X, R # 24 / 3", "R # 24 % 3", "A # 8", "A", "1", "A", VeReduceOp::kAddSat);
  ASSERT_TRUE(stage.ok()) << stage.status();
  EXPECT_THAT(stage->Describe(), HasSubstr("gate 0: mask 0x07, match 5, V 2, standard"));
  EXPECT_EQ(interp::IntraSliceValidCounts(*stage, 5), (std::vector<int>{4, 4, 0}));
}

// "Accumulator Slot Limit": [R / 2, A % 2, R % 2] uses 2 slots; [R, A % 2, B % 4] 8; the manual's
// invalid [R, A % 3, B % 4] needs 12.
TEST_F(IntraSliceReduceTest, AccumulatorSlotLimit) {
  Use("A = 6, B = 8, R = 16");
  auto two = Trimmed(DType::kI32, "1", "R / 2, A % 2, R % 2", "1 # 8", "1 # 4", "A % 2", "1 # 4", VeReduceOp::kAddSat);
  ASSERT_TRUE(two.ok()) << two.status();
  EXPECT_EQ(two->slots, 2);
  auto eight = Trimmed(DType::kI32, "1", "R, A % 2, B % 4", "1 # 8", "1 # 4", "A % 2, B % 4", "1 # 4",
                       VeReduceOp::kAddSat);
  ASSERT_TRUE(eight.ok()) << eight.status();
  EXPECT_EQ(eight->slots, 8);
  auto twelve = Trimmed(DType::kI32, "A / 3", "R, A % 3, B % 4", "B / 4 # 8", "B / 4 # 4", "A % 3, B % 4",
                        "B / 4 # 4", VeReduceOp::kAddSat);
  ASSERT_FALSE(twelve.ok());
  EXPECT_THAT(twelve.status().message(), HasSubstr("Intra-Slice Reduce: Accumulator Slot Limit"));
  EXPECT_THAT(twelve.status().message(), HasSubstr("need 12 accumulator slots, but only 8"));
  EXPECT_THAT(twelve.status().message(), HasSubstr("[R, A % 3, B % 4]"));
}

TEST_F(IntraSliceReduceTest, OpsPerDataType) {
  Use("R = 16");
  auto plan = [&](DType dtype, VeReduceOp op) {
    return Trimmed(dtype, "1", "R", "1 # 8", "1 # 4", "1", "1 # 4", op).status();
  };
  for (VeReduceOp op : {VeReduceOp::kAddSat, VeReduceOp::kMax, VeReduceOp::kMin}) EXPECT_TRUE(plan(DType::kI32, op).ok());
  for (VeReduceOp op : {VeReduceOp::kAdd, VeReduceOp::kMax, VeReduceOp::kMin}) EXPECT_TRUE(plan(DType::kF32, op).ok());
  EXPECT_THAT(plan(DType::kI32, VeReduceOp::kAdd).message(), HasSubstr("no wrapping Add"));
  EXPECT_THAT(plan(DType::kI32, VeReduceOp::kMul).message(), HasSubstr("IntraSliceReduceOpI32"));
  EXPECT_THAT(plan(DType::kF32, VeReduceOp::kAddSat).message(), HasSubstr("IntraSliceReduceOpF32"));
  EXPECT_THAT(plan(DType::kBF16, VeReduceOp::kAdd).message(), HasSubstr("i32 or f32"));
}

TEST_F(IntraSliceReduceTest, ShapeRules) {
  Use("A = 8, R = 16");
  // OTime keeps R.
  EXPECT_THAT(Trimmed(DType::kI32, "1", "R, A", "1 # 8", "1 # 4", "R, A", "1 # 4", VeReduceOp::kMax).status().message(),
              HasSubstr("must be fully reduced, but R is still present in OTime"));
  // OTime reorders the kept axes.
  Use("A = 2, B = 2, R = 16");
  EXPECT_THAT(Trimmed(DType::kI32, "1", "A, R, B", "1 # 8", "1 # 4", "B, A", "1 # 4", VeReduceOp::kMax).status().message(),
              HasSubstr("OTime must be exactly Time with every R factor removed"));
  // Packet neither preserved nor collapsed.
  Use("A = 8, R = 4");
  EXPECT_THAT(Trimmed(DType::kF32, "1", "A", "R # 8", "R", "A", "R", VeReduceOp::kAdd).status().message(),
              HasSubstr("Packet should be either preserved or reduced to [1 # 4]"));
  EXPECT_THAT(Trimmed(DType::kF32, "1", "R", "A % 4 # 8", "A % 4", "1", "1 # 4", VeReduceOp::kAdd).status().message(),
              HasSubstr("got Packet [A % 4] -> OPacket [1 # 4]"));
  // Packet mixing R with another axis.
  Use("A = 2, R = 2");
  EXPECT_THAT(PlanIntraSliceReduce(Shape(DType::kF32, "1", "1", "A, R # 4"), Narrowing::kSplit,
                                   Shape(DType::kF32, "1", "2", "A, R"), "R", m("1"), m("1 # 4"), VeReduceOp::kAdd,
                                   ReducePadding::kIdentity)
                  .status()
                  .message(),
              HasSubstr("mixes R with other axes"));
  // Not the 4-way path; R only in Slice.
  Use("A = 8, R = 16");
  EXPECT_THAT(PlanIntraSliceReduce(Shape(DType::kI32, "1", "R", "A"), Narrowing::kTrim, Shape(DType::kI32, "1", "R", "A"),
                                   "R", m("1"), m("A"), VeReduceOp::kMax)
                  .status()
                  .message(),
              HasSubstr("works on the 4-way path"));
  EXPECT_THAT(Trimmed(DType::kI32, "R", "A", "1 # 8", "1 # 4", "A", "1 # 4", VeReduceOp::kMax).status().message(),
              HasSubstr("is in neither Time"));
  // A Way4 stream that trim could not have made.
  EXPECT_THAT(PlanIntraSliceReduce(Shape(DType::kI32, "1", "R", "1 # 8"), Narrowing::kSplit,
                                   Shape(DType::kI32, "1", "R", "1 # 4"), "R", m("1"), m("1 # 4"), VeReduceOp::kMax)
                  .status()
                  .message(),
              HasSubstr("is not what split_way4 makes"));
}

// ---------------------------------------------------------------------------------------------
// Semantics.

// Runs the reduce on one slice of data placed by tensor index: live lanes get value(index),
// padding lanes get `garbage` (which must never reach a result).
std::vector<uint32_t> RunSlice(const IntraSliceReduceStage& stage, int64_t slice,
                               const std::function<uint32_t(const Index&)>& value, uint32_t garbage,
                               std::vector<uint32_t>* input = nullptr) {
  const Mapping full = Pair({stage.in.slice, stage.in.time, stage.in.packet});
  const int64_t n = stage.in.time.size() * kVeHalfLanes;
  std::vector<uint32_t> in(n);
  for (int64_t i = 0; i < n; ++i) {
    const Cell cell = full.map(slice * n + i);
    in[i] = cell.live() ? value(cell.index) : garbage;
  }
  std::vector<uint32_t> out(stage.out.time.size() * kVeHalfLanes);
  const std::vector<int> valid = interp::IntraSliceValidCounts(stage, slice);
  interp::IntraSliceReduce(stage, in, valid, absl::MakeSpan(out));
  if (input) *input = in;
  return out;
}

// For every live output lane of the slice: the values of the input lanes whose index without R
// equals the output's index, in stream order (an independent index-matching of the reduction).
std::map<int64_t, std::vector<uint32_t>> Groups(const IntraSliceReduceStage& stage, int64_t slice,
                                                const std::vector<uint32_t>& in) {
  const Mapping full_in = Pair({stage.in.slice, stage.in.time, stage.in.packet});
  const Mapping full_out = Pair({stage.out.slice, stage.out.time, stage.out.packet});
  const int64_t n_in = stage.in.time.size() * kVeHalfLanes;
  const int64_t n_out = stage.out.time.size() * kVeHalfLanes;
  std::map<Index, std::vector<uint32_t>> by_index;
  for (int64_t i = 0; i < n_in; ++i) {
    const Cell cell = full_in.map(slice * n_in + i);
    if (!cell.live()) continue;
    Index kept;
    for (const auto& [axis, v] : cell.index.coords()) {
      if (axis != stage.axis) kept.Set(axis, v);
    }
    by_index[kept].push_back(in[i]);
  }
  std::map<int64_t, std::vector<uint32_t>> groups;
  for (int64_t o = 0; o < n_out; ++o) {
    const Cell cell = full_out.map(slice * n_out + o);
    if (!cell.live()) continue;
    Index kept;  // within one slice, R's Slice part is the same on both sides
    for (const auto& [axis, v] : cell.index.coords()) {
      if (axis != stage.axis) kept.Set(axis, v);
    }
    groups[o] = by_index[kept];
  }
  return groups;
}

// i32 AddSat with values small enough not to saturate: every output is the exact sum of its
// group, for every placement of the manual's examples, with padding filled with garbage.
TEST_F(IntraSliceReduceTest, I32SumsAreExact) {
  struct Case {
    std::string axes, slice, time, packet8, packet4, out_time, out_packet;
  };
  const std::vector<Case> cases = {
      {"A = 8, R = 16", "A / 2", "R", "A % 2 # 8", "A % 2 # 4", "1", "A % 2 # 4"},
      {"A = 8, R = 16", "A / 2", "R / 4", "R % 4 # 8", "R % 4", "1", "1 # 4"},
      {"A = 8, R = 3", "A / 2", "A % 2", "R # 8", "R # 4", "A % 2", "1 # 4"},
      {"A = 4, R = 17, X = 4", "X, R # 24 / 3", "R # 24 % 3", "A # 8", "A", "1", "A"},
      {"A = 8, R = 12, X = 2", "X, A / 2", "R # 16", "A % 2 # 8", "A % 2 # 4", "1", "A % 2 # 4"},
      {"A = 8, R = 7, X = 2", "X, A / 2", "R # 8 / 4", "R # 8 % 4 # 8", "R # 8 % 4", "1", "1 # 4"},
      {"A = 6, R = 16", "1", "R / 2, A % 2, R % 2", "1 # 8", "1 # 4", "A % 2", "1 # 4"},
      {"R = 5, X = 4", "X, R # 8 % 4", "R # 8 / 4", "1 # 8", "1 # 4", "1", "1 # 4"},
  };
  std::mt19937 rng(7);
  std::uniform_int_distribution<int32_t> dist(-1000000, 1000000);
  for (const Case& c : cases) {
    SCOPED_TRACE(c.time + " | " + c.packet4);
    Use(c.axes);
    auto stage = Trimmed(DType::kI32, c.slice, c.time, c.packet8, c.packet4, c.out_time, c.out_packet,
                         VeReduceOp::kAddSat);
    ASSERT_TRUE(stage.ok()) << stage.status();
    std::map<Index, int32_t> data;
    auto value = [&](const Index& index) {
      auto [it, fresh] = data.try_emplace(index, 0);
      if (fresh) it->second = dist(rng);
      return B(it->second);
    };
    for (int64_t s = 0; s < stage->in.slice.size(); ++s) {
      std::vector<uint32_t> in;
      const std::vector<uint32_t> out = RunSlice(*stage, s, value, B(int32_t{987654321}), &in);
      for (const auto& [o, group] : Groups(*stage, s, in)) {
        int64_t sum = 0;
        for (uint32_t v : group) sum += I(v);
        EXPECT_EQ(I(out[o]), sum) << "slice " << s << " output " << o;
      }
    }
  }
}

// split_way4 from the 8-way stream: R = 19 over Time and 8 lanes (vc 8, 8, 3 -> 4, 4, 4, 4, 3, 0),
// and a preserved Packet whose upper half becomes a retained Time digit (2 slots). Data is placed
// by the 8-way mapping; sums are exact by tensor index.
TEST_F(IntraSliceReduceTest, SplitFromWay8IsExact) {
  struct Case {
    std::string axes, slice, time8, packet8, time4, packet4, out_time, out_packet;
  };
  const std::vector<Case> cases = {
      {"R = 19, X = 4", "X", "R # 24 / 8", "R # 24 % 8", "R # 24 / 8, R # 24 % 8 / 4", "R # 24 % 4", "1", "1 # 4"},
      {"R = 6, A = 8", "1", "R", "A", "R, A / 4", "A % 4", "A / 4", "A % 4"},
      {"R = 45, Y = 2", "Y", "R # 48 / 8 % 2, Y, R # 48 / 8 / 2", "R # 48 % 8",
       "R # 48 / 8 % 2, Y, R # 48 / 8 / 2, R # 48 % 8 / 4", "R # 48 % 4", "Y", "1 # 4"},
  };
  std::mt19937 rng(5);
  std::uniform_int_distribution<int32_t> dist(-1000000, 1000000);
  for (const Case& c : cases) {
    SCOPED_TRACE(c.time8 + " | " + c.packet8);
    Use(c.axes);
    const StreamShape way8 = Shape(DType::kI32, c.slice, c.time8, c.packet8);
    auto stage = PlanIntraSliceReduce(way8, Narrowing::kSplit, Shape(DType::kI32, c.slice, c.time4, c.packet4), "R",
                                      m(c.out_time), m(c.out_packet), VeReduceOp::kAddSat);
    ASSERT_TRUE(stage.ok()) << stage.status();
    const Mapping full8 = Pair({way8.slice, way8.time, way8.packet});
    const Mapping full_out = Pair({stage->out.slice, stage->out.time, stage->out.packet});
    const int64_t n8 = way8.time.size() * kVeLanes;
    const int64_t n_out = stage->out.time.size() * kVeHalfLanes;
    for (int64_t s = 0; s < way8.slice.size(); ++s) {
      std::vector<uint32_t> in(n8);
      std::map<Index, int64_t> sums;  // by index without R
      for (int64_t i = 0; i < n8; ++i) {
        const Cell cell = full8.map(s * n8 + i);
        if (!cell.live()) {
          in[i] = B(int32_t{555555555});
          continue;
        }
        const int32_t v = dist(rng);
        in[i] = B(v);
        Index kept;
        for (const auto& [axis, x] : cell.index.coords()) {
          if (axis != "R") kept.Set(axis, x);
        }
        sums[kept] += v;
      }
      std::vector<uint32_t> out(n_out);
      interp::IntraSliceReduceFromWay8(*stage, s, in, absl::MakeSpan(out));
      for (int64_t o = 0; o < n_out; ++o) {
        const Cell cell = full_out.map(s * n_out + o);
        if (cell.live()) { EXPECT_EQ(I(out[o]), sums[cell.index]) << "slice " << s << " output " << o; }
      }
    }
  }
}

// f32 Add: the result equals a reference that sums in the documented order (each 4-way flit's
// tree, then time in order), and is within the summation bound of the double-precision sum.
TEST_F(IntraSliceReduceTest, F32AddFollowsTheDocumentedOrder) {
  Use("A = 8, R = 45");
  auto stage = Trimmed(DType::kF32, "A / 2", "R # 48 / 4", "R # 48 % 4 # 8", "R # 48 % 4", "1", "1 # 4",
                       VeReduceOp::kAdd);
  ASSERT_TRUE(stage.ok()) << stage.status();
  std::mt19937 rng(11);
  std::uniform_real_distribution<float> dist(-100.0f, 100.0f);
  for (int64_t s = 0; s < stage->in.slice.size(); ++s) {
    std::vector<uint32_t> in;
    const std::vector<uint32_t> out = RunSlice(*stage, s, [&](const Index&) { return B(dist(rng)); },
                                               B(std::numeric_limits<float>::quiet_NaN()), &in);
    // Reference: R = 4 t + l; lanes with R >= 45 are excluded (0.0f in the tree).
    float acc = 0.0f;
    double exact = 0.0, magnitude = 0.0;
    for (int t = 0; t < 12; ++t) {
      float lane[4];
      for (int l = 0; l < 4; ++l) {
        const bool real = 4 * t + l < 45;
        lane[l] = real ? F(in[t * 4 + l]) : 0.0f;
        if (real) exact += lane[l], magnitude += std::fabs(lane[l]);
      }
      const float tree = (lane[0] + lane[1]) + (lane[2] + lane[3]);
      acc = t == 0 ? tree : acc + tree;
    }
    EXPECT_EQ(B(F(out[0])), B(acc)) << "slice " << s;
    const double u = std::ldexp(1.0, -24);
    EXPECT_LE(std::fabs(F(out[0]) - exact), 45 * u / (1 - 45 * u) * magnitude) << "slice " << s;
    for (int l = 1; l < 4; ++l) EXPECT_EQ(out[l], B(0.0f));  // [1 # 4]: padding lanes hold the identity
  }
}

// One flit, Packet collapsed: the manual's tree op(op(a, b), op(c, d)) (notes V56, V57, V58, V59).
TEST_F(IntraSliceReduceTest, TreeValuesAndIdentities) {
  Use("R = 4");
  auto run = [&](DType dtype, VeReduceOp op, std::vector<uint32_t> lanes) {
    auto stage = Trimmed(dtype, "1", "1", "R # 8", "R", "1", "1 # 4", op);
    EXPECT_TRUE(stage.ok()) << stage.status();
    std::vector<uint32_t> out(4);
    const std::vector<int> valid = {4};
    interp::IntraSliceReduce(*stage, lanes, valid, absl::MakeSpan(out));
    return out;
  };
  EXPECT_EQ(I(run(DType::kI32, VeReduceOp::kAddSat, {B(1), B(2), B(3), B(4)})[0]), 10);
  // Saturation in the tree: op(op(MAX, MAX), op(MIN, MIN)) = op(MAX, MIN) = -1 (a linear fold
  // would give MIN).
  EXPECT_EQ(I(run(DType::kI32, VeReduceOp::kAddSat, {B(kMaxI), B(kMaxI), B(kMinI), B(kMinI)})[0]), -1);
  EXPECT_EQ(I(run(DType::kI32, VeReduceOp::kAddSat, {B(kMaxI), B(1), B(-1), B(0)})[0]), kMaxI - 1);
  const float nan = std::numeric_limits<float>::quiet_NaN();
  EXPECT_EQ(F(run(DType::kF32, VeReduceOp::kMax, {B(1.0f), B(nan), B(3.0f), B(2.0f)})[0]), 3.0f);
  std::vector<uint32_t> max_i = run(DType::kI32, VeReduceOp::kMax, {B(-5), B(7), B(2), B(7)});
  EXPECT_EQ(I(max_i[0]), 7);
  for (int l = 1; l < 4; ++l) EXPECT_EQ(I(max_i[l]), kMinI);
  std::vector<uint32_t> min_f = run(DType::kF32, VeReduceOp::kMin, {B(-5.0f), B(7.0f), B(2.0f), B(7.0f)});
  EXPECT_EQ(F(min_f[0]), -5.0f);
  for (int l = 1; l < 4; ++l) EXPECT_EQ(F(min_f[l]), std::numeric_limits<float>::infinity());
}

// Identity padding folds every lane: with the fetch's identity (i32::MAX for Min) in R's padding
// the result is exact; anything else there reaches the result (the user's obligation).
TEST_F(IntraSliceReduceTest, IdentityPaddingFoldsEveryLane) {
  Use("R = 13");
  auto stage = Trimmed(DType::kI32, "R # 32 / 8", "R # 32 / 4 % 2", "R # 32 % 4 # 8", "R # 32 % 4", "1", "1 # 4",
                       VeReduceOp::kMin, ReducePadding::kIdentity);
  ASSERT_TRUE(stage.ok()) << stage.status();
  auto value = [](const Index& index) { return B(static_cast<int32_t>(100 - index["R"])); };  // min over R < 13: 88
  EXPECT_EQ(I(RunSlice(*stage, 1, value, B(kMaxI))[0]), 88);  // slice 1 holds R = 8..12 and 13..15 padding
  EXPECT_EQ(I(RunSlice(*stage, 1, value, B(int32_t{-1}))[0]), -1);
  EXPECT_EQ(I(RunSlice(*stage, 0, value, B(int32_t{-1}))[0]), 93);  // slice 0: R = 0..7, no padding
}

// Across time the slot saturates step by step (notes V56: [MAX, 1, -1] gives MAX - 1), lane by lane.
TEST_F(IntraSliceReduceTest, SaturationAcrossTime) {
  Use("R = 3, A = 4");
  auto stage = Trimmed(DType::kI32, "1", "R", "A # 8", "A", "1", "A", VeReduceOp::kAddSat);
  ASSERT_TRUE(stage.ok()) << stage.status();
  std::vector<uint32_t> out(4);
  interp::IntraSliceReduce(*stage,
                           std::vector<uint32_t>{B(kMaxI), B(kMinI), B(1), B(5), B(1), B(-1), B(2), B(5),
                                                 B(-1), B(1), B(3), B(5)},
                           std::vector<int>{4, 4, 4}, absl::MakeSpan(out));
  EXPECT_EQ(I(out[0]), kMaxI - 1);
  EXPECT_EQ(I(out[1]), kMinI + 1);
  EXPECT_EQ(I(out[2]), 6);
  EXPECT_EQ(I(out[3]), 15);
}

// Valid counts: lanes past the count and flits with count 0 never contribute.
TEST_F(IntraSliceReduceTest, ValidCountsExcludePadding) {
  Use("R = 7");
  auto stage = Trimmed(DType::kI32, "1", "R # 8 / 4", "R # 8 % 4 # 8", "R # 8 % 4", "1", "1 # 4", VeReduceOp::kMax);
  ASSERT_TRUE(stage.ok()) << stage.status();
  EXPECT_EQ(interp::IntraSliceValidCounts(*stage, 0), (std::vector<int>{4, 3}));
  std::vector<uint32_t> out(4);
  interp::IntraSliceReduce(*stage, std::vector<uint32_t>{B(1), B(2), B(3), B(4), B(5), B(6), B(7), B(kMaxI)},
                           std::vector<int>{4, 3}, absl::MakeSpan(out));
  EXPECT_EQ(I(out[0]), 7);
  interp::IntraSliceReduce(*stage, std::vector<uint32_t>{B(1), B(2), B(3), B(4), B(5), B(6), B(7), B(kMaxI)},
                           std::vector<int>{4, 0}, absl::MakeSpan(out));
  EXPECT_EQ(I(out[0]), 4);
}

}  // namespace
}  // namespace visa
