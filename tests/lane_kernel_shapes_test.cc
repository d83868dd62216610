// The lane contraction kernel's blocking at shapes that do not fill it: Row counts that leave a
// partial block of the Rows sharing an operand load; and the integer kernels' byte quads (VNNI on
// hosts that have it): odd Row counts, K not a multiple of 4, i4, and extreme values summed over
// the longest K a TRF row holds.
// Each result is compared bit for bit with the interpreter and, for integers, with a host loop.
#include <gtest/gtest.h>

#include "dsl/mapping_parser.h"
#include "interp/interpreter.h"
#include "jit/jit_backend.h"
#include "runtime/launch.h"
#include "runtime/transfer.h"
#include "tests/integer_matmul_reference.h"

namespace visa::jit {
namespace {

DmTensor OnSliceZero(Context& ctx, const MappingScope& s, const HostTensor& host, int64_t address) {
  absl::StatusOr<HbmTensor> hbm = host.to_hbm(ctx.pdma, address, s.m("1"), host.mapping());
  EXPECT_TRUE(hbm.ok()) << hbm.status();
  absl::StatusOr<DmTensor> dm = hbm->to_dm(ctx.tdma, address, s.m("1 # 2"), s.m("1 # 256"), host.mapping());
  EXPECT_TRUE(dm.ok()) << dm.status();
  return *dm;
}

// x [A, K] contracted with w [R, K] through the TRF into [A, R] on slice 0: fetched `flit`
// elements of K at a time, the packet `packet` elements of K.
HostTensor Contract(Backend& backend, const MappingScope& s, DType type, const HostTensor& x, const HostTensor& w,
                    int flit, int packet, const std::string& padded, const std::string& out_packet,
                    const std::string& row = "R") {
  auto device = std::make_unique<Device>(1);
  Context ctx(*device, backend);
  // x, then w, then the result, each on a 4 KiB boundary.
  auto after = [](int64_t address, const HostTensor& t) {
    return (address + StorageBytes(t.dtype(), t.mapping().size()) + 4095) / 4096 * 4096;
  };
  const int64_t w_address = std::max<int64_t>(1 << 16, after(0, x)), out_address = after(w_address, w);
  DmTensor wd = OnSliceZero(ctx, s, w, w_address), xd = OnSliceZero(ctx, s, x, 0);
  // K padded to whole packets where it does not fill them (the strides must divide it).
  const int64_t k = x.mapping().size() / 32;
  const std::string kp = k % packet == 0 ? "K" : absl::StrCat("K # ", (k + packet - 1) / packet * packet);
  const std::string outer = absl::StrCat(kp, " / ", flit), inner = absl::StrCat(kp, " % ", flit);
  absl::StatusOr<TrfTensor> trf = ctx.sub.begin(wd.view())
                                      .fetch(type, s.m(row + ", " + outer), s.m(inner))
                                      .collect(s.m(row + ", " + outer), s.m(inner))
                                      .to_trf(s.m(row), s.m(kp),
                                              TrfAddress::kFull);
  EXPECT_TRUE(trf.ok()) << trf.status();
  absl::StatusOr<DmTensor> out = ctx.main.begin(xd.view())
                                     .fetch(type, s.m("A, " + outer), s.m(inner))
                                     .collect(s.m("A, " + outer), s.m(inner))
                                     .align(s.m(absl::StrCat("A, ", kp, " / ", packet)), s.m(absl::StrCat(kp, " % ", packet, padded)), *trf)
                                     .contract(s.m("1"))
                                     .accumulate(s.m("A"), s.m(out_packet), AccumulationKind::kInterleaved)
                                     .commit(s.m("A, " + row), out_address);
  EXPECT_TRUE(out.ok()) << out.status();
  return *ReadAs(*out, s.m("A, R"));
}

struct Shape {
  DType type;
  int rows, k, flit, packet;
  std::string padded;      // the packet's padding to 64 bytes, if it is narrower
  std::string out_packet;  // the Reducer's: R padded to 8 where fewer
  std::string row = "R";   // the TRF's Row: R padded to 1, 2, 4 or 8 Rows
};

class LaneKernelShapes : public testing::TestWithParam<Shape> {};

TEST_P(LaneKernelShapes, AgreeWithTheInterpreter) {
  const Shape shape = GetParam();
  MappingScope s(*Axes::Parse(absl::StrCat("A = 32, K = ", shape.k, ", R = ", shape.rows)));
  HostTensor x = *HostTensor::Random(shape.type, s.m("A, K"), 51);
  HostTensor w = *HostTensor::Random(shape.type, s.m("R, K"), 52);
  absl::StatusOr<std::unique_ptr<JitBackend>> jit = JitBackend::Create({.threads = 2});
  ASSERT_TRUE(jit.ok()) << jit.status();
  const HostTensor got =
      Contract(**jit, s, shape.type, x, w, shape.flit, shape.packet, shape.padded, shape.out_packet, shape.row);
  // The lane kernel, not the stage-by-stage path, unless K is padded.
  EXPECT_EQ((*jit)->stats().fused_pipelines, shape.k % shape.packet == 0 ? 1 : 0);
  interp::Interpreter interpreter;
  EXPECT_EQ(got.ToBits(), Contract(interpreter, s, shape.type, x, w, shape.flit, shape.packet, shape.padded,
                                   shape.out_packet, shape.row).ToBits());
  if (!IsFloat(shape.type)) {
    EXPECT_EQ(IntegerValues(got), IntegerMatmulReference(x, w, 32, shape.rows, shape.k));
  }
}

// bf16: 2 Rows, a block smaller than the 4 sharing an operand load, 4, one full block, and 8, two
// full blocks (a loop over the blocks, each tree as a loop over chunks: StepShapeOf).
// i8: 4 Rows and 2, partial blocks of the 8 sharing a pair (quad) load; odd Row counts 3, 5, 7
// and all 8; K = 126 (not a multiple of 4: padded to whole packets, which the lane kernel does not take, so
// that shape runs stage by stage);
// a packet of 16 (a quad group of 16 positions); i4.
INSTANTIATE_TEST_SUITE_P(All, LaneKernelShapes,
                         testing::Values(Shape{DType::kBF16, 2, 64, 16, 32, "", "R # 8"},
                                         Shape{DType::kBF16, 4, 128, 16, 32, "", "R # 8"},
                                         Shape{DType::kBF16, 8, 128, 16, 32, "", "R"},
                                         Shape{DType::kI8, 4, 128, 32, 64, "", "R # 8"},
                                         Shape{DType::kI8, 2, 128, 32, 64, "", "R # 8"},
                                         Shape{DType::kI8, 3, 256, 32, 64, "", "R # 8", "R # 4"},
                                         Shape{DType::kI8, 7, 128, 32, 64, "", "R # 8", "R # 8"},
                                         Shape{DType::kI8, 8, 192, 32, 64, "", "R"},
                                         Shape{DType::kI8, 4, 126, 32, 64, "", "R # 8", "R"},
                                         Shape{DType::kI4, 3, 256, 64, 128, "", "R # 8", "R # 4"}));

// Every product at an extreme of i8, summed over the longest K a TRF row holds (8 KiB): the sign fix
// of byte quads (x + 128 against w, less 128 times the weights' sum) must stay exact at both ends.
struct Extreme {
  double x, w;
};

class LaneKernelExtremes : public testing::TestWithParam<Extreme> {};

TEST_P(LaneKernelExtremes, SumExactlyOverTheLongestK) {
  const Extreme e = GetParam();
  constexpr int64_t kRows = 8, kK = 8192;
  MappingScope s(*Axes::Parse(absl::StrCat("A = 32, K = ", kK, ", R = ", kRows)));
  HostTensor x = *HostTensor::FromValues(DType::kI8, s.m("A, K"), std::vector<double>(32 * kK, e.x));
  HostTensor w = *HostTensor::FromValues(DType::kI8, s.m("R, K"), std::vector<double>(kRows * kK, e.w));
  absl::StatusOr<std::unique_ptr<JitBackend>> jit = JitBackend::Create({.threads = 2});
  ASSERT_TRUE(jit.ok()) << jit.status();
  const HostTensor got = Contract(**jit, s, DType::kI8, x, w, 32, 64, "", "R");
  EXPECT_EQ((*jit)->stats().fused_pipelines, 1);
  // The host's sum, written out: every one of the 32 x 8 results is K * x * w.
  const int64_t expected = kK * static_cast<int64_t>(e.x) * static_cast<int64_t>(e.w);
  EXPECT_EQ(IntegerValues(got), std::vector<int64_t>(32 * kRows, expected));
  interp::Interpreter interpreter;
  EXPECT_EQ(got.ToBits(), Contract(interpreter, s, DType::kI8, x, w, 32, 64, "", "R").ToBits());
}

INSTANTIATE_TEST_SUITE_P(All, LaneKernelExtremes,
                         testing::Values(Extreme{-128, -128}, Extreme{-128, 127}, Extreme{127, -128},
                                         Extreme{127, 127}, Extreme{0, -128}, Extreme{-128, 0}));

}  // namespace
}  // namespace visa::jit
