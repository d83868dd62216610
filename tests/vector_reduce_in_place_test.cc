// Vector Engine pipelines with reductions run on kept images from device to device
// (jit/in_place_reduce.h) against the interpreter: each qualifying shape (intra-slice reduces over
// Time, Packet and both, a ragged row padded in its packets, element ops and a VRF operand before
// the reduce, an FpDiv after it, i32 saturating sums, the inter-slice reduce and its broadcast,
// ValidCount, AxisToggle and Comparison ids with guarded ops, a fetch that pads with a value before
// a relayout)
// runs that way, and its output units' bytes, pad bytes and the bytes around them included, equal
// the interpreter's, relaunched on one device with new values and on a fresh one; each shape that
// must not run that way says why (Comparison ids computed before any op or read after a
// relayout, a pad value read before any relayout, ids after a leading inter-slice reduce).
// Small shapes, 1 and 2 threads; the inputs sit on one cluster of two (`1 # 2`), so every stream
// has padded units.
#include <cstring>
#include <functional>
#include <limits>
#include <memory>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "dsl/mapping_parser.h"
#include "interp/interpreter.h"
#include "jit/in_place_reduce.h"
#include "jit/jit_backend.h"
#include "runtime/launch.h"
#include "runtime/transfer.h"

namespace visa {
namespace {

constexpr int64_t kOutputAddress = 1 << 14;
constexpr int64_t kOutputBytes = 1 << 10;  // per unit, compared raw (the output and what is around it)

constexpr BitReq kOne = BitReq::kOne, kZero = BitReq::kZero, kAny = BitReq::kIgnore;

using Body = std::function<absl::StatusOr<DmTensor>(Context&, const DmTensor&, const DmTensor&, const MappingScope&)>;

struct Case {
  const char* name;
  const char* axes;
  const char* slice;    // the inputs' Slice mapping (of 256)
  const char* element;  // the inputs' Element
  DType dtype;
  Body body;
  const char* refusal;  // empty: runs on kept images; else a word of why not
};

Stream Enter(Stream s) { return std::move(s).vector_init().vector_intra_slice_branch(BranchMode::Unconditional()); }

std::vector<Case> Cases() {
  std::vector<Case> cases;
  cases.push_back({"intra_time_and_packet_add", "S = 3, N = 16", "S # 256", "N", DType::kF32,
                   [](Context& ctx, const DmTensor& x, const DmTensor&, const MappingScope& s) {
                     return Enter(ctx.main.begin(x.view())
                                      .fetch(DType::kF32, s.m("N / 8"), s.m("N % 8"))
                                      .collect(s.m("N / 8"), s.m("N % 8")))
                         .vector_split(s.m("N / 4"), s.m("N % 4"))
                         .vector_intra_slice_reduce("N", s.m("1"), s.m("1 # 4"), IntraSliceReduceOpF32::kAdd)
                         .vector_pad_way8(s.m("1 # 8"))
                         .vector_final()
                         .commit(s.m("1 # 2"), kOutputAddress);
                   },
                   ""});
  cases.push_back({"ragged_row_max_then_div", "S = 5, N = 13", "S # 256", "N # 16", DType::kF32,
                   [](Context& ctx, const DmTensor& x, const DmTensor&, const MappingScope& s) {
                     return Enter(ctx.main.begin(x.view())
                                      .fetch(DType::kF32, s.m("N # 16 / 8"), s.m("N # 16 % 8"))
                                      .collect(s.m("N # 16 / 8"), s.m("N # 16 % 8")))
                         .vector_split(s.m("N # 16 / 4"), s.m("N # 16 % 4"))
                         .vector_fp_unary(FpUnaryOp::kExp)
                         .vector_intra_slice_reduce("N", s.m("1"), s.m("1 # 4"), IntraSliceReduceOpF32::kMax)
                         .vector_fp_div(FpDivBinaryOp::kDivF, 3.0f)
                         .vector_pad_way8(s.m("1 # 8"))
                         .vector_final()
                         .commit(s.m("1 # 2"), kOutputAddress);
                   },
                   ""});
  cases.push_back({"time_reduce_keeps_packet_i32", "S = 4, A = 2, R = 16", "S # 256", "R, A", DType::kI32,
                   [](Context& ctx, const DmTensor& x, const DmTensor&, const MappingScope& s) {
                     return Enter(ctx.main.begin(x.view())
                                      .fetch(DType::kI32, s.m("R"), s.m("A # 8"))
                                      .collect(s.m("R"), s.m("A # 8")))
                         .vector_trim_way4(s.m("A # 4"))
                         .vector_intra_slice_reduce("R", s.m("1"), s.m("A # 4"), IntraSliceReduceOpI32::kAddSat)
                         .vector_pad_way8(s.m("A # 8"))
                         .vector_final()
                         .commit(s.m("A"), kOutputAddress);
                   },
                   ""});
  cases.push_back({"vrf_operand_exp_sum", "S = 3, N = 32", "S # 256", "N", DType::kF32,
                   [](Context& ctx, const DmTensor& x, const DmTensor& y, const MappingScope& s)
                       -> absl::StatusOr<DmTensor> {
                     absl::StatusOr<VrfTensor> vrf = ctx.sub.begin(y.view())
                                                         .fetch(DType::kF32, s.m("1"), s.m("1 # 8"))
                                                         .collect(s.m("1"), s.m("1 # 8"))
                                                         .to_vrf(s.m("1 # 8"), 0);
                     if (!vrf.ok()) return vrf.status();
                     return Enter(ctx.main.begin(x.view())
                                      .fetch(DType::kF32, s.m("N / 8"), s.m("N % 8"))
                                      .collect(s.m("N / 8"), s.m("N % 8")))
                         .vector_split(s.m("N / 4"), s.m("N % 4"))
                         .vector_fp_binary(FpBinaryOp::SubF(), *vrf)
                         .vector_fp_unary(FpUnaryOp::kExp)
                         .vector_intra_slice_reduce("N", s.m("1"), s.m("1 # 4"), IntraSliceReduceOpF32::kAdd)
                         .vector_pad_way8(s.m("1 # 8"))
                         .vector_final()
                         .commit(s.m("1 # 2"), kOutputAddress);
                   },
                   ""});
  cases.push_back({"inter_broadcast", "W = 64, R = 4, X = 4, P = 8", "W, R", "P", DType::kF32,
                   [](Context& ctx, const DmTensor& x, const DmTensor&, const MappingScope& s) {
                     return ctx.main.begin(x.view())
                         .fetch(DType::kF32, s.m("1"), s.m("P"))
                         .collect(s.m("1"), s.m("P"))
                         .vector_init()
                         .vector_inter_slice_reduce(s.m("W, X"), s.m("1"), InterSliceReduceOpF32::kAdd)
                         .vector_final()
                         .commit(s.m("P"), kOutputAddress);
                   },
                   ""});
  cases.push_back({"inter_padded_slices", "W = 8, R = 4, X = 4, T = 3, P = 8", "[W, R] # 256", "T, P", DType::kF32,
                   [](Context& ctx, const DmTensor& x, const DmTensor&, const MappingScope& s) {
                     return ctx.main.begin(x.view())
                         .fetch(DType::kF32, s.m("T"), s.m("P"))
                         .collect(s.m("T"), s.m("P"))
                         .vector_init()
                         .vector_inter_slice_reduce(s.m("[W, X] # 256"), s.m("T"), InterSliceReduceOpF32::kMax)
                         .vector_final()
                         .commit(s.m("T, P"), kOutputAddress);
                   },
                   ""});
  cases.push_back({"inter_then_op_i32", "A = 512, R = 4", "A / 8, R", "A % 8", DType::kI32,
                   [](Context& ctx, const DmTensor& x, const DmTensor&, const MappingScope& s) {
                     return ctx.main.begin(x.view())
                         .fetch(DType::kI32, s.m("1"), s.m("A % 8"))
                         .collect(s.m("1"), s.m("A % 8"))
                         .vector_init()
                         .vector_inter_slice_reduce(s.m("A / 8, 1 # 4"), s.m("1"), InterSliceReduceOpI32::kAddSat)
                         .vector_intra_slice_branch(BranchMode::Unconditional())
                         .vector_fxp(FxpBinaryOp::kAddFxp, 100)
                         .vector_final()
                         .commit(s.m("A % 8"), kOutputAddress);
                   },
                   ""});
  cases.push_back({"comparison_ids", "S = 3, N = 16", "S # 256", "N", DType::kF32,
                   [](Context& ctx, const DmTensor& x, const DmTensor&, const MappingScope& s) {
                     return ctx.main.begin(x.view())
                         .fetch(DType::kF32, s.m("N / 8"), s.m("N % 8"))
                         .collect(s.m("N / 8"), s.m("N % 8"))
                         .vector_init()
                         .vector_intra_slice_branch(BranchMode::Comparison(
                             {InputCmp::Greater(0.0f), InputCmp::False(), InputCmp::False(), InputCmp::False()}))
                         .vector_split(s.m("N / 4"), s.m("N % 4"))
                         .vector_intra_slice_reduce("N", s.m("1"), s.m("1 # 4"), IntraSliceReduceOpF32::kAdd)
                         .vector_pad_way8(s.m("1 # 8"))
                         .vector_final()
                         .commit(s.m("1 # 2"), kOutputAddress);
                   },
                   "Comparison"});  // the ids would be computed in a segment of their own
  // As moe_layer's masked sums: Comparison ids (two conditions) from the values, the AND 0 and a
  // guarded add of 1 (a count of the rows that hold), then the sum over each row.
  cases.push_back({"comparison_masked_count_i32", "S = 3, A = 4, E = 16", "S # 256", "A, E", DType::kI32,
                   [](Context& ctx, const DmTensor& x, const DmTensor&, const MappingScope& s) {
                     const TagGuard holds = TagGuard::Matches({kOne, kOne, kAny, kAny});
                     return ctx.main.begin(x.view())
                         .fetch(DType::kI32, s.m("A, E / 8"), s.m("E % 8"))
                         .collect(s.m("A, E / 8"), s.m("E % 8"))
                         .vector_init()
                         .vector_intra_slice_branch(BranchMode::Comparison(
                             {InputCmp::Less(0), InputCmp::Greater(-(1 << 30)), InputCmp::False(), InputCmp::False()}))
                         .vector_logic(LogicBinaryOpI32::kBitAnd, 0)
                         .vector_fxp(FxpBinaryOp::kAddFxp, VeBranchOperand().imm(holds, 1))
                         .vector_split(s.m("A, E / 4"), s.m("E % 4"))
                         .vector_intra_slice_reduce("E", s.m("A"), s.m("1 # 4"), IntraSliceReduceOpI32::kAddSat)
                         .vector_pad_way8(s.m("1 # 8"))
                         .vector_final()
                         .commit(s.m("A, 1 # 2"), kOutputAddress);
                   },
                   ""});
  // The same with the added value a VRF operand's (moe_layer's gather of Global_Offset).
  cases.push_back({"comparison_masked_vrf_sum_i32", "S = 3, A = 4, E = 16", "S # 256", "A, E", DType::kI32,
                   [](Context& ctx, const DmTensor& x, const DmTensor& y, const MappingScope& s)
                       -> absl::StatusOr<DmTensor> {
                     absl::StatusOr<VrfTensor> vrf = ctx.sub.begin(y.view())
                                                         .fetch(DType::kI32, s.m("A, E / 8"), s.m("E % 8"))
                                                         .collect(s.m("A, E / 8"), s.m("E % 8"))
                                                         .to_vrf(s.m("A, E"), 0);
                     if (!vrf.ok()) return vrf.status();
                     const TagGuard holds = TagGuard::Matches({kOne, kAny, kAny, kAny});
                     return ctx.main.begin(x.view())
                         .fetch(DType::kI32, s.m("A, E / 8"), s.m("E % 8"))
                         .collect(s.m("A, E / 8"), s.m("E % 8"))
                         .vector_init()
                         .vector_intra_slice_branch(BranchMode::Comparison(
                             {InputCmp::Greater(0), InputCmp::False(), InputCmp::False(), InputCmp::False()}))
                         .vector_logic(LogicBinaryOpI32::kBitAnd, 0)
                         .vector_fxp(FxpBinaryOp::kAddFxp, VeBranchOperand().rf(holds, VeRhs::vrf(*vrf)))
                         .vector_split(s.m("A, E / 4"), s.m("E % 4"))
                         .vector_intra_slice_reduce("E", s.m("A"), s.m("1 # 4"), IntraSliceReduceOpI32::kAddSat)
                         .vector_pad_way8(s.m("1 # 8"))
                         .vector_final()
                         .commit(s.m("A, 1 # 2"), kOutputAddress);
                   },
                   ""});
  // A guarded op after a relayout reads the Comparison ids the walk moved through it.
  cases.push_back({"comparison_ids_after_a_relayout", "S = 3, N = 16", "S # 256", "N", DType::kF32,
                   [](Context& ctx, const DmTensor& x, const DmTensor&, const MappingScope& s) {
                     return ctx.main.begin(x.view())
                         .fetch(DType::kF32, s.m("N / 8"), s.m("N % 8"))
                         .collect(s.m("N / 8"), s.m("N % 8"))
                         .vector_init()
                         .vector_intra_slice_branch(BranchMode::Comparison(
                             {InputCmp::Greater(0.0f), InputCmp::False(), InputCmp::False(), InputCmp::False()}))
                         .vector_logic(LogicBinaryOpF32::kBitOr, 0.0f)
                         .vector_split(s.m("N / 4"), s.m("N % 4"))
                         .vector_fp_binary(FpBinaryOp::AddF(),
                                           VeBranchOperand().imm(TagGuard::Matches({kOne, kAny, kAny, kAny}), 100.0f))
                         .vector_intra_slice_reduce("N", s.m("1"), s.m("1 # 4"), IntraSliceReduceOpF32::kAdd)
                         .vector_pad_way8(s.m("1 # 8"))
                         .vector_final()
                         .commit(s.m("1 # 2"), kOutputAddress);
                   },
                   "relayout"});
  cases.push_back({"fetch_pad_value", "R = 13", "R # 32 / 8 # 256", "R # 32 % 8", DType::kI32,
                   [](Context& ctx, const DmTensor& x, const DmTensor&, const MappingScope& s) {
                     return Enter(ctx.main.begin(x.view())
                                      .fetch_masked(DType::kI32, std::numeric_limits<int32_t>::max(),
                                                    s.m("R # 32 / 4 % 2"), s.m("R # 32 % 4 # 8"))
                                      .collect(s.m("R # 32 / 4 % 2"), s.m("R # 32 % 4 # 8")))
                         .vector_trim_way4(s.m("R # 32 % 4"))
                         .vector_intra_slice_reduce("R", s.m("1"), s.m("1 # 4"), IntraSliceReduceOpI32::kMin,
                                                    ReducePadding::kIdentity)
                         .vector_pad_way8(s.m("1 # 8"))
                         .vector_final()
                         .commit(s.m("1 # 2"), kOutputAddress);
                   },
                   "relayout"});  // the trim drops the packet's padding lanes
  // As the vector_validcount_exp_row_sum sample: a pad value (here not 0, so the sum pads by valid
  // count), exp, the pads' own op under id 0 (ValidCount), then the sum.
  cases.push_back({"validcount_exp_sum_pad_value", "A = 8, R = 13", "A / 4 # 256", "A % 4, R # 16", DType::kF32,
                   [](Context& ctx, const DmTensor& x, const DmTensor&, const MappingScope& s) {
                     const Mapping time = s.m("A % 4, R # 16 / 8"), packet = s.m("R # 16 % 8");
                     return ctx.main.begin(x.view())
                         .fetch_masked(DType::kF32, 0.5, time, packet)
                         .collect(time, packet)
                         .vector_init()
                         .vector_intra_slice_branch(BranchMode::ValidCount("R"))
                         .vector_split(s.m("A % 4, R # 16 / 8, R # 16 % 8 / 4"), s.m("R # 16 % 4"))
                         .vector_fp_unary(FpUnaryOp::kExp)
                         .vector_fp_binary(FpBinaryOp::MulF(FpMulAlu::kMul0),
                                           VeBranchOperand().imm(TagGuard::Matches({kZero, kAny, kAny, kAny}), 0.0f))
                         .vector_intra_slice_reduce("R", s.m("A % 4"), s.m("1 # 4"), IntraSliceReduceOpF32::kAdd)
                         .vector_pad_way8(s.m("1 # 8"))
                         .vector_final()
                         .commit(s.m("A % 4, 1 # 2"), kOutputAddress);
                   },
                   ""});
  // AxisToggle ids (bit 3 on odd rows) select an op per row before a max over each row.
  cases.push_back({"axis_toggle_row_max", "S = 3, T = 4, N = 16", "S # 256", "T, N", DType::kF32,
                   [](Context& ctx, const DmTensor& x, const DmTensor&, const MappingScope& s) {
                     return ctx.main.begin(x.view())
                         .fetch(DType::kF32, s.m("T, N / 8"), s.m("N % 8"))
                         .collect(s.m("T, N / 8"), s.m("N % 8"))
                         .vector_init()
                         .vector_intra_slice_branch(BranchMode::AxisToggle("T"))
                         .vector_split(s.m("T, N / 4"), s.m("N % 4"))
                         .vector_fp_binary(FpBinaryOp::AddF(),
                                           VeBranchOperand().imm(TagGuard::Matches({kAny, kAny, kAny, kOne}), 100.0f))
                         .vector_intra_slice_reduce("N", s.m("T"), s.m("1 # 4"), IntraSliceReduceOpF32::kMax)
                         .vector_pad_way8(s.m("1 # 8"))
                         .vector_final()
                         .commit(s.m("T, 1 # 2"), kOutputAddress);
                   },
                   ""});
  // The inter-slice reduce reads the fetch's padding (a pad value) before any relayout could zero it.
  cases.push_back({"pad_value_read_by_a_reduce", "W = 8, R = 4, X = 4, T = 3, P = 6", "[W, R] # 256", "T, P # 8",
                   DType::kF32,
                   [](Context& ctx, const DmTensor& x, const DmTensor&, const MappingScope& s) {
                     return ctx.main.begin(x.view())
                         .fetch_masked(DType::kF32, 2.0, s.m("T"), s.m("P # 8"))
                         .collect(s.m("T"), s.m("P # 8"))
                         .vector_init()
                         .vector_inter_slice_reduce(s.m("[W, X] # 256"), s.m("T"), InterSliceReduceOpF32::kAdd)
                         .vector_final()
                         .commit(s.m("T, P # 8"), kOutputAddress);
                   },
                   "pad"});
  return cases;
}

struct Prepared {
  std::unique_ptr<MappingScope> scope;
  std::unique_ptr<Device> device;
  std::vector<DeviceTensor> inputs;
};

// The inputs (x, and y for a VRF operand) on a new device, with a pattern over every output unit's
// bytes so that bytes the pipeline must leave as they were are not zero.
Prepared PrepareDevice(const Case& c, int seed) {
  Prepared r;
  r.scope = std::make_unique<MappingScope>(*Axes::Parse(c.axes));
  r.device = std::make_unique<Device>(1);
  const MappingScope& s = *r.scope;
  for (int64_t i = 0; i < 2; ++i) {
    absl::StatusOr<Placement> placement = Place(*r.device, c.dtype, Tier::kDm,
                                                {s.m("1"), s.m("1 # 2"), s.m(c.slice), s.m(c.element)},
                                                Address::At(i * (1 << 12)));
    EXPECT_TRUE(placement.ok()) << placement.status();
    Mapping host = Pair({s.m(c.slice), s.m(c.element)});
    absl::StatusOr<HostTensor> values = HostTensor::Random(c.dtype, host, seed + static_cast<int>(i));
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

class VectorReduceInPlaceTest : public ::testing::TestWithParam<std::tuple<int, int>> {};

TEST_P(VectorReduceInPlaceTest, RunsOnKeptImagesOrSaysWhyAndAgreesWithTheInterpreter) {
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

  // What the last pipeline (the reduce) decides on the traced tensors.
  const auto& op = std::get<PipelineOp>(program->ops.back().body);
  PipelineTensors tensors{{DmTensor(*op.inputs[0].handle)}, std::nullopt, *op.output.handle};
  for (const TensorRef& vrf : op.vrf_operands) tensors.vrf_operands.push_back(*vrf.handle);
  absl::StatusOr<std::unique_ptr<jit::KernelCache>> kernels = jit::KernelCache::Create(threads);
  ASSERT_TRUE(kernels.ok());
  absl::StatusOr<std::string> why = jit::WhyNotReduceInPlace(**kernels, op, tensors);
  ASSERT_TRUE(why.ok()) << why.status();
  if (std::string(c.refusal).empty()) {
    EXPECT_EQ(*why, "");
  } else {
    EXPECT_NE(why->find(c.refusal), std::string::npos) << *why;
  }

  absl::StatusOr<std::unique_ptr<jit::JitBackend>> jit = jit::JitBackend::Create({.threads = threads});
  ASSERT_TRUE(jit.ok());
  ASSERT_TRUE((*jit)->Prepare(*program).ok());
  const int64_t compiles = (*jit)->stats().compiles;
  interp::Interpreter interpreter;
  // Twice on one device (the kept plan and images), then on a fresh one, each time with new values.
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
  EXPECT_EQ((*jit)->stats().compiles, compiles) << "Prepare compiled every kernel the runs use";
}

INSTANTIATE_TEST_SUITE_P(Shapes, VectorReduceInPlaceTest,
                         ::testing::Combine(::testing::Range(0, static_cast<int>(Cases().size())), ::testing::Values(1, 2)),
                         [](const ::testing::TestParamInfo<std::tuple<int, int>>& info) {
                           return absl::StrCat(Cases()[static_cast<size_t>(std::get<0>(info.param))].name, "_threads",
                                               std::get<1>(info.param));
                         });

}  // namespace
}  // namespace visa
