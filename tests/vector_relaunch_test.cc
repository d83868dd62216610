// Vector Engine and indirect-fetch pipelines relaunched on the JIT (Launch of one traced Program,
// again and again, on one device and on fresh ones), against the interpreter on the same inputs:
// what a run keeps for the op's later runs (jit/op_memo.h: kernels, relayouts, execution-id
// tables, zip positions, reduce kernels, padding runs) must never carry one run's data into the
// next. Every relaunch writes new input values first. Shapes are small and odd (padded lanes and
// slices), on 1 and 2 threads.
#include <functional>
#include <memory>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "dsl/mapping_parser.h"
#include "interp/interpreter.h"
#include "jit/jit_backend.h"
#include "runtime/launch.h"
#include "runtime/transfer.h"

namespace visa {
namespace {

constexpr BitReq kOne = BitReq::kOne, kAny = BitReq::kIgnore;

struct Case {
  const char* name;
  const char* axes;
  // The inputs: slice and element mappings, dtype; an i32 input holds row numbers below `rows`.
  struct In {
    const char* slice;
    const char* element;
    DType dtype;
    int64_t address;
  };
  std::vector<In> inputs;
  int64_t rows = 0;
  std::function<absl::StatusOr<std::vector<DeviceTensor>>(Context&, const std::vector<DeviceTensor>&,
                                                           const MappingScope&)>
      body;
};

absl::StatusOr<std::vector<DeviceTensor>> One(absl::StatusOr<DmTensor> out) {
  if (!out.ok()) return out.status();
  return std::vector<DeviceTensor>{*out};
}

std::vector<Case> Cases() {
  std::vector<Case> cases;
  cases.push_back({"elementwise_padded", "S = 5, T = 3, A = 6", {{"S # 256", "T, A # 8", DType::kF32, 0}}, 0,
                   [](Context& ctx, const std::vector<DeviceTensor>& in, const MappingScope& s) {
                     return One(ctx.main.begin(DmTensor(in[0]).view())
                                    .fetch(DType::kF32, s.m("T"), s.m("A # 8"))
                                    .collect(s.m("T"), s.m("A # 8"))
                                    .vector_init()
                                    .vector_intra_slice_branch(BranchMode::Unconditional())
                                    .vector_split(s.m("T, A # 8 / 4"), s.m("A # 8 % 4"))
                                    .vector_fp_binary(FpBinaryOp::MulF(FpMulAlu::kMul0), 3.0f)
                                    .vector_fp_unary(FpUnaryOp::kExp)
                                    .vector_concat(s.m("T"), s.m("A # 8"))
                                    .vector_final()
                                    .commit(s.m("T, A # 8"), 1 << 14));
                   }});
  cases.push_back({"stash_and_vrf", "S = 3, T = 4, A = 8",
                   {{"S # 256", "T, A", DType::kF32, 0}, {"S # 256", "T, A", DType::kF32, 1 << 12}}, 0,
                   [](Context& ctx, const std::vector<DeviceTensor>& in, const MappingScope& s)
                       -> absl::StatusOr<std::vector<DeviceTensor>> {
                     absl::StatusOr<VrfTensor> vrf = ctx.sub.begin(DmTensor(in[1]).view())
                                                         .fetch(DType::kF32, s.m("T"), s.m("A"))
                                                         .collect(s.m("T"), s.m("A"))
                                                         .to_vrf(s.m("T, A"), 0);
                     if (!vrf.ok()) return vrf.status();
                     return One(ctx.main.begin(DmTensor(in[0]).view())
                                    .fetch(DType::kF32, s.m("T"), s.m("A"))
                                    .collect(s.m("T"), s.m("A"))
                                    .vector_init()
                                    .vector_intra_slice_branch(BranchMode::Unconditional())
                                    .vector_split(s.m("T, A / 4"), s.m("A % 4"))
                                    .vector_fp_binary(FpBinaryOp::AddF(), *vrf)
                                    .vector_stash()
                                    .vector_fp_unary(FpUnaryOp::kSigmoid)
                                    .vector_fp_binary(FpBinaryOp::MulF(FpMulAlu::kMul0), Stash)
                                    .vector_concat(s.m("T"), s.m("A"))
                                    .vector_final()
                                    .commit(s.m("T, A"), 1 << 14));
                   }});
  cases.push_back({"intra_reduce_odd_row", "S = 7, N = 13", {{"S # 256", "N", DType::kF32, 0}}, 0,
                   [](Context& ctx, const std::vector<DeviceTensor>& in, const MappingScope& s) {
                     const Mapping time = s.m("N # 16 / 8"), packet = s.m("N # 16 % 8");
                     return One(ctx.main.begin(DmTensor(in[0]).view())
                                    .fetch_masked(DType::kF32, 0.0, time, packet)
                                    .collect(time, packet)
                                    .vector_init()
                                    .vector_intra_slice_branch(BranchMode::ValidCount("N"))
                                    .vector_split(s.m("N # 16 / 4"), s.m("N # 16 % 4"))
                                    .vector_fp_unary(FpUnaryOp::kExp)
                                    .vector_fp_binary(FpBinaryOp::MulF(FpMulAlu::kMul0),
                                                      VeBranchOperand().imm(TagGuard::Matches({BitReq::kZero, kAny, kAny, kAny}), 0.0f))
                                    .vector_intra_slice_reduce("N", s.m("1"), s.m("1 # 4"), IntraSliceReduceOpF32::kAdd,
                                                               ReducePadding::kIdentity)
                                    .vector_pad_way8(s.m("1 # 8"))
                                    .vector_final()
                                    .commit(s.m("1 # 2"), 1 << 14));
                   }});
  cases.push_back({"inter_reduce_then_toggle", "W = 3, R = 4, X = 4, T = 2, P = 8", {{"[W, R] # 256", "T, P", DType::kF32, 0}}, 0,
                   [](Context& ctx, const std::vector<DeviceTensor>& in, const MappingScope& s) {
                     return One(ctx.main.begin(DmTensor(in[0]).view())
                                    .fetch(DType::kF32, s.m("T"), s.m("P"))
                                    .collect(s.m("T"), s.m("P"))
                                    .vector_init()
                                    .vector_inter_slice_reduce(s.m("[W, X] # 256"), s.m("T"), InterSliceReduceOpF32::kAdd)
                                    .vector_intra_slice_branch(BranchMode::AxisToggle("T"))
                                    .vector_clip(ClipBinaryOpF32::kMax,
                                                 VeBranchOperand().imm(TagGuard::Matches({kOne, kAny, kAny, kAny}), 0.25f))
                                    .vector_final()
                                    .commit(s.m("T, P"), 1 << 14));
                   }});
  cases.push_back({"comparison_filter", "A = 208", {{"A / 16 # 256", "A % 16", DType::kF32, 0}}, 0,
                   [](Context& ctx, const std::vector<DeviceTensor>& in, const MappingScope& s) {
                     return One(ctx.main.begin(DmTensor(in[0]).view())
                                    .fetch(DType::kF32, s.m("A % 16 / 8"), s.m("A % 8"))
                                    .collect(s.m("A % 16 / 8"), s.m("A % 8"))
                                    .vector_init()
                                    .vector_intra_slice_branch(BranchMode::Comparison(
                                        {InputCmp::Greater(0.0f), InputCmp::False(), InputCmp::False(), InputCmp::False()}))
                                    .vector_clip(ClipBinaryOpF32::kMin, 0.5f)
                                    .vector_filter(TagGuard::Matches({kOne, kAny, kAny, kAny}))
                                    .vector_final()
                                    .commit(s.m("A % 16"), 1 << 14));
                   }});
  cases.push_back({"two_group_zip", "S = 5, T = 3, A = 8, I = 2",
                   {{"S # 256", "T, A", DType::kF32, 0}, {"S # 256", "T, A", DType::kF32, 1 << 12}}, 0,
                   [](Context& ctx, const std::vector<DeviceTensor>& in, const MappingScope& s) {
                     return One(ctx.main.begin_interleaved(s.m("I"), DmTensor(in[0]).view(), DmTensor(in[1]).view())
                                    .fetch(DType::kF32, s.m("T, I"), s.m("A"))
                                    .collect(s.m("T, I"), s.m("A"))
                                    .vector_init()
                                    .vector_intra_slice_unzip("I", s.m("1 # 2"), s.m("T"))
                                    .vector_clip(ClipBinaryOpF32::kMax, VeRhs(0.25f), std::nullopt)
                                    .vector_clip_zip(ClipBinaryOpF32::kAdd)
                                    .vector_final()
                                    .commit(s.m("T, A"), 1 << 14));
                   }});
  cases.push_back({"indirect_fetch_padded", "S = 3, W = 9, V = 5, K = 7",
                   {{"S # 256", "W, V # 8", DType::kF32, 0}, {"256", "K", DType::kI32, 1 << 12}}, 9,
                   [](Context& ctx, const std::vector<DeviceTensor>& in, const MappingScope& s) {
                     return One(ctx.main.begin(DmTensor(in[0]).view())
                                    .fetch_indirect_masked(DType::kF32, 1.5, DmTensor(in[1]), "W", s.m("K"), s.m("V # 8"))
                                    .collect(s.m("K"), s.m("V # 8"))
                                    .commit(s.m("K, V # 8"), 1 << 14));
                   }});
  return cases;
}

struct Bound {
  std::unique_ptr<MappingScope> scope;
  std::vector<Placement> placements;
  std::vector<Mapping> hosts;
};

Bound Bind(const Case& c, Device& device) {
  Bound b;
  b.scope = std::make_unique<MappingScope>(*Axes::Parse(c.axes));
  const MappingScope& s = *b.scope;
  for (const Case::In& in : c.inputs) {
    absl::StatusOr<Placement> placement =
        Place(device, in.dtype, Tier::kDm, {s.m("1"), s.m("1 # 2"), s.m(in.slice), s.m(in.element)}, Address::At(in.address));
    EXPECT_TRUE(placement.ok()) << placement.status();
    b.placements.push_back(*placement);
    // The host layout: the live axes of slice and element (a broadcast slice holds none).
    b.hosts.push_back(std::string(in.slice).find_first_not_of("0123456789 ") == std::string::npos
                          ? s.m(in.element)
                          : Pair({s.m(in.slice), s.m(in.element)}));
  }
  return b;
}

std::vector<HostTensor> Values(const Case& c, const Bound& b, int seed) {
  std::vector<HostTensor> values;
  for (size_t i = 0; i < c.inputs.size(); ++i) {
    if (c.inputs[i].dtype == DType::kI32) {
      std::vector<double> rows;
      for (int64_t q = 0; q < b.hosts[i].size(); ++q) rows.push_back(static_cast<double>((q * 5 + seed) % c.rows));
      values.push_back(*HostTensor::FromValues(DType::kI32, b.hosts[i], rows));
    } else {
      values.push_back(*HostTensor::Random(c.inputs[i].dtype, b.hosts[i], seed * 31 + static_cast<int>(i)));
    }
  }
  return values;
}

// The raw bytes of every output unit after one run.
std::vector<uint8_t> OutputBytes(const std::vector<DeviceTensor>& outputs) {
  std::vector<uint8_t> bytes;
  for (const DeviceTensor& out : outputs) {
    absl::StatusOr<HostTensor> host = ReadAs(out, out.full_mapping());
    EXPECT_TRUE(host.ok()) << host.status();
    if (host.ok()) bytes.insert(bytes.end(), host->bytes().begin(), host->bytes().end());
  }
  return bytes;
}

// (case, threads, whether pipelines may run in place or as one move: off, every op runs stage by
// stage, which is what the kept plans of op_memo.h serve).
class VectorRelaunchTest : public ::testing::TestWithParam<std::tuple<int, int, bool>> {};

TEST_P(VectorRelaunchTest, JitRelaunchesAgreeWithTheInterpreter) {
  const auto [index, threads, direct] = GetParam();
  const Case c = Cases()[static_cast<size_t>(index)];
  SCOPED_TRACE(c.name);
  auto device = std::make_unique<Device>(1);
  Bound b = Bind(c, *device);
  std::vector<DeviceTensor> inputs;
  std::vector<HostTensor> first = Values(c, b, 1);
  for (size_t i = 0; i < first.size(); ++i) inputs.push_back(*WriteAs(first[i], *device, b.placements[i]));
  KernelOf kernel = [&c, &b](Context& ctx, const std::vector<DeviceTensor>& in) { return c.body(ctx, in, *b.scope); };
  absl::StatusOr<Program> program = Trace(kernel, inputs);
  ASSERT_TRUE(program.ok()) << program.status();
  absl::StatusOr<std::unique_ptr<jit::JitBackend>> jit = jit::JitBackend::Create({.threads = threads, .direct_pipelines = direct});
  ASSERT_TRUE(jit.ok());
  ASSERT_TRUE((*jit)->Prepare(*program).ok());
  interp::Interpreter interpreter;
  for (int run = 0; run < 4; ++run) {
    SCOPED_TRACE(run);
    const int seed = run == 0 ? 1 : 10 + run;
    std::vector<HostTensor> values = Values(c, b, seed);
    if (run == 3) {  // a fresh device, as `visa run` makes
      inputs.clear();
      device = std::make_unique<Device>(1);
      b = Bind(c, *device);
      for (size_t i = 0; i < values.size(); ++i) inputs.push_back(*WriteAs(values[i], *device, b.placements[i]));
    } else if (run > 0) {
      for (size_t i = 0; i < values.size(); ++i) ASSERT_TRUE(WriteInto(values[i], inputs[i]).ok());
    }
    // The interpreter on its own device with the same values.
    Device reference_device(1);
    Bound reference = Bind(c, reference_device);
    std::vector<DeviceTensor> reference_inputs;
    for (size_t i = 0; i < values.size(); ++i) {
      reference_inputs.push_back(*WriteAs(values[i], reference_device, reference.placements[i]));
    }
    absl::StatusOr<std::vector<DeviceTensor>> want = Launch(*program, reference_device, interpreter, reference_inputs);
    ASSERT_TRUE(want.ok()) << want.status();
    absl::StatusOr<std::vector<DeviceTensor>> got = Launch(*program, *device, **jit, inputs);
    ASSERT_TRUE(got.ok()) << got.status();
    EXPECT_EQ(OutputBytes(*got), OutputBytes(*want));
  }
  if (!direct) {
    EXPECT_GT((*jit)->stats().staged_pipelines, 0);
  }
}

INSTANTIATE_TEST_SUITE_P(Kinds, VectorRelaunchTest,
                         ::testing::Combine(::testing::Range(0, 7), ::testing::Values(1, 2), ::testing::Bool()),
                         [](const ::testing::TestParamInfo<std::tuple<int, int, bool>>& info) {
                           return absl::StrCat(Cases()[static_cast<size_t>(std::get<0>(info.param))].name, "_threads",
                                               std::get<1>(info.param), std::get<2>(info.param) ? "_direct" : "_staged");
                         });

}  // namespace
}  // namespace visa
