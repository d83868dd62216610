// The JIT's compiled Vector Engine reductions (jit/vector_reduce_kernel.h) against the
// interpreter's block functions, bit for bit, on awkward shapes: R not a power of two (R = 13, 7,
// 17), the Valid Count Generator's counts (a partial flit, flits of count 0), identity padding,
// several accumulator slots, every reduce op on f32 and i32, inputs full of NaN, signed zeros,
// infinities and saturating integers; the Inter-Slice Block's dummy, broadcast and promotion fills;
// and both chain orders (intra then inter, inter then intra) through whole programs. Every run
// checks JitStats::compiled_reductions, so a silent fall-back to the interpreter's functions fails.
// A few results are also checked against host computations by tensor index.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>

#include "dsl/inter_slice_reduce.h"
#include "dsl/mapping_parser.h"
#include "dsl/status_macros.h"
#include "dsl/vector_reduce.h"
#include "interp/interpreter.h"
#include "interp/vector_reduce.h"
#include "interp/vector_reduce_stage.h"
#include "jit/jit_backend.h"
#include "jit/kernel_cache.h"
#include "jit/vector_reduce_stage.h"
#include "runtime/tensor_unit.h"
#include "runtime/transfer.h"

namespace visa {
namespace {

constexpr int32_t kMaxI = std::numeric_limits<int32_t>::max();
constexpr int32_t kMinI = std::numeric_limits<int32_t>::min();

uint32_t B(int32_t v) { return std::bit_cast<uint32_t>(v); }
uint32_t B(float v) { return std::bit_cast<uint32_t>(v); }
int32_t I(uint32_t v) { return std::bit_cast<int32_t>(v); }

// Lanes drawn mostly from the values where orders and libm choices show: NaN, +-0, +-inf, the
// integer extremes, a denormal, values whose sums round.
std::vector<uint32_t> AwkwardLanes(int64_t n, uint32_t seed) {
  const float inf = std::numeric_limits<float>::infinity();
  const std::vector<uint32_t> special = {
      B(0.0f), B(-0.0f), B(inf), B(-inf), B(std::numeric_limits<float>::quiet_NaN()), 0xffc00001u, B(1e-45f),
      B(1.0f), B(-1.0f), B(3.0e38f), B(-3.0e38f), B(1e-8f), B(kMaxI), B(kMinI), B(kMaxI - 1), B(int32_t{-1}),
      B(int32_t{1})};
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> pick(0, 3);
  std::uniform_int_distribution<size_t> which(0, special.size() - 1);
  std::uniform_real_distribution<float> real(-100.0f, 100.0f);
  std::vector<uint32_t> lanes(static_cast<size_t>(n));
  for (uint32_t& lane : lanes) {
    const int kind = pick(rng);
    if (kind == 0) lane = special[which(rng)];
    else if (kind == 1) lane = static_cast<uint32_t>(rng());
    else lane = B(real(rng));
  }
  return lanes;
}

std::vector<uint8_t> Bytes(const std::vector<uint32_t>& lanes) {
  std::vector<uint8_t> bytes(4 * lanes.size());
  std::memcpy(bytes.data(), lanes.data(), bytes.size());
  return bytes;
}

std::vector<uint32_t> Lanes(const std::vector<uint8_t>& bytes) {
  std::vector<uint32_t> lanes(bytes.size() / 4);
  std::memcpy(lanes.data(), bytes.data(), bytes.size());
  return lanes;
}

class VectorReduceJitTest : public ::testing::Test {
 protected:
  void SetUp() override {
    kernels_ = *jit::KernelCache::Create(2);
    ASSERT_NE(kernels_, nullptr);
  }
  void Use(const std::string& axes) { scope_ = std::make_unique<MappingScope>(*Axes::Parse(axes)); }
  Mapping m(const std::string& text) { return scope_->m(text); }
  StreamShape Shape(DType dtype, const std::string& slice, const std::string& time, const std::string& packet) {
    return StreamShape{dtype, m("1"), m("1 # 2"), m(slice), m(time), m(packet), std::nullopt};
  }
  absl::StatusOr<IntraSliceReduceStage> Intra(DType dtype, const std::string& slice, const std::string& time,
                                              const std::string& packet8, const std::string& packet4,
                                              const std::string& out_time, const std::string& out_packet,
                                              VeReduceOp op, ReducePadding padding = ReducePadding::kValidCount) {
    return PlanIntraSliceReduce(Shape(dtype, slice, time, packet8), Narrowing::kTrim, Shape(dtype, slice, time, packet4),
                                "R", m(out_time), m(out_packet), op, padding);
  }

  // The compiled reduce and the interpreter's on the same awkward input, compared bit for bit;
  // returns the compiled result.
  std::vector<uint32_t> ExpectIntraAgrees(const IntraSliceReduceStage& stage, uint32_t seed) {
    const std::vector<uint32_t> in = AwkwardLanes(stage.in.Full().size(), seed);
    const std::vector<uint32_t> expected = interp::IntraSliceReduceStream(stage, in);
    VeStep step;
    step.kind = VeStep::Kind::kIntraReduce;
    step.out = stage.out;
    step.intra_reduce = std::make_shared<IntraSliceReduceStage>(stage);
    return RunCompiled(step, in, expected, stage.Describe());
  }
  std::vector<uint32_t> ExpectInterAgrees(const InterSliceReduceStage& stage, uint32_t seed) {
    const std::vector<uint32_t> in = AwkwardLanes(stage.in.Full().size(), seed);
    const std::vector<uint32_t> expected = interp::InterSliceReduceStream(stage, in);
    VeStep step;
    step.kind = VeStep::Kind::kInterReduce;
    step.out = stage.out;
    step.inter_reduce = std::make_shared<InterSliceReduceStage>(stage);
    return RunCompiled(step, in, expected, stage.Describe());
  }

  std::vector<uint32_t> RunCompiled(const VeStep& step, const std::vector<uint32_t>& in,
                                    const std::vector<uint32_t>& expected, const std::string& what) {
    const int64_t before = kernels_->stats().compiled_reductions;
    absl::StatusOr<std::vector<uint8_t>> out = jit::RunReduceStep(*kernels_, step, Bytes(in));
    EXPECT_TRUE(out.ok()) << out.status();
    if (!out.ok()) return {};
    EXPECT_EQ(kernels_->stats().compiled_reductions, before + 1) << "the reduce did not run compiled: " << what;
    const std::vector<uint32_t> got = Lanes(*out);
    EXPECT_EQ(got.size(), expected.size());
    for (size_t i = 0; i < std::min(got.size(), expected.size()); ++i) {
      if (got[i] != expected[i]) {
        ADD_FAILURE() << what << ": lane " << i << " compiled 0x" << std::hex << got[i] << ", interpreter 0x"
                      << expected[i];
        break;
      }
    }
    return got;
  }

  std::unique_ptr<jit::KernelCache> kernels_;
  std::unique_ptr<MappingScope> scope_;
};

const VeReduceOp kIntraOps[] = {VeReduceOp::kAddSat, VeReduceOp::kAdd, VeReduceOp::kMax, VeReduceOp::kMin};

// The manual's four layouts, every op of both dtypes.
TEST_F(VectorReduceJitTest, TheManualsExamplesOnEveryOp) {
  struct Case {
    std::string axes, slice, time, packet8, packet4, out_time, out_packet;
    ReducePadding padding = ReducePadding::kValidCount;
  };
  const Case cases[] = {
      {"A = 8, R = 16", "A / 2", "R", "A % 2 # 8", "A % 2 # 4", "1", "A % 2 # 4"},        // Reduce in Time
      {"A = 8, R = 4", "A / 2", "A % 2", "R # 8", "R", "A % 2", "1 # 4"},                  // in Packet only
      {"A = 8, R = 16", "A / 2", "R / 4", "R % 4 # 8", "R % 4", "1", "1 # 4"},             // Time and Packet
      {"R = 13", "R # 32 / 8", "R # 32 / 4 % 2", "R # 32 % 4 # 8", "R # 32 % 4", "1", "1 # 4",  // Slice, Time, Packet
       ReducePadding::kIdentity},
  };
  uint32_t seed = 1;
  for (const Case& c : cases) {
    Use(c.axes);
    for (DType dtype : {DType::kI32, DType::kF32}) {
      int ran = 0;
      for (VeReduceOp op : kIntraOps) {
        absl::StatusOr<IntraSliceReduceStage> stage =
            Intra(dtype, c.slice, c.time, c.packet8, c.packet4, c.out_time, c.out_packet, op, c.padding);
        if (!stage.ok()) continue;  // an op of the other dtype
        ExpectIntraAgrees(*stage, seed++);
        ++ran;
      }
      EXPECT_EQ(ran, 3) << c.axes << ": three ops per dtype (i32 AddSat / Max / Min, f32 Add / Max / Min)";
    }
  }
}

// R = 13 over Time and Packet with the VCG: the last flit has 1 valid lane, the rest of the padded
// Time none; also R = 7 (a flit of 3) and several slots (B kept in Time).
TEST_F(VectorReduceJitTest, ValidCountsOnRNotAPowerOfTwo) {
  uint32_t seed = 100;
  for (const char* axes : {"R = 13, A = 16", "R = 7, A = 16", "R = 17, A = 16"}) {
    Use(axes);
    for (DType dtype : {DType::kI32, DType::kF32}) {
      for (VeReduceOp op : kIntraOps) {
        absl::StatusOr<IntraSliceReduceStage> tree =
            Intra(dtype, "A", "R # 32 / 4", "R # 32 % 4 # 8", "R # 32 % 4", "1", "1 # 4", op);
        if (!tree.ok()) continue;
        ASSERT_TRUE(tree->vcg.has_value()) << tree->Describe();
        ExpectIntraAgrees(*tree, seed++);
      }
    }
  }
  // The counts the kernel consumed: R = 13 in flits of 4, padded to 8 flits.
  Use("R = 13, A = 16");
  auto stage = Intra(DType::kI32, "A", "R # 32 / 4", "R # 32 % 4 # 8", "R # 32 % 4", "1", "1 # 4", VeReduceOp::kAddSat);
  ASSERT_TRUE(stage.ok()) << stage.status();
  EXPECT_EQ(interp::IntraSliceValidCounts(*stage, 0), (std::vector<int>{4, 4, 4, 1, 0, 0, 0, 0}));
}

// The VCG's "Slice + Time" example: R = 17 spread over Slice and Time, some slices' last flits
// hold count 0; Packet preserved (lanes accumulate on their own).
TEST_F(VectorReduceJitTest, SliceTimeValidCountsWithLanesKept) {
  Use("A = 4, R = 17, X = 32");
  for (VeReduceOp op : {VeReduceOp::kAddSat, VeReduceOp::kMax, VeReduceOp::kMin}) {
    auto stage = Intra(DType::kI32, "X, R # 24 / 3", "R # 24 % 3", "A # 8", "A", "1", "A", op);
    ASSERT_TRUE(stage.ok()) << stage.status();
    ExpectIntraAgrees(*stage, 200 + static_cast<int>(op));
  }
  for (VeReduceOp op : {VeReduceOp::kAdd, VeReduceOp::kMax, VeReduceOp::kMin}) {
    auto stage = Intra(DType::kF32, "X, R # 24 / 3", "R # 24 % 3", "A # 8", "A", "1", "A", op);
    ASSERT_TRUE(stage.ok()) << stage.status();
    ExpectIntraAgrees(*stage, 210 + static_cast<int>(op));
  }
}

// Eight accumulator slots (Time [R, A % 2, B % 4] -> [A % 2, B % 4]), the input steps of a slot
// interleaved with the others'; and enough slices that two threads share the blocks.
TEST_F(VectorReduceJitTest, SeveralSlotsAndManyBlocks) {
  Use("A = 4, B = 8, R = 13, S = 2048");
  for (DType dtype : {DType::kI32, DType::kF32}) {
    for (VeReduceOp op : kIntraOps) {
      auto slots = PlanIntraSliceReduce(Shape(dtype, "A / 2", "R, A % 2, B % 4", "B / 4 # 8"), Narrowing::kTrim,
                                        Shape(dtype, "A / 2", "R, A % 2, B % 4", "B / 4 # 4"), "R", m("A % 2, B % 4"),
                                        m("B / 4 # 4"), op);
      if (!slots.ok()) continue;
      EXPECT_EQ(slots->slots, 8);
      ExpectIntraAgrees(*slots, 300 + static_cast<int>(op));
      auto many = Intra(dtype, "S", "R # 16 / 4", "R # 16 % 4 # 8", "R # 16 % 4", "1", "1 # 4", op);
      ASSERT_TRUE(many.ok()) << many.status();
      ExpectIntraAgrees(*many, 310 + static_cast<int>(op));
    }
  }
}

// Independent host values: i32 AddSat sums by tensor index (R = 13 with the VCG) and the tree's
// order for f32 (((a + b) + (c + d)) then across time), which a left-to-right sum would round
// differently.
TEST_F(VectorReduceJitTest, ResultsAgainstHostComputations) {
  Use("R = 13, A = 2");
  auto sum = Intra(DType::kI32, "A", "R # 16 / 4", "R # 16 % 4 # 8", "R # 16 % 4", "1", "1 # 4", VeReduceOp::kAddSat);
  ASSERT_TRUE(sum.ok()) << sum.status();
  // Two clusters of two slices, each 4 flits of 4 lanes; padding lanes hold garbage.
  ASSERT_EQ(sum->in.Full().size(), 2 * 2 * 4 * 4);
  std::vector<uint32_t> in(2 * 2 * 4 * 4, B(int32_t{1000000}));
  int32_t expected[2] = {0, 0};
  for (int a = 0; a < 2; ++a) {
    for (int r = 0; r < 13; ++r) {
      for (int cluster = 0; cluster < 2; ++cluster) in[cluster * 32 + a * 16 + r] = B(int32_t{a * 100 + r});
      expected[a] += a * 100 + r;
    }
  }
  VeStep step;
  step.kind = VeStep::Kind::kIntraReduce;
  step.out = sum->out;
  step.intra_reduce = std::make_shared<IntraSliceReduceStage>(*sum);
  auto out = jit::RunReduceStep(*kernels_, step, Bytes(in));
  ASSERT_TRUE(out.ok()) << out.status();
  std::vector<uint32_t> lanes = Lanes(*out);
  ASSERT_EQ(lanes.size(), 16u);
  EXPECT_EQ(I(lanes[0]), expected[0]);
  EXPECT_EQ(I(lanes[4]), expected[1]);
  EXPECT_EQ(I(lanes[8]), expected[0]);
  EXPECT_EQ(I(lanes[12]), expected[1]);
  EXPECT_EQ(I(lanes[1]), 0);  // lanes 1..3 of the collapsed Packet hold the identity
  // Saturation: two flits of kMaxI / 2 + 1 each overflow.
  std::fill(in.begin(), in.end(), B(int32_t{0}));
  in[0] = in[4] = B(kMaxI / 2 + 1);  // two flits of slice 0, cluster 0
  lanes = Lanes(*jit::RunReduceStep(*kernels_, step, Bytes(in)));
  EXPECT_EQ(I(lanes[0]), kMaxI);

  Use("R = 8, A = 1");
  auto f32 = Intra(DType::kF32, "A", "R / 4", "R % 4 # 8", "R % 4", "1", "1 # 4", VeReduceOp::kAdd);
  ASSERT_TRUE(f32.ok()) << f32.status();
  const float v[8] = {1e8f, 1.0f, -1e8f, 1.0f, 0.5f, 3e-8f, 1e7f, -1e7f};
  std::vector<uint32_t> fin(16);  // both clusters
  for (int i = 0; i < 16; ++i) fin[i] = B(v[i % 8]);
  volatile float t0 = (v[0] + v[1]) + (v[2] + v[3]);
  volatile float t1 = (v[4] + v[5]) + (v[6] + v[7]);
  const float host = t0 + t1;
  step.out = f32->out;
  step.intra_reduce = std::make_shared<IntraSliceReduceStage>(*f32);
  lanes = Lanes(*jit::RunReduceStep(*kernels_, step, Bytes(fin)));
  EXPECT_EQ(lanes[0], B(host));
  EXPECT_NE(host, ((((((v[0] + v[1]) + v[2]) + v[3]) + v[4]) + v[5]) + v[6]) + v[7]);
}

// The first contribution is stored as is: a sum of one -0.0 is -0.0 (0.0 + -0.0 would be +0.0),
// and Max over a single NaN flit keeps the NaN's tree value.
TEST_F(VectorReduceJitTest, FirstContributionIsStoredAsIs) {
  Use("A = 1, R = 4");
  auto add = Intra(DType::kF32, "A", "A", "R # 8", "R", "A", "1 # 4", VeReduceOp::kAdd);
  ASSERT_TRUE(add.ok()) << add.status();
  VeStep step;
  step.kind = VeStep::Kind::kIntraReduce;
  step.out = add->out;
  step.intra_reduce = std::make_shared<IntraSliceReduceStage>(*add);
  const std::vector<uint32_t> zeros(static_cast<size_t>(add->in.Full().size()), B(-0.0f));
  std::vector<uint32_t> lanes = Lanes(*jit::RunReduceStep(*kernels_, step, Bytes(zeros)));
  EXPECT_EQ(lanes[0], B(-0.0f));
}

// ---- The Inter-Slice Block ---------------------------------------------------------------------------

TEST_F(VectorReduceJitTest, InterSliceFillsOnEveryOp) {
  struct Case {
    std::string axes, slice, time, packet, out_slice, out_time;
  };
  const Case cases[] = {
      {"R = 4, A = 512", "A / 8, R", "1", "A % 8", "A / 8, 1 # 4", "1"},               // dummy replacement
      {"W = 64, R = 4, X = 4, P = 8", "W, R", "1", "P", "W, X", "1"},                   // broadcast
      {"W = 32, R = 4, T0 = 2, T2 = 4, T1 = 2, P = 8", "W, R", "T0, T2, T1", "P", "W, T2", "T0, T1"},  // promotion
      {"W = 32, R = 8, T = 2, P = 8", "W, R", "T", "P", "W, T, 1 # 4", "1"},           // dummy and promotion
      {"W = 16, R = 3, P = 8", "W, R # 4", "1", "P", "W, 1 # 4", "1"},                  // R = 3: a padded slice
  };
  const VeReduceOp ops[] = {VeReduceOp::kAdd, VeReduceOp::kAddSat, VeReduceOp::kMax, VeReduceOp::kMin,
                            VeReduceOp::kMul};
  uint32_t seed = 500;
  int ran = 0;
  for (const Case& c : cases) {
    Use(c.axes);
    for (DType dtype : {DType::kI32, DType::kF32}) {
      for (VeReduceOp op : ops) {
        absl::StatusOr<InterSliceReduceStage> stage =
            PlanInterSliceReduce(Shape(dtype, c.slice, c.time, c.packet), m(c.out_slice), m(c.out_time), op);
        if (!stage.ok()) continue;
        ExpectInterAgrees(*stage, seed++);
        ++ran;
      }
    }
  }
  EXPECT_GE(ran, 5 * 2 * 3) << "each layout on several ops of both dtypes";
}

// ---- Whole programs: both chain orders on both backends ------------------------------------------------

struct Layout {
  std::string axes, slice, element, time, packet;
};
using Chain = std::function<Stream(Stream, const MappingScope&)>;

absl::StatusOr<DmTensor> Build(Context& ctx, const Layout& l, DType dtype, const Chain& chain, const std::string& commit) {
  ASSIGN_OR_RETURN(Axes axes, Axes::Parse(l.axes));
  MappingScope s(axes);
  const Mapping whole = Pair({s.m(l.slice), s.m(l.element)});
  std::vector<double> values(static_cast<size_t>(whole.size()));
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> dist(-50.0, 50.0);
  for (double& v : values) v = dtype == DType::kF32 ? dist(rng) : std::round(dist(rng) * 1000);
  ASSIGN_OR_RETURN(HostTensor host, HostTensor::FromValues(dtype, whole, values));
  ASSIGN_OR_RETURN(Placement placement,
                   Place(ctx.device(), dtype, Tier::kDm, {s.m("1"), s.m("1 # 2"), s.m(l.slice), s.m(l.element)}, 0));
  ASSIGN_OR_RETURN(DeviceTensor written, WriteAs(host, ctx.device(), placement));
  DmTensor in(written);
  Stream stream = ctx.main.begin(in.view()).fetch(dtype, s.m(l.time), s.m(l.packet)).collect(s.m(l.time), s.m(l.packet));
  return chain(std::move(stream).vector_init(), s).vector_final().commit(s.m(commit), 1 << 16);
}

// Runs the chain on both backends; the results must agree and the JIT must have compiled
// `reductions` reduce steps.
void ExpectProgramAgrees(const Layout& l, DType dtype, const Chain& chain, const std::string& commit,
                         const std::string& readback, int reductions) {
  std::vector<uint32_t> results[2];
  for (int b = 0; b < 2; ++b) {
    Device device(1);
    std::unique_ptr<Backend> backend;
    jit::JitBackend* jit = nullptr;
    if (b == 0) {
      backend = std::make_unique<interp::Interpreter>();
    } else {
      std::unique_ptr<jit::JitBackend> created = *jit::JitBackend::Create({.threads = 2});
      jit = created.get();
      backend = std::move(created);
    }
    Context ctx(device, *backend);
    absl::StatusOr<DmTensor> out = Build(ctx, l, dtype, chain, commit);
    ASSERT_TRUE(out.ok()) << out.status();
    MappingScope s(*Axes::Parse(l.axes));
    results[b] = ReadAs(*out, s.m(readback))->ToBits();
    if (jit != nullptr) { EXPECT_EQ(jit->stats().compiled_reductions, reductions) << "a reduce ran uncompiled"; }
  }
  EXPECT_EQ(results[0], results[1]) << "the interpreter and the JIT differ";
}

// IntraFirst: the intra-slice reduce over R (Time and Packet, R = 13 with the VCG), widened back
// to Way8, then the inter-slice reduce over the slices' S.
TEST_F(VectorReduceJitTest, IntraThenInterOnBothBackends) {
  const Layout l{"S = 4, A = 64, R = 13", "A, S", "R # 16", "R # 16 / 8", "R # 16 % 8"};
  for (DType dtype : {DType::kF32, DType::kI32}) {
    ExpectProgramAgrees(l, dtype, [dtype](Stream s, const MappingScope& m) {
      Stream reduced = std::move(s)
                           .vector_intra_slice_branch(BranchMode::Unconditional())
                           .vector_split(m.m("R # 16 / 4"), m.m("R # 16 % 4"));
      reduced = dtype == DType::kF32
                    ? std::move(reduced).vector_intra_slice_reduce("R", m.m("1"), m.m("1 # 4"), IntraSliceReduceOpF32::kAdd)
                    : std::move(reduced).vector_intra_slice_reduce("R", m.m("1"), m.m("1 # 4"),
                                                                   IntraSliceReduceOpI32::kAddSat);
      reduced = std::move(reduced).vector_pad_way8(m.m("1 # 8"));
      return dtype == DType::kF32
                 ? std::move(reduced).vector_inter_slice_reduce(m.m("A, 1 # 4"), m.m("1"), InterSliceReduceOpF32::kAdd)
                 : std::move(reduced).vector_inter_slice_reduce(m.m("A, 1 # 4"), m.m("1"),
                                                                InterSliceReduceOpI32::kAddSat);
    }, "1 # 2", "A", 2);
  }
}

// InterFirst: the inter-slice reduce over R first, then the branch, a split and the intra-slice
// reduce of the result's packet.
TEST_F(VectorReduceJitTest, InterThenIntraOnBothBackends) {
  const Layout l{"R = 4, A = 64, P = 7", "A, R", "P # 8", "1", "P # 8"};
  for (DType dtype : {DType::kF32, DType::kI32}) {
    ExpectProgramAgrees(l, dtype, [dtype](Stream s, const MappingScope& m) {
      Stream reduced = dtype == DType::kF32
                           ? std::move(s).vector_inter_slice_reduce(m.m("A, 1 # 4"), m.m("1"), InterSliceReduceOpF32::kMax)
                           : std::move(s).vector_inter_slice_reduce(m.m("A, 1 # 4"), m.m("1"), InterSliceReduceOpI32::kMin);
      reduced = std::move(reduced)
                    .vector_intra_slice_branch(BranchMode::Unconditional())
                    .vector_split(m.m("P # 8 / 4"), m.m("P # 8 % 4"));
      reduced = dtype == DType::kF32
                    ? std::move(reduced).vector_intra_slice_reduce("P", m.m("1"), m.m("1 # 4"), IntraSliceReduceOpF32::kMax)
                    : std::move(reduced).vector_intra_slice_reduce("P", m.m("1"), m.m("1 # 4"), IntraSliceReduceOpI32::kMin);
      return std::move(reduced).vector_pad_way8(m.m("1 # 8"));
    }, "1 # 2", "A", 2);
  }
}

}  // namespace
}  // namespace visa
