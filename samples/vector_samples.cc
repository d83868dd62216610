// Vector Engine samples: the manual's element-wise kernels (constant addition, element-wise
// multiplication with a VRF operand loaded on the sub context, the f32 / i32 pipelines, the stash
// examples) and activations after a matmul (ReLU, bias + SiLU), each against a host reference
// computed independently of dsl/vector_ops (integer wrap-around by hand, floats in double with a
// stated error bound).
#include <Eigen/Core>

#include <cmath>
#include <cstdint>

#include "absl/strings/str_cat.h"
#include "dsl/status_macros.h"
#include "samples/contraction_sample.h"
#include "samples/vector_branch_samples.h"

namespace visa::samples {
namespace {

using Matrix = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

constexpr double kF32Ulp = 1.0 / (1 << 24);  // the f32 unit roundoff, 2^-24

int32_t WrapI32(int64_t value) { return static_cast<int32_t>(static_cast<uint32_t>(static_cast<uint64_t>(value))); }

// The value at `index` of a host tensor whose axes the index holds.
double At(const HostTensor& t, const Index& index) {
  std::vector<std::string> axes = t.mapping().axis_names();
  Index restricted;
  for (const std::string& a : axes) restricted.Set(a, index[a]);
  return *t.Get(restricted);
}

Expected Exact(std::function<double(const Index&)> value, std::string note) {
  return Expected{std::move(value), [](const Index&) { return 0.0; }, std::move(note)};
}

// The manual's "Constant Addition": A = 2048 i32 over 256 slices, AddFxp 1 (wrapping).
Sample ConstantAddition() {
  ContractionSpec spec;
  spec.name = "vector_constant_add";
  spec.description = "Vector Engine, the manual's constant addition: vector_fxp(AddFxp, 1) on i32, 256 slices";
  spec.axes = "A = 2048";
  spec.operands = {{DType::kI32, "A", 42, 0}};
  spec.kernel = [](Context& ctx, const std::vector<HbmTensor>& in, const MappingScope& s) -> absl::StatusOr<DeviceTensor> {
    ASSIGN_OR_RETURN(DmTensor dm, in[0].to_dm(ctx.tdma, 0, s.m("1 # 2"), s.m("A / 8 # 256"), s.m("A % 8")));
    ASSIGN_OR_RETURN(DmTensor result, ctx.main.begin(dm.view())
                                          .fetch(DType::kI32, s.m("1"), s.m("A % 8"))
                                          .collect(s.m("1"), s.m("A % 8"))
                                          .vector_init()
                                          .vector_intra_slice_branch(BranchMode::Unconditional())
                                          .vector_fxp(FxpBinaryOp::kAddFxp, 1)
                                          .vector_final()
                                          .commit(s.m("A % 8"), 1 << 12));
    ASSIGN_OR_RETURN(HbmTensor out, result.to_hbm(ctx.tdma, 1 << 28, s.m("A")));
    return out;
  };
  spec.readback = "A";
  spec.expected = [](const std::vector<HostTensor>& in, const MappingScope&) -> absl::StatusOr<Expected> {
    HostTensor x = in[0];
    return Exact([x](const Index& i) { return static_cast<double>(WrapI32(static_cast<int64_t>(At(x, i)) + 1)); },
                 "x + 1 modulo 2^32");
  };
  return MakeContractionSample(std::move(spec));
}

// The manual's "Elementwise Multiplication": rhs loaded into the VRF on the sub context, MulInt.
Sample ElementwiseMultiplication() {
  ContractionSpec spec;
  spec.name = "vector_elementwise_mul";
  spec.description = "Vector Engine, the manual's element-wise multiplication: rhs to_vrf on sub, vector_fxp(MulInt, vrf)";
  spec.axes = "A = 2048";
  spec.operands = {{DType::kI32, "A", 42, 0}, {DType::kI32, "A", 43, 1 << 28}};
  spec.kernel = [](Context& ctx, const std::vector<HbmTensor>& in, const MappingScope& s) -> absl::StatusOr<DeviceTensor> {
    const Mapping cluster = s.m("1 # 2"), slice = s.m("A / 8 # 256");
    ASSIGN_OR_RETURN(DmTensor lhs, in[0].to_dm(ctx.tdma, 0, cluster, slice, s.m("A % 8")));
    ASSIGN_OR_RETURN(DmTensor rhs, in[1].to_dm(ctx.tdma, 1 << 12, cluster, slice, s.m("A % 8")));
    ASSIGN_OR_RETURN(VrfTensor rhs_vrf, ctx.sub.begin(rhs.view())
                                            .fetch(DType::kI32, s.m("1"), s.m("A % 8"))
                                            .collect(s.m("A % 8 / 8"), s.m("A % 8 % 8"))
                                            .to_vrf(s.m("A % 8"), 0));
    ASSIGN_OR_RETURN(DmTensor result, ctx.main.begin(lhs.view())
                                          .fetch(DType::kI32, s.m("1"), s.m("A % 8"))
                                          .collect(s.m("1"), s.m("A % 8"))
                                          .vector_init()
                                          .vector_intra_slice_branch(BranchMode::Unconditional())
                                          .vector_fxp(FxpBinaryOp::kMulInt, rhs_vrf)
                                          .vector_final()
                                          .commit(s.m("A % 8"), 1 << 13));
    ASSIGN_OR_RETURN(HbmTensor out, result.to_hbm(ctx.tdma, 2 << 28, s.m("A")));
    return out;
  };
  spec.readback = "A";
  spec.expected = [](const std::vector<HostTensor>& in, const MappingScope&) -> absl::StatusOr<Expected> {
    HostTensor lhs = in[0], rhs = in[1];
    return Exact(
        [lhs, rhs](const Index& i) {
          const uint64_t product = static_cast<uint64_t>(static_cast<int64_t>(At(lhs, i))) *
                                   static_cast<uint64_t>(static_cast<int64_t>(At(rhs, i)));
          return static_cast<double>(static_cast<int32_t>(static_cast<uint32_t>(product)));
        },
        "lhs * rhs modulo 2^32");
  };
  return MakeContractionSample(std::move(spec));
}

// A one-input kernel over the manual's Vector Engine shape: A = 512 over 256 slices, packet
// [A % 2 # 8]; `chain` is the vector chain between vector_init() and vector_final().
Sample SliceShapeSample(std::string name, std::string description, DType dtype,
                        std::function<Stream(Stream, const MappingScope&)> chain,
                        std::function<Expected(const HostTensor&)> expected) {
  ContractionSpec spec;
  spec.name = std::move(name);
  spec.description = std::move(description);
  spec.axes = "A = 512";
  spec.operands = {{dtype, "A", 42, 0}};
  spec.kernel = [dtype, chain](Context& ctx, const std::vector<HbmTensor>& in,
                               const MappingScope& s) -> absl::StatusOr<DeviceTensor> {
    ASSIGN_OR_RETURN(DmTensor dm, in[0].to_dm(ctx.tdma, 0, s.m("1 # 2"), s.m("A / 2"), s.m("A % 2")));
    Stream entered = ctx.main.begin(dm.view())
                         .fetch(dtype, s.m("1"), s.m("A % 2 # 8"))
                         .collect(s.m("1"), s.m("A % 2 # 8"))
                         .vector_init()
                         .vector_intra_slice_branch(BranchMode::Unconditional());
    ASSIGN_OR_RETURN(DmTensor result, chain(std::move(entered), s).vector_final().commit(s.m("A % 2"), 1 << 12));
    ASSIGN_OR_RETURN(HbmTensor out, result.to_hbm(ctx.tdma, 1 << 28, s.m("A")));
    return out;
  };
  spec.readback = "A";
  spec.expected = [expected](const std::vector<HostTensor>& in, const MappingScope&) -> absl::StatusOr<Expected> {
    return expected(in[0]);
  };
  return MakeContractionSample(std::move(spec));
}

double SigmoidD(double x) { return 1.0 / (1.0 + std::exp(-x)); }

// f32 results of a few roundings of f32 libm functions: a relative bound of `ulps` f32 ulps
// around the exact value, plus the smallest normal f32 for results near zero.
std::function<double(const Index&)> RelativeBound(std::function<double(const Index&)> value, double ulps) {
  return [value, ulps](const Index& i) { return ulps * kF32Ulp * std::fabs(value(i)) + 1.2e-38; };
}

std::vector<Sample> SliceShapeSamples() {
  std::vector<Sample> samples;
  samples.push_back(SliceShapeSample(
      "vector_sigmoid", "Vector Engine, the manual's f32 pipeline: trim to Way4, Sigmoid, pad to Way8", DType::kF32,
      [](Stream s, const MappingScope& m) {
        return std::move(s)
            .vector_trim_way4(m.m("A % 2 # 4"))
            .vector_fp_unary(FpUnaryOp::kSigmoid)
            .vector_pad_way8(m.m("A % 2 # 8"));
      },
      [](const HostTensor& x) {
        auto value = [x](const Index& i) { return SigmoidD(At(x, i)); };
        return Expected{value, RelativeBound(value, 8), "sigmoid in double, bound 8 f32 ulps (expf, add, divide)"};
      }));
  samples.push_back(SliceShapeSample(
      "vector_i32_pipeline",
      "Vector Engine, the manual's staged i32 pipeline: AddFxp 100, FxpToFp(31), Sigmoid, FpToFxp(31), Clip Max 0",
      DType::kI32,
      [](Stream s, const MappingScope& m) {
        return std::move(s)
            .vector_fxp(FxpBinaryOp::kAddFxp, 100)
            .vector_fxp_to_fp(31)
            .vector_trim_way4(m.m("A % 2 # 4"))
            .vector_fp_unary(FpUnaryOp::kSigmoid)
            .vector_pad_way8(m.m("A % 2 # 8"))
            .vector_fp_to_fxp(31)
            .vector_clip(ClipBinaryOpI32::kMax, 0);
      },
      [](const HostTensor& x) {
        // sigmoid of an integer is in (0, 1): rounded half away from zero it is 1 from 0 on, else 0.
        return Exact(
            [x](const Index& i) {
              const double shifted = WrapI32(static_cast<int64_t>(At(x, i)) + 100);
              return std::round(SigmoidD(shifted)) >= 1.0 ? 1.0 : 0.0;
            },
            "round(sigmoid(x + 100 mod 2^32)) clipped at 0, in double");
      }));
  samples.push_back(SliceShapeSample(
      "vector_stash_bias_max", "Vector Engine, the manual's stash at Fxp: max(x + 100, x) with vector_stash()",
      DType::kI32,
      [](Stream s, const MappingScope&) {
        return std::move(s).vector_stash().vector_fxp(FxpBinaryOp::kAddFxp, 100).vector_clip(ClipBinaryOpI32::kMax, Stash);
      },
      [](const HostTensor& x) {
        return Exact(
            [x](const Index& i) {
              const int64_t v = static_cast<int64_t>(At(x, i));
              return static_cast<double>(std::max<int64_t>(WrapI32(v + 100), v));
            },
            "max(x + 100 mod 2^32, x)");
      }));
  samples.push_back(SliceShapeSample(
      "vector_stash_sigmoid_max",
      "Vector Engine, the manual's stash across Narrow / Widen: max(sigmoid(x), x) in f32", DType::kF32,
      [](Stream s, const MappingScope& m) {
        return std::move(s)
            .vector_stash()
            .vector_trim_way4(m.m("A % 2 # 4"))
            .vector_fp_unary(FpUnaryOp::kSigmoid)
            .vector_pad_way8(m.m("A % 2 # 8"))
            .vector_clip(ClipBinaryOpF32::kMax, Stash);
      },
      [](const HostTensor& x) {
        auto value = [x](const Index& i) { return std::max(SigmoidD(At(x, i)), At(x, i)); };
        return Expected{value, RelativeBound(value, 8), "max(sigmoid(x), x) in double, bound 8 f32 ulps"};
      }));
  return samples;
}

// A (I x K) * B (K x J) in double, from host tensors laid out [I, K] and [K, J].
Matrix Product(const HostTensor& a, const HostTensor& b, int64_t i, int64_t k, int64_t j, Matrix* magnitudes) {
  std::vector<double> av = a.ToValues(), bv = b.ToValues();
  Eigen::Map<Matrix> am(av.data(), i, k), bm(bv.data(), k, j);
  *magnitudes = am.cwiseAbs() * bm.cwiseAbs();
  return am * bm;
}

// The GEMM of the manual (one 32 x 32 tile per slice, B in the TRF) with K = 64 and its f32 sums
// handed to the Vector Engine; `activation` is the vector chain; the output stays f32.
Sample GemmThenVector(std::string name, std::string description, bool bias,
                      std::function<Stream(Stream, const MappingScope&, const std::optional<VrfTensor>&)> activation,
                      std::function<double(double)> host_activation, double lipschitz, double ulps) {
  constexpr int64_t kK = 64;
  ContractionSpec spec;
  spec.name = std::move(name);
  spec.description = std::move(description);
  spec.axes = absl::StrCat("I = 512, J = 512, K = ", kK);
  spec.operands = {{DType::kBF16, "I, K", 42, 0}, {DType::kBF16, "K, J", 43, 1 << 28}};
  spec.operands[1].hbm = "J, K";  // staged as DM holds it, so the move keeps 8-byte packets
  if (bias) spec.operands.push_back({DType::kF32, "I / 32, J", 44, 2 << 28});
  spec.host_math = [bias](const std::vector<HostTensor>& in) {
    const GemmShape shape{.rows = 512, .inner = kK, .cols = 512,
                          .epilogue = bias ? GemmEpilogue::kBiasSilu : GemmEpilogue::kRelu};
    return PrepareHostGemm(shape, in[0], in[1], bias ? &in[2] : nullptr);
  };
  spec.kernel = [bias, activation](Context& ctx, const std::vector<HbmTensor>& in,
                                   const MappingScope& s) -> absl::StatusOr<DeviceTensor> {
    const Mapping cluster = s.m("1 # 2"), slice = s.m("I / 32, J / 32");
    ASSIGN_OR_RETURN(DmTensor a, in[0].to_dm(ctx.tdma, 0, cluster, slice, s.m("I % 32, K")));
    ASSIGN_OR_RETURN(DmTensor b, in[1].to_dm(ctx.tdma, 32 * kK * 2, cluster, slice, s.m("J % 32, K")));
    ASSIGN_OR_RETURN(TrfTensor b_trf, ctx.sub.begin(b.view())
                                          .fetch(DType::kBF16, s.m("J % 8, J / 8 % 4"), s.m("K"))
                                          .collect(s.m("J % 8, J / 8 % 4, K / 16"), s.m("K % 16"))
                                          .to_trf(s.m("J % 8"), s.m("J / 8 % 4, K"), TrfAddress::kFull));
    std::optional<VrfTensor> bias_vrf;
    if (bias) {
      ASSIGN_OR_RETURN(DmTensor bias_dm, in[2].to_dm(ctx.tdma, 64 * kK * 2, cluster, slice, s.m("J % 32")));
      ASSIGN_OR_RETURN(bias_vrf, ctx.sub.begin(bias_dm.view())
                                     .fetch(DType::kF32, s.m("J / 8 % 4"), s.m("J % 8"))
                                     .collect(s.m("J / 8 % 4"), s.m("J % 8"))
                                     .to_vrf(s.m("J / 8 % 4, J % 8"), 0));
    }
    Stream sums = ctx.main.begin(a.view())
                      .fetch(DType::kBF16, s.m("I % 32, J / 8 % 4"), s.m("K"))
                      .collect(s.m("I % 32, J / 8 % 4, K / 16"), s.m("K % 16"))
                      .align(s.m("I % 32, J / 8 % 4, K / 32"), s.m("K % 32"), b_trf)
                      .contract(s.m("1"))
                      .accumulate(s.m("I % 32, J / 8 % 4"), s.m("J % 8"), AccumulationKind::kInterleaved)
                      .vector_init()
                      .vector_intra_slice_branch(BranchMode::Unconditional());
    ASSIGN_OR_RETURN(DmTensor result, activation(std::move(sums), s, bias_vrf)
                                          .vector_final()
                                          .commit(s.m("I % 32, J % 32"), 64 * kK * 2 + 1024));
    ASSIGN_OR_RETURN(HbmTensor out, result.to_hbm(ctx.tdma, 3 << 28, s.m("I, J")));
    return out;
  };
  spec.readback = "I, J";
  spec.expected = [bias, host_activation, lipschitz, ulps](const std::vector<HostTensor>& in,
                                                         const MappingScope&) -> absl::StatusOr<Expected> {
    auto magnitudes = std::make_shared<Matrix>();
    auto product = std::make_shared<Matrix>(Product(in[0], in[1], 512, kK, 512, magnitudes.get()));
    std::optional<HostTensor> b = bias ? std::optional<HostTensor>(in[2]) : std::nullopt;
    // The bias is per (I / 32, J): the tile row of I that holds the element.
    auto pre = [product, b](const Index& i) {
      Index tile;
      tile.Set("I", i["I"] / 32 * 32);
      tile.Set("J", i["J"]);
      return (*product)(i["I"], i["J"]) + (b ? At(*b, tile) : 0.0);
    };
    const int levels = 5 + static_cast<int>(kK / 32) + (bias ? 1 : 0);
    Expected expected;
    expected.value = [pre, host_activation](const Index& i) { return host_activation(pre(i)); };
    expected.bound = [=](const Index& i) {
      const double sum_bound = SumBound(levels, (*magnitudes)(i["I"], i["J"]) + std::fabs(pre(i)), pre(i), false);
      return lipschitz * sum_bound + ulps * kF32Ulp * std::fabs(host_activation(pre(i))) + 1.2e-38;
    };
    expected.note = absl::StrCat("bound: Lipschitz ", lipschitz, " x (", levels, " f32 roundings x sum|a*b|) + ", ulps,
                                 " f32 ulps of the activation, double reference");
    return expected;
  };
  return MakeContractionSample(std::move(spec));
}

std::vector<Sample> MatmulSamples() {
  std::vector<Sample> samples;
  samples.push_back(GemmThenVector(
      "vector_gemm_relu", "Vector Engine after the Contraction Engine: ReLU (vector_clip Max 0.0) on a GEMM's f32 sums",
      false,
      [](Stream s, const MappingScope&, const std::optional<VrfTensor>&) {
        return std::move(s).vector_clip(ClipBinaryOpF32::kMax, 0.0f);
      },
      [](double x) { return std::max(x, 0.0); }, 1.0, 0.0));
  samples.push_back(GemmThenVector(
      "vector_gemm_bias_silu",
      "Vector Engine after a GEMM: split to Way4, + bias (VRF, FpFma), stash, Sigmoid, x Stash (FpMul0) = SiLU, concat",
      true,
      [](Stream s, const MappingScope& m, const std::optional<VrfTensor>& bias) {
        return std::move(s)
            .vector_split(m.m("I % 32, J / 8 % 4, J % 8 / 4"), m.m("J % 4"))
            .vector_fp_binary(FpBinaryOp::AddF(), *bias)
            .vector_stash()
            .vector_fp_unary(FpUnaryOp::kSigmoid)
            .vector_fp_binary(FpBinaryOp::MulF(FpMulAlu::kMul0), Stash)
            .vector_concat(m.m("I % 32, J / 8 % 4"), m.m("J % 8"));
      },
      // SiLU's slope is within [-0.1, 1.1].
      [](double x) { return x * SigmoidD(x); }, 1.1, 8.0));
  return samples;
}

// The manual's two-group example `pair_add`: lhs and rhs alternate along I in one interleaved fetch;
// vector_intra_slice_unzip splits the pair and vector_clip_zip(AddFxp) adds group 0 and group 1.
// With `scale`, group 0 is first multiplied by 10 alone (the manual's one-sided preprocessing).
Sample PairAdd(std::string name, std::string description, bool scale) {
  ContractionSpec spec;
  spec.name = std::move(name);
  spec.description = std::move(description);
  spec.axes = "A = 2048, I = 2";
  spec.operands = {{DType::kI32, "A", 42, 0}, {DType::kI32, "A", 43, 1 << 28}};
  spec.kernel = [scale](Context& ctx, const std::vector<HbmTensor>& in,
                        const MappingScope& s) -> absl::StatusOr<DeviceTensor> {
    const Mapping cluster = s.m("1 # 2"), slice = s.m("A / 8 # 256");
    ASSIGN_OR_RETURN(DmTensor lhs, in[0].to_dm(ctx.tdma, 0, cluster, slice, s.m("A % 8")));
    ASSIGN_OR_RETURN(DmTensor rhs, in[1].to_dm(ctx.tdma, 1 << 12, cluster, slice, s.m("A % 8")));
    Stream pair = ctx.main.begin_interleaved(s.m("I"), lhs.view(), rhs.view())
                      .fetch(DType::kI32, s.m("I"), s.m("A % 8"))
                      .collect(s.m("I"), s.m("A % 8"))
                      .vector_init()
                      .vector_intra_slice_unzip("I", s.m("1 # 2"), s.m("1"));
    if (scale) pair = std::move(pair).vector_fxp(FxpBinaryOp::kMulInt, VeRhs(10), std::nullopt);
    ASSIGN_OR_RETURN(DmTensor result, std::move(pair)
                                          .vector_clip_zip(ClipBinaryOpI32::kAddFxp)
                                          .vector_final()
                                          .commit(s.m("A % 8"), 1 << 13));
    ASSIGN_OR_RETURN(HbmTensor out, result.to_hbm(ctx.tdma, 2 << 28, s.m("A")));
    return out;
  };
  spec.readback = "A";
  spec.expected = [scale](const std::vector<HostTensor>& in, const MappingScope&) -> absl::StatusOr<Expected> {
    HostTensor lhs = in[0], rhs = in[1];
    return Exact(
        [lhs, rhs, scale](const Index& i) {
          const int64_t l = static_cast<int64_t>(At(lhs, i));
          const int32_t g0 = scale ? static_cast<int32_t>(static_cast<uint32_t>(static_cast<uint64_t>(l) * 10u)) : l;
          return static_cast<double>(WrapI32(int64_t{g0} + static_cast<int64_t>(At(rhs, i))));
        },
        scale ? "10 lhs + rhs modulo 2^32" : "lhs + rhs modulo 2^32");
  };
  return MakeContractionSample(std::move(spec));
}

}  // namespace

std::vector<Sample> VectorSamples() {
  std::vector<Sample> samples = {ConstantAddition(), ElementwiseMultiplication(),
                                 PairAdd("vector_pair_add",
                                         "Vector Engine two-group mode, the manual's pair_add: interleaved fetch, unzip, "
                                         "vector_clip_zip(AddFxp)",
                                         false),
                                 PairAdd("vector_pair_scale_add",
                                         "Vector Engine two-group mode: MulInt 10 on group 0 only, then clip_zip(AddFxp)",
                                         true)};
  for (auto group : {SliceShapeSamples(), MatmulSamples(), VectorBranchSamples()}) {
    samples.insert(samples.end(), group.begin(), group.end());
  }
  return samples;
}

}  // namespace visa::samples
