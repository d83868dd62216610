// Tests of the Switch Engine planner: the manual's examples, the notes' vectors, every rule's error.
//
// Sources: the manual's "Switch Engine" page (Forwarding, Broadcast01, Broadcast1, Transpose,
// InterTranspose, Custom Topologies and their constraints, Performance), its GEMV kernel, and the
// research notes (mapping-algebra.md 4.10 and test vectors 54-61; engine-semantics.md 3.4).
// Every accepted case is also checked by enumeration to hold exactly the tensor it was given: each
// output position's index, restricted to the input's axes, is held by the input, and every input
// index reaches the output (except the rows a partial axis extraction deliberately leaves behind).
#include "dsl/switch_engine.h"

#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "dsl/axes.h"
#include "dsl/dtype.h"
#include "dsl/equivalence.h"
#include "dsl/index.h"
#include "dsl/mapping.h"
#include "dsl/mapping_parser.h"
#include "dsl/stream.h"

namespace visa {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;

// One switch call written the way the manual writes it.
struct Case {
  std::string name;
  std::string axes;
  DType dtype = DType::kI8;
  std::string slice, time, packet;
  SwitchConfig config;
  std::string out_slice, out_time;
  int64_t ring = 0;
  int64_t cycles = 0;
  std::string chip = "1", cluster = "1";
  bool drops_sliced_rows = false;  // partial axis extraction: some input rows are not read
};

struct Parsed {
  StreamShape in;
  Mapping out_slice, out_time;
};

Parsed Parse(const Case& c) {
  absl::StatusOr<Axes> axes = Axes::Parse(c.axes);
  EXPECT_TRUE(axes.ok()) << axes.status();
  MappingScope s(*axes);
  Parsed p;
  p.in.dtype = c.dtype;
  p.in.chip = s.m(c.chip);
  p.in.cluster = s.m(c.cluster);
  p.in.slice = s.m(c.slice);
  p.in.time = s.m(c.time);
  p.in.packet = s.m(c.packet);
  p.out_slice = s.m(c.out_slice);
  p.out_time = s.m(c.out_time);
  for (const Mapping* m : {&p.in.chip, &p.in.cluster, &p.in.slice, &p.in.time, &p.in.packet, &p.out_slice,
                           &p.out_time}) {
    EXPECT_TRUE(m->ok()) << c.name << ": " << m->status();
  }
  return p;
}

absl::StatusOr<SwitchStage> Plan(const Case& c) {
  Parsed p = Parse(c);
  return PlanSwitch(p.in, c.config, p.out_slice, p.out_time);
}

std::set<std::string> AxisNames(const Mapping& a, const Mapping& b) {
  std::set<std::string> names;
  for (const Mapping* m : {&a, &b}) {
    for (const std::string& n : m->axis_names()) names.insert(n);
  }
  return names;
}

Index Restrict(const Index& index, const std::set<std::string>& axes) {
  Index out;
  for (const auto& [axis, value] : index.coords()) {
    if (axes.count(axis)) out.Set(axis, value);
  }
  return out;
}

// Every (slice, time) index of a shape whose two cells are both live, restricted to `axes`.
std::vector<Index> Held(const Mapping& slice, const Mapping& time, const std::set<std::string>& axes) {
  std::vector<Cell> times;
  for (int64_t t = 0; t < time.size(); ++t) times.push_back(time.map(t));
  std::vector<Index> held;
  for (int64_t s = 0; s < slice.size(); ++s) {
    Cell sc = slice.map(s);
    if (!sc.live()) continue;
    for (const Cell& tc : times) {
      if (!tc.live()) continue;
      Index i = sc.index;
      i.AddAll(tc.index);
      held.push_back(Restrict(i, axes));
    }
  }
  return held;
}

// The switch holds the same tensor before and after: Chip, Cluster and Packet pass unchanged, so
// the (Slice, Time) part decides.
void ExpectPreservesTensor(const Case& c) {
  Parsed p = Parse(c);
  std::set<std::string> axes = AxisNames(p.in.slice, p.in.time);
  std::vector<Index> in_list = Held(p.in.slice, p.in.time, axes);
  std::set<Index> in_set(in_list.begin(), in_list.end());
  std::set<Index> out_set;
  for (const Index& i : Held(p.out_slice, p.out_time, axes)) {
    ASSERT_TRUE(in_set.count(i)) << c.name << ": the output holds " << i.ToString() << ", which the input does not";
    out_set.insert(i);
  }
  if (c.drops_sliced_rows) {
    EXPECT_LT(out_set.size(), in_set.size()) << c.name;
    EXPECT_FALSE(out_set.empty()) << c.name;
  } else {
    EXPECT_EQ(out_set, in_set) << c.name << ": some input index never reaches the output";
  }
}

void ExpectAccepted(const Case& c) {
  SCOPED_TRACE(c.name);
  absl::StatusOr<SwitchStage> stage = Plan(c);
  ASSERT_TRUE(stage.ok()) << stage.status();
  EXPECT_EQ(stage->ring_size, c.ring);
  EXPECT_EQ(stage->cycles, c.cycles);
  EXPECT_EQ(stage->config, c.config);
  Parsed p = Parse(c);
  EXPECT_EQ(stage->out.dtype, p.in.dtype);
  EXPECT_TRUE(stage->out.chip == p.in.chip && stage->out.cluster == p.in.cluster && stage->out.packet == p.in.packet);
  EXPECT_TRUE(stage->out.slice == p.out_slice && stage->out.time == p.out_time);
  ExpectPreservesTensor(c);
}

template <typename Matcher>
void ExpectRejected(const Case& c, Matcher matcher) {
  SCOPED_TRACE(c.name);
  absl::StatusOr<SwitchStage> stage = Plan(c);
  ASSERT_FALSE(stage.ok()) << "accepted with " << stage->Describe();
  EXPECT_EQ(stage.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(stage.status().message()), matcher);
}

// ---------------------------------------------------------------------------------------------
// The manual's examples.

constexpr char kB01Axes[] = "A=256, B=64, C=63, D=8, X=4";

Case ManualBroadcast01() {
  // "Broadcast01 > Example": dtype i8, 64-byte packets; 4 x 64 x 64/32 = 512 cycles.
  return {"manual Broadcast01 example", kB01Axes, DType::kI8, "A", "B", "C # 64", SwitchConfig::Broadcast01(2, 2, 4),
          "A / 4, 4", "B / 4, A / 2 % 2, B % 4, A % 2", 4, 512, "D / 2", "D % 2"};
}

TEST(SwitchManual, Broadcast01Example) { ExpectAccepted(ManualBroadcast01()); }

TEST(SwitchManual, Broadcast01KernelWithNewAxisAndF32) {
  // The same example's Rust kernel: f32 and the fresh axis X for the tile. The notes (#54) count
  // f32 C # 64 = 256 bytes = 8 flits: 4 x 64 x 8 = 2048 (the manual's 512 is for i8).
  Case c = ManualBroadcast01();
  c.name = "manual Broadcast01 kernel (notes #54)";
  c.dtype = DType::kF32;
  c.out_slice = "A / 4, X";
  c.cycles = 2048;
  ExpectAccepted(c);
  c.name = "notes #54 with two tiles X, Y";
  c.axes = "A=256, B=64, C=63, D=8, X=2, Y=2";
  c.out_slice = "A / 4, X, Y";
  ExpectAccepted(c);
}

TEST(SwitchManual, Broadcast01RingStructureExample) {
  // "Ring Structure": Slice A with A = 64 cannot run (the page's own full-cluster rule); the same
  // pattern at A = 256 is accepted, ring 8 x 8.
  Case literal{"manual ring-structure example (A = 64)", "A=64, B=64", DType::kI8, "A", "B / 2", "B % 32",
               SwitchConfig::Broadcast01(8, 8, 2), "A / 64, 64", "B / 4, A / 8 % 8, B / 2 % 2, A % 8"};
  ExpectRejected(literal, AllOf(HasSubstr("InSlice must span the full cluster (256 slices), got `A` of size 64"),
                                HasSubstr("rule: full cluster operation")));
  Case full = literal;
  full.name = "manual ring-structure example at A = 256";
  full.axes = "A=256, B=64";
  full.ring = 64;
  full.cycles = 64 * 32 * 1;
  ExpectAccepted(full);
}

TEST(SwitchManual, Broadcast1Example) {
  // Notes #55: ring 32. i8 C # 64 = 2 flits.
  ExpectAccepted({"manual Broadcast1 example", "A=256, B=64, C=63, X=4", DType::kI8, "A", "B", "C # 64",
                  SwitchConfig::Broadcast1(4, 8), "A / 32, X, A % 8", "B, A / 8 % 4", 32, 32 * 64 * 2});
}

TEST(SwitchManual, TransposeExample) {
  // Notes #56: ring 64.
  ExpectAccepted({"manual Transpose example", "A=256, B=64, C=63", DType::kI8, "A", "B", "C # 64",
                  SwitchConfig::Transpose(32, 2), "A / 64, A % 2, A / 2 % 32", "B", 64, 64 * 64 * 2});
}

TEST(SwitchManual, InterTransposeExample) {
  ExpectAccepted({"manual InterTranspose example", "A=8, B=32, C=256", DType::kI8, "C", "A", "B # 32",
                  SwitchConfig::InterTranspose(2, 16, 2), "C / 32, A / 2 % 2, C % 16", "A / 4, A % 2, C / 16 % 2", 32,
                  32 * 8 * 1});
}

TEST(SwitchManual, ForwardingExample) {
  // Ring 1: no inter-slice traffic; f32 C = 128 bytes = 4 flits.
  ExpectAccepted({"manual Forwarding example", "A=256, B=64, C=32", DType::kF32, "A", "B", "C",
                  SwitchConfig::Forward(), "A", "B", 1, 1 * 64 * 4});
}

TEST(SwitchManual, GemvBroadcast) {
  // "Kernel Examples > GEMV": slice0 = 1, time0 = 1 broadcast the one live slice to all 256.
  // bf16 J = 2048 elements = 4096 bytes = 128 flits.
  ExpectAccepted({"manual GEMV switch", "I=256, J=2048", DType::kBF16, "1 # 256", "1", "J",
                  SwitchConfig::Broadcast01(256, 1, 1), "I", "1 # 256", 256, 256 * 1 * 128});
}

constexpr char kCustomAxes[] = "A=16, B=16, C=8, D=8, E=8, X=2, Y=2, W=4";

Case Custom(std::string name, std::string out_slice, std::string out_time, int64_t ring) {
  // The custom examples: i8, Packet [D, E] = 64 bytes = 2 flits, InTime C = 8.
  return {std::move(name), kCustomAxes, DType::kI8, "A, B", "C", "D, E", SwitchConfig::CustomBroadcast(ring),
          std::move(out_slice), std::move(out_time), ring, ring * 8 * 2};
}

TEST(SwitchManual, CustomArbitraryPermutation) {
  // Example 1: 256 x 8 x 2 = 4096.
  ExpectAccepted(Custom("manual custom example 1", "B % 4, B / 4, A % 4, A / 4", "C", 256));
}

TEST(SwitchManual, CustomMultiAxisBroadcast) {
  // Example 2 in both spellings (bare broadcasts in the prose, new axes in the kernel): 512 cycles.
  ExpectAccepted(Custom("manual custom example 2", "A / 2, 2, B / 2, 2", "C, A % 2, B % 2", 32));
  ExpectAccepted(Custom("manual custom example 2 kernel", "A / 2, X, B / 2, Y", "C, A % 2, B % 2", 32));
}

TEST(SwitchManual, CustomPartialAxisExtraction) {
  // Example 3: the manual accepts slicing (the notes say the later reference refuses it; the
  // manual is the specification). Its printed "4 x 8 x 2 = 128" miscounts: the product is 64.
  Case c = Custom("manual custom example 3", "A, B / 4, W", "C, B % 4 = 3", 4);
  c.drops_sliced_rows = true;
  EXPECT_EQ(c.cycles, 64);
  ExpectAccepted(c);
}

TEST(SwitchManual, CustomOrderPreservation) {
  // Constraint 1. The page writes `B / 2` for the second moved digit, which with B = 16 is an
  // 8-value digit overlapping the B / 4 that stays in Slice; the digit it means is `B / 2 % 2`.
  ExpectRejected(Custom("manual order violation", "A, B / 4, 4", "C, B % 2, B / 2 % 2", 4),
                 AllOf(HasSubstr("Switch CustomBroadcast{ring_size=4}: the axes moved from Slice to Time must keep "
                                 "their InSlice order: OutTime must be `C, B % 4`, got `C, B % 2, B / 2 % 2`"),
                       HasSubstr("rule: order preservation")));
  ExpectAccepted(Custom("manual order, corrected", "A, B / 4, 4", "C, B / 2 % 2, B % 2", 4));
  // The literal `B / 2` holds B / 4's digits a second time.
  ExpectRejected(Custom("manual order, literal B / 2", "A, B / 4, 4", "C, B / 2, B % 2", 4),
                 AllOf(HasSubstr("hold the same digits of axis B"), HasSubstr("rule: each axis digit used once")));
}

TEST(SwitchManual, CustomInnermostTime) {
  // Constraint 2: C between the moved axes. The valid form is example 2.
  ExpectRejected(Custom("manual innermost violation", "A / 2, 2, B / 2, 2", "A % 2, C, B % 2", 32),
                 AllOf(HasSubstr("OutTime must be `C, A % 2, B % 2`"), HasSubstr("got `A % 2, C, B % 2`"),
                       HasSubstr("rule: innermost time position")));
}

// ---------------------------------------------------------------------------------------------
// Notes vectors 57-59: InSlice C = 256, InTime A = 8, i8 packet P = 32 bytes (one flit).

constexpr char kVecAxes[] = "A=8, B=8, C=256, D=64, E=1024, F=1024, P=32, Y=8, Z=2";

Case Vec(std::string name, SwitchConfig config, std::string out_slice, std::string out_time, int64_t ring,
         std::string slice = "C", std::string time = "A") {
  Case c{std::move(name), kVecAxes, DType::kI8, std::move(slice), std::move(time), "P", config, std::move(out_slice),
         std::move(out_time), ring, 0};
  c.cycles = ring * Parse(c).in.time.size();  // one flit per packet
  return c;
}

TEST(SwitchNotes, InterTransposeVector57) {
  ExpectAccepted({"notes #57", "A=256, B=8, P=32", DType::kI8, "A", "B", "P", SwitchConfig::InterTranspose(2, 16, 2),
                  "A / 32, B / 2 % 2, A % 16", "B / 4, B % 2, A / 16 % 2", 32, 32 * 8});
}

TEST(SwitchNotes, TransposedBroadcast1Vector58) {
  ExpectAccepted({"notes #58", "A=256, B=16, P=32, Y=8", DType::kI8, "A", "B", "P",
                  SwitchConfig::TransposedBroadcast1(8, 8), "A / 64, Y, A / 8 % 8", "B, A % 8", 64, 64 * 16});
}

TEST(SwitchNotes, ExampleKernelsVector59) {
  ExpectAccepted(Vec("Broadcast1{4,4}", SwitchConfig::Broadcast1(4, 4), "C / 16, 1 # 4, C % 4", "A, C / 4 % 4", 16));
  ExpectAccepted(Vec("Broadcast1{4,64}", SwitchConfig::Broadcast1(4, 64), "1 # 4, C % 64", "A, C / 64", 256));
  ExpectAccepted(Vec("Broadcast01{256,1,1}", SwitchConfig::Broadcast01(256, 1, 1), "F / 4", "E / 4", 256, "E / 4", "1"));
  ExpectAccepted(
      Vec("Broadcast01{2,2,2}", SwitchConfig::Broadcast01(2, 2, 2), "C / 4, D % 4", "A / 2, C / 2 % 2, A % 2, C % 2", 4));
  ExpectAccepted(Vec("Broadcast01{2,2,1}", SwitchConfig::Broadcast01(2, 2, 1), "C / 4, 1 # 4", "A, C / 2 % 2, C % 2", 4));
  ExpectAccepted(Vec("Transpose{16,8}", SwitchConfig::Transpose(16, 8), "C / 128, C % 8, C / 8 % 16", "A", 128,
                     "C / 128, C / 8 % 16, C % 8"));
  ExpectAccepted(Vec("Transpose{4,4}", SwitchConfig::Transpose(4, 4), "C / 16, C % 4, C / 4 % 4", "A", 16, "C / 16, C % 16"));
  ExpectAccepted(Vec("InterTranspose{2,16,2}", SwitchConfig::InterTranspose(2, 16, 2), "C / 32, A / 2 % 2, C % 16",
                     "A / 4, A % 2, C / 16 % 2", 32));
  ExpectAccepted(Vec("InterTranspose{8,32,1}", SwitchConfig::InterTranspose(8, 32, 1), "A, C % 32", "C / 32 % 8", 256));
}

// Notes vector 60: the negative fixtures, each refused by the rule the notes name.
TEST(SwitchNotes, NegativeFixturesVector60) {
  ExpectRejected(Vec("Broadcast1{0,64}", SwitchConfig::Broadcast1(0, 64), "1 # 4, C % 64", "A, C / 64", 0),
                 AllOf(HasSubstr("Switch Broadcast1{slice1=0, slice0=64}: slice1 must be greater than 0, got 0"),
                       HasSubstr("rule: all dimensions must be greater than 0")));
  ExpectRejected(Vec("Broadcast1{3,64}", SwitchConfig::Broadcast1(3, 64), "1 # 4, C % 64", "A, C / 64", 0),
                 AllOf(HasSubstr("Switch slice1 must be a power of 2, got 3"), HasSubstr("rule: slice sub-dimensions")));
  ExpectRejected(Vec("Broadcast1{4,16} slice2 wrong", SwitchConfig::Broadcast1(4, 16), "D % 4, C % 64",
                     "A, C / 16 % 4", 0),
                 AllOf(HasSubstr("OutSlice must be `C / 64, 4, C % 16` (a bare number stands for any fresh broadcast "
                                 "tile of that size), got `D % 4, C % 64`"),
                       HasSubstr("its slice2 part is `D % 4`, expected `C / 64`"),
                       HasSubstr("rule: topology pattern, Broadcast1 gives OutSlice = [slice2, tile(slice1), slice0]")));
  ExpectRejected(Vec("Broadcast1{4,64} tile not new", SwitchConfig::Broadcast1(4, 64), "C / 64, C % 64", "A, C / 64", 0),
                 AllOf(HasSubstr("OutSlice tile(slice1) must be a fresh broadcast tile of size 4, got `C / 64`"),
                       HasSubstr("rule: broadcast tile is new")));
  ExpectRejected(Vec("Broadcast1{4,64} time wrong", SwitchConfig::Broadcast1(4, 64), "1 # 4, C % 64", "A, E % 4", 0),
                 AllOf(HasSubstr("Switch Broadcast1{slice1=4, slice0=64}: OutTime must be `A, C / 64`, got `A, E % 4`"),
                       HasSubstr("its slice1 part is `E % 4`, expected `C / 64`"),
                       HasSubstr("rule: topology pattern, Broadcast1 gives OutTime = [InTime, slice1]")));
  ExpectRejected(Vec("InterTranspose{4,64,3}", SwitchConfig::InterTranspose(4, 64, 3), "A % 4, C % 64", "A, C / 64",
                     0),
                 AllOf(HasSubstr("got InTime::SIZE 8 (split 12 = slice1 * time0)"),
                       HasSubstr("rule: InTime divisible by the time split")));
  ExpectRejected(Vec("Transpose{32,2} time changed", SwitchConfig::Transpose(32, 2), "C / 64, C % 2, C / 2 % 32", "D", 0),
                 AllOf(HasSubstr("OutTime must be `A`, got `D` (size 64, expected 8)"),
                       HasSubstr("rule: topology pattern, Transpose gives OutTime = [InTime]")));
  ExpectRejected(Vec("Transpose{16,8} slice order", SwitchConfig::Transpose(16, 8), "C % 8, C / 128, C / 8 % 16", "A", 0),
                 AllOf(HasSubstr("OutSlice must be `C / 128, C % 8, C / 8 % 16`"),
                       HasSubstr("got `C % 8, C / 128, C / 8 % 16`"), HasSubstr("rule: topology pattern")));
}

// Notes vector 61: CustomBroadcast, accepted with the notes' ring sizes (InTime C = 8, one flit).
constexpr char kV61Axes[] = "A=16, B=16, C=8, P=4, Q=8, R=8, S=256, X=4, Y=2, Z=2, K=32, G=64";

Case V61(std::string slice, std::string out_slice, std::string out_time, int64_t ring, std::string time = "C") {
  return {absl::StrCat("[", slice, "] -> [", out_slice, "] / [", out_time, "]"), kV61Axes, DType::kI8, slice, time, "K",
          SwitchConfig::CustomBroadcast(ring), out_slice, out_time, ring, ring * 8};
}

TEST(SwitchNotes, CustomAcceptedVector61) {
  for (const Case& c : {
           V61("S", "S", "C", 1),
           V61("A, B", "B % 4, B / 4, A % 4, A / 4", "C", 256),
           V61("A, B", "A, B % 4, B / 4", "C", 16),
           V61("R, Q, P", "R, P, Q", "C", 32),
           V61("R, Q, P", "Q, R, P", "C", 256),
           V61("P # 16, Q # 16", "P # 16, Q # 16", "C", 1),
           V61("R # 16, Q # 16", "Q # 16, R # 16", "C", 128),
           V61("R # 16, Q # 16", "Q # 32, R # 8", "C", 128),
           V61("R # 16, Q # 16", "R # 16, Q # 16 % 4, Q # 16 / 4", "C", 16),
           V61("A, B", "A, B / 4, X", "C, B % 4", 4),
           V61("A, B", "A / 2, Y, B / 2, Z", "C, A % 2, B % 2", 32),
           V61("A, B", "A % 4, A / 4, B / 4, X", "C, B % 4", 256),
           V61("R, Q, P", "R, P / 2, Q, Y", "C, P % 2", 32),
           V61("R, Q, P", "R, Q, P / 2, Y", "C, P % 2", 2),
           V61("R, Q, P", "R / 2, Y, Q, P / 2, Z", "C, R % 2, P % 2", 64),
           V61("A, B", "S", "C, A, B", 256),
           V61("R # 16, Q # 16", "R # 16, Q # 16 / 4, X", "C, Q # 16 % 4", 4),  // a padded variant
           V61("G, 1 # 4", "G, X", "C", 4),  // engine-semantics 3.4: a padding slot becomes a tile
       }) {
    ExpectAccepted(c);
  }
}

TEST(SwitchNotes, CustomSlicingFollowsTheManual) {
  // The notes' reference refuses these partial extractions; the manual's example 3 accepts them.
  Case s = V61("S", "S / 4, X", "C, S % 4 = 3", 4);
  s.drops_sliced_rows = true;
  ExpectAccepted(s);
  Case q = V61("R, Q # 32", "R, Q # 32 / 4, X", "C, Q # 32 % 4 = 3", 4);
  q.drops_sliced_rows = true;
  ExpectAccepted(q);
}

TEST(SwitchNotes, CustomRejectedVector61) {
  ExpectRejected(V61("A, B", "A / 2, Y, B / 2, Z", "C, B % 2", 32),
                 AllOf(HasSubstr("input slice 16 holds {A=1}, which no output slice receives"),
                       HasSubstr("rule: no live data dropped")));
  // Replacement: B % 4 neither moves to Time nor stays; X takes its place.
  ExpectRejected(V61("A, B", "A, B / 4, X", "C", 4), HasSubstr("rule: no live data dropped"));
  // [R, P] -> [R, X] spans 32 slices, which this manual's switch refuses before anything else.
  ExpectRejected(V61("R, P", "R, X", "C", 4), HasSubstr("InSlice must span the full cluster"));
}

// ---------------------------------------------------------------------------------------------
// The remaining rules, one failure each.

TEST(SwitchRules, OutSliceMustBeFullCluster) {
  ExpectRejected({"out slice of 32", "A=256, B=64, C=63, X=4", DType::kI8, "A", "B", "C # 64",
                  SwitchConfig::Broadcast1(4, 8), "A / 32, X", "B, A / 8 % 4"},
                 HasSubstr("OutSlice must span the full cluster (256 slices), got `A / 32, X` of size 32"));
}

TEST(SwitchRules, SliceDivisibility) {
  ExpectRejected(Vec("Broadcast1{64,8}", SwitchConfig::Broadcast1(64, 8), "C", "A", 0),
                 AllOf(HasSubstr("InSlice::SIZE must be divisible by (slice1 * slice0), got InSlice::SIZE 256 (slice1 64, "
                                 "slice0 8)"),
                       HasSubstr("rule: slice2")));
}

TEST(SwitchRules, Broadcast01TimeDivisibility) {
  Case c = ManualBroadcast01();
  c.config = SwitchConfig::Broadcast01(2, 2, 3);
  ExpectRejected(c, AllOf(HasSubstr("got InTime::SIZE 64 (split 3 = time0)"), HasSubstr("InTime divisible")));
}

TEST(SwitchRules, PacketMustBe8ByteAligned) {
  Case c = ManualBroadcast01();
  c.axes = absl::StrCat(kB01Axes, ", K=4");
  c.packet = "K";
  ExpectRejected(c, AllOf(HasSubstr("the packet `K` is 4 x i8 = 32 bits, not a multiple of 8 bytes"),
                          HasSubstr("rule: packet size must be 8-byte aligned")));
}

TEST(SwitchRules, TileMustBeWritable) {
  ExpectRejected(Vec("zero-pad tile", SwitchConfig::Broadcast1(4, 4), "C / 16, 1 #{0} 4, C % 4", "A, C / 4 % 4", 0),
                 AllOf(HasSubstr("holds `#{0}` padding"), HasSubstr("rule: a tile may only land on Top padding")));
}

TEST(SwitchRules, TileDigitUsedOnce) {
  Case c = Vec("Z twice", SwitchConfig::Broadcast01(2, 2, 1), "C / 4, Z, Z", "A, C / 2 % 2, C % 2", 0);
  ExpectRejected(c, AllOf(HasSubstr("hold the same digits of axis Z"), HasSubstr("rule: each axis digit used once")));
}

TEST(SwitchRules, ForwardingKeepsSliceAndTime) {
  ExpectRejected({"forward reordered", "A=256, B=64, C=32", DType::kF32, "A", "B", "C", SwitchConfig::Forward(),
                  "A % 2, A / 2", "B"},
                 AllOf(HasSubstr("Switch Forwarding: OutSlice must be `A`, got `A % 2, A / 2`"),
                       HasSubstr("rule: topology pattern, Forwarding gives OutSlice = [InSlice]")));
}

TEST(SwitchRules, InvalidMappingIsReported) {
  MappingScope s(*Axes::Parse(kB01Axes));
  StreamShape in;
  in.slice = s.m("A");
  in.time = s.m("B");
  in.packet = s.m("C # 64");
  absl::StatusOr<SwitchStage> stage = PlanSwitch(in, SwitchConfig::Broadcast01(2, 2, 4), s.m("A / 3"), s.m("B"));
  ASSERT_FALSE(stage.ok());
  EXPECT_THAT(std::string(stage.status().message()),
              HasSubstr("Switch Broadcast01{slice1=2, slice0=2, time0=4}: OutSlice is not a valid mapping"));
}

TEST(SwitchRules, CustomRingSize) {
  Case not_pow2 = Custom("ring 3", "B % 4, B / 4, A % 4, A / 4", "C", 3);
  ExpectRejected(not_pow2, AllOf(HasSubstr("ring_size must be a power of 2, got 3"),
                                 HasSubstr("rule: ring size is a power of 2")));
  Case too_small = Custom("ring 128", "B % 4, B / 4, A % 4, A / 4", "C", 128);
  ExpectRejected(too_small, AllOf(HasSubstr("ring_size 128 was given, but this topology exchanges data within aligned "
                                            "groups of 256 slices; use CustomBroadcast{ring_size=256}"),
                                  HasSubstr("rule: ring size matches the slot sweep")));
  Case zero = Custom("ring 0", "A, B", "C", 0);
  ExpectRejected(zero, HasSubstr("ring_size must be greater than 0, got 0"));
}

TEST(SwitchRules, CustomOutSliceNotFromTime) {
  ExpectRejected(Custom("C in OutSlice", "A, B / 2, C % 2", "C, B % 2", 2),
                 AllOf(HasSubstr("which the input carries in Time"), HasSubstr("rule: OutSlice is sourced from InSlice")));
}

TEST(SwitchRules, CustomMovedPartComesFromSlice) {
  ExpectRejected(Custom("broadcast moved", "A, B / 2, 2", "C, 2", 2),
                 AllOf(HasSubstr("holds a broadcast or padding digit"), HasSubstr("rule: moved axes come from Slice")));
  ExpectRejected(Custom("new axis moved", "A, B", "C, W", 1),
                 AllOf(HasSubstr("holds `W`, which InSlice does not carry"), HasSubstr("rule: moved axes come from Slice")));
}

TEST(SwitchRules, CustomEveryOutputSliceHasASource) {
  // InSlice holds only B % 8 of B (the rest is padding); OutSlice asks for B's upper half as well.
  Case c = Custom("B / 8 unheld", "A, B", "C", 1);
  c.slice = "A, B % 8 # 16";
  ExpectRejected(c, AllOf(HasSubstr("output slice 8 holds {B=8}, but no input slice of `A, B % 8 # 16` holds {B=8}"),
                          HasSubstr("rule: every output slice has a source slice")));
}

// ---------------------------------------------------------------------------------------------
// Regular topologies produce their output on request, and that output is accepted.

TEST(SwitchRegularOutput, MatchesTheManualsMappings) {
  for (const Case& c : {ManualBroadcast01(), Vec("Broadcast1{4,4}", SwitchConfig::Broadcast1(4, 4), "C / 16, 4, C % 4",
                                                 "A, C / 4 % 4", 16),
                        Vec("Transpose{16,8}", SwitchConfig::Transpose(16, 8), "C / 128, C % 8, C / 8 % 16", "A", 128),
                        Vec("InterTranspose{2,16,2}", SwitchConfig::InterTranspose(2, 16, 2),
                            "C / 32, A / 2 % 2, C % 16", "A / 4, A % 2, C / 16 % 2", 32),
                        Vec("TransposedBroadcast1{8,8}", SwitchConfig::TransposedBroadcast1(8, 8), "C / 64, 8, C / 8 % 8",
                            "A, C % 8", 64)}) {
    SCOPED_TRACE(c.name);
    Parsed p = Parse(c);
    absl::StatusOr<std::pair<Mapping, Mapping>> out = RegularSwitchOutput(p.in, c.config);
    ASSERT_TRUE(out.ok()) << out.status();
    EXPECT_TRUE(*Equivalent(out->first, p.out_slice)) << out->first.ToString();
    EXPECT_TRUE(*Equivalent(out->second, p.out_time)) << out->second.ToString();
    ExpectAccepted(c);
  }
  Parsed p = Parse(ManualBroadcast01());
  EXPECT_FALSE(RegularSwitchOutput(p.in, SwitchConfig::CustomBroadcast(4)).ok());
}

// ---------------------------------------------------------------------------------------------
// Config text.

TEST(SwitchConfigText, ParsesEverySpelling) {
  SwitchConfig b01 = SwitchConfig::Broadcast01(2, 2, 4);
  for (const char* text : {"Broadcast01{2,2,4}", "Broadcast01{slice1=2, slice0=2, time0=4}",
                           "SwitchConfig::Broadcast01 { slice1: 2, slice0: 2, time0: 4 }",
                           " broadcast01 { time0 = 4, slice1 = 2, slice0 = 2, } "}) {
    absl::StatusOr<SwitchConfig> c = ParseSwitchConfig(text);
    ASSERT_TRUE(c.ok()) << text << ": " << c.status();
    EXPECT_EQ(*c, b01) << text;
  }
  EXPECT_EQ(*ParseSwitchConfig("Broadcast1{4,8}"), SwitchConfig::Broadcast1(4, 8));
  EXPECT_EQ(*ParseSwitchConfig("Transpose{32, 2}"), SwitchConfig::Transpose(32, 2));
  EXPECT_EQ(*ParseSwitchConfig("InterTranspose{2,16,2}"), SwitchConfig::InterTranspose(2, 16, 2));
  EXPECT_EQ(*ParseSwitchConfig("TransposedBroadcast1{8,8}"), SwitchConfig::TransposedBroadcast1(8, 8));
  EXPECT_EQ(*ParseSwitchConfig("CustomBroadcast{256}"), SwitchConfig::CustomBroadcast(256));
  EXPECT_EQ(*ParseSwitchConfig("SwitchConfig::CustomBroadcast { ring_size: 32 }"), SwitchConfig::CustomBroadcast(32));
  for (const char* text : {"Forwarding", "Forward", "Forwarding{}"}) {
    EXPECT_EQ(*ParseSwitchConfig(text), SwitchConfig::Forward()) << text;
  }
  // Parameter values are the planner's business: zero parses, and PlanSwitch names the rule.
  EXPECT_EQ(*ParseSwitchConfig("Broadcast1{0,64}"), SwitchConfig::Broadcast1(0, 64));
}

TEST(SwitchConfigText, RoundTripsAndDescribes) {
  for (const SwitchConfig& c : {SwitchConfig::Forward(), SwitchConfig::Broadcast01(2, 2, 4), SwitchConfig::Broadcast1(4, 8),
                                SwitchConfig::Transpose(32, 2), SwitchConfig::InterTranspose(2, 16, 2),
                                SwitchConfig::TransposedBroadcast1(8, 8), SwitchConfig::CustomBroadcast(32)}) {
    absl::StatusOr<SwitchConfig> back = ParseSwitchConfig(c.ToString());
    ASSERT_TRUE(back.ok()) << c.ToString() << ": " << back.status();
    EXPECT_EQ(*back, c) << c.ToString();
  }
  EXPECT_EQ(SwitchConfig::Broadcast01(2, 2, 4).ToString(), "Broadcast01{slice1=2, slice0=2, time0=4}");
  EXPECT_EQ(SwitchConfig::CustomBroadcast(256).ToString(), "CustomBroadcast{ring_size=256}");
  EXPECT_EQ(SwitchConfig::Forward().ToString(), "Forwarding");
  absl::StatusOr<SwitchStage> stage = Plan(ManualBroadcast01());
  ASSERT_TRUE(stage.ok()) << stage.status();
  EXPECT_EQ(stage->Describe(), "Broadcast01{slice1=2, slice0=2, time0=4} ring 4");
}

TEST(SwitchConfigText, Errors) {
  struct Bad {
    const char* text;
    const char* message;
  };
  for (const Bad& bad : {Bad{"Broadcast02{1}", "unknown topology `broadcast02`"},
                         Bad{"Broadcast01{2,2}", "Broadcast01 needs slice1, slice0, time0; time0 is missing"},
                         Bad{"Broadcast01{2,2,4,5}", "Broadcast01 takes 3 parameter(s), got 4"},
                         Bad{"Broadcast1{slice2=4, slice0=8}", "Broadcast1 has no parameter `slice2`"},
                         Bad{"Broadcast1{4, x}", "`x` is not an integer (parameter slice0)"},
                         Bad{"Broadcast1{4, 8", "missing the closing `}`"},
                         Bad{"Broadcast1{4, slice1=8}", "parameter slice1 is given twice"},
                         Bad{"Forwarding{1}", "Forwarding takes 0 parameter(s), got 1"},
                         Bad{"", "unknown topology ``"}}) {
    absl::StatusOr<SwitchConfig> c = ParseSwitchConfig(bad.text);
    ASSERT_FALSE(c.ok()) << bad.text;
    EXPECT_THAT(std::string(c.status().message()), AllOf(HasSubstr(bad.message), HasSubstr("expected e.g.")))
        << bad.text;
  }
}

}  // namespace
}  // namespace visa
