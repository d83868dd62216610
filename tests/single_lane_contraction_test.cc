// Contractions without lanes: no retained time digit broadcasts the weights (a GEMV, a decode
// projection of one token), so the fused path runs each time step as a block of one live lane
// (jit/fused_contraction.cc). These used to run stage by stage. Each result is compared bit for
// bit with the interpreter, on padded slices (`S # 256`: 2 live of 256, in a `1 # 2` cluster),
// with and without a cast, a Vector Engine epilogue reading the VRF, a Max reduce and i8; and
// the samples that have such contractions (gemv, the tensor-parallel Llama layer) fuse them.
#include <gtest/gtest.h>

#include <limits>

#include "dsl/mapping_parser.h"
#include "interp/interpreter.h"
#include "jit/jit_backend.h"
#include "jit/packet_contraction_kernel.h"
#include "runtime/launch.h"
#include "runtime/transfer.h"
#include "samples/models/llama_steps.h"
#include "samples/sample.h"

namespace visa::jit {
namespace {

struct Gemv {
  DType type = DType::kBF16;
  int64_t k = 256, rows = 8;
  std::string out_packet = "R";
  std::string row = "R";  // the TRF's Row: R padded to 1, 2, 4 or 8 Rows
  std::string blocks;  // "B": a retained time digit whose every value reads its own weights
  ReduceOp op = ReduceOp::kAdd;
  bool cast = false;  // the f32 sums cast to bf16 before the commit
};

// x [S, K] (one row per slice) contracted with w [S, (B,) R, K] through the TRF: time [(B,) K / 32],
// the packet K % 32, every time step its own weights; committed as [(B,) R] per slice.
std::vector<uint32_t> RunGemv(Backend& backend, const MappingScope& s, const Gemv& g, const HostTensor& x,
                              const HostTensor& w) {
  auto device = std::make_unique<Device>(1);
  Context ctx(*device, backend);
  const Mapping cluster = s.m("1 # 2"), slice = s.m("S # 256");
  const std::string b = g.blocks.empty() ? "" : g.blocks + ", ";
  const int64_t flit = g.type == DType::kI8 ? 32 : 16, packet = 2 * flit;
  const std::string outer = absl::StrCat("K / ", flit), inner = absl::StrCat("K % ", flit);
  absl::StatusOr<HbmTensor> xh = x.to_hbm(ctx.pdma, 0, s.m("1"), x.mapping());
  absl::StatusOr<HbmTensor> wh = w.to_hbm(ctx.pdma, 1 << 20, s.m("1"), w.mapping());
  EXPECT_TRUE(xh.ok() && wh.ok());
  absl::StatusOr<DmTensor> xd = xh->to_dm(ctx.tdma, 0, cluster, slice, s.m("K"));
  absl::StatusOr<DmTensor> wd = wh->to_dm(ctx.tdma, 1 << 14, cluster, slice, s.m(b + "R, K"));
  EXPECT_TRUE(xd.ok()) << xd.status();
  EXPECT_TRUE(wd.ok()) << wd.status();
  if (!xd.ok() || !wd.ok()) return {};
  absl::StatusOr<TrfTensor> trf = ctx.sub.begin(wd->view())
                                      .fetch(g.type, s.m(g.row + ", " + b + outer), s.m(inner))
                                      .collect(s.m(g.row + ", " + b + outer), s.m(inner))
                                      .to_trf(s.m(g.row), s.m(b + "K"), TrfAddress::kFull);
  EXPECT_TRUE(trf.ok()) << trf.status();
  if (!trf.ok()) return {};
  Stream sums = ctx.main.begin(xd->view())
                    .fetch(g.type, s.m(b + outer), s.m(inner))
                    .collect(s.m(b + outer), s.m(inner))
                    .align(s.m(absl::StrCat(b, "K / ", packet)), s.m(absl::StrCat("K % ", packet)), *trf)
                    .contract(s.m("1"), g.op)
                    .accumulate(s.m(g.blocks.empty() ? "1" : g.blocks), s.m(g.out_packet),
                                AccumulationKind::kInterleaved);
  if (g.cast) sums = std::move(sums).cast(DType::kBF16, s.m(g.out_packet + " # 16"));
  const std::string element = b + g.out_packet;
  absl::StatusOr<DmTensor> out = std::move(sums).commit(s.m(element), 1 << 16);
  EXPECT_TRUE(out.ok()) << out.status();
  if (!out.ok()) return {};
  absl::StatusOr<HostTensor> host = ReadAs(*out, s.m("S, " + element));
  EXPECT_TRUE(host.ok()) << host.status();
  return host.ok() ? host->ToBits() : std::vector<uint32_t>{};
}

struct GemvCase {
  std::string name;
  Gemv gemv;
};

class SingleLane : public testing::TestWithParam<GemvCase> {};

TEST_P(SingleLane, FusesAndAgreesWithTheInterpreterBitForBit) {
  const Gemv& g = GetParam().gemv;
  const std::string b = g.blocks.empty() ? "" : "B = 4, ";
  MappingScope s(*Axes::Parse(absl::StrCat("S = 2, ", b, "K = ", g.k, ", R = ", g.rows)));
  const std::string wb = g.blocks.empty() ? "" : "B, ";
  HostTensor x = *HostTensor::Random(g.type, s.m("S, K"), 71);
  HostTensor w = *HostTensor::Random(g.type, s.m("S, " + wb + "R, K"), 72);
  interp::Interpreter interpreter;
  const std::vector<uint32_t> expected = RunGemv(interpreter, s, g, x, w);
  ASSERT_FALSE(expected.empty());
  for (int threads : {1, 2}) {
    absl::StatusOr<std::unique_ptr<JitBackend>> jit = JitBackend::Create({.threads = threads});
    ASSERT_TRUE(jit.ok()) << jit.status();
    const std::vector<uint32_t> got = RunGemv(**jit, s, g, x, w);
    EXPECT_EQ((*jit)->stats().fused_pipelines, 1) << threads << " threads";
    // bf16 runs the packet kernel; i8 the lane kernel with one live lane per block.
    EXPECT_EQ((*jit)->stats().packet_pipelines, g.type == DType::kBF16 ? 1 : 0) << threads << " threads";
    EXPECT_EQ(got, expected) << threads << " threads";
  }
}

INSTANTIATE_TEST_SUITE_P(
    All, SingleLane,
    testing::Values(
        // The sample gemv's shape: one Row, every K / 32 step summed into one slot, cast to bf16.
        GemvCase{"bf16_one_row_cast", {.rows = 1, .out_packet = "R # 8", .cast = true}},
        // Eight Rows (two blocks of the four sharing an operand load), f32 sums.
        GemvCase{"bf16_eight_rows", {}},
        // Three Rows: a partial block of Rows, the Reducer's packet padded.
        GemvCase{"bf16_three_rows", {.rows = 3, .out_packet = "R # 8", .row = "R # 4"}},
        // The decode projection's shape: a retained digit B whose values read their own weights
        // (the GEMM's column groups, with one token instead of 32 rows).
        GemvCase{"bf16_retained_digit", {.blocks = "B", .cast = true}},
        // A K that is not a power of two times the packet (3 packets).
        GemvCase{"bf16_three_packets", {.k = 96, .rows = 2, .out_packet = "R # 8"}},
        // Reduce-max of bf16 on one Row: the tree and the accumulation take the larger.
        GemvCase{"bf16_max", {.rows = 1, .out_packet = "1 # 8", .op = ReduceOp::kMax}},
        // Integers: exact i32 sums (integer pairs or byte quads).
        GemvCase{"i8", {.type = DType::kI8, .k = 512}},
        GemvCase{"i8_retained_digit", {.type = DType::kI8, .k = 128, .rows = 5, .out_packet = "R # 8", .row = "R # 8", .blocks = "B"}},
        // Reduce-max on one Row, accumulated with max over the time steps.
        GemvCase{"i8_max", {.type = DType::kI8, .k = 256, .rows = 1, .out_packet = "1 # 8", .op = ReduceOp::kMax}}),
    [](const testing::TestParamInfo<GemvCase>& info) { return info.param.name; });

// The Llama decode SwiGLU step on one token: the up projection (f32 sums into DM, then into the
// VRF) and the gate projection with SiLU(gate) x up in its Vector Engine epilogue, as
// samples/models/llama_program.cc records them; slices `F / 32 # 256` (2 live of 256).
std::vector<uint32_t> RunSwiGlu(Backend& backend, const MappingScope& m, const HostTensor& x, const HostTensor& up,
                                const HostTensor& gate) {
  auto device = std::make_unique<Device>(1);
  Context ctx(*device, backend);
  absl::StatusOr<HbmTensor> xh = x.to_hbm(ctx.pdma, 0, m.m("1"), x.mapping());
  absl::StatusOr<HbmTensor> uh = up.to_hbm(ctx.pdma, 1 << 20, m.m("1"), up.mapping());
  absl::StatusOr<HbmTensor> gh = gate.to_hbm(ctx.pdma, 2 << 20, m.m("1"), gate.mapping());
  EXPECT_TRUE(xh.ok() && uh.ok() && gh.ok());
  const models::MatmulSpec up_spec{"up projection", "F / 32", "S", "F", models::Over("", "D")};
  absl::StatusOr<DmTensor> up_dm = models::Matmul(ctx, m, up_spec, *xh, *uh, false);
  EXPECT_TRUE(up_dm.ok()) << up_dm.status();
  if (!up_dm.ok()) return {};
  absl::StatusOr<VrfTensor> up_vrf = models::TileToVrf(ctx, m, up_spec, *up_dm, "up to VRF");
  EXPECT_TRUE(up_vrf.ok()) << up_vrf.status();
  if (!up_vrf.ok()) return {};
  const models::MatmulSpec gate_spec{"gate projection + SiLU x up", "F / 32", "S", "F", models::Over("", "D")};
  absl::StatusOr<DmTensor> act = models::Matmul(ctx, m, gate_spec, *xh, *gh, true, [&](Stream s) {
    return models::Enter(std::move(s))
        .vector_split(m.m("S, F / 8 % 4, F % 8 / 4"), m.m("F % 4"))
        .vector_stash()
        .vector_fp_unary(FpUnaryOp::kSigmoid)
        .vector_fp_binary(FpBinaryOp::MulF(FpMulAlu::kMul0), Stash)
        .vector_fp_binary(FpBinaryOp::MulF(FpMulAlu::kMul1), *up_vrf)
        .vector_concat(m.m("S, F / 8 % 4"), m.m("F % 8"))
        .vector_final();
  });
  EXPECT_TRUE(act.ok()) << act.status();
  if (!act.ok()) return {};
  absl::StatusOr<HostTensor> host = ReadAs(*act, m.m("S, F"));
  EXPECT_TRUE(host.ok()) << host.status();
  return host.ok() ? host->ToBits() : std::vector<uint32_t>{};
}

TEST(SingleLaneEpilogue, DecodeSwiGluFusesBothProjectionsAndAgreesWithTheInterpreter) {
  MappingScope m(*Axes::Parse("S = 1, D = 256, F = 64"));
  HostTensor x = *HostTensor::Random(DType::kBF16, m.m("S, D"), 81);
  HostTensor up = *HostTensor::Random(DType::kBF16, m.m("F, D"), 82);
  HostTensor gate = *HostTensor::Random(DType::kBF16, m.m("F, D"), 83);
  interp::Interpreter interpreter;
  const std::vector<uint32_t> expected = RunSwiGlu(interpreter, m, x, up, gate);
  ASSERT_FALSE(expected.empty());
  for (int threads : {1, 2}) {
    absl::StatusOr<std::unique_ptr<JitBackend>> jit = JitBackend::Create({.threads = threads});
    ASSERT_TRUE(jit.ok()) << jit.status();
    EXPECT_EQ(RunSwiGlu(**jit, m, x, up, gate), expected) << threads << " threads";
    EXPECT_EQ((*jit)->stats().fused_pipelines, 2) << threads << " threads";
    EXPECT_EQ((*jit)->stats().packet_pipelines, 2) << threads << " threads";
  }
}

// Rare bf16 values (subnormals, which the contraction's widening flushes to signed zeros, NaNs,
// infinities, signed zeros) in every position of operand and weights.
TEST(SingleLaneRareValues, AgreeWithTheInterpreterBitForBit) {
  MappingScope s(*Axes::Parse("S = 2, K = 256, R = 4"));
  const std::vector<double> rare = {0.0, -0.0, 1e-40, -1e-40, std::numeric_limits<double>::infinity(),
                                    -std::numeric_limits<double>::infinity(), std::numeric_limits<double>::quiet_NaN(),
                                    1.5, -3.25, 1e38, -1e38, 1e-38};
  std::vector<double> xv(2 * 256), wv(2 * 4 * 256);
  for (size_t i = 0; i < xv.size(); ++i) xv[i] = i % 5 == 0 ? rare[i % rare.size()] : 0.5 + static_cast<double>(i % 7);
  for (size_t i = 0; i < wv.size(); ++i) wv[i] = i % 3 == 0 ? rare[(i / 3) % rare.size()] : -0.25 * static_cast<double>(i % 11);
  HostTensor x = *HostTensor::FromValues(DType::kBF16, s.m("S, K"), xv);
  HostTensor w = *HostTensor::FromValues(DType::kBF16, s.m("S, R, K"), wv);
  const Gemv g{.rows = 4, .out_packet = "R # 8"};
  interp::Interpreter interpreter;
  const std::vector<uint32_t> expected = RunGemv(interpreter, s, g, x, w);
  ASSERT_FALSE(expected.empty());
  absl::StatusOr<std::unique_ptr<JitBackend>> jit = JitBackend::Create({.threads = 1});
  ASSERT_TRUE(jit.ok()) << jit.status();
  EXPECT_EQ(RunGemv(**jit, s, g, x, w), expected);
  EXPECT_EQ((*jit)->stats().packet_pipelines, 1);
}

// The rule: the packet kernel takes only blocks of one lane, bf16 operands and an f32 sum.
TEST(PacketContractionOf, TakesOnlySingleLaneBf16Blocks) {
  LaneContractionSpec lanes;
  lanes.rows = 1;
  lanes.packet = lanes.group = 32;
  lanes.live_outer = {1};
  lanes.live_row = {1};
  lanes.live_packet.assign(32, 1);
  lanes.target = {0};
  lanes.slice_accumulators = true;
  for (int64_t p = 0; p < 32; ++p) {
    lanes.x_packet.push_back(p);
    lanes.w_packet.push_back(p);
  }
  lanes.w_offset = {0, 32};
  lanes.x_lane.assign(2 * kLanes, -1);
  lanes.x_lane[0] = 0;
  lanes.x_lane[kLanes] = 32;
  lanes.acc_lane.assign(kLanes, -1);
  lanes.acc_lane[0] = 0;
  lanes.step_x = {0, 1};
  lanes.step_w = {0, 1};
  lanes.step_acc = {0, 0};
  std::optional<PacketContractionSpec> spec = PacketContractionOf(lanes);
  ASSERT_TRUE(spec.has_value());
  EXPECT_EQ(spec->step_x, (std::vector<int64_t>{0, 32}));
  EXPECT_EQ(spec->step_w, (std::vector<int64_t>{0, 32}));
  EXPECT_EQ(spec->step_acc, (std::vector<int64_t>{0, 0}));
  LaneContractionSpec two_lanes = lanes;  // a second lane: the lane kernel's work
  two_lanes.x_lane[1] = 64;
  EXPECT_FALSE(PacketContractionOf(two_lanes).has_value());
  LaneContractionSpec integers = lanes;
  integers.dm_type = integers.x_type = integers.w_type = DType::kI8;
  integers.acc_type = DType::kI32;
  EXPECT_FALSE(PacketContractionOf(integers).has_value());
  LaneContractionSpec padded = lanes;  // a padded packet position
  padded.live_packet[31] = 0;
  EXPECT_FALSE(PacketContractionOf(padded).has_value());
  LaneContractionSpec strided = lanes;  // the packet not contiguous in DM
  strided.x_packet[1] = 2;
  EXPECT_FALSE(PacketContractionOf(strided).has_value());
}

TEST(SingleLaneSamples, GemvFusesItsContraction) {
  const samples::Sample* sample = samples::FindSample("gemv");
  ASSERT_NE(sample, nullptr);
  absl::StatusOr<std::unique_ptr<JitBackend>> jit = JitBackend::Create({.threads = 2});
  ASSERT_TRUE(jit.ok()) << jit.status();
  absl::StatusOr<samples::SampleRun> run = sample->Run(**jit);
  ASSERT_TRUE(run.ok()) << run.status();
  EXPECT_FALSE(run->mismatch.has_value()) << *run->mismatch;
  EXPECT_EQ((*jit)->stats().fused_pipelines, 1);
  EXPECT_EQ((*jit)->stats().packet_pipelines, 1);
}

// The tensor-parallel layer (prefill, then one decode launch): the decode's twelve projections
// and attention products (one token: no lanes) and the prefill's RoPE and LM head contractions
// (one row of a table, the last token) used to run stage by stage over the 4 chips' padded slices.
TEST(SingleLaneSamples, TheTensorParallelLayerFusesEveryContraction) {
  const samples::Sample* sample = samples::FindSample("llama_tiny_layer_4chip");
  ASSERT_NE(sample, nullptr);
  absl::StatusOr<std::unique_ptr<JitBackend>> jit = JitBackend::Create({.threads = 2});
  ASSERT_TRUE(jit.ok()) << jit.status();
  absl::StatusOr<samples::SampleRun> run = sample->Run(**jit);
  ASSERT_TRUE(run.ok()) << run.status();
  EXPECT_FALSE(run->mismatch.has_value()) << *run->mismatch;
  EXPECT_EQ((*jit)->stats().packet_pipelines, 15);
  EXPECT_EQ((*jit)->stats().fused_pipelines, 24);
}

}  // namespace
}  // namespace visa::jit
