// The JIT's vector loops against the interpreter, bit for bit, on edge values for every op the JIT
// emits inline (integer, bit and IEEE arithmetic) and for the ops it calls: a [T, A] stream of
// 512 values paired with a VRF operand of 512 other values, so each op sees 512 argument pairs
// (MIN, MAX, 0, +-1, shift amounts past 31, NaN, +-inf, -0.0, subnormals, random bits).
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <limits>
#include <random>

#include "dsl/mapping_parser.h"
#include "interp/interpreter.h"
#include "jit/jit_backend.h"
#include "runtime/tensor_unit.h"
#include "runtime/transfer.h"
#include "tests/common/dm_input.h"
#include "tests/common/backends.h"

namespace visa {
namespace {

constexpr int kCount = 512;

std::vector<uint32_t> EdgeBits(DType dtype, uint32_t seed) {
  std::vector<uint32_t> bits;
  if (dtype == DType::kI32) {
    for (int32_t v : {std::numeric_limits<int32_t>::min(), std::numeric_limits<int32_t>::max(), 0, 1, -1, 2, 30, 31,
                      32, 33, -31, -32, 1 << 30, -(1 << 30), 65536, 123456789}) {
      bits.push_back(static_cast<uint32_t>(v));
    }
  } else {
    for (float v : {0.0f, -0.0f, 1.0f, -1.0f, 0.5f, 2.5f, 1e-45f, -1e-45f, 1.17549435e-38f, 3.4e38f, -3.4e38f,
                    std::numeric_limits<float>::infinity(), -std::numeric_limits<float>::infinity(),
                    std::numeric_limits<float>::quiet_NaN(), 16777217.0f, 1.0000001f}) {
      bits.push_back(std::bit_cast<uint32_t>(v));
    }
  }
  std::mt19937 rng(seed);
  while (bits.size() < kCount) {
    const uint32_t r = rng();
    // Floats: mostly moderate magnitudes (exponent near the bias), sometimes any bits.
    bits.push_back(dtype == DType::kF32 && (r & 3) != 0 ? (r & 0x807fffffu) | ((120u + (r >> 27)) << 23) : r);
  }
  return bits;
}

class VectorJitTest : public ::testing::Test {
 protected:
  VectorJitTest() : scope_(*Axes::Parse("T = 64, A = 8")) {}
  Mapping m(const std::string& text) { return scope_.m(text); }

  DmTensor Dm(Device& device, DType dtype, const std::vector<uint32_t>& bits, int64_t address) {
    return test::WriteDm(device, *HostTensor::FromBits(dtype, m("T, A"), bits), m("T, A"), address);
  }

  using Op = std::function<Stream(Stream, const VrfTensor&)>;

  // The op's results on both backends (they must be identical).
  void ExpectIdentical(DType dtype, const Op& op, const std::string& what) {
    std::vector<uint32_t> results[2];
    test::OnBothBackends([&](int b, Context& ctx) {
      DmTensor x = Dm(ctx.device(), dtype, EdgeBits(dtype, 1), 0);
      std::vector<uint32_t> y_bits = EdgeBits(dtype, 2);
      std::rotate(y_bits.begin(), y_bits.begin() + 16, y_bits.end());  // other pairings of the edge values
      for (int i = 0; i < 16; ++i) y_bits[kCount - 16 * 16 + i * 16 + i % 16] = EdgeBits(dtype, 1)[i];
      DmTensor y = Dm(ctx.device(), dtype, y_bits, 8192);
      absl::StatusOr<VrfTensor> vrf =
          ctx.sub.begin(y.view()).fetch(dtype, m("T"), m("A")).collect(m("T"), m("A")).to_vrf(m("T, A"), 0);
      ASSERT_TRUE(vrf.ok()) << vrf.status();
      absl::StatusOr<DmTensor> out = op(ctx.main.begin(x.view())
                                            .fetch(dtype, m("T"), m("A"))
                                            .collect(m("T"), m("A"))
                                            .vector_init()
                                            .vector_intra_slice_branch(BranchMode::Unconditional()),
                                        *vrf)
                                         .vector_final()
                                         .commit(m("T, A"), 16384);
      ASSERT_TRUE(out.ok()) << what << ": " << out.status();
      results[b] = ReadAs(*out, m("T, A"))->ToBits();
    });
    ASSERT_EQ(results[0].size(), results[1].size());
    for (size_t i = 0; i < results[0].size(); ++i) {
      ASSERT_EQ(results[0][i], results[1][i]) << what << " differs at " << i;
    }
  }

  MappingScope scope_;
};

TEST_F(VectorJitTest, IntegerOpsMatchTheInterpreter) {
  for (int op = 0; op <= static_cast<int>(FxpBinaryOp::kArithRightShift); ++op) {
    ExpectIdentical(DType::kI32, [op](Stream s, const VrfTensor& y) {
      return std::move(s).vector_fxp(static_cast<FxpBinaryOp>(op), y);
    }, "fxp op " + std::to_string(op));
  }
  for (int op = 0; op <= static_cast<int>(LogicBinaryOpI32::kArithRightShift); ++op) {
    ExpectIdentical(DType::kI32, [op](Stream s, const VrfTensor& y) {
      return std::move(s).vector_logic(static_cast<LogicBinaryOpI32>(op), y);
    }, "logic op " + std::to_string(op));
  }
  for (int op = 0; op <= static_cast<int>(ClipBinaryOpI32::kAddFxpSat); ++op) {
    ExpectIdentical(DType::kI32, [op](Stream s, const VrfTensor& y) {
      return std::move(s).vector_clip(static_cast<ClipBinaryOpI32>(op), y);
    }, "clip op " + std::to_string(op));
  }
  ExpectIdentical(DType::kI32, [](Stream s, const VrfTensor&) {
    return std::move(s).vector_fxp_to_fp(17).vector_fp_to_fxp(3);
  }, "conversions");
}

TEST_F(VectorJitTest, FloatOpsMatchTheInterpreter) {
  auto way4 = [this](std::function<Stream(Stream, const VrfTensor&)> ops) {
    return [this, ops](Stream s, const VrfTensor& y) {
      return ops(std::move(s).vector_split(m("T, A / 4"), m("A % 4")), y).vector_concat(m("T"), m("A"));
    };
  };
  const FpBinaryOp binaries[] = {FpBinaryOp::AddF(), FpBinaryOp::SubF(), FpBinaryOp::MulF(FpMulAlu::kMul1),
                                 FpBinaryOp::DivF()};
  for (const FpBinaryOp& op : binaries) {
    ExpectIdentical(DType::kF32, way4([op](Stream s, const VrfTensor& y) { return std::move(s).vector_fp_binary(op, y); }),
                    "fp binary " + std::to_string(static_cast<int>(op.kind)));
  }
  ExpectIdentical(DType::kF32, way4([](Stream s, const VrfTensor& y) {
    return std::move(s).vector_fp_ternary(FpTernaryOp::kFmaF, VeBranchOperand(VeRhs::vrf(y), -1.0f));
  }), "fma");
  for (int op = 0; op <= static_cast<int>(FpUnaryOp::kCos); ++op) {
    ExpectIdentical(DType::kF32, way4([op](Stream s, const VrfTensor&) {
      return std::move(s).vector_fp_unary(static_cast<FpUnaryOp>(op));
    }), "fp unary " + std::to_string(op));
  }
  for (int op = 0; op <= static_cast<int>(ClipBinaryOpF32::kAdd); ++op) {
    ExpectIdentical(DType::kF32, [op](Stream s, const VrfTensor& y) {
      return std::move(s).vector_clip(static_cast<ClipBinaryOpF32>(op), y);
    }, "clip f32 op " + std::to_string(op));
  }
  ExpectIdentical(DType::kF32, [](Stream s, const VrfTensor& y) {
    return std::move(s).vector_logic(LogicBinaryOpF32::kBitXor, y).vector_fp_to_fxp(20);
  }, "f32 logic, fp_to_fxp");
}

}  // namespace
}  // namespace visa
