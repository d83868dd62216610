// The Mixture of Experts kernel's stages (moe_layer.h).
#include "samples/models/moe_layer.h"

#include <chrono>
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
constexpr int64_t kIdsVrf = 0, kRankedVrf = 1024, kSlotsVrf = 2048, kScalarVrf = 3072;

// 0, 1, ..., n-1 along `axis` as an i32 VRF tensor on every token's slice (Index_expert for E).
absl::StatusOr<VrfTensor> IotaToVrf(Context& ctx, const MappingScope& m, const std::string& axis, int64_t address,
                                    const std::string& step) {
  const Mapping host_layout = m.m("T, " + axis);
  const int64_t n = m.m(axis).size();
  std::vector<double> ids;
  for (int64_t p = 0; p < host_layout.size(); ++p) ids.push_back(static_cast<double>(p % n));
  ASSIGN_OR_RETURN(HostTensor host, HostTensor::FromValues(DType::kI32, host_layout, ids));
  ScopedDmaOperation named(ctx.tdma, step);
  Scratch scratch;
  ASSIGN_OR_RETURN(HbmTensor hbm, host.to_hbm(ctx.pdma, Address::Any(), m.m("1"), host_layout));
  scratch(hbm);
  ASSIGN_OR_RETURN(DmTensor dm, hbm.to_dm(ctx.tdma, Address::Any(), Cluster(m), Slices(m, "T"), m.m(axis)));
  scratch(dm);
  const std::string time = n > 8 ? axis + " / 8" : "1", packet = n > 8 ? axis + " % 8" : axis + " # 8";
  return ctx.sub.begin(dm.view())
      .named(step + " to VRF")
      .fetch(DType::kI32, m.m(time), m.m(packet))
      .collect(m.m(time), m.m(packet))
      .to_vrf(m.m(n > 8 ? axis : axis + " # 8"), address);
}

// A per-token i32 tensor over E in DM as a VRF tensor over I (the same experts, named as the
// ranked ones): relabeled E -> I through HBM.
absl::StatusOr<VrfTensor> AsRankedToVrf(Context& ctx, const MappingScope& m, const DmTensor& over_e, int64_t address,
                                        const std::string& step) {
  Scratch scratch;
  ASSIGN_OR_RETURN(HbmTensor hbm, [&]() -> absl::StatusOr<HbmTensor> {
    ScopedDmaOperation named(ctx.tdma, step);
    return over_e.to_hbm(ctx.tdma, Address::Any(), m.m("T, E"));
  }());
  scratch(hbm);
  ASSIGN_OR_RETURN(DeviceTensor as_ranked, hbm.Relabel({m.m("1"), m.m("T, I")}, 0));
  ASSIGN_OR_RETURN(DmTensor dm, [&]() -> absl::StatusOr<DmTensor> {
    ScopedDmaOperation named(ctx.tdma, step + " by token");
    return HbmTensor(as_ranked).to_dm(ctx.tdma, Address::Any(), Cluster(m), Slices(m, "T"), m.m("I"));
  }());
  scratch(dm);
  return ctx.sub.begin(dm.view())
      .named(step + " to VRF")
      .fetch(DType::kI32, m.m("I / 8"), m.m("I % 8"))
      .collect(m.m("I / 8"), m.m("I % 8"))
      .to_vrf(m.m("I"), address);
}

// K f32 values per token ([R, 1 # 2] in DM) as a Way4 stream of the Float region.
Stream TopKRow(Context& ctx, const MappingScope& m, const DmTensor& row, const std::string& step) {
  return Enter(ctx.main.begin(row.view())
                   .named(step)
                   .fetch(DType::kF32, m.m("R"), m.m("1 # 8"))
                   .collect(m.m("R"), m.m("1 # 8")))
      .vector_trim_way4(m.m("1 # 4"));
}

// One f32 per token: the reduce of a TopKRow over R, committed [1 # 2].
absl::StatusOr<DmTensor> ReduceTopK(Stream s, const MappingScope& m, IntraSliceReduceOpF32 op) {
  return std::move(s)
      .vector_intra_slice_reduce("R", m.m("1"), m.m("1 # 4"), op)
      .vector_pad_way8(m.m("1 # 8"))
      .vector_final()
      .commit(m.m("1 # 2"), Address::Any());
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
  ASSIGN_OR_RETURN(VrfTensor ids, IotaToVrf(ctx, m, "E", kIdsVrf, step + " expert ids"));
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
  // The ranked experts' values P_cmp[I] in the VRF.
  ASSIGN_OR_RETURN(VrfTensor ranked, AsRankedToVrf(ctx, m, packed_cmp, kRankedVrf, "moe ranking: ranked experts"));
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

absl::StatusOr<DmTensor> SelectTopK(Context& ctx, const MappingScope& m, const MoeShape& shape, const DmTensor& rank,
                                    const DmTensor& packed) {
  (void)shape;
  Scratch scratch;
  // Rank[i] - r for every slot r < K ([R, I]): 0 where expert i holds slot r.
  ASSIGN_OR_RETURN(VrfTensor slots, IotaToVrf(ctx, m, "R", kSlotsVrf, "moe top-k: slots"));
  // The ranks made contiguous per token ([I, 1 # 2] -> [I]) through HBM.
  ASSIGN_OR_RETURN(HbmTensor rank_hbm, [&]() -> absl::StatusOr<HbmTensor> {
    ScopedDmaOperation named(ctx.tdma, "moe top-k: ranks");
    return rank.to_hbm(ctx.tdma, Address::Any(), m.m("T, I"));
  }());
  scratch(rank_hbm);
  ASSIGN_OR_RETURN(DmTensor ranks, [&]() -> absl::StatusOr<DmTensor> {
    ScopedDmaOperation named(ctx.tdma, "moe top-k: ranks by token");
    return rank_hbm.to_dm(ctx.tdma, Address::Any(), Cluster(m), Slices(m, "T"), m.m("I"));
  }());
  scratch(ranks);
  ASSIGN_OR_RETURN(DmTensor offset, Enter(ctx.main.begin(ranks.view())
                                              .named("moe top-k: rank minus slot")
                                              .fetch(DType::kI32, m.m("R, I / 8"), m.m("I % 8"))
                                              .collect(m.m("R, I / 8"), m.m("I % 8")))
                                        .vector_fxp(FxpBinaryOp::kSubFxp, slots)
                                        .vector_final()
                                        .commit(m.m("R, I"), Address::Any()));
  scratch(offset);
  // Selected[r] = sum over i of (Rank[i] == r ? Packed[i] : 0): the one element of rank r.
  ASSIGN_OR_RETURN(VrfTensor packed_vrf, AsRankedToVrf(ctx, m, packed, kRankedVrf, "moe top-k: packed values"));
  const TagGuard holds_slot = TagGuard::Matches({BitReq::kOne, BitReq::kIgnore, BitReq::kIgnore, BitReq::kIgnore});
  return ctx.main.begin(offset.view())
      .named("moe top-k: select rank r")
      .fetch(DType::kI32, m.m("R, I / 8"), m.m("I % 8"))
      .collect(m.m("R, I / 8"), m.m("I % 8"))
      .vector_init()
      .vector_intra_slice_branch(
          BranchMode::Comparison({InputCmp::Equal(0), InputCmp::False(), InputCmp::False(), InputCmp::False()}))
      .vector_logic(LogicBinaryOpI32::kBitAnd, 0)
      .vector_fxp(FxpBinaryOp::kAddFxp, VeBranchOperand().rf(holds_slot, VeRhs::vrf(packed_vrf)))
      .vector_split(m.m("R, I / 4"), m.m("I % 4"))
      .vector_intra_slice_reduce("I", m.m("R"), m.m("1 # 4"), IntraSliceReduceOpI32::kAddSat)
      .vector_pad_way8(m.m("1 # 8"))
      .vector_final()
      .commit(m.m("R, 1 # 2"), Address::Any());
}

absl::StatusOr<DmTensor> UnpackIndices(Context& ctx, const MappingScope& m, const DmTensor& selected) {
  return Enter(ctx.main.begin(selected.view())
                   .named("moe top-k: unpack indices")
                   .fetch(DType::kI32, m.m("R"), m.m("1 # 8"))
                   .collect(m.m("R"), m.m("1 # 8")))
      .vector_logic(LogicBinaryOpI32::kBitAnd, 0xffff)
      .vector_final()
      .commit(m.m("R, 1 # 2"), Address::Any());
}

absl::StatusOr<DmTensor> UnpackScores(Context& ctx, const MappingScope& m, const DmTensor& selected) {
  // The upper 16 bits are the bf16 score; as the upper half of an f32 they are the same value.
  return Enter(ctx.main.begin(selected.view())
                   .named("moe top-k: unpack scores")
                   .fetch(DType::kI32, m.m("R"), m.m("1 # 8"))
                   .collect(m.m("R"), m.m("1 # 8")))
      .vector_logic(LogicBinaryOpI32::kBitAnd, static_cast<int32_t>(0xffff0000u))
      .vector_reinterpret(DType::kF32)
      .vector_final()
      .commit(m.m("R, 1 # 2"), Address::Any());
}

absl::StatusOr<DmTensor> RoutingWeights(Context& ctx, const MappingScope& m, const DmTensor& scores) {
  Scratch scratch;
  ASSIGN_OR_RETURN(DmTensor max, ReduceTopK(TopKRow(ctx, m, scores, "moe softmax: max"), m,
                                            IntraSliceReduceOpF32::kMax));
  scratch(max);
  ASSIGN_OR_RETURN(VrfTensor max_vrf, RowToVrf(ctx, m, max, kScalarVrf, "moe softmax: max to VRF"));
  ASSIGN_OR_RETURN(DmTensor exps, TopKRow(ctx, m, scores, "moe softmax: exp")
                                      .vector_fp_binary(FpBinaryOp::SubF(), max_vrf)
                                      .vector_fp_unary(FpUnaryOp::kExp)
                                      .vector_pad_way8(m.m("1 # 8"))
                                      .vector_final()
                                      .commit(m.m("R, 1 # 2"), Address::Any()));
  scratch(exps);
  ASSIGN_OR_RETURN(DmTensor sum, ReduceTopK(TopKRow(ctx, m, exps, "moe softmax: sum"), m,
                                            IntraSliceReduceOpF32::kAdd));
  scratch(sum);
  ASSIGN_OR_RETURN(VrfTensor sum_vrf, RowToVrf(ctx, m, sum, kScalarVrf, "moe softmax: sum to VRF"));
  return TopKRow(ctx, m, exps, "moe softmax: normalize")
      .vector_fp_div(FpDivBinaryOp::kDivF, sum_vrf)
      .vector_pad_way8(m.m("1 # 8"))
      .vector_final()
      .commit(m.m("R, 1 # 2"), Address::Any());
}

}  // namespace visa::models

namespace visa::models {

absl::StatusOr<MoeRoutingRun> RunMoeRouting(Backend& backend, const MoeShape& shape, const std::vector<double>& x,
                                            const std::vector<double>& w_router,
                                            const DeviceOptions& device_options) {
  ASSIGN_OR_RETURN(Axes axes, Axes::Parse(shape.Axes()));
  MappingScope m(axes);
  ASSIGN_OR_RETURN(std::unique_ptr<Device> device, Device::Create(1, device_options));
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
  const auto start = std::chrono::steady_clock::now();
  ASSIGN_OR_RETURN(DmTensor scores, RouterScores(ctx, m, shape, x_hbm, w_hbm));
  ASSIGN_OR_RETURN(DmTensor packed_cmp, PackScores(ctx, m, shape, scores, /*comparable=*/true, "moe pack scores"));
  ASSIGN_OR_RETURN(DmTensor rank, RankExperts(ctx, m, shape, packed_cmp));
  ASSIGN_OR_RETURN(DmTensor packed, PackScores(ctx, m, shape, scores, /*comparable=*/false, "moe pack scores (values)"));
  ASSIGN_OR_RETURN(DmTensor selected, SelectTopK(ctx, m, shape, rank, packed));
  ASSIGN_OR_RETURN(DmTensor topk, UnpackIndices(ctx, m, selected));
  ASSIGN_OR_RETURN(DmTensor topk_scores, UnpackScores(ctx, m, selected));
  ASSIGN_OR_RETURN(DmTensor weights, RoutingWeights(ctx, m, topk_scores));
  MoeRoutingRun run;
  run.kernel_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  run.device_resident_bytes = device->resident_bytes();
  ASSIGN_OR_RETURN(HostTensor topk_host, ReadAs(topk, m.m("T, R")));
  for (double v : topk_host.ToValues()) run.topk.push_back(static_cast<int32_t>(v));
  ASSIGN_OR_RETURN(HostTensor weights_host, ReadAs(weights, m.m("T, R")));
  run.weights = weights_host.ToValues();
  ASSIGN_OR_RETURN(HostTensor rank_host, ReadAs(rank, m.m("T, I")));
  for (double v : rank_host.ToValues()) run.rank.push_back(static_cast<int32_t>(v));
  ASSIGN_OR_RETURN(HostTensor scores_host, ReadAs(scores, m.m("T, E")));
  for (double v : scores_host.ToValues()) run.scores.push_back(static_cast<float>(v));
  run.program = ctx.program();
  return run;
}

}  // namespace visa::models
