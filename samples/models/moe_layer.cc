// The Mixture of Experts kernel's stages (moe_layer.h).
#include "samples/models/moe_layer.h"

#include <memory>
#include <vector>

#include "absl/strings/str_cat.h"
#include "dsl/status_macros.h"
#include "runtime/dma.h"
#include "runtime/host_tensor.h"
#include "runtime/transfer.h"
#include "samples/models/llama_steps.h"

namespace visa::models {
namespace {

constexpr int32_t kFlipScoreBits = 0x7fff0000;  // the comparison trick's mask: the score's magnitude bits
constexpr int64_t kIdsVrf = 0, kRankedVrf = 1024;

// The expert ids 0..E-1 as an i32 [E] VRF tensor on every token's slice (Index_expert).
absl::StatusOr<VrfTensor> ExpertIdsToVrf(Context& ctx, const MappingScope& m, const std::string& step) {
  const Mapping ids_host = m.m("T, E");
  std::vector<double> ids;
  for (int64_t p = 0; p < ids_host.size(); ++p) ids.push_back(static_cast<double>(p % m.m("E").size()));
  ASSIGN_OR_RETURN(HostTensor host, HostTensor::FromValues(DType::kI32, ids_host, ids));
  ScopedDmaOperation named(ctx.tdma, step + " expert ids");
  ASSIGN_OR_RETURN(HbmTensor hbm, host.to_hbm(ctx.pdma, Address::Any(), m.m("1"), ids_host));
  ASSIGN_OR_RETURN(DmTensor dm, hbm.to_dm(ctx.tdma, Address::Any(), Cluster(m), Slices(m, "T"), m.m("E")));
  Scratch scratch;
  scratch(dm);
  scratch(hbm);
  return ctx.sub.begin(dm.view())
      .named(step + " expert ids to VRF")
      .fetch(DType::kI32, m.m("E / 8"), m.m("E % 8"))
      .collect(m.m("E / 8"), m.m("E % 8"))
      .to_vrf(m.m("E"), kIdsVrf);
}

}  // namespace

absl::StatusOr<DmTensor> RouterScores(Context& ctx, const MappingScope& m, const MoeShape& shape, const HbmTensor& x,
                                      const HbmTensor& w_router_t) {
  (void)shape;
  const MatmulSpec router{"moe router scores", "T / 32, E / 32", "T % 32", "E", Over("", "D")};
  ASSIGN_OR_RETURN(DmTensor by_tile, Matmul(ctx, m, router, x, w_router_t, /*bf16_out=*/true));
  ASSIGN_OR_RETURN(HbmTensor scores_hbm, ToHbm(ctx, by_tile, m.m("T, E"), "moe router scores"));
  ScopedDmaOperation named(ctx.tdma, "moe router scores by token");
  Scratch scratch;
  scratch(scores_hbm);
  return scores_hbm.to_dm(ctx.tdma, Address::Any(), Cluster(m), Slices(m, "T"), m.m("E"));
}

absl::StatusOr<DmTensor> PackScores(Context& ctx, const MappingScope& m, const MoeShape& shape, const DmTensor& scores,
                                    bool comparable, const std::string& step) {
  (void)shape;
  ASSIGN_OR_RETURN(VrfTensor ids, ExpertIdsToVrf(ctx, m, step));
  // bf16 -> f32 is exact and leaves the score's bits in the upper half, the lower half 0: the
  // reinterpreted i32 is Score << 16, and adding the id (< 2^16) is the OR of the page.
  Stream s = ctx.main.begin(scores.view())
                 .named(step)
                 .fetch(DType::kF32, m.m("E / 8"), m.m("E % 8"))
                 .collect(m.m("E / 8"), m.m("E % 8"))
                 .vector_init();
  if (comparable) {
    // Packed_Value < 0 is the score's sign bit (-0 included): the bits above 0x7fffffff unsigned.
    const InputCmp sign_bit{InputCmp::Kind::kGreaterUnsigned, DType::kF32, 0x7fffffffu};
    const TagGuard negative = TagGuard::Matches({BitReq::kOne, BitReq::kIgnore, BitReq::kIgnore, BitReq::kIgnore});
    s = std::move(s)
            .vector_intra_slice_branch(
                BranchMode::Comparison({sign_bit, InputCmp::False(), InputCmp::False(), InputCmp::False()}))
            .vector_reinterpret(DType::kI32)
            .vector_logic(LogicBinaryOpI32::kBitXor, VeBranchOperand().imm(negative, kFlipScoreBits));
  } else {
    s = std::move(s).vector_intra_slice_branch(BranchMode::Unconditional()).vector_reinterpret(DType::kI32);
  }
  return std::move(s)
      .vector_fxp(FxpBinaryOp::kAddFxp, ids)
      .vector_final()
      .commit(m.m("E"), Address::Any());
}

absl::StatusOr<DmTensor> RankExperts(Context& ctx, const MappingScope& m, const MoeShape& shape,
                                     const DmTensor& packed_cmp) {
  (void)shape;
  // The ranked experts' values P_cmp[I] in the VRF: the packed tensor relabeled E -> I by HBM.
  Scratch scratch;
  ASSIGN_OR_RETURN(HbmTensor packed_hbm, [&]() -> absl::StatusOr<HbmTensor> {
    ScopedDmaOperation named(ctx.tdma, "moe ranking: packed scores");
    return packed_cmp.to_hbm(ctx.tdma, Address::Any(), m.m("T, E"));
  }());
  scratch(packed_hbm);
  ASSIGN_OR_RETURN(DeviceTensor as_ranked, packed_hbm.Relabel({m.m("1"), m.m("T, I")}, 0));
  ASSIGN_OR_RETURN(DmTensor ranked_dm, [&]() -> absl::StatusOr<DmTensor> {
    ScopedDmaOperation named(ctx.tdma, "moe ranking: ranked experts");
    return HbmTensor(as_ranked).to_dm(ctx.tdma, Address::Any(), Cluster(m), Slices(m, "T"), m.m("I"));
  }());
  scratch(ranked_dm);
  ASSIGN_OR_RETURN(VrfTensor ranked, ctx.sub.begin(ranked_dm.view())
                                         .named("moe ranking: ranked experts to VRF")
                                         .fetch(DType::kI32, m.m("I / 8"), m.m("I % 8"))
                                         .collect(m.m("I / 8"), m.m("I % 8"))
                                         .to_vrf(m.m("I"), kRankedVrf));
  // Compare[t, i, j] = (P_cmp[j] > P_cmp[i]) with no branch: the saturating difference
  // P_i - P_j is negative exactly when P_j is the greater, and its sign bit shifted down is 1 or 0.
  return Enter(ctx.main.begin(packed_cmp.view())
                   .named("moe ranking: all-pairs compare and reduce-sum")
                   .fetch(DType::kI32, m.m("I, E / 8"), m.m("E % 8"))
                   .collect(m.m("I, E / 8"), m.m("E % 8")))
      .vector_fxp_with_mode(FxpBinaryOp::kSubFxpSat, BinaryArgMode::kMode10, ranked)
      .vector_fxp(FxpBinaryOp::kLogicRightShift, 31)
      .vector_split(m.m("I, E / 4"), m.m("E % 4"))
      .vector_intra_slice_reduce("E", m.m("I"), m.m("1 # 4"), IntraSliceReduceOpI32::kAddSat)
      .vector_pad_way8(m.m("1 # 8"))
      .vector_final()
      .commit(m.m("I, 1 # 2"), Address::Any());
}

}  // namespace visa::models

namespace visa::models {

absl::StatusOr<MoeRoutingRun> RunMoeRouting(Backend& backend, const MoeShape& shape, const std::vector<double>& x,
                                            const std::vector<double>& w_router) {
  ASSIGN_OR_RETURN(Axes axes, Axes::Parse(shape.Axes()));
  MappingScope m(axes);
  ASSIGN_OR_RETURN(std::unique_ptr<Device> device, Device::Create(1, {}));
  Context ctx(*device, backend);
  // W_router^T [E, D]: the GEMM tile's weights are laid out by columns.
  std::vector<double> w_t(w_router.size());
  for (int64_t d = 0; d < shape.hidden; ++d) {
    for (int64_t e = 0; e < shape.experts; ++e) {
      w_t[static_cast<size_t>(e * shape.hidden + d)] = w_router[static_cast<size_t>(d * shape.experts + e)];
    }
  }
  ASSIGN_OR_RETURN(HostTensor x_host, HostTensor::FromValues(DType::kBF16, m.m("T, D"), x));
  ASSIGN_OR_RETURN(HostTensor w_host, HostTensor::FromValues(DType::kBF16, m.m("E, D"), w_t));
  ASSIGN_OR_RETURN(HbmTensor x_hbm, x_host.to_hbm(ctx.pdma, Address::Any(), m.m("1"), m.m("T, D")));
  ASSIGN_OR_RETURN(HbmTensor w_hbm, w_host.to_hbm(ctx.pdma, Address::Any(), m.m("1"), m.m("E, D")));
  ASSIGN_OR_RETURN(DmTensor scores, RouterScores(ctx, m, shape, x_hbm, w_hbm));
  ASSIGN_OR_RETURN(DmTensor packed_cmp, PackScores(ctx, m, shape, scores, /*comparable=*/true, "moe pack scores"));
  ASSIGN_OR_RETURN(DmTensor rank, RankExperts(ctx, m, shape, packed_cmp));
  MoeRoutingRun run;
  ASSIGN_OR_RETURN(HostTensor rank_host, ReadAs(rank, m.m("T, I")));
  for (double v : rank_host.ToValues()) run.rank.push_back(static_cast<int32_t>(v));
  ASSIGN_OR_RETURN(HostTensor scores_host, ReadAs(scores, m.m("T, E")));
  for (double v : scores_host.ToValues()) run.scores.push_back(static_cast<float>(v));
  run.program = ctx.program();
  return run;
}

}  // namespace visa::models
