// The bf16 lane kernel's packing: the vectorized widening (a bf16 pattern shifted up 16 bits,
// with subnormals flushed and NaNs made canonical only where vfpclassps finds them), and packing
// interleaved with the steps in a reordered schedule (blocks packed at their first use into
// reused slots). Each result is compared bit for bit with the interpreter and, for finite normal
// values, with a host loop in the Contraction Engine's order: a pairwise tree over each 32-wide
// packet, level by level, the packets accumulated in time order.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>

#include "dsl/mapping_parser.h"
#include "interp/interpreter.h"
#include "jit/jit_backend.h"
#include "runtime/launch.h"
#include "runtime/transfer.h"
#include "tests/bf16_contraction_reference.h"

namespace visa::jit {
namespace {

using bf16_reference::Bf16Tensor;
using bf16_reference::Bf16Value;
using bf16_reference::F32Bits;
using bf16_reference::HostContraction;
using bf16_reference::kPacket;

DmTensor OnSliceZero(Context& ctx, const MappingScope& s, const HostTensor& host, int64_t address) {
  absl::StatusOr<HbmTensor> hbm = host.to_hbm(ctx.pdma, address, s.m("1"), host.mapping());
  EXPECT_TRUE(hbm.ok()) << hbm.status();
  absl::StatusOr<DmTensor> dm = hbm->to_dm(ctx.tdma, address, s.m("1 # 2"), s.m("1 # 256"), host.mapping());
  EXPECT_TRUE(dm.ok()) << dm.status();
  return *dm;
}

// x [A, K] (bf16) contracted with w [R, K] (bf16) through the TRF into [A, R] (f32) on slice 0,
// packets of 32 elements of K.
HostTensor Contract(Backend& backend, const MappingScope& s, const HostTensor& x, const HostTensor& w,
                    const std::string& row) {
  auto device = std::make_unique<Device>(1);
  Context ctx(*device, backend);
  auto after = [](int64_t address, const HostTensor& t) {
    return (address + StorageBytes(t.dtype(), t.mapping().size()) + 4095) / 4096 * 4096;
  };
  const int64_t w_address = std::max<int64_t>(1 << 16, after(0, x)), out_address = after(w_address, w);
  DmTensor wd = OnSliceZero(ctx, s, w, w_address), xd = OnSliceZero(ctx, s, x, 0);
  absl::StatusOr<TrfTensor> trf = ctx.sub.begin(wd.view())
                                      .fetch(DType::kBF16, s.m(row + ", K / 16"), s.m("K % 16"))
                                      .collect(s.m(row + ", K / 16"), s.m("K % 16"))
                                      .to_trf(s.m(row), s.m("K"), TrfAddress::kFull);
  EXPECT_TRUE(trf.ok()) << trf.status();
  absl::StatusOr<DmTensor> out = ctx.main.begin(xd.view())
                                     .fetch(DType::kBF16, s.m("A, K / 16"), s.m("K % 16"))
                                     .collect(s.m("A, K / 16"), s.m("K % 16"))
                                     .align(s.m("A, K / 32"), s.m("K % 32"), *trf)
                                     .contract(s.m("1"))
                                     .accumulate(s.m("A"), s.m("R # 8"), AccumulationKind::kInterleaved)
                                     .commit(s.m("A, " + row), out_address);
  EXPECT_TRUE(out.ok()) << out.status();
  return *ReadAs(*out, s.m("A, R"));
}

// bf16 patterns with exponents spread over 2^-40 .. 2^40 and both signs: sums of such products
// round differently in any other order.
std::vector<uint16_t> SpreadValues(size_t count, uint64_t seed) {
  std::vector<uint16_t> bits(count);
  for (uint16_t& b : bits) {
    seed = seed * 6364136223846793005ull + 1442695040888963407ull;
    const uint16_t exponent = static_cast<uint16_t>(127 - 40 + (seed >> 33) % 81);
    const uint16_t mantissa = static_cast<uint16_t>((seed >> 20) & 0x7f);
    const uint16_t sign = static_cast<uint16_t>((seed >> 50) & 1);
    b = static_cast<uint16_t>(sign << 15 | exponent << 7 | mantissa);
  }
  return bits;
}

struct Shape {
  int a, rows, k;
  std::string row;  // the TRF's Row: R padded to 1, 2, 4 or 8 Rows
};

class LaneBf16Packing : public testing::TestWithParam<Shape> {};

// Normal values: the JIT (lane kernel) equals the interpreter and the host loop bit for bit.
TEST_P(LaneBf16Packing, AgreesWithTheHostOrder) {
  const Shape shape = GetParam();
  MappingScope s(*Axes::Parse(absl::StrCat("A = ", shape.a, ", K = ", shape.k, ", R = ", shape.rows)));
  const std::vector<uint16_t> xb = SpreadValues(static_cast<size_t>(shape.a) * shape.k, 7);
  const std::vector<uint16_t> wb = SpreadValues(static_cast<size_t>(shape.rows) * shape.k, 8);
  const HostTensor x = Bf16Tensor(s.m("A, K"), xb), w = Bf16Tensor(s.m("R, K"), wb);
  absl::StatusOr<std::unique_ptr<JitBackend>> jit = JitBackend::Create({.threads = 2});
  ASSERT_TRUE(jit.ok()) << jit.status();
  const HostTensor got = Contract(**jit, s, x, w, shape.row);
  EXPECT_EQ((*jit)->stats().fused_pipelines, 1);
  EXPECT_EQ(got.ToBits(), HostContraction(xb, wb, shape.a, shape.rows, shape.k));
  interp::Interpreter interpreter;
  EXPECT_EQ(got.ToBits(), Contract(interpreter, s, x, w, shape.row).ToBits());
}

// A = 16 (one lane block), 48 (three: odd), 64; Rows 2, 3 (a partial block of the 4 sharing an
// operand load), 5 and 8; K = 32 (one step per slot) up to 320 (ten, not a power of two).
INSTANTIATE_TEST_SUITE_P(All, LaneBf16Packing,
                         testing::Values(Shape{16, 2, 32, "R"}, Shape{48, 3, 96, "R # 4"}, Shape{64, 5, 320, "R # 8"},
                                         Shape{32, 8, 256, "R"}, Shape{48, 8, 160, "R"}));

// Every rare bf16 pattern in both operands, packed among ordinary values: subnormals (flushed to
// a signed zero by the widening), quiet and signaling NaNs with payloads (made canonical), both
// infinities and both zeros, in every position of a 16-element chunk; the JIT equals the
// interpreter bit for bit.
TEST(LaneBf16Packing, RareValuesWidenAsTheInterpreterDoes) {
  constexpr int kA = 32, kRows = 4, kK = 128;
  MappingScope s(*Axes::Parse(absl::StrCat("A = ", kA, ", K = ", kK, ", R = ", kRows)));
  const std::vector<uint16_t> rare = {0x0001, 0x8001, 0x007f, 0x8040, 0x7fc1, 0xffff, 0x7f81, 0xff80,
                                      0x7f80, 0x8000, 0x0000, 0x7f7f, 0x0080, 0x8080};
  std::vector<uint16_t> xb = SpreadValues(kA * kK, 11), wb = SpreadValues(kRows * kK, 12);
  // x: a rare value every 37 elements (every chunk position over the tensor); w: one per row.
  for (size_t i = 0; i < xb.size(); i += 37) xb[i] = rare[(i / 37) % rare.size()];
  for (int r = 0; r < kRows; ++r) wb[r * kK + 5 + 29 * r] = rare[(3 * r) % rare.size()];
  const HostTensor x = Bf16Tensor(s.m("A, K"), xb), w = Bf16Tensor(s.m("R, K"), wb);
  absl::StatusOr<std::unique_ptr<JitBackend>> jit = JitBackend::Create({.threads = 1});
  ASSERT_TRUE(jit.ok()) << jit.status();
  const HostTensor got = Contract(**jit, s, x, w, "R");
  EXPECT_EQ((*jit)->stats().fused_pipelines, 1);
  interp::Interpreter interpreter;
  const HostTensor expected = Contract(interpreter, s, x, w, "R");
  EXPECT_EQ(got.ToBits(), expected.ToBits());
  // The rare values reached the results: some are NaN, some are infinite.
  const std::vector<double> values = got.ToValues();
  EXPECT_TRUE(std::any_of(values.begin(), values.end(), [](double v) { return std::isnan(v); }));
}

// Subnormal weights only, against normal operands: the widening flushes them, so each product is
// a signed zero and a Row of subnormal weights contributes +0 or -0 exactly as the interpreter's.
TEST(LaneBf16Packing, SubnormalWeightsFlushToSignedZeros) {
  constexpr int kA = 16, kRows = 2, kK = 64;
  MappingScope s(*Axes::Parse(absl::StrCat("A = ", kA, ", K = ", kK, ", R = ", kRows)));
  const std::vector<uint16_t> xb = SpreadValues(kA * kK, 21);
  std::vector<uint16_t> wb(kRows * kK);
  for (size_t i = 0; i < wb.size(); ++i) wb[i] = static_cast<uint16_t>((i % 2 ? 0x8000 : 0) | (1 + i % 0x7f));
  const HostTensor x = Bf16Tensor(s.m("A, K"), xb), w = Bf16Tensor(s.m("R, K"), wb);
  absl::StatusOr<std::unique_ptr<JitBackend>> jit = JitBackend::Create({.threads = 1});
  ASSERT_TRUE(jit.ok()) << jit.status();
  const HostTensor got = Contract(**jit, s, x, w, "R # 2");
  interp::Interpreter interpreter;
  EXPECT_EQ(got.ToBits(), Contract(interpreter, s, x, w, "R # 2").ToBits());
  for (double v : got.ToValues()) EXPECT_EQ(v, 0.0);
}

}  // namespace
}  // namespace visa::jit
