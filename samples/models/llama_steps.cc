// The model steps shared by the Llama-style programs (llama_steps.h).
#include "samples/models/llama_steps.h"

#include <cmath>
#include <limits>
#include <optional>
#include <string>

#include "dsl/status_macros.h"
#include "runtime/dma.h"
#include "samples/models/vrf_arena.h"

namespace visa::models {

// The pieces of a contracted axis K the GEMM tile restates: K itself, its 16-element flits and
// its 32-element packets. `outer` are axes outside the innermost `inner` (a multiple of 32).
Contracted Over(const std::string& outer, const std::string& inner) {
  const std::string prefix = outer.empty() ? "" : outer + ", ";
  return {prefix + inner, prefix + inner + " / 16", inner + " % 16", prefix + inner + " / 32", inner + " % 32"};
}




Mapping Cluster(const MappingScope& m) { return m.m("1 # 2"); }
// The Slice level over the axes `axes`, padded to the cluster's 256 slices.
Mapping Slices(const MappingScope& m, const std::string& axes) { return m.m("[" + axes + "] # 256"); }

absl::StatusOr<MatmulOperands> MoveOperands(Context& ctx, const MappingScope& m, const MatmulSpec& spec,
                                            const HbmTensor& a, const DeviceTensor& b_t, Scratch& scratch) {
  const Mapping slice = Slices(m, spec.slice);
  ScopedDmaOperation named(ctx.tdma, spec.step + " operands");
  ASSIGN_OR_RETURN(DmTensor a_dm, a.to_dm(ctx.tdma, Address::Any(), Cluster(m), slice, m.m(spec.rows + ", " + spec.k.all)));
  scratch(a_dm);
  if (b_t.tier() != Tier::kHbm) return MatmulOperands{a_dm, DmTensor(b_t)};
  ASSIGN_OR_RETURN(DmTensor b_dm, HbmTensor(b_t).to_dm(ctx.tdma, Address::Any(), Cluster(m), slice,
                                                       m.m(spec.col32() + ", " + spec.k.all)));
  scratch(b_dm);
  return MatmulOperands{a_dm, b_dm};
}

absl::StatusOr<DmTensor> MatmulOn(Context& ctx, const MappingScope& m, const MatmulSpec& spec,
                                  const MatmulOperands& operands, bool bf16_out, const Epilogue& epilogue) {
  ASSIGN_OR_RETURN(TrfTensor b_trf,
                   ctx.sub.begin(operands.b.view())
                       .named(spec.step + " weights")
                       .fetch(DType::kBF16, m.m(spec.col8() + ", " + spec.col4()), m.m(spec.k.all))
                       .collect(m.m(spec.col8() + ", " + spec.col4() + ", " + spec.k.outer16), m.m(spec.k.inner16))
                       .to_trf(m.m(spec.col8()), m.m(spec.col4() + ", " + spec.k.all), TrfAddress::kFull));
  Stream sums = ctx.main.begin(operands.a.view())
                    .named(spec.step)
                    .fetch(DType::kBF16, m.m(spec.out_time()), m.m(spec.k.all))
                    .collect(m.m(spec.out_time() + ", " + spec.k.outer16), m.m(spec.k.inner16))
                    .align(m.m(spec.out_time() + ", " + spec.k.outer32), m.m(spec.k.inner32), b_trf)
                    .contract(m.m("1"))
                    .accumulate(m.m(spec.out_time()), m.m(spec.col8()), AccumulationKind::kInterleaved);
  if (epilogue) sums = epilogue(std::move(sums));
  if (bf16_out) sums = std::move(sums).cast(DType::kBF16, m.m(spec.col8() + " # 16"));
  return std::move(sums).commit(m.m(spec.rows + ", " + spec.col32()), Address::Any());
}

absl::StatusOr<DmTensor> Matmul(Context& ctx, const MappingScope& m, const MatmulSpec& spec, const HbmTensor& a,
                                const DeviceTensor& b_t, bool bf16_out, const Epilogue& epilogue) {
  Scratch scratch;
  ASSIGN_OR_RETURN(MatmulOperands operands, MoveOperands(ctx, m, spec, a, b_t, scratch));
  return MatmulOn(ctx, m, spec, operands, bf16_out, epilogue);
}

// A GEMM tile's image in the VRF (f32, laid out as the accumulator's output), from DM.
absl::StatusOr<VrfTensor> TileToVrf(Context& ctx, const MappingScope& m, const MatmulSpec& spec, const DmTensor& tile,
                                    const std::string& what, int64_t address) {
  return ctx.sub.begin(tile.view())
      .named(what)
      .fetch(DType::kF32, m.m(spec.out_time()), m.m(spec.col8()))
      .collect(m.m(spec.out_time()), m.m(spec.col8()))
      .to_vrf(m.m(spec.out_time() + ", " + spec.col8()), address);
}

absl::StatusOr<HbmTensor> ToHbm(Context& ctx, const DmTensor& dm, const Mapping& element, const std::string& step) {
  ScopedDmaOperation named(ctx.tdma, step);
  Scratch scratch;
  scratch(dm);
  return dm.to_hbm(ctx.tdma, Address::Any(), element);
}

Stream Enter(Stream s) { return std::move(s).vector_init().vector_intra_slice_branch(BranchMode::Unconditional()); }

// One f32 value per slice (element [1 # 2]) into the VRF at `address`, on the sub context.
absl::StatusOr<VrfTensor> RowToVrf(Context& ctx, const MappingScope& m, const DmTensor& row, int64_t address,
                                   const std::string& what) {
  return ctx.sub.begin(row.view())
      .named(what)
      .fetch(DType::kF32, m.m("1"), m.m("1 # 8"))
      .collect(m.m("1"), m.m("1 # 8"))
      .to_vrf(m.m("1 # 8"), address);
}

// The elements of D one slice scales by 1/rms and w: w's chunk (f32) must fit the 8 KB VRF
// beside the scale.
constexpr int64_t kRmsChunk = 1024;
// A per-row scalar in the VRF: RowToVrf's element [1 # 8] f32.
constexpr int64_t kRowScalarBytes = 32;

// RMSNorm's last pass where D exceeds kRmsChunk: the per-token 1/rms (one value in each token's
// slice) goes through HBM to the D / kRmsChunk slices of its token (the split reduce's broadcast),
// and each slice scales its chunk of x by it and by its chunk of w.
absl::StatusOr<HbmTensor> ApplyRmsChunked(Context& ctx, const MappingScope& m, const HbmTensor& x, const HbmTensor& w,
                                          const DmTensor& inverse, const std::string& step) {
  const std::string chunk = std::to_string(kRmsChunk);
  const Mapping slice = Slices(m, "S, D / " + chunk), row = m.m("D % " + chunk);
  ScopedDmaOperation named(ctx.tdma, step + " chunks");
  Scratch scratch;
  ASSIGN_OR_RETURN(HbmTensor inverse_hbm, inverse.to_hbm(ctx.tdma, Address::Any(), m.m("S")));
  ASSIGN_OR_RETURN(DmTensor inverse_dm, inverse_hbm.to_dm(ctx.tdma, Address::Any(), Cluster(m), slice, m.m("1 # 2")));
  scratch(inverse_dm);
  ASSIGN_OR_RETURN(DmTensor x_dm, x.to_dm(ctx.tdma, Address::Any(), Cluster(m), slice, row));
  scratch(x_dm);
  ASSIGN_OR_RETURN(DmTensor w_dm, w.to_dm(ctx.tdma, Address::Any(), Cluster(m), slice, row));
  scratch(w_dm);
  const std::string d8 = "D % " + chunk + " / 8", d4 = "D % " + chunk + " / 4";
  VrfArena vrf;
  ASSIGN_OR_RETURN(const int64_t weight_at, vrf.Take(4 * kRmsChunk, step + " weight chunk"));
  ASSIGN_OR_RETURN(VrfTensor w_vrf, ctx.sub.begin(w_dm.view())
                                        .named(step + " weight")
                                        .fetch(DType::kF32, m.m(d8), m.m("D % 8"))
                                        .collect(m.m(d8), m.m("D % 8"))
                                        .to_vrf(row, weight_at));
  ASSIGN_OR_RETURN(const int64_t scale_at, vrf.Take(kRowScalarBytes, step + " 1/rms"));
  ASSIGN_OR_RETURN(VrfTensor scale, RowToVrf(ctx, m, inverse_dm, scale_at, step + " 1/rms to VRF"));
  ASSIGN_OR_RETURN(DmTensor y, Enter(ctx.main.begin(x_dm.view())
                                         .named(step)
                                         .fetch(DType::kF32, m.m(d8), m.m("D % 8"))
                                         .collect(m.m(d8), m.m("D % 8")))
                                   .vector_split(m.m(d4), m.m("D % 4"))
                                   .vector_fp_binary(FpBinaryOp::MulF(FpMulAlu::kMul0), scale)
                                   .vector_fp_binary(FpBinaryOp::MulF(FpMulAlu::kMul1), w_vrf)
                                   .vector_concat(m.m(d8), m.m("D % 8"))
                                   .vector_final()
                                   .cast(DType::kBF16, m.m("D % 8 # 16"))
                                   .commit(row, Address::Any()));
  return ToHbm(ctx, y, m.m("S, D"), step + " result");
}

// RMSNorm on the Vector Engine, one token per slice (Slice [S], Element [D]): sum(x^2 + eps)
// (FmaF, Intra-Slice Reduce Add over Time and Packet), 1 / sqrt(sum / D), then x * that * w
// (FpMul0, FpMul1, w in the VRF), cast to bf16 for the contraction that reads it.
absl::StatusOr<HbmTensor> RmsNorm(Context& ctx, const MappingScope& m, const LlamaConfig& c, const HbmTensor& x,
                                  const HbmTensor& w, const std::string& step) {
  const Mapping slice = Slices(m, "S"), row = m.m("D");
  ScopedDmaOperation named(ctx.tdma, step + " operands");
  Scratch scratch;
  ASSIGN_OR_RETURN(DmTensor x_dm, x.to_dm(ctx.tdma, Address::Any(), Cluster(m), slice, row));
  scratch(x_dm);
  VrfArena vrf;
  std::optional<VrfTensor> w_vrf;
  if (c.hidden <= kRmsChunk) {
    ASSIGN_OR_RETURN(const int64_t weight_at, vrf.Take(4 * c.hidden, step + " weight"));
    ASSIGN_OR_RETURN(DmTensor w_dm, w.to_dm(ctx.tdma, Address::Any(), Cluster(m), slice, row));
    scratch(w_dm);
    ASSIGN_OR_RETURN(VrfTensor loaded, ctx.sub.begin(w_dm.view())
                                           .named(step + " weight")
                                           .fetch(DType::kF32, m.m("D / 8"), m.m("D % 8"))
                                           .collect(m.m("D / 8"), m.m("D % 8"))
                                           .to_vrf(row, weight_at));
    w_vrf = loaded;
  }
  auto fetch = [&](const std::string& name) {
    return Enter(ctx.main.begin(x_dm.view()).named(name).fetch(DType::kF32, m.m("D / 8"), m.m("D % 8")).collect(m.m("D / 8"), m.m("D % 8")))
        .vector_split(m.m("D / 4"), m.m("D % 4"));
  };
  // mean(x^2 + eps) = mean(x^2) + eps: each element carries eps into the sum.
  ASSIGN_OR_RETURN(DmTensor squares, fetch(step + " sum of squares")
                                         .vector_fp_ternary_with_mode(FpTernaryOp::kFmaF, TernaryArgMode::kMode002,
                                                                      VeBranchOperand(0.0f, c.eps))
                                         .vector_intra_slice_reduce("D", m.m("1"), m.m("1 # 4"), IntraSliceReduceOpF32::kAdd)
                                         .vector_pad_way8(m.m("1 # 8"))
                                         .vector_final()
                                         .commit(m.m("1 # 2"), Address::Any()));
  scratch(squares);
  ASSIGN_OR_RETURN(DmTensor inverse, Enter(ctx.main.begin(squares.view())
                                               .named(step + " 1/rms")
                                               .fetch(DType::kF32, m.m("1"), m.m("1 # 8"))
                                               .collect(m.m("1"), m.m("1 # 8")))
                                         .vector_trim_way4(m.m("1 # 4"))
                                         .vector_fp_binary(FpBinaryOp::MulF(FpMulAlu::kMul0),
                                                           1.0f / static_cast<float>(c.hidden))
                                         .vector_fp_unary(FpUnaryOp::kSqrt)
                                         .vector_fp_div_with_mode(FpDivBinaryOp::kDivF, BinaryArgMode::kMode10, 1.0f)
                                         .vector_pad_way8(m.m("1 # 8"))
                                         .vector_final()
                                         .commit(m.m("1 # 2"), Address::Any()));
  scratch(inverse);
  if (c.hidden > kRmsChunk) return ApplyRmsChunked(ctx, m, x, w, inverse, step);
  ASSIGN_OR_RETURN(const int64_t scale_at, vrf.Take(kRowScalarBytes, step + " 1/rms"));
  ASSIGN_OR_RETURN(VrfTensor scale, RowToVrf(ctx, m, inverse, scale_at, step + " 1/rms to VRF"));
  ASSIGN_OR_RETURN(DmTensor y, fetch(step)
                                   .vector_fp_binary(FpBinaryOp::MulF(FpMulAlu::kMul0), scale)
                                   .vector_fp_binary(FpBinaryOp::MulF(FpMulAlu::kMul1), *w_vrf)
                                   .vector_concat(m.m("D / 8"), m.m("D % 8"))
                                   .vector_final()
                                   .cast(DType::kBF16, m.m("D % 8 # 16"))
                                   .commit(row, Address::Any()));
  return ToHbm(ctx, y, m.m("S, D"), step + " result");
}

// Scores [G, H, S, T] (f32) scaled by 1/sqrt(d_k) and masked by the branch ids, then softmax over
// T, one (g, h, s) row per slice; the weights come out in bf16 for the weighted sum.
absl::StatusOr<HbmTensor> MaskedSoftmax(Context& ctx, const MappingScope& m, const LlamaConfig& c,
                                        const HbmTensor& scores, const HbmTensor& mask, const std::string& step) {
  const Mapping slice = Slices(m, "G, H, S"), row = m.m("T");
  ScopedDmaOperation named(ctx.tdma, step + " operands");
  Scratch scratch;
  ASSIGN_OR_RETURN(DmTensor x, scores.to_dm(ctx.tdma, Address::Any(), Cluster(m), slice, row));
  scratch(x);
  ASSIGN_OR_RETURN(DmTensor ids, mask.to_dm(ctx.tdma, Address::Any(), Cluster(m), slice, row));
  scratch(ids);
  VrfArena vrf;
  ASSIGN_OR_RETURN(const int64_t ids_at, vrf.Take(4 * c.max_positions, step + " mask ids"));
  ASSIGN_OR_RETURN(const int64_t max_at, vrf.Take(kRowScalarBytes, step + " row max"));
  ASSIGN_OR_RETURN(const int64_t sum_at, vrf.Take(kRowScalarBytes, step + " row sum"));
  // The attention mask written to the branch log: id 1 on the positions after the query's own.
  ASSIGN_OR_RETURN(VrfTensor ids_vrf, ctx.sub.begin(ids.view())
                                          .named(step + " causal mask to branch log")
                                          .fetch(DType::kI32, m.m("T / 8"), m.m("T % 8"))
                                          .collect(m.m("T / 8"), m.m("T % 8"))
                                          .to_vrf(row, ids_at));
  const TagGuard masked = TagGuard::Matches({BitReq::kOne, BitReq::kIgnore, BitReq::kIgnore, BitReq::kIgnore});
  const float scale = 1.0f / std::sqrt(static_cast<float>(c.head_dim));
  ASSIGN_OR_RETURN(DmTensor scaled, ctx.main.begin(x.view())
                                        .named(step + " scale 1/sqrt(d_k) and causal mask")
                                        .fetch(DType::kF32, m.m("T / 8"), m.m("T % 8"))
                                        .collect(m.m("T / 8"), m.m("T % 8"))
                                        .vector_init()
                                        .vector_intra_slice_branch(ids_vrf)
                                        .vector_split(m.m("T / 4"), m.m("T % 4"))
                                        .vector_fp_binary(FpBinaryOp::MulF(FpMulAlu::kMul0), scale)
                                        .vector_fp_binary(FpBinaryOp::AddF(),
                                                          VeBranchOperand().imm(masked, -std::numeric_limits<float>::infinity()))
                                        .vector_concat(m.m("T / 8"), m.m("T % 8"))
                                        .vector_final()
                                        .commit(row, Address::Any()));
  scratch(scaled);
  auto fetch = [&](const std::string& name) {
    return Enter(ctx.main.begin(scaled.view()).named(name).fetch(DType::kF32, m.m("T / 8"), m.m("T % 8")).collect(m.m("T / 8"), m.m("T % 8")))
        .vector_split(m.m("T / 4"), m.m("T % 4"));
  };
  ASSIGN_OR_RETURN(DmTensor row_max, fetch(step + " row max")
                                         .vector_intra_slice_reduce("T", m.m("1"), m.m("1 # 4"), IntraSliceReduceOpF32::kMax)
                                         .vector_pad_way8(m.m("1 # 8"))
                                         .vector_final()
                                         .commit(m.m("1 # 2"), Address::Any()));
  scratch(row_max);
  ASSIGN_OR_RETURN(VrfTensor max_vrf, RowToVrf(ctx, m, row_max, max_at, step + " row max to VRF"));
  ASSIGN_OR_RETURN(DmTensor row_sum, fetch(step + " row sum of exp")
                                         .vector_fp_binary(FpBinaryOp::SubF(), max_vrf)
                                         .vector_fp_unary(FpUnaryOp::kExp)
                                         .vector_intra_slice_reduce("T", m.m("1"), m.m("1 # 4"), IntraSliceReduceOpF32::kAdd)
                                         .vector_pad_way8(m.m("1 # 8"))
                                         .vector_final()
                                         .commit(m.m("1 # 2"), Address::Any()));
  scratch(row_sum);
  ASSIGN_OR_RETURN(VrfTensor sum_vrf, RowToVrf(ctx, m, row_sum, sum_at, step + " row sum to VRF"));
  ASSIGN_OR_RETURN(DmTensor weights, fetch(step)
                                         .vector_fp_binary(FpBinaryOp::SubF(), max_vrf)
                                         .vector_fp_unary(FpUnaryOp::kExp)
                                         .vector_fp_div(FpDivBinaryOp::kDivF, sum_vrf)
                                         .vector_concat(m.m("T / 8"), m.m("T % 8"))
                                         .vector_final()
                                         .cast(DType::kBF16, m.m("T % 8 # 16"))
                                         .commit(row, Address::Any()));
  return ToHbm(ctx, weights, m.m("G, H, S, T"), step + " result");
}

// The V cache tile of a weighted-sum slice, [T, E % 32] in DM, transposed to [E % 32, T] by the
// Transpose Engine (bf16: blocks of 4 rows of T, each output flit holding 4 live T values): the
// contraction over T needs T innermost, and the cache keeps rows [T, E] so that a decode step's
// scatter writes one contiguous row per head.
absl::StatusOr<DmTensor> TransposeV(Context& ctx, const MappingScope& m, const MatmulSpec& spec, const HbmTensor& v_cache,
                                    const std::string& step) {
  ScopedDmaOperation named(ctx.tdma, step + " operand");
  ASSIGN_OR_RETURN(DmTensor tile, v_cache.to_dm(ctx.tdma, Address::Any(), Cluster(m), Slices(m, spec.slice),
                                                m.m("T, E % 32")));
  Scratch scratch;
  scratch(tile);
  return ctx.main.begin(tile.view())
      .named(step)
      .fetch(DType::kBF16, m.m("E % 32 / 8, T"), m.m("E % 8"))
      .collect(m.m("E % 32 / 8, T"), m.m("E % 8 # 16"))
      .transpose(m.m("E % 32 / 8, T / 4, E % 8"), m.m("T % 4 # 16"))
      .commit(m.m("E % 32, T"), Address::Any());
}


// The residual `x` [S, D] as the epilogue's VRF operand of a projection onto D (Slice [D / 32]).
absl::StatusOr<VrfTensor> ResidualToVrf(Context& ctx, const MappingScope& m, const MatmulSpec& spec,
                                        const HbmTensor& x, const std::string& step, int64_t address) {
  ScopedDmaOperation named(ctx.tdma, step + " residual");
  ASSIGN_OR_RETURN(DmTensor x_dm, x.to_dm(ctx.tdma, Address::Any(), Cluster(m), Slices(m, spec.slice), m.m(spec.rows + ", " + spec.col32())));
  Scratch scratch;
  scratch(x_dm);
  return TileToVrf(ctx, m, spec, x_dm, step + " residual to VRF", address);
}
}  // namespace visa::models
