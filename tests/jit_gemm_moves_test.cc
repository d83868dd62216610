// The GEMM sample's data movement on the JIT, byte for byte against the interpreter, at a small K:
// the HBM to DM broadcast over slices (and over both clusters), the transposing HBM to DM DMA of
// 2-byte packets, and the DM to TRF load, on 1 and 2 threads. These are the moves the JIT runs in
// write order with broadcast copies and transposed tiles (jit/write_order.h, move_kernel.h); the
// sample itself also needs the contraction, which these tests leave out.
#include <gtest/gtest.h>

#include "absl/strings/str_cat.h"
#include "dsl/axes.h"
#include "dsl/mapping_parser.h"
#include "dsl/status_macros.h"
#include "interp/interpreter.h"
#include "jit/jit_backend.h"
#include "runtime/tensor_unit.h"
#include "runtime/transfer.h"

namespace visa {
namespace {

constexpr int64_t kK = 64;

struct Outputs {
  std::vector<uint8_t> a, b, trf, a_both_clusters;
};

absl::StatusOr<Outputs> RunMoves(Backend& backend) {
  MappingScope s(*Axes::Parse(absl::StrCat("I = 512, J = 512, K = ", kK)));
  Device device(1);
  device.set_dma_packet_rule(false);  // the sample's 2-byte packets
  Context ctx(device, backend);
  ASSIGN_OR_RETURN(HostTensor a, HostTensor::Random(DType::kBF16, s.m("I, K"), 42));
  ASSIGN_OR_RETURN(HostTensor b, HostTensor::Random(DType::kBF16, s.m("K, J"), 43));
  ASSIGN_OR_RETURN(HbmTensor a_hbm, a.to_hbm(ctx.pdma, 0, s.m("1"), s.m("I, K")));
  ASSIGN_OR_RETURN(HbmTensor b_hbm, b.to_hbm(ctx.pdma, 1 << 28, s.m("1"), s.m("K, J")));
  const Mapping slice = s.m("I / 32, J / 32");
  ASSIGN_OR_RETURN(DmTensor a_dm, a_hbm.to_dm(ctx.tdma, 0, s.m("1 # 2"), slice, s.m("I % 32, K")));
  ASSIGN_OR_RETURN(DmTensor b_dm, b_hbm.to_dm(ctx.tdma, 32 * kK * 2, s.m("1 # 2"), slice, s.m("J % 32, K")));
  ASSIGN_OR_RETURN(TrfTensor trf, ctx.sub.begin(b_dm.view())
                                      .fetch(DType::kBF16, s.m("J % 8, J / 8 % 4"), s.m("K"))
                                      .collect(s.m("J % 8, J / 8 % 4, K / 16"), s.m("K % 16"))
                                      .to_trf(s.m("J % 8"), s.m("J / 8 % 4, K"), TrfAddress::kFull));
  // Both clusters: the cluster level a broadcast too.
  ASSIGN_OR_RETURN(DmTensor a_both, a_hbm.to_dm(ctx.tdma, 1 << 17, s.m("2"), slice, s.m("I % 32, K")));
  Outputs out;
  ASSIGN_OR_RETURN(HostTensor a_back, ReadAs(a_dm, a_dm.full_mapping()));
  ASSIGN_OR_RETURN(HostTensor b_back, ReadAs(b_dm, b_dm.full_mapping()));
  ASSIGN_OR_RETURN(HostTensor trf_back, ReadAs(trf, trf.full_mapping()));
  ASSIGN_OR_RETURN(HostTensor both_back, ReadAs(a_both, a_both.full_mapping()));
  out.a = a_back.bytes();
  out.b = b_back.bytes();
  out.trf = trf_back.bytes();
  out.a_both_clusters = both_back.bytes();
  return out;
}

TEST(JitGemmMoves, IdenticalToTheInterpreterOnOneAndTwoThreads) {
  interp::Interpreter interpreter;
  absl::StatusOr<Outputs> expected = RunMoves(interpreter);
  ASSERT_TRUE(expected.ok()) << expected.status();
  ASSERT_FALSE(expected->a.empty());
  for (int threads : {1, 2}) {
    absl::StatusOr<std::unique_ptr<jit::JitBackend>> jit = jit::JitBackend::Create({.threads = threads});
    ASSERT_TRUE(jit.ok()) << jit.status();
    absl::StatusOr<Outputs> got = RunMoves(**jit);
    ASSERT_TRUE(got.ok()) << got.status();
    EXPECT_EQ(got->a, expected->a) << "broadcast over slices, " << threads << " threads";
    EXPECT_EQ(got->b, expected->b) << "transposing broadcast, " << threads << " threads";
    EXPECT_EQ(got->trf, expected->trf) << "to_trf, " << threads << " threads";
    EXPECT_EQ(got->a_both_clusters, expected->a_both_clusters) << "broadcast over clusters, " << threads << " threads";
    EXPECT_GT((*jit)->stats().descriptor_dmas, 0);
  }
}

}  // namespace
}  // namespace visa
