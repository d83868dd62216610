// Disk cache keys name kernels by their spec (compiler.h: KernelIdentity): two kernels whose specs
// differ in any one field, or that are compiled for another target, at other levels or by another
// version of the IR generators, get different keys. A field a key left out would let a later
// process load one kernel's code for another. Table-driven: per kernel kind a base spec whose
// fields are all set, then one mutation per field (to a value the generator tells apart).
#include <cstdint>
#include <functional>
#include <set>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "jit/compiler.h"
#include "jit/contraction_epilogue.h"
#include "jit/contraction_kernel.h"
#include "jit/element_op.h"
#include "jit/lane_contraction_kernel.h"
#include "jit/move_kernel.h"
#include "jit/object_cache.h"
#include "jit/vector_kernel.h"
#include "jit/vector_reduce_kernel.h"

namespace visa::jit {
namespace {

CodegenConfig BaseConfig() {
  return {"19.1.7", "znver5", "+avx2,+avx512f,+avx512vnni", "per-module levels", "ir generators 1 sources 0123"};
}

std::string DiskKey(const std::string& kernel_key, Optimization optimization = {},
                    const CodegenConfig& config = BaseConfig()) {
  return ObjectKey(config, KernelIdentity(kernel_key, optimization));
}

template <typename Spec>
struct Mutation {
  const char* field;
  std::function<void(Spec&)> apply;
};

// Every mutation's key differs from the base's and from every other mutation's.
template <typename Spec>
void ExpectEachFieldChangesTheKey(const Spec& base, const std::vector<Mutation<Spec>>& mutations,
                                  const std::function<std::string(const Spec&)>& key_of) {
  const std::string base_key = DiskKey(key_of(base));
  ASSERT_TRUE(IsObjectKey(base_key));
  EXPECT_EQ(DiskKey(key_of(base)), base_key) << "a key is a function of the spec";
  std::set<std::string> seen = {base_key};
  for (const Mutation<Spec>& m : mutations) {
    Spec changed = base;
    m.apply(changed);
    const std::string key = DiskKey(key_of(changed));
    EXPECT_NE(key, base_key) << "changing `" << m.field << "` keeps the key: " << key_of(changed);
    EXPECT_TRUE(seen.insert(key).second) << "`" << m.field << "` gives another mutation's key";
  }
}

template <typename Spec>
std::string KeyOf(const Spec& spec) {
  return spec.Key();
}

ElementOp BaseTable() { return TableOp(DType::kF8E4M3, DType::kBF16, {0x0000, 0x3f80, 0x4000, 0xbf80}); }

std::vector<Mutation<ElementOp>> ElementOpMutations() {
  return {
      {"kind", [](ElementOp& op) { op.kind = ElementOp::Kind::kZeroPoint; }},
      {"from", [](ElementOp& op) { op.from = DType::kF8E5M2; }},
      {"to", [](ElementOp& op) { op.to = DType::kF32; }},
      {"table (an entry)", [](ElementOp& op) { op.table[2] = 0x4040; }},
      {"table (its length)", [](ElementOp& op) { op.table.push_back(0); }},
  };
}

std::vector<Mutation<ElementOp>> ZeroPointMutations() {
  return {
      {"zero_points[0]", [](ElementOp& op) { op.zero_points[0] = 4; }},
      {"zero_points[1]", [](ElementOp& op) { op.zero_points[1] = -2; }},
      {"second_from", [](ElementOp& op) { op.second_from = 64; }},
  };
}

TEST(SpecKey, ElementOpFields) {
  ExpectEachFieldChangesTheKey<ElementOp>(BaseTable(), ElementOpMutations(), KeyOf<ElementOp>);
  ExpectEachFieldChangesTheKey<ElementOp>(ZeroPointOp(DType::kI8, DType::kI9, 3, -1, 32), ZeroPointMutations(),
                                          KeyOf<ElementOp>);
}

MoveNest BaseNest() { return MoveNest{{{8, 1, 4}, {16, 8, 1}}}; }

TEST(SpecKey, MoveSpecFields) {
  const MoveSpec base{BaseNest(), BaseTable()};
  ExpectEachFieldChangesTheKey<MoveSpec>(
      base,
      {
          {"nest (absent: a run-list kernel)", [](MoveSpec& s) { s.nest.reset(); }},
          {"nest level count", [](MoveSpec& s) { s.nest->levels[0].count = 9; }},
          {"nest level dst stride", [](MoveSpec& s) { s.nest->levels[1].dst_stride = 16; }},
          {"nest level src stride", [](MoveSpec& s) { s.nest->levels[0].src_stride = 2; }},
          {"nest depth", [](MoveSpec& s) { s.nest->levels.push_back({2, 128, 64}); }},
          {"op", [](MoveSpec& s) { s.op = CopyOp(DType::kF8E4M3); }},
      },
      KeyOf<MoveSpec>);
}

TEST(SpecKey, EpilogueFields) {
  ContractionEpilogue base;
  base.nest = BaseNest();
  base.op = ElementOp{ElementOp::Kind::kF32ToBf16, DType::kF32, DType::kBF16, {}, {0, 0}, -1};
  ExpectEachFieldChangesTheKey<ContractionEpilogue>(
      base,
      {
          {"nest", [](ContractionEpilogue& e) { e.nest.levels[0].count = 4; }},
          {"op", [](ContractionEpilogue& e) { e.op.kind = ElementOp::Kind::kF32ToBf16Relu; }},
      },
      [](const ContractionEpilogue& e) { return EpilogueKey(e); });
}

ContractionSpec BaseContraction() {
  ContractionSpec s;
  s.x_type = DType::kBF16;
  s.w_type = DType::kBF16;
  s.acc_type = DType::kF32;
  s.op = ReduceOp::kAdd;
  s.outer = 2;
  s.rows = 4;
  s.times = 3;
  s.packet = 8;
  s.group = 4;
  s.out_times = 2;
  s.out_packet = 2;
  s.retained = {0, 1, -1};
  s.target = {0, 1};
  s.live_outer = {1, 1};
  s.live_row = {1, 1, 1, 0};
  s.live_packet = {1, 1, 1, 1, 1, 1, 1, 1};
  s.w_outer = 1024;
  s.w_row = 256;
  s.w_time = {0, 8, 16};
  s.w_packet = {0, 1, 2, 3, 4, 5, 6, 7};
  return s;
}

TEST(SpecKey, ContractionSpecFields) {
  using S = ContractionSpec;
  ExpectEachFieldChangesTheKey<S>(
      BaseContraction(),
      {
          {"x_type", [](S& s) { s.x_type = DType::kF8E4M3; }},
          {"w_type", [](S& s) { s.w_type = DType::kF8E5M2; }},
          {"acc_type", [](S& s) { s.acc_type = DType::kBF16; }},
          {"op", [](S& s) { s.op = ReduceOp::kMax; }},
          {"outer", [](S& s) { s.outer = 3; }},
          {"rows", [](S& s) { s.rows = 8; }},
          {"times", [](S& s) { s.times = 4; }},
          {"packet", [](S& s) { s.packet = 16; }},
          {"group", [](S& s) { s.group = 2; }},
          {"out_times", [](S& s) { s.out_times = 3; }},
          {"out_packet", [](S& s) { s.out_packet = 4; }},
          {"retained", [](S& s) { s.retained[2] = 1; }},
          {"target", [](S& s) { s.target[1] = -1; }},
          {"live_outer", [](S& s) { s.live_outer[0] = 0; }},
          {"live_row", [](S& s) { s.live_row[3] = 1; }},
          {"live_packet", [](S& s) { s.live_packet[7] = 0; }},
          {"w_outer", [](S& s) { s.w_outer = 2048; }},
          {"w_row", [](S& s) { s.w_row = 128; }},
          {"w_time", [](S& s) { s.w_time[1] = 9; }},
          {"w_packet", [](S& s) { s.w_packet[0] = 1; }},
      },
      KeyOf<S>);
}

LaneContractionSpec BaseLane() {
  LaneContractionSpec s;
  s.dm_type = DType::kBF16;
  s.fetch = CopyOp(DType::kBF16);
  s.x_type = DType::kBF16;
  s.w_type = DType::kBF16;
  s.acc_type = DType::kF32;
  s.op = ReduceOp::kAdd;
  s.rows = 4;
  s.packet = 8;
  s.group = 8;
  s.out_times = 16;
  s.out_packet = 1;
  s.live_outer = {1, 1};
  s.live_row = {1, 1, 1, 1};
  s.live_packet = std::vector<uint8_t>(8, 1);
  s.target = {0};
  s.w_offset = {0, 8};
  s.w_packet = {0, 1, 2, 3, 4, 5, 6, 7};
  s.x_lane = std::vector<int64_t>(16, 0);
  for (int64_t l = 0; l < 16; ++l) s.x_lane[l] = 8 * l;
  s.x_packet = {0, 1, 2, 3, 4, 5, 6, 7};
  s.acc_lane = s.x_lane;
  s.step_x = {0, 0};
  s.step_w = {0, 1};
  s.step_acc = {0, 0};
  s.fma_first_level = false;
  s.slice_accumulators = false;
  return s;
}

TEST(SpecKey, LaneContractionSpecFields) {
  using S = LaneContractionSpec;
  ExpectEachFieldChangesTheKey<S>(
      BaseLane(),
      {
          {"dm_type", [](S& s) { s.dm_type = DType::kF32; }},
          {"fetch", [](S& s) { s.fetch = BaseTable(); }},
          {"x_type", [](S& s) { s.x_type = DType::kF8E4M3; }},
          {"w_type", [](S& s) { s.w_type = DType::kF8E5M2; }},
          {"acc_type", [](S& s) { s.acc_type = DType::kI32; }},
          {"op", [](S& s) { s.op = ReduceOp::kMax; }},
          {"rows", [](S& s) { s.rows = 8; }},
          {"packet", [](S& s) { s.packet = 16; }},
          {"group", [](S& s) { s.group = 4; }},
          {"out_times", [](S& s) { s.out_times = 32; }},
          {"out_packet", [](S& s) { s.out_packet = 2; }},
          {"live_outer", [](S& s) { s.live_outer[1] = 0; }},
          {"live_row", [](S& s) { s.live_row[0] = 0; }},
          {"live_packet", [](S& s) { s.live_packet[3] = 0; }},
          {"target", [](S& s) { s.target[0] = -1; }},
          {"w_offset", [](S& s) { s.w_offset[1] = 16; }},
          {"w_packet", [](S& s) { s.w_packet[7] = 8; }},
          {"x_lane", [](S& s) { s.x_lane[15] = -1; }},
          {"x_packet", [](S& s) { s.x_packet[1] = 2; }},
          {"acc_lane", [](S& s) { s.acc_lane[3] = -1; }},
          {"step_x", [](S& s) { s.step_x[1] = 1; }},
          {"step_w", [](S& s) { s.step_w[1] = 0; }},
          {"step_acc", [](S& s) { s.step_acc[1] = 1; }},
          {"fma_first_level", [](S& s) { s.fma_first_level = true; }},
          {"slice_accumulators", [](S& s) { s.slice_accumulators = true; }},
      },
      KeyOf<S>);
}

VectorKernelSpec BaseVector() {
  VectorKernelSpec s;
  s.compare = std::array<InputCmp, 4>{InputCmp::Equal(1), InputCmp::Less(2), InputCmp::Greater(3), InputCmp::True()};
  VectorKernelSpec::Op add;
  add.fn = VeFn::kAddFxp;
  add.symbol = "visa_ve_add_fxp";
  add.arity = 2;
  add.from = {0, 1, 2};
  add.conversion = false;
  add.param = 5;
  add.guard = std::nullopt;
  add.slots = {{0x00ff, 7u, -1, 1}, {0xff00, std::nullopt, 0, 2}};
  s.ops = {add};
  return s;
}

TEST(SpecKey, VectorKernelSpecFields) {
  using S = VectorKernelSpec;
  ExpectEachFieldChangesTheKey<S>(
      BaseVector(),
      {
          {"compare (absent)", [](S& s) { s.compare.reset(); }},
          {"compare kind", [](S& s) { (*s.compare)[0].kind = InputCmp::Kind::kLessUnsigned; }},
          {"compare dtype", [](S& s) { (*s.compare)[1].dtype = DType::kF32; }},
          {"compare value", [](S& s) { (*s.compare)[2].value = 4; }},
          {"ops (one more)", [](S& s) { s.ops.push_back(s.ops[0]); }},
          {"op fn", [](S& s) { s.ops[0].fn = VeFn::kSubFxp; }},
          {"op symbol", [](S& s) { s.ops[0].symbol = "visa_ve_sub_fxp"; }},
          {"op arity", [](S& s) { s.ops[0].arity = 3; }},
          {"op from[0]", [](S& s) { s.ops[0].from[0] = 1; }},
          {"op from[1]", [](S& s) { s.ops[0].from[1] = 0; }},
          {"op from[2]", [](S& s) { s.ops[0].from[2] = 0; }},
          {"op conversion", [](S& s) { s.ops[0].conversion = true; }},
          {"op param", [](S& s) { s.ops[0].param = 6; }},
          {"op guard", [](S& s) { s.ops[0].guard = 0x0f0f; }},
          {"slot admits", [](S& s) { s.ops[0].slots[0].admits = 0x00fe; }},
          {"slot constant", [](S& s) { s.ops[0].slots[0].constant = 8u; }},
          {"slot image", [](S& s) { s.ops[0].slots[1].image = 1; }},
          {"slot o1", [](S& s) { s.ops[0].slots[1].o1 = 3; }},
          {"slots (one more)", [](S& s) { s.ops[0].slots.push_back({0x0001, 1u, -1, 0}); }},
      },
      KeyOf<S>);
}

TEST(SpecKey, ZipKernelSpecFields) {
  using S = ZipKernelSpec;
  ExpectEachFieldChangesTheKey<S>(S{"visa_ve_add_fxp", {0, 1}},
                                  {
                                      {"symbol", [](S& s) { s.symbol = "visa_ve_mul_fxp"; }},
                                      {"from[0]", [](S& s) { s.from[0] = 1; }},
                                      {"from[1]", [](S& s) { s.from[1] = 2; }},
                                  },
                                  KeyOf<S>);
}

TEST(SpecKey, IntraReduceKernelSpecFields) {
  using S = IntraReduceKernelSpec;
  S base;
  base.op = VeReduceOp::kAdd;
  base.f32 = false;
  base.packet_reduced = false;
  base.valid_counts = false;
  base.slices = 4;
  base.out_steps = 2;
  base.out_time_of = {0, 1, 0, -1};
  ExpectEachFieldChangesTheKey<S>(base,
                                  {
                                      {"op", [](S& s) { s.op = VeReduceOp::kMax; }},
                                      {"f32", [](S& s) { s.f32 = true; }},
                                      {"packet_reduced", [](S& s) { s.packet_reduced = true; }},
                                      {"valid_counts", [](S& s) { s.valid_counts = true; }},
                                      {"slices", [](S& s) { s.slices = 8; }},
                                      {"out_steps", [](S& s) { s.out_steps = 3; }},
                                      {"out_time_of", [](S& s) { s.out_time_of[3] = 1; }},
                                  },
                                  KeyOf<S>);
}

TEST(SpecKey, InterReduceKernelSpecFields) {
  using S = InterReduceKernelSpec;
  S base;
  base.op = VeReduceOp::kAdd;
  base.f32 = true;
  base.in_positions = 16;
  base.sources = {{0, 4}, {1, 5}};
  ExpectEachFieldChangesTheKey<S>(base,
                                  {
                                      {"op", [](S& s) { s.op = VeReduceOp::kMul; }},
                                      {"f32", [](S& s) { s.f32 = false; }},
                                      {"in_positions", [](S& s) { s.in_positions = 32; }},
                                      {"sources (an input)", [](S& s) { s.sources[1][1] = 6; }},
                                      {"sources (their order)", [](S& s) { std::swap(s.sources[0][0], s.sources[0][1]); }},
                                      {"sources (one more)", [](S& s) { s.sources.push_back({2}); }},
                                  },
                                  KeyOf<S>);
}

// Kernels of different kinds never share a key, whatever their specs.
TEST(SpecKey, KindsNeverShareAKey) {
  const std::vector<std::string> keys = {
      MoveSpec{BaseNest(), BaseTable()}.Key(), MoveSpec{std::nullopt, CopyOp(DType::kI8)}.Key(),
      BaseContraction().Key(), BaseLane().Key(), BaseVector().Key(), ZipKernelSpec{"visa_ve_add_fxp", {0, 1}}.Key(),
      IntraReduceKernelSpec{}.Key(), InterReduceKernelSpec{}.Key(),
      EpilogueKey(ContractionEpilogue{BaseNest(), BaseTable(), {}, 0, 0, 0})};
  std::set<std::string> disk_keys;
  for (const std::string& key : keys) EXPECT_TRUE(disk_keys.insert(DiskKey(key)).second) << key;
}

// What the key names besides the spec: the target, the levels, the generators' version.
TEST(SpecKey, TargetLevelsAndGeneratorFields) {
  const std::string spec = BaseLane().Key();
  using C = CodegenConfig;
  const std::vector<Mutation<C>> config_fields = {
      {"llvm_version", [](C& c) { c.llvm_version = "19.1.8"; }},
      {"cpu", [](C& c) { c.cpu = "znver4"; }},
      {"features", [](C& c) { c.features = "+avx2,+avx512f"; }},
      {"optimization", [](C& c) { c.optimization = "per-module levels slp"; }},
      {"generator (version)", [](C& c) { c.generator = "ir generators 2 sources 0123"; }},
      {"generator (sources)", [](C& c) { c.generator = "ir generators 1 sources 4567"; }},
  };
  const std::string base_key = DiskKey(spec);
  std::set<std::string> seen = {base_key};
  for (const Mutation<C>& m : config_fields) {
    C config = BaseConfig();
    m.apply(config);
    EXPECT_TRUE(seen.insert(DiskKey(spec, Optimization{}, config)).second) << m.field;
  }
  for (Optimization levels : {Optimization{IrPipeline::kNone, 3}, Optimization{IrPipeline::kO2, 3},
                              Optimization{IrPipeline::kKernel, 2}, Optimization{IrPipeline::kKernel, 0}}) {
    EXPECT_TRUE(seen.insert(DiskKey(spec, levels)).second)
        << "levels " << static_cast<int>(levels.ir) << " / " << levels.codegen;
  }
}

// A field added to a spec must be added to its Key() and to the table above; the sizes say when
// one was (this host's ABI; update them with the table).
TEST(SpecKey, SpecsHaveTheFieldsTheTablesCover) {
  EXPECT_EQ(sizeof(ElementOp), 56u) << "ElementOp changed: is every field in Key() and ElementOpMutations()?";
  EXPECT_EQ(sizeof(MoveNest), 24u) << "MoveNest changed: is every field in ToString() and MoveSpecFields?";
  EXPECT_EQ(sizeof(ContractionSpec), 256u) << "ContractionSpec changed: is every field in Key() and the table?";
  EXPECT_EQ(sizeof(LaneContractionSpec), 416u) << "LaneContractionSpec changed: is every field in Key() and the table?";
  EXPECT_EQ(sizeof(VectorKernelSpec::Op), 80u) << "VectorKernelSpec::Op changed: is every field in Key() and the table?";
  EXPECT_EQ(sizeof(VectorKernelSpec::Slot), 20u) << "VectorKernelSpec::Slot changed: is every field in Key() and the table?";
  EXPECT_EQ(sizeof(IntraReduceKernelSpec), 48u) << "IntraReduceKernelSpec changed: is every field in Key() and the table?";
  EXPECT_EQ(sizeof(InterReduceKernelSpec), 40u) << "InterReduceKernelSpec changed: is every field in Key() and the table?";
}

}  // namespace
}  // namespace visa::jit
