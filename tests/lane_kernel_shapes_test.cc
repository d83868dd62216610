// The lane contraction kernel's blocking at shapes that do not fill it: Row counts that leave a
// partial block of the Rows sharing an operand load.
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
                    int flit, int packet, const std::string& padded, const std::string& out_packet) {
  auto device = std::make_unique<Device>(1);
  Context ctx(*device, backend);
  DmTensor wd = OnSliceZero(ctx, s, w, 1 << 16), xd = OnSliceZero(ctx, s, x, 0);
  const std::string outer = absl::StrCat("K / ", flit), inner = absl::StrCat("K % ", flit);
  absl::StatusOr<TrfTensor> trf = ctx.sub.begin(wd.view())
                                      .fetch(type, s.m("R, " + outer), s.m(inner))
                                      .collect(s.m("R, " + outer), s.m(inner))
                                      .to_trf(s.m("R"), s.m("K"), TrfAddress::kFull);
  EXPECT_TRUE(trf.ok()) << trf.status();
  absl::StatusOr<DmTensor> out = ctx.main.begin(xd.view())
                                     .fetch(type, s.m("A, " + outer), s.m(inner))
                                     .collect(s.m("A, " + outer), s.m(inner))
                                     .align(s.m(absl::StrCat("A, K / ", packet)), s.m(absl::StrCat("K % ", packet, padded)), *trf)
                                     .contract(s.m("1"))
                                     .accumulate(s.m("A"), s.m(out_packet), AccumulationKind::kInterleaved)
                                     .commit(s.m("A, R"), 1 << 12);
  EXPECT_TRUE(out.ok()) << out.status();
  return *ReadAs(*out, s.m("A, R"));
}

struct Shape {
  DType type;
  int rows, k, flit, packet;
  std::string padded;      // the packet's padding to 64 bytes, if it is narrower
  std::string out_packet;  // the Reducer's: R padded to 8 where fewer
};

class LaneKernelShapes : public testing::TestWithParam<Shape> {};

TEST_P(LaneKernelShapes, AgreeWithTheInterpreter) {
  const Shape shape = GetParam();
  MappingScope s(*Axes::Parse(absl::StrCat("A = 32, K = ", shape.k, ", R = ", shape.rows)));
  HostTensor x = *HostTensor::Random(shape.type, s.m("A, K"), 51);
  HostTensor w = *HostTensor::Random(shape.type, s.m("R, K"), 52);
  absl::StatusOr<std::unique_ptr<JitBackend>> jit = JitBackend::Create({.threads = 2});
  ASSERT_TRUE(jit.ok()) << jit.status();
  const HostTensor got = Contract(**jit, s, shape.type, x, w, shape.flit, shape.packet, shape.padded, shape.out_packet);
  EXPECT_EQ((*jit)->stats().fused_pipelines, 1);  // the lane kernel, not the stage-by-stage path
  interp::Interpreter interpreter;
  EXPECT_EQ(got.ToBits(), Contract(interpreter, s, shape.type, x, w, shape.flit, shape.packet, shape.padded, shape.out_packet).ToBits());
  if (!IsFloat(shape.type)) {
    EXPECT_EQ(IntegerValues(got), IntegerMatmulReference(x, w, 32, shape.rows, shape.k));
  }
}

// bf16: 2 Rows, a block smaller than the 4 sharing an operand load, and 4, one full block.
// i8: 4 Rows and 2, partial blocks of the 8 sharing a pair load.
INSTANTIATE_TEST_SUITE_P(All, LaneKernelShapes,
                         testing::Values(Shape{DType::kBF16, 2, 64, 16, 32, "", "R # 8"},
                                         Shape{DType::kBF16, 4, 128, 16, 32, "", "R # 8"},
                                         Shape{DType::kI8, 4, 128, 32, 64, "", "R # 8"},
                                         Shape{DType::kI8, 2, 128, 32, 64, "", "R # 8"}));

}  // namespace
}  // namespace visa::jit
