// Vector Engine pipelines run in device memory in place (jit/in_place_vector.h) against the
// interpreter: each qualifying kind (element ops around relayouts, Comparison ids with a filter, a
// VRF operand, a padded Element whose pad bytes must stay as they were, BranchMode::Vrf ids from an
// i32 VRF broadcast over Time selecting an op per id, an interleaved pair of inputs staged by two
// kept moves) runs in place, and its
// output units' bytes, pad bytes and the bytes around them included, equal the interpreter's; each
// kind that must not run in place says why (position-dependent ids, a reduction). The stash is a
// run-sized copy of the values where the stash step stands (taken before any op and read across
// relayouts, or taken between two segments), and a Cast stage before the commit runs the kernels
// on a 32-bit image laid out as the output, then casts it into the output.
// Small shapes, 1 and 2 threads; runs of 64 and 72 positions (copied run by run)
// and of 6 and 32 (the move kernel, then the element kernels).
#include <cstring>
#include <functional>
#include <memory>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "dsl/mapping_parser.h"
#include "interp/interpreter.h"
#include "jit/in_place_vector.h"
#include "jit/jit_backend.h"
#include "runtime/launch.h"
#include "runtime/transfer.h"

namespace visa {
namespace {

constexpr BitReq kOne = BitReq::kOne, kZero = BitReq::kZero, kAny = BitReq::kIgnore;
constexpr int64_t kOutputAddress = 1 << 14;
constexpr int64_t kOutputBytes = 1 << 10;  // per unit, compared raw (the output and what is around it)

using Body = std::function<absl::StatusOr<DmTensor>(Context&, const DmTensor&, const DmTensor&, const MappingScope&)>;

struct Case {
  const char* name;
  const char* axes;
  const char* element;  // the input's Element (every slice of `S # 256`)
  Body body;
  const char* refusal;  // empty: runs in place; else a word of why not
  // -2: the second input is f32 like the first; else an i32 [S, A] tensor of execution ids
  // (s + a) % 4, with this value at (s 1, a 5) when it is not negative.
  int32_t ids = -2;
};

// A pipeline whose ids come from `ids` (an i32 [S, A] tensor, loaded into the VRF on the sub
// context and broadcast over Time): id 1 adds 1, id 2 multiplies by 3, id 3 takes the exp, id 0
// passes (each op guarded by its id), around a split and a concat.
absl::StatusOr<DmTensor> VrfIdOps(Context& ctx, const DmTensor& x, const DmTensor& ids, const MappingScope& s) {
  absl::StatusOr<VrfTensor> vrf =
      ctx.sub.begin(ids.view()).fetch(DType::kI32, s.m("1"), s.m("A")).collect(s.m("1"), s.m("A")).to_vrf(s.m("A"), 0);
  if (!vrf.ok()) return vrf.status();
  auto only = [](int id) { return TagGuard::Matches({(id & 1) ? kOne : kZero, (id & 2) ? kOne : kZero, kZero, kZero}); };
  return ctx.main.begin(x.view())
      .fetch(DType::kF32, s.m("T"), s.m("A"))
      .collect(s.m("T"), s.m("A"))
      .vector_init()
      .vector_intra_slice_branch(*vrf)
      .vector_split(s.m("T, A / 4"), s.m("A % 4"))
      .vector_fp_binary(FpBinaryOp::AddF(), VeBranchOperand().imm(only(1), 1.0f))
      .vector_fp_binary(FpBinaryOp::MulF(FpMulAlu::kMul0), VeBranchOperand().imm(only(2), 3.0f))
      .vector_fp_unary(only(3), FpUnaryOp::kExp)
      .vector_concat(s.m("T"), s.m("A"))
      .vector_final()
      .commit(s.m("T, A"), kOutputAddress);
}

std::vector<Case> Cases() {
  std::vector<Case> cases;
  cases.push_back({"vrf_ids", "S = 3, T = 16, A = 8", "T, A", VrfIdOps, "", /*ids=*/-1});
  cases.push_back({"interleaved_pair", "S = 3, I = 2, T = 4, A = 8", "T, A",
                   [](Context& ctx, const DmTensor& x, const DmTensor& y, const MappingScope& s) {
                     return ctx.main.begin_interleaved(s.m("I"), x.view(), y.view())
                         .fetch(DType::kF32, s.m("I, T"), s.m("A"))
                         .collect(s.m("I, T"), s.m("A"))
                         .vector_init()
                         .vector_intra_slice_branch(BranchMode::Unconditional())
                         .vector_split(s.m("I, T, A / 4"), s.m("A % 4"))
                         .vector_fp_binary(FpBinaryOp::MulF(FpMulAlu::kMul0), 3.0f)
                         .vector_fp_unary(FpUnaryOp::kExp)
                         .vector_concat(s.m("I, T"), s.m("A"))
                         .vector_final()
                         .commit(s.m("I, T, A"), kOutputAddress);
                   },
                   ""});
  cases.push_back({"relayouts_around_ops", "S = 5, T = 9, A = 8", "T, A",
                   [](Context& ctx, const DmTensor& x, const DmTensor&, const MappingScope& s) {
                     return ctx.main.begin(x.view())
                         .fetch(DType::kF32, s.m("T"), s.m("A"))
                         .collect(s.m("T"), s.m("A"))
                         .vector_init()
                         .vector_intra_slice_branch(BranchMode::Unconditional())
                         .vector_split(s.m("T, A / 4"), s.m("A % 4"))
                         .vector_fp_binary(FpBinaryOp::MulF(FpMulAlu::kMul0), 3.0f)
                         .vector_fp_unary(FpUnaryOp::kExp)
                         .vector_concat(s.m("T"), s.m("A"))
                         .vector_final()
                         .commit(s.m("T, A"), kOutputAddress);
                   },
                   ""});
  cases.push_back({"padded_element", "S = 5, T = 3, A = 6", "T, A # 8",
                   [](Context& ctx, const DmTensor& x, const DmTensor&, const MappingScope& s) {
                     return ctx.main.begin(x.view())
                         .fetch(DType::kF32, s.m("T"), s.m("A # 8"))
                         .collect(s.m("T"), s.m("A # 8"))
                         .vector_init()
                         .vector_intra_slice_branch(BranchMode::Unconditional())
                         .vector_split(s.m("T, A # 8 / 4"), s.m("A # 8 % 4"))
                         .vector_fp_binary(FpBinaryOp::MulF(FpMulAlu::kMul0), 2.0f)
                         .vector_concat(s.m("T"), s.m("A # 8"))
                         .vector_final()
                         .commit(s.m("T, A # 8"), kOutputAddress);
                   },
                   ""});
  cases.push_back({"comparison_filter", "S = 3, T = 8, A = 8", "T, A",
                   [](Context& ctx, const DmTensor& x, const DmTensor&, const MappingScope& s) {
                     return ctx.main.begin(x.view())
                         .fetch(DType::kF32, s.m("T"), s.m("A"))
                         .collect(s.m("T"), s.m("A"))
                         .vector_init()
                         .vector_intra_slice_branch(BranchMode::Comparison(
                             {InputCmp::Greater(0.0f), InputCmp::False(), InputCmp::False(), InputCmp::False()}))
                         .vector_clip(ClipBinaryOpF32::kMin, 0.5f)
                         .vector_filter(TagGuard::Matches({kOne, kAny, kAny, kAny}))
                         .vector_final()
                         .commit(s.m("T, A"), kOutputAddress);
                   },
                   ""});
  cases.push_back({"vrf_operand", "S = 3, T = 4, A = 8", "T, A",
                   [](Context& ctx, const DmTensor& x, const DmTensor& y, const MappingScope& s)
                       -> absl::StatusOr<DmTensor> {
                     absl::StatusOr<VrfTensor> vrf = ctx.sub.begin(y.view())
                                                         .fetch(DType::kF32, s.m("T"), s.m("A"))
                                                         .collect(s.m("T"), s.m("A"))
                                                         .to_vrf(s.m("T, A"), 0);
                     if (!vrf.ok()) return vrf.status();
                     return ctx.main.begin(x.view())
                         .fetch(DType::kF32, s.m("T"), s.m("A"))
                         .collect(s.m("T"), s.m("A"))
                         .vector_init()
                         .vector_intra_slice_branch(BranchMode::Unconditional())
                         .vector_split(s.m("T, A / 4"), s.m("A % 4"))
                         .vector_fp_binary(FpBinaryOp::MulF(FpMulAlu::kMul0), *vrf)
                         .vector_concat(s.m("T"), s.m("A"))
                         .vector_final()
                         .commit(s.m("T, A"), kOutputAddress);
                   },
                   ""});
  cases.push_back({"axis_toggle_ids", "S = 3, T = 2, A = 8", "T, A",
                   [](Context& ctx, const DmTensor& x, const DmTensor&, const MappingScope& s) {
                     return ctx.main.begin(x.view())
                         .fetch(DType::kF32, s.m("T"), s.m("A"))
                         .collect(s.m("T"), s.m("A"))
                         .vector_init()
                         .vector_intra_slice_branch(BranchMode::AxisToggle("T"))
                         .vector_split(s.m("T, A / 4"), s.m("A % 4"))
                         .vector_fp_binary(FpBinaryOp::AddF(), 1.0f)
                         .vector_concat(s.m("T"), s.m("A"))
                         .vector_final()
                         .commit(s.m("T, A"), kOutputAddress);
                   },
                   "position"});
  cases.push_back({"stash", "S = 3, T = 2, A = 8", "T, A",
                   [](Context& ctx, const DmTensor& x, const DmTensor&, const MappingScope& s) {
                     return ctx.main.begin(x.view())
                         .fetch(DType::kF32, s.m("T"), s.m("A"))
                         .collect(s.m("T"), s.m("A"))
                         .vector_init()
                         .vector_intra_slice_branch(BranchMode::Unconditional())
                         .vector_split(s.m("T, A / 4"), s.m("A % 4"))
                         .vector_stash()
                         .vector_fp_unary(FpUnaryOp::kSigmoid)
                         .vector_fp_binary(FpBinaryOp::MulF(FpMulAlu::kMul0), Stash)
                         .vector_concat(s.m("T"), s.m("A"))
                         .vector_final()
                         .commit(s.m("T, A"), kOutputAddress);
                   },
                   ""});
  // The stash taken before any op and read after a split and a concat: max(sigmoid(x) * 3, x), on
  // runs copied run by run.
  cases.push_back({"stash_across_relayouts", "S = 3, T = 9, A = 8", "T, A",
                   [](Context& ctx, const DmTensor& x, const DmTensor&, const MappingScope& s) {
                     return ctx.main.begin(x.view())
                         .fetch(DType::kF32, s.m("T"), s.m("A"))
                         .collect(s.m("T"), s.m("A"))
                         .vector_init()
                         .vector_intra_slice_branch(BranchMode::Unconditional())
                         .vector_stash()
                         .vector_split(s.m("T, A / 4"), s.m("A % 4"))
                         .vector_fp_unary(FpUnaryOp::kSigmoid)
                         .vector_fp_binary(FpBinaryOp::MulF(FpMulAlu::kMul0), 3.0f)
                         .vector_concat(s.m("T"), s.m("A"))
                         .vector_clip(ClipBinaryOpF32::kMax, Stash)
                         .vector_final()
                         .commit(s.m("T, A"), kOutputAddress);
                   },
                   ""});
  // The stash taken after an op, between two segments of the same layout: sigmoid(2x) * 2x, padded
  // Element (the pad bytes must stay as they were).
  cases.push_back({"stash_between_ops", "S = 5, T = 3, A = 6", "T, A # 8",
                   [](Context& ctx, const DmTensor& x, const DmTensor&, const MappingScope& s) {
                     return ctx.main.begin(x.view())
                         .fetch(DType::kF32, s.m("T"), s.m("A # 8"))
                         .collect(s.m("T"), s.m("A # 8"))
                         .vector_init()
                         .vector_intra_slice_branch(BranchMode::Unconditional())
                         .vector_split(s.m("T, A # 8 / 4"), s.m("A # 8 % 4"))
                         .vector_fp_binary(FpBinaryOp::MulF(FpMulAlu::kMul0), 2.0f)
                         .vector_stash()
                         .vector_fp_unary(FpUnaryOp::kSigmoid)
                         .vector_fp_binary(FpBinaryOp::MulF(FpMulAlu::kMul1), Stash)
                         .vector_concat(s.m("T"), s.m("A # 8"))
                         .vector_final()
                         .commit(s.m("T, A # 8"), kOutputAddress);
                   },
                   ""});
  // A Cast stage (f32 -> bf16, nearest even) between the vector stage and the commit: the kernels
  // run on a 32-bit image laid out as the output, then one cast move stores the output (as the
  // Llama RMSNorm's bf16 rows).
  cases.push_back({"cast_to_bf16", "S = 3, T = 4, A = 8", "T, A",
                   [](Context& ctx, const DmTensor& x, const DmTensor&, const MappingScope& s) {
                     return ctx.main.begin(x.view())
                         .fetch(DType::kF32, s.m("T"), s.m("A"))
                         .collect(s.m("T"), s.m("A"))
                         .vector_init()
                         .vector_intra_slice_branch(BranchMode::Unconditional())
                         .vector_split(s.m("T, A / 4"), s.m("A % 4"))
                         .vector_fp_binary(FpBinaryOp::MulF(FpMulAlu::kMul0), 3.0f)
                         .vector_fp_unary(FpUnaryOp::kExp)
                         .vector_concat(s.m("T"), s.m("A"))
                         .vector_final()
                         .cast(DType::kBF16, s.m("A # 16"))
                         .commit(s.m("T, A"), kOutputAddress);
                   },
                   ""});
  // The same with the stash and long runs (copied run by run into the 32-bit image).
  cases.push_back({"stash_then_cast", "S = 2, T = 16, A = 8", "T, A",
                   [](Context& ctx, const DmTensor& x, const DmTensor&, const MappingScope& s) {
                     return ctx.main.begin(x.view())
                         .fetch(DType::kF32, s.m("T"), s.m("A"))
                         .collect(s.m("T"), s.m("A"))
                         .vector_init()
                         .vector_intra_slice_branch(BranchMode::Unconditional())
                         .vector_split(s.m("T, A / 4"), s.m("A % 4"))
                         .vector_stash()
                         .vector_fp_unary(FpUnaryOp::kSigmoid)
                         .vector_fp_binary(FpBinaryOp::MulF(FpMulAlu::kMul0), Stash)
                         .vector_concat(s.m("T"), s.m("A"))
                         .vector_final()
                         .cast(DType::kBF16, s.m("A # 16"))
                         .commit(s.m("T, A"), kOutputAddress);
                   },
                   ""});
  cases.push_back({"intra_reduce", "S = 3, N = 16", "N",
                   [](Context& ctx, const DmTensor& x, const DmTensor&, const MappingScope& s) {
                     return ctx.main.begin(x.view())
                         .fetch(DType::kF32, s.m("N / 8"), s.m("N % 8"))
                         .collect(s.m("N / 8"), s.m("N % 8"))
                         .vector_init()
                         .vector_intra_slice_branch(BranchMode::Unconditional())
                         .vector_split(s.m("N / 4"), s.m("N % 4"))
                         .vector_intra_slice_reduce("N", s.m("1"), s.m("1 # 4"), IntraSliceReduceOpF32::kAdd)
                         .vector_pad_way8(s.m("1 # 8"))
                         .vector_final()
                         .commit(s.m("1 # 2"), kOutputAddress);
                   },
                   "combines positions"});
  return cases;
}

struct Prepared {
  std::unique_ptr<MappingScope> scope;
  std::unique_ptr<Device> device;
  std::vector<DeviceTensor> inputs;
};

// The ids tensor of Case::ids on `device`, after the inputs.
DeviceTensor WriteIds(Device& device, const MappingScope& s, int32_t odd_one) {
  const Mapping host = s.m("S, A");
  std::vector<double> ids;
  for (int64_t p = 0; p < host.size(); ++p) {
    const Cell cell = host.map(p);
    const int64_t at_s = cell.index["S"], at_a = cell.index["A"];
    ids.push_back(odd_one >= 0 && at_s == 1 && at_a == 5 ? odd_one : static_cast<double>((at_s + at_a) % 4));
  }
  absl::StatusOr<HostTensor> values = HostTensor::FromValues(DType::kI32, host, ids);
  EXPECT_TRUE(values.ok()) << values.status();
  absl::StatusOr<Placement> placement =
      Place(device, DType::kI32, Tier::kDm, {s.m("1"), s.m("1 # 2"), s.m("S # 256"), s.m("A")}, Address::At(1 << 13));
  EXPECT_TRUE(placement.ok()) << placement.status();
  absl::StatusOr<DeviceTensor> written = WriteAs(*values, device, *placement);
  EXPECT_TRUE(written.ok()) << written.status();
  return *written;
}

// The inputs (x, and y for a VRF operand) on a new device, with a pattern over every output unit's
// bytes so that bytes the pipeline must leave as they were are not zero.
Prepared PrepareDevice(const Case& c, int seed) {
  Prepared r;
  r.scope = std::make_unique<MappingScope>(*Axes::Parse(c.axes));
  r.device = std::make_unique<Device>(1);
  const MappingScope& s = *r.scope;
  for (int64_t i = 0; i < 2; ++i) {
    if (i == 1 && c.ids != -2) {
      r.inputs.push_back(WriteIds(*r.device, s, c.ids));
      continue;
    }
    absl::StatusOr<Placement> placement = Place(*r.device, DType::kF32, Tier::kDm,
                                                {s.m("1"), s.m("1 # 2"), s.m("S # 256"), s.m(c.element)},
                                                Address::At(i * (1 << 12)));
    EXPECT_TRUE(placement.ok()) << placement.status();
    Mapping host = Pair({s.m("S"), s.m(c.element)});
    absl::StatusOr<HostTensor> values = HostTensor::Random(DType::kF32, host, seed + static_cast<int>(i));
    EXPECT_TRUE(values.ok());
    absl::StatusOr<DeviceTensor> written = WriteAs(*values, *r.device, *placement);
    EXPECT_TRUE(written.ok()) << written.status();
    r.inputs.push_back(*written);
  }
  for (int64_t unit = 0; unit < 2 * 256; ++unit) {
    uint8_t* data = r.device->UnitData(Tier::kDm, unit);
    if (data != nullptr) std::memset(data + kOutputAddress, 0xa5, kOutputBytes);
  }
  return r;
}

std::vector<uint8_t> OutputUnits(const Device& device) {
  std::vector<uint8_t> bytes;
  for (int64_t unit = 0; unit < 2 * 256; ++unit) {
    const uint8_t* data = device.UnitData(Tier::kDm, unit);
    if (data != nullptr) bytes.insert(bytes.end(), data + kOutputAddress, data + kOutputAddress + kOutputBytes);
  }
  return bytes;
}

class VectorInPlaceTest : public ::testing::TestWithParam<std::tuple<int, int>> {};

TEST_P(VectorInPlaceTest, RunsInPlaceOrSaysWhyAndAgreesWithTheInterpreter) {
  const auto [index, threads] = GetParam();
  const Case c = Cases()[static_cast<size_t>(index)];
  SCOPED_TRACE(c.name);
  Prepared traced = PrepareDevice(c, 1);
  const MappingScope& s = *traced.scope;
  KernelOf kernel = [&c, &s](Context& ctx, const std::vector<DeviceTensor>& in)
      -> absl::StatusOr<std::vector<DeviceTensor>> {
    absl::StatusOr<DmTensor> out = c.body(ctx, DmTensor(in[0]), DmTensor(in[1]), s);
    if (!out.ok()) return out.status();
    return std::vector<DeviceTensor>{*out};
  };
  absl::StatusOr<Program> program = Trace(kernel, traced.inputs);
  ASSERT_TRUE(program.ok()) << program.status();

  // What the last pipeline (the vector one) decides on the traced tensors.
  const auto& op = std::get<PipelineOp>(program->ops.back().body);
  PipelineTensors tensors{{DmTensor(*op.inputs[0].handle)}, std::nullopt, *op.output.handle};
  if (op.inputs.size() > 1) tensors.inputs.push_back(DmTensor(*op.inputs[1].handle));  // an interleaved pair
  for (const TensorRef& vrf : op.vrf_operands) tensors.vrf_operands.push_back(*vrf.handle);
  absl::StatusOr<std::unique_ptr<jit::KernelCache>> kernels = jit::KernelCache::Create(threads);
  ASSERT_TRUE(kernels.ok());
  absl::StatusOr<std::string> why = jit::WhyNotInPlace(**kernels, op, tensors);
  ASSERT_TRUE(why.ok()) << why.status();
  if (std::string(c.refusal).empty()) {
    EXPECT_EQ(*why, "");
  } else {
    EXPECT_NE(why->find(c.refusal), std::string::npos) << *why;
  }

  absl::StatusOr<std::unique_ptr<jit::JitBackend>> jit = jit::JitBackend::Create({.threads = threads});
  ASSERT_TRUE(jit.ok());
  ASSERT_TRUE((*jit)->Prepare(*program).ok());
  interp::Interpreter interpreter;
  // Twice on one device (the kept plan), then on a fresh one, each time with new values.
  auto jit_run = std::make_unique<Prepared>(PrepareDevice(c, 10));
  for (int seed : {10, 20, 30}) {
    if (seed == 30) jit_run = std::make_unique<Prepared>(PrepareDevice(c, seed));
    Prepared want_run = PrepareDevice(c, seed);
    if (seed == 20) {  // new values into the same inputs
      Prepared values = PrepareDevice(c, seed);
      for (size_t i = 0; i < 2; ++i) {
        absl::StatusOr<HostTensor> host = ReadAs(values.inputs[i], values.inputs[i].full_mapping());
        ASSERT_TRUE(host.ok());
        ASSERT_TRUE(WriteInto(*host, jit_run->inputs[i]).ok());
      }
      for (int64_t unit = 0; unit < 2 * 256; ++unit) {
        uint8_t* data = jit_run->device->UnitData(Tier::kDm, unit);
        if (data != nullptr) std::memset(data + kOutputAddress, 0xa5, kOutputBytes);
      }
    }
    absl::StatusOr<std::vector<DeviceTensor>> want = Launch(*program, *want_run.device, interpreter, want_run.inputs);
    ASSERT_TRUE(want.ok()) << want.status();
    absl::StatusOr<std::vector<DeviceTensor>> got = Launch(*program, *jit_run->device, **jit, jit_run->inputs);
    ASSERT_TRUE(got.ok()) << got.status();
    EXPECT_EQ(OutputUnits(*jit_run->device), OutputUnits(*want_run.device)) << "seed " << seed;
  }
}

// An id outside 0-15 in the ids VRF fails the op on both backends, naming the rule, and the
// in-place run writes nothing of the output before it fails.
TEST(VectorInPlaceVrfIds, AnIdOutOfRangeFailsOnBothBackendsNamingTheRule) {
  const Case c{"vrf_id_16", "S = 3, T = 16, A = 8", "T, A", VrfIdOps, "", /*ids=*/16};
  for (int threads : {1, 2}) {
    absl::StatusOr<std::unique_ptr<jit::JitBackend>> jit = jit::JitBackend::Create({.threads = threads});
    ASSERT_TRUE(jit.ok());
    interp::Interpreter interpreter;
    for (Backend* backend : {static_cast<Backend*>(jit->get()), static_cast<Backend*>(&interpreter)}) {
      Prepared run = PrepareDevice(c, 10);
      const std::vector<uint8_t> before = OutputUnits(*run.device);
      Context ctx(*run.device, *backend);
      absl::StatusOr<DmTensor> got = c.body(ctx, DmTensor(run.inputs[0]), DmTensor(run.inputs[1]), *run.scope);
      ASSERT_FALSE(got.ok());
      EXPECT_NE(got.status().message().find("ExecutionId range"), std::string::npos) << got.status();
      EXPECT_NE(got.status().message().find("holds 16"), std::string::npos) << got.status();
      EXPECT_EQ(OutputUnits(*run.device), before);
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Kinds, VectorInPlaceTest, ::testing::Combine(::testing::Range(0, static_cast<int>(Cases().size())), ::testing::Values(1, 2)),
                         [](const ::testing::TestParamInfo<std::tuple<int, int>>& info) {
                           return absl::StrCat(Cases()[static_cast<size_t>(std::get<0>(info.param))].name, "_threads",
                                               std::get<1>(info.param));
                         });

}  // namespace
}  // namespace visa
