// The tiled attention (tiled_attention.h).
#include "samples/models/tiled_attention.h"

#include <cmath>
#include <memory>
#include <optional>

#include "absl/strings/str_cat.h"
#include "dsl/status_macros.h"
#include "runtime/dma.h"
#include "samples/contraction_sample.h"
#include "samples/models/llama_steps.h"
#include "samples/models/vrf_arena.h"

namespace visa::models {
namespace {

constexpr int64_t kBf16 = 2;
constexpr int64_t kScalarBytes = 32;  // a per-row scalar in the VRF ([1 # 8] f32)

// A row of D values (one query row per slice) into the VRF on the sub context.
absl::StatusOr<VrfTensor> RowToVrfD(Context& ctx, const MappingScope& m, const DmTensor& row, int64_t address,
                                    const std::string& what) {
  return ctx.sub.begin(row.view())
      .named(what)
      .fetch(DType::kF32, m.m("D / 8"), m.m("D % 8"))
      .collect(m.m("D / 8"), m.m("D % 8"))
      .to_vrf(m.m("D"), address);
}

// An [S, X] tensor in HBM into DM, one query row per slice.
absl::StatusOr<DmTensor> RowsToDm(Context& ctx, const MappingScope& m, const HbmTensor& x, const std::string& axis,
                                  const std::string& step) {
  ScopedDmaOperation named(ctx.tdma, step);
  return x.to_dm(ctx.tdma, Address::Any(), Cluster(m), Slices(m, "S"), m.m(axis));
}

// A tile's scores (one query row per slice, J f32) fetched into the Float region and scaled.
Stream ScaledScores(Context& ctx, const MappingScope& m, const DmTensor& scores, const std::string& name, float scale) {
  return Enter(ctx.main.begin(scores.view())
                   .named(name)
                   .fetch(DType::kF32, m.m("J / 8"), m.m("J % 8"))
                   .collect(m.m("J / 8"), m.m("J % 8")))
      .vector_split(m.m("J / 4"), m.m("J % 4"))
      .vector_fp_binary(FpBinaryOp::MulF(FpMulAlu::kMul0), scale);
}

// A per-row scalar ([1 # 2] f32 in DM) as a stream in the Float region.
Stream Scalar(Context& ctx, const MappingScope& m, const DmTensor& scalar, const std::string& name) {
  return Enter(ctx.main.begin(scalar.view())
                   .named(name)
                   .fetch(DType::kF32, m.m("1"), m.m("1 # 8"))
                   .collect(m.m("1"), m.m("1 # 8")))
      .vector_trim_way4(m.m("1 # 4"));
}

absl::StatusOr<DmTensor> CommitScalar(const MappingScope& m, Stream s) {
  return std::move(s).vector_pad_way8(m.m("1 # 8")).vector_final().commit(m.m("1 # 2"), Address::Any());
}

// The running state of the online softmax, one query row per slice, f32 in DM.
struct RowState {
  std::optional<DmTensor> max, sum;  // [1 # 2]
  std::optional<DmTensor> out;       // [D], scaled by exp(-max) as the sum is
};

}  // namespace

std::string AttentionTiles::Axes() const {
  return absl::StrCat("S = ", queries, ", D = ", head_dim, ", T = ", keys, ", J = ", tile);
}

std::string StagedV(const AttentionTiles& shape) {
  return absl::StrCat("T / ", shape.tile, ", D, T % ", shape.tile);
}

absl::StatusOr<HbmTensor> TiledAttention(Context& ctx, const MappingScope& m, const AttentionTiles& shape,
                                         const HbmTensor& q, const HbmTensor& k, const HbmTensor& v) {
  if (shape.queries > 32 || shape.keys % shape.tile != 0 || shape.tile % 32 != 0 || shape.tile > 1024 ||
      shape.head_dim % 32 != 0) {
    return absl::InvalidArgumentError(absl::StrCat("tiled attention: ", shape.Axes(),
                                                   ": S must be at most 32, J a multiple of 32 up to 1024 dividing T, "
                                                   "D a multiple of 32"));
  }
  const float scale = 1.0f / std::sqrt(static_cast<float>(shape.head_dim));
  const int64_t tiles = shape.keys / shape.tile;
  RowState state;
  auto replace = [](std::optional<DmTensor>& slot, const DmTensor& now) {
    if (slot.has_value()) slot->Release();
    slot = now;
  };
  for (int64_t j = 0; j < tiles; ++j) {
    const std::string at = absl::StrCat("attention [j", j, "]");
    Scratch scratch;
    // Scores [S, J] = Q K_j^T: each slice 32 keys of the tile, the queries streamed.
    ASSIGN_OR_RETURN(DeviceTensor k_view, k.Relabel({m.m("1"), m.m("J, D")}, j * shape.tile * shape.head_dim * kBf16));
    const MatmulSpec qk{at + " scores", "J / 32", "S", "J", Over("", "D")};
    ASSIGN_OR_RETURN(DmTensor scores_by_key, Matmul(ctx, m, qk, q, HbmTensor(k_view), false));
    ASSIGN_OR_RETURN(HbmTensor scores_hbm, ToHbm(ctx, scores_by_key, m.m("S, J"), at + " scores"));
    ASSIGN_OR_RETURN(DmTensor scores, RowsToDm(ctx, m, scores_hbm, "J", at + " scores by row"));
    scratch(scores);
    VrfArena vrf;
    // The new running max: the tile's row max, raised to the old one.
    Stream tile_max = ScaledScores(ctx, m, scores, at + " row max", scale)
                          .vector_intra_slice_reduce("J", m.m("1"), m.m("1 # 4"), IntraSliceReduceOpF32::kMax)
                          .vector_pad_way8(m.m("1 # 8"));
    std::optional<VrfTensor> old_max;
    if (state.max.has_value()) {
      ASSIGN_OR_RETURN(const int64_t at_old, vrf.Take(kScalarBytes, at + " old max"));
      ASSIGN_OR_RETURN(old_max, RowToVrf(ctx, m, *state.max, at_old, at + " old max to VRF"));
      tile_max = std::move(tile_max).vector_clip(ClipBinaryOpF32::kMax, *old_max);
    }
    ASSIGN_OR_RETURN(DmTensor new_max, std::move(tile_max).vector_final().commit(m.m("1 # 2"), Address::Any()));
    ASSIGN_OR_RETURN(const int64_t at_max, vrf.Take(kScalarBytes, at + " new max"));
    ASSIGN_OR_RETURN(VrfTensor max_vrf, RowToVrf(ctx, m, new_max, at_max, at + " new max to VRF"));
    // The weights exp(s - m) in bf16 for P V, and their row sum.
    ASSIGN_OR_RETURN(DmTensor weights, ScaledScores(ctx, m, scores, at + " weights", scale)
                                           .vector_fp_binary(FpBinaryOp::SubF(), max_vrf)
                                           .vector_fp_unary(FpUnaryOp::kExp)
                                           .vector_concat(m.m("J / 8"), m.m("J % 8"))
                                           .vector_final()
                                           .cast(DType::kBF16, m.m("J % 8 # 16"))
                                           .commit(m.m("J"), Address::Any()));
    scratch(weights);
    ASSIGN_OR_RETURN(DmTensor tile_sum, ScaledScores(ctx, m, scores, at + " row sum", scale)
                                            .vector_fp_binary(FpBinaryOp::SubF(), max_vrf)
                                            .vector_fp_unary(FpUnaryOp::kExp)
                                            .vector_intra_slice_reduce("J", m.m("1"), m.m("1 # 4"),
                                                                       IntraSliceReduceOpF32::kAdd)
                                            .vector_pad_way8(m.m("1 # 8"))
                                            .vector_final()
                                            .commit(m.m("1 # 2"), Address::Any()));
    // P V: the tile's output [S, D], each slice 32 columns of D, the tile's keys contracted.
    ASSIGN_OR_RETURN(HbmTensor weights_hbm, ToHbm(ctx, weights, m.m("S, J"), at + " weights"));
    ASSIGN_OR_RETURN(DeviceTensor v_view, v.Relabel({m.m("1"), m.m("D, J")}, j * shape.head_dim * shape.tile * kBf16));
    const MatmulSpec pv{at + " weighted sum", "D / 32", "S", "D", Over("", "J")};
    ASSIGN_OR_RETURN(DmTensor tile_out_by_col, Matmul(ctx, m, pv, weights_hbm, HbmTensor(v_view), false));
    ASSIGN_OR_RETURN(HbmTensor tile_out_hbm, ToHbm(ctx, tile_out_by_col, m.m("S, D"), at + " weighted sum"));
    ASSIGN_OR_RETURN(DmTensor tile_out, RowsToDm(ctx, m, tile_out_hbm, "D", at + " weighted sum by row"));
    if (!state.max.has_value()) {
      state = {new_max, tile_sum, tile_out};
      continue;
    }
    // The max moved from old to new: alpha = exp(old - new) rescales the earlier sum and output.
    ASSIGN_OR_RETURN(DmTensor alpha, CommitScalar(m, Scalar(ctx, m, *state.max, at + " rescale factor")
                                                         .vector_fp_binary(FpBinaryOp::SubF(), max_vrf)
                                                         .vector_fp_unary(FpUnaryOp::kExp)));
    scratch(alpha);
    ASSIGN_OR_RETURN(const int64_t at_alpha, vrf.Take(kScalarBytes, at + " rescale factor"));
    ASSIGN_OR_RETURN(VrfTensor alpha_vrf, RowToVrf(ctx, m, alpha, at_alpha, at + " rescale factor to VRF"));
    ASSIGN_OR_RETURN(const int64_t at_tile_sum, vrf.Take(kScalarBytes, at + " tile sum"));
    ASSIGN_OR_RETURN(VrfTensor tile_sum_vrf, RowToVrf(ctx, m, tile_sum, at_tile_sum, at + " tile sum to VRF"));
    scratch(tile_sum);
    ASSIGN_OR_RETURN(DmTensor sum, Scalar(ctx, m, *state.sum, at + " running sum")
                                       .vector_fp_binary(FpBinaryOp::MulF(FpMulAlu::kMul0), alpha_vrf)
                                       .vector_pad_way8(m.m("1 # 8"))
                                       .vector_clip(ClipBinaryOpF32::kAdd, tile_sum_vrf)
                                       .vector_final()
                                       .commit(m.m("1 # 2"), Address::Any()));
    ASSIGN_OR_RETURN(const int64_t at_tile_out, vrf.Take(shape.head_dim * 4, at + " tile output"));
    ASSIGN_OR_RETURN(VrfTensor tile_out_vrf, RowToVrfD(ctx, m, tile_out, at_tile_out, at + " tile output to VRF"));
    scratch(tile_out);
    ASSIGN_OR_RETURN(DmTensor out, Enter(ctx.main.begin(state.out->view())
                                             .named(at + " running output")
                                             .fetch(DType::kF32, m.m("D / 8"), m.m("D % 8"))
                                             .collect(m.m("D / 8"), m.m("D % 8")))
                                       .vector_split(m.m("D / 4"), m.m("D % 4"))
                                       .vector_fp_binary(FpBinaryOp::MulF(FpMulAlu::kMul0), alpha_vrf)
                                       .vector_concat(m.m("D / 8"), m.m("D % 8"))
                                       .vector_clip(ClipBinaryOpF32::kAdd, tile_out_vrf)
                                       .vector_final()
                                       .commit(m.m("D"), Address::Any()));
    replace(state.max, new_max);
    replace(state.sum, sum);
    replace(state.out, out);
  }
  // out / sum.
  VrfArena vrf;
  ASSIGN_OR_RETURN(const int64_t at_sum, vrf.Take(kScalarBytes, "attention sum"));
  ASSIGN_OR_RETURN(VrfTensor sum_vrf, RowToVrf(ctx, m, *state.sum, at_sum, "attention sum to VRF"));
  ASSIGN_OR_RETURN(DmTensor normalized, Enter(ctx.main.begin(state.out->view())
                                                  .named("attention normalized")
                                                  .fetch(DType::kF32, m.m("D / 8"), m.m("D % 8"))
                                                  .collect(m.m("D / 8"), m.m("D % 8")))
                                            .vector_split(m.m("D / 4"), m.m("D % 4"))
                                            .vector_fp_div(FpDivBinaryOp::kDivF, sum_vrf)
                                            .vector_concat(m.m("D / 8"), m.m("D % 8"))
                                            .vector_final()
                                            .commit(m.m("D"), Address::Any()));
  state.max->Release();
  state.sum->Release();
  state.out->Release();
  return ToHbm(ctx, normalized, m.m("S, D"), "attention result");
}

samples::Sample TiledAttentionSample(const std::string& name, const AttentionTiles& shape, bool slow) {
  samples::ContractionSpec spec;
  spec.name = name;
  spec.description = absl::StrCat("tiled attention over ", shape.keys, " keys (S = ", shape.queries, ", D = ",
                                  shape.head_dim, ", key tiles of ", shape.tile,
                                  "): online softmax, running max and sum rescaled when the max moves");
  spec.axes = shape.Axes();
  spec.operands = {{DType::kBF16, "S, D", 42, 0},
                   {DType::kBF16, "T, D", 43, int64_t{1} << 28},
                   {DType::kBF16, "T, D", 44, int64_t{2} << 28, StagedV(shape)}};
  spec.kernel = [shape](Context& ctx, const std::vector<HbmTensor>& in,
                        const MappingScope& m) -> absl::StatusOr<DeviceTensor> {
    ASSIGN_OR_RETURN(HbmTensor out, TiledAttention(ctx, m, shape, in[0], in[1], in[2]));
    return out;
  };
  spec.readback = "S, D";
  spec.expected = [shape](const std::vector<HostTensor>& in, const MappingScope&) -> absl::StatusOr<samples::Expected> {
    auto ref = std::make_shared<AttentionReference>(
        ReferenceAttention(shape, in[0].ToValues(), in[1].ToValues(), in[2].ToValues()));
    const int64_t d = shape.head_dim;
    samples::Expected e;
    e.value = [ref, d](const Index& i) { return ref->out[static_cast<size_t>(i["S"] * d + i["D"])]; };
    // The weights are rounded to bf16 before P V (2^-9 relative each) and exp, the f32 sums and
    // the division add a few f32 ulps: (2^-8 + 2^-12) x sum p |v|.
    e.bound = [ref, d](const Index& i) {
      return (std::ldexp(1.0, -8) + std::ldexp(1.0, -12)) * ref->magnitude[static_cast<size_t>(i["S"] * d + i["D"])];
    };
    e.note = absl::StrCat("bound: (2^-8 + 2^-12) x sum p|v| (bf16 weights), f64 two-pass host reference; the running "
                          "max moved in ", ref->max_moves, " (row, tile) pairs");
    return e;
  };
  spec.slow = slow;
  return samples::MakeContractionSample(std::move(spec));
}

}  // namespace visa::models
