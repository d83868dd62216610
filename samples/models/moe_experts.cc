// The Mixture of Experts layer's dispatch, experts and combine on the device (moe_experts.h).
#include "samples/models/moe_experts.h"

#include <chrono>
#include <memory>
#include <random>

#include "dsl/mapping_parser.h"
#include "dsl/status_macros.h"
#include "runtime/dma.h"
#include "runtime/host_tensor.h"
#include "runtime/indirect_dma.h"
#include "runtime/tensor.h"
#include "runtime/tensor_unit.h"
#include "runtime/transfer.h"
#include "samples/models/llama_steps.h"

namespace visa::models {
namespace {

constexpr int64_t kUpVrf = 0, kWeightsVrf = 4096;

Destination InHbm(const MappingScope& m, const std::string& element) {
  return Destination{Tier::kHbm, Address::Any(), {m.m("1"), m.m(element)}};
}

absl::StatusOr<HbmTensor> Upload(Context& ctx, const MappingScope& m, DType dtype, const std::string& element,
                                 const std::vector<double>& values) {
  ASSIGN_OR_RETURN(HostTensor host, HostTensor::FromValues(dtype, m.m(element), values));
  return host.to_hbm(ctx.pdma, Address::Any(), m.m("1"), m.m(element));
}

absl::StatusOr<HbmTensor> Relabeled(const HbmTensor& t, const MappingScope& m, const std::string& element) {
  ASSIGN_OR_RETURN(DeviceTensor relabeled, t.Relabel({m.m("1"), m.m(element)}, 0));
  return HbmTensor(relabeled);
}

// A weight table [E, rows, cols] transposed per expert to [Z, cols, rows] with the zero expert Z = E
// last (the GEMM tile's weights are laid out by columns).
std::vector<double> TransposedWithZeroExpert(const std::vector<double>& w, int64_t experts, int64_t rows, int64_t cols) {
  std::vector<double> out(static_cast<size_t>((experts + 1) * rows * cols), 0.0);
  for (int64_t e = 0; e < experts; ++e) {
    for (int64_t r = 0; r < rows; ++r) {
      for (int64_t c = 0; c < cols; ++c) {
        out[static_cast<size_t>((e * cols + c) * rows + r)] = w[static_cast<size_t>((e * rows + r) * cols + c)];
      }
    }
  }
  return out;
}

// A DM index tensor (one slice, `axis` or [axis, 1 # 2]) in HBM as the contiguous [axis] the DMA
// gathers and scatters read.
absl::StatusOr<HbmTensor> IndexToHbm(Context& ctx, const MappingScope& m, const DmTensor& index, const std::string& axis,
                                     const std::string& step) {
  ScopedDmaOperation named(ctx.tdma, step);
  return index.to_hbm(ctx.tdma, Address::Any(), m.m(axis));
}

// 3.4 Dispatch: x_blocked [S, D] (S = G * B slots), every assignment's token row at its Scatter_Idx.
absl::StatusOr<HbmTensor> Dispatch(Context& ctx, const MappingScope& m, const MoeShape& shape, const HbmTensor& x,
                                   const HbmTensor& scatter_idx, Scratch& scratch) {
  // The token of each assignment a = t*K + k: the page's x_norm row t for each of its K slots.
  std::vector<double> token_of;
  for (int64_t a = 0; a < shape.tokens * shape.top_k; ++a) token_of.push_back(static_cast<double>(a / shape.top_k));
  ASSIGN_OR_RETURN(HbmTensor token_index, Upload(ctx, m, DType::kI32, "A", token_of));
  // Uploaded inputs (token_index, the empty blocks, the weight tables) are kept for a relaunch.
  ScopedDmaOperation named(ctx.tdma, "moe dispatch: blockwise scatter");
  ASSIGN_OR_RETURN(DeviceTensor rows, Gather(ctx.tdma, x, token_index, "T", InHbm(m, "A, D")));
  scratch(rows);
  const int64_t slots = m.m("S").size();
  ASSIGN_OR_RETURN(HbmTensor empty, Upload(ctx, m, DType::kBF16, "S, D",
                                           std::vector<double>(static_cast<size_t>(slots * shape.hidden), 0.0)));
  ASSIGN_OR_RETURN(DeviceTensor blocked, Scatter(ctx.tdma, rows, scatter_idx, empty, "S", InHbm(m, "S, D")));
  return HbmTensor(blocked);
}

// 3.5 The experts: W gathered by Expert_IDs, then per block SiLU(x W_gate) * (x W_up), bf16, and
// its product with W_down, f32: y_blocked [G, Q, D].
absl::StatusOr<HbmTensor> BlockwiseSwiGlu(Context& ctx, const MappingScope& m, const MoeShape& shape,
                                          const HbmTensor& x_blocked, const HbmTensor& expert_ids,
                                          const MoeExpertWeights& w, Scratch& scratch) {
  const int64_t E = shape.experts, D = shape.hidden, F = shape.ffn;
  ASSIGN_OR_RETURN(HbmTensor gate_t, Upload(ctx, m, DType::kBF16, "Z, F, D", TransposedWithZeroExpert(w.w_gate, E, D, F)));
  ASSIGN_OR_RETURN(HbmTensor up_t, Upload(ctx, m, DType::kBF16, "Z, F, D", TransposedWithZeroExpert(w.w_up, E, D, F)));
  ASSIGN_OR_RETURN(HbmTensor down_t, Upload(ctx, m, DType::kBF16, "Z, D, F", TransposedWithZeroExpert(w.w_down, E, F, D)));
  std::optional<HbmTensor> gate_g, up_g, down_g;
  {
    ScopedDmaOperation named(ctx.tdma, "moe weight gather by Expert_IDs");
    ASSIGN_OR_RETURN(DeviceTensor g, Gather(ctx.tdma, gate_t, expert_ids, "Z", InHbm(m, "G, F, D")));
    ASSIGN_OR_RETURN(DeviceTensor u, Gather(ctx.tdma, up_t, expert_ids, "Z", InHbm(m, "G, F, D")));
    ASSIGN_OR_RETURN(DeviceTensor d, Gather(ctx.tdma, down_t, expert_ids, "Z", InHbm(m, "G, D, F")));
    gate_g = HbmTensor(g);
    up_g = HbmTensor(u);
    down_g = HbmTensor(d);
  }
  scratch(*gate_g);
  scratch(*up_g);
  scratch(*down_g);
  ASSIGN_OR_RETURN(HbmTensor xb, Relabeled(x_blocked, m, "G, Q, D"));
  const MatmulSpec up_spec{"moe experts: up projection", "G, F / 32", "Q", "F", Over("", "D")};
  ASSIGN_OR_RETURN(DmTensor up_dm, Matmul(ctx, m, up_spec, xb, *up_g, false));
  ASSIGN_OR_RETURN(VrfTensor up_vrf, TileToVrf(ctx, m, up_spec, up_dm, "moe experts: up to VRF", kUpVrf));
  up_dm.Release();
  const MatmulSpec gate_spec{"moe experts: gate projection + SiLU x up", "G, F / 32", "Q", "F", Over("", "D")};
  ASSIGN_OR_RETURN(DmTensor act_dm, Matmul(ctx, m, gate_spec, xb, *gate_g, true, [&](Stream s) {
                     return Enter(std::move(s))
                         .vector_split(m.m("Q, F / 8 % 4, F % 8 / 4"), m.m("F % 4"))
                         .vector_stash()
                         .vector_fp_unary(FpUnaryOp::kSigmoid)
                         .vector_fp_binary(FpBinaryOp::MulF(FpMulAlu::kMul0), Stash)
                         .vector_fp_binary(FpBinaryOp::MulF(FpMulAlu::kMul1), up_vrf)
                         .vector_concat(m.m("Q, F / 8 % 4"), m.m("F % 8"))
                         .vector_final();
                   }));
  ASSIGN_OR_RETURN(HbmTensor act, ToHbm(ctx, act_dm, m.m("G, Q, F"), "moe experts: SwiGLU result"));
  scratch(act);
  const MatmulSpec down_spec{"moe experts: down projection", "G, D / 32", "Q", "D", Over("", "F")};
  ASSIGN_OR_RETURN(DmTensor y_dm, Matmul(ctx, m, down_spec, act, *down_g, false));
  return ToHbm(ctx, y_dm, m.m("G, Q, D"), "moe experts: y_blocked");
}

// 3.6 Combine: y_restored [A, D] gathered at Scatter_Idx, then per token sum over k of
// routing_weights[k] * y_restored[t*K + k] (f32, k in order), [D] in each token's slice.
absl::StatusOr<DmTensor> Combine(Context& ctx, const MappingScope& m, const HbmTensor& y_blocked,
                                 const HbmTensor& scatter_idx, const DmTensor& weights, Scratch& scratch) {
  ASSIGN_OR_RETURN(HbmTensor y_slots, Relabeled(y_blocked, m, "S, D"));
  std::optional<DmTensor> restored;
  {
    ScopedDmaOperation named(ctx.tdma, "moe combine: gather in token order");
    ASSIGN_OR_RETURN(DeviceTensor gathered, Gather(ctx.tdma, y_slots, scatter_idx, "S", InHbm(m, "A, D")));
    scratch(gathered);
    ASSIGN_OR_RETURN(HbmTensor by_token, Relabeled(HbmTensor(gathered), m, "T, R, D"));
    ASSIGN_OR_RETURN(restored, by_token.to_dm(ctx.tdma, Address::Any(), Cluster(m), Slices(m, "T"), m.m("R, D")));
  }
  scratch(*restored);
  ASSIGN_OR_RETURN(VrfTensor weights_vrf, ctx.sub.begin(weights.view())
                                              .named("moe combine: routing weights to VRF")
                                              .fetch(DType::kF32, m.m("R"), m.m("1 # 8"))
                                              .collect(m.m("R"), m.m("1 # 8"))
                                              .to_vrf(m.m("R, 1 # 8"), kWeightsVrf));
  return Enter(ctx.main.begin(restored->view())
                   .named("moe combine: weighted sum over K")
                   .fetch(DType::kF32, m.m("D / 32, R, D % 32 / 8"), m.m("D % 8"))
                   .collect(m.m("D / 32, R, D % 32 / 8"), m.m("D % 8")))
      .vector_split(m.m("D / 32, R, D % 32 / 4"), m.m("D % 4"))
      .vector_fp_binary(FpBinaryOp::MulF(FpMulAlu::kMul0), weights_vrf)
      .vector_intra_slice_reduce("R", m.m("D / 32, D % 32 / 4"), m.m("D % 4"), IntraSliceReduceOpF32::kAdd)
      .vector_concat(m.m("D / 32, D % 32 / 8"), m.m("D % 8"))
      .vector_final()
      .commit(m.m("D"), Address::Any());
}

}  // namespace

MoeExpertWeights MakeMoeExpertWeights(const MoeShape& shape, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<int> sixty_fourths(-32, 32);
  auto fill = [&](int64_t n) {
    std::vector<double> v(static_cast<size_t>(n));
    for (double& x : v) x = sixty_fourths(rng) / 64.0;
    return v;
  };
  const int64_t n = shape.experts * shape.hidden * shape.ffn;
  MoeExpertWeights w;
  w.w_gate = fill(n);
  w.w_up = fill(n);
  w.w_down = fill(n);
  return w;
}

absl::StatusOr<MoeLayerRun> RunMoeLayer(Backend& backend, const MoeShape& shape, const std::vector<double>& x,
                                        const std::vector<double>& w_router, const MoeExpertWeights& experts,
                                        const DeviceOptions& options) {
  RETURN_IF_ERROR(CheckMoeBlockShape(shape));
  ASSIGN_OR_RETURN(Axes axes, Axes::Parse(MoeBlockAxes(shape)));
  MappingScope m(axes);
  ASSIGN_OR_RETURN(std::unique_ptr<Device> device, Device::Create(1, options));
  Context ctx(*device, backend);
  const auto start = std::chrono::steady_clock::now();
  Scratch scratch;
  ASSIGN_OR_RETURN(MoeDeviceRouting routing, RouteMoe(ctx, m, shape, x, w_router, scratch));
  ASSIGN_OR_RETURN(MoeDeviceBlocks blocks, GenerateMoeIndices(ctx, m, shape, *routing.topk, scratch));
  ASSIGN_OR_RETURN(HbmTensor scatter_idx, IndexToHbm(ctx, m, *blocks.scatter_idx, "A", "moe Scatter_Idx to HBM"));
  scratch(scatter_idx);
  ASSIGN_OR_RETURN(HbmTensor expert_ids, IndexToHbm(ctx, m, *blocks.expert_ids, "G", "moe Expert_IDs to HBM"));
  scratch(expert_ids);
  ASSIGN_OR_RETURN(HbmTensor x_blocked, Dispatch(ctx, m, shape, *routing.x, scatter_idx, scratch));
  scratch(x_blocked);
  ASSIGN_OR_RETURN(HbmTensor y_blocked, BlockwiseSwiGlu(ctx, m, shape, x_blocked, expert_ids, experts, scratch));
  scratch(y_blocked);
  ASSIGN_OR_RETURN(DmTensor out, Combine(ctx, m, y_blocked, scatter_idx, *routing.weights, scratch));
  scratch(out);
  MoeLayerRun run;
  run.kernel_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  run.device_resident_bytes = device->resident_bytes();
  ASSIGN_OR_RETURN(run.blocks, ReadMoeBlocks(shape, m, *routing.topk, blocks));
  ASSIGN_OR_RETURN(HostTensor out_host, ReadAs(out, m.m("T, D")));
  run.out = out_host.ToValues();
  run.program = ctx.program();
  return run;
}

}  // namespace visa::models
