// The Llama-style model's forward pass, written with the public kernel API the way a user writes
// kernels: every step of the manual's "Transformer Architecture" page on the engine it names.
//
// Choices the page leaves open, and why:
//   - Where the tensors live: every weight, the KV caches and each step's result in HBM; each step
//     moves what it reads into DM in the layout it wants (TensorDMA) and writes its result back.
//     The HBM round trip between steps is the one relayout that works between any two layouts,
//     so each step is written alone; its cost is DMA time between the steps (visa schedule shows
//     it). Fused where the layouts already agree: the residual adds in the epilogue of the
//     projection that feeds them (the residual in the VRF), SiLU(gate) x up in the gate
//     projection's epilogue (up in the VRF, loaded from the DM where the up projection committed).
//   - How Q, K, V lie over slices: every contraction is the manual's GEMM tile (Matmul below): a
//     slice holds <= 32 rows of the streamed operand and 32 columns of the weights in its TRF
//     (8 rows x 4 columns each, the contracted axis innermost), the slices enumerate the batch
//     axes and the column tiles. Q: Slice [G, H, C / 32], K and V: [H, E / 32]: the heads are
//     spread over slices, the tokens S are the rows (Time). GQA's sharing of a KV head by G query
//     heads is the slice mapping itself: the scores' Slice [H, G, T / 32] names G, which the K
//     cache lacks, so the TensorDMA broadcasts each K tile to the G slices of its head.
//   - Which reduce: the contracted axis of every einsum is reduced by the Reducer (packet reduce
//     over 32 bf16, then time reduce over the K / 32 packets, interleaved accumulation); no slice,
//     split or chip reduce is needed at these sizes (K <= 512 fits one slice's TRF row). RMSNorm
//     and softmax reduce their row in one slice (Intra-Slice Reduce over Time and Packet).
//   - RoPE: the page's table [s_max, d_k', 2, 2] holds the 2 x 2 rotation of each pair; its
//     einsum contracts f = 2 per output. The Contraction Engine contracts whole packets (32 bf16),
//     so the table is stored here written out as the block-diagonal rotation [T, E, C] of each
//     position (zeros off the 2 x 2 blocks), gathered by position (TensorDMA) and contracted over
//     C like every projection: the same einsum, 32x the multiplies of the pair form.
//   - The V cache is stored as the page's [H, T, E] rows, scattered like K (one contiguous row of
//     E per head and position), and each weighted-sum slice transposes its [T, E % 32] tile on the
//     Transpose Engine, because the contraction over T needs T innermost in the TRF. Rejected:
//     storing V transposed, [H, E, T], which needs no transpose but makes a decode step's scatter
//     write 2-byte columns into HBM (allowed: DM -> HBM and HBM -> HBM moves are not bound by the
//     8-byte packet rule): the cycle model gave that scatter 411,815 cycles per layer, and the
//     decode step 947,218 cycles in all (visa schedule llama_tiny_decode), against 138,326 with
//     the row cache and the transpose (the scatter 6,977 cycles, a transpose pass a few hundred).
//   - Attention reads its keys and values from the cache in both phases, over all T = s_max
//     positions; the mask (branch ids from the VRF) leaves out the positions after each query's
//     own (the causal mask in prefill, the unwritten tail in decode). The page's prefill scores
//     are [s_in, s_in]; reading the cache instead keeps one program text for both phases at the
//     cost of T / s_in times the score work.
//   - Over several chips (LlamaConfig::chips, llama_chip_split.h) the same layer runs on every chip
//     over its heads and F columns (`c` is one chip's shapes), every tensor on the Chip level P;
//     the output and down projections end with an AllReduce of their partial sums before the
//     residual add (ProjectionPlusResidual), and the gathers' row numbers live on chip 0.
#include "samples/models/llama_program.h"
#include "samples/models/chip_all_reduce.h"
#include "samples/models/llama_chip_split.h"
#include "samples/models/llama_steps.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <functional>
#include <limits>

#include "absl/strings/str_cat.h"
#include "dsl/mapping_parser.h"
#include "dsl/status_macros.h"
#include "runtime/dma.h"
#include "runtime/indirect_dma.h"
#include "runtime/launch.h"
#include "runtime/tensor_unit.h"
#include "runtime/transfer.h"

namespace visa::models {
namespace {

constexpr int64_t kStepInputs = 4;      // tokens, positions, mask, last
constexpr int64_t kGlobalWeights = 4;   // embedding, rope, final_norm, lm_head
constexpr int64_t kLayerWeights = 9;    // attn_norm, wq, wk, wv, wo, ffn_norm, gate, up, down

// The inputs of one layer as the kernel receives them.
struct LayerTensors {
  HbmTensor attn_norm, wq, wk, wv, wo, ffn_norm, gate, up, down, k_cache, v_cache;
};

// x + a @ b_t onto `spec`'s columns (the output and down projections): on one chip the residual
// is added in the GEMM's epilogue; split over chips (c.chips > 1) each chip's product is a partial
// sum over its heads or F columns, summed over the chips (AllReduce) before the residual is added.
absl::StatusOr<HbmTensor> ProjectionPlusResidual(Context& ctx, const MappingScope& m, const LlamaConfig& c,
                                                 const MatmulSpec& spec, const HbmTensor& a, const HbmTensor& b_t,
                                                 const HbmTensor& x, const std::string& step,
                                                 const std::string& result) {
  const Mapping element = m.m(spec.rows + ", " + spec.cols);
  if (c.chips == 1) {
    ASSIGN_OR_RETURN(VrfTensor x_vrf, ResidualToVrf(ctx, m, spec, x, step));
    ASSIGN_OR_RETURN(DmTensor sum, Matmul(ctx, m, spec, a, b_t, false, [&](Stream s) {
                       return Enter(std::move(s)).vector_clip(ClipBinaryOpF32::kAdd, x_vrf).vector_final();
                     }));
    return ToHbm(ctx, sum, element, result);
  }
  Scratch scratch;
  ASSIGN_OR_RETURN(DmTensor partial, Matmul(ctx, m, spec, a, b_t, false));
  scratch(partial);
  ASSIGN_OR_RETURN(DmTensor reduced, AllReduceTiles(ctx, m, spec, partial, c.chips, step));
  scratch(reduced);
  ASSIGN_OR_RETURN(VrfTensor x_vrf, ResidualToVrf(ctx, m, spec, x, step));
  ASSIGN_OR_RETURN(DmTensor sum, AddTileInVrf(ctx, m, spec, reduced, x_vrf, step + " residual add"));
  return ToHbm(ctx, sum, element, result);
}


// One transformer layer over S tokens: x [S, D] (f32, or the bf16 embedding rows) -> x_l [S, D] f32.
// The caches come back updated (scattered in place).
// `c` is one chip's shapes (ChipConfig): on several chips the layer computes the chip's heads and
// F columns, its results replicated on every chip.
absl::StatusOr<HbmTensor> Layer(Context& ctx, const MappingScope& m, const LlamaConfig& c, int64_t l, const HbmTensor& x,
                                LayerTensors& t, const HbmTensor& positions, const HbmTensor& mask, const HbmTensor& rope) {
  const std::string at = absl::StrCat("L", l, " ");
  const Mapping chip = m.m(ChipLevel(c));
  // 2.1 input RMSNorm.
  ASSIGN_OR_RETURN(HbmTensor x_norm, RmsNorm(ctx, m, c, x, t.attn_norm, at + "attn RMSNorm"));
  // 2.2.1 QKV projections (Contraction Engine), bf16 out.
  const MatmulSpec q_spec{at + "Q projection", "G, H, C / 32", "S", "C", Over("", "D")};
  ASSIGN_OR_RETURN(DmTensor q_dm, Matmul(ctx, m, q_spec, x_norm, t.wq, true));
  ASSIGN_OR_RETURN(HbmTensor q, ToHbm(ctx, q_dm, m.m("S, G, H, C"), at + "Q result"));
  const MatmulSpec k_spec{at + "K projection", "H, C / 32", "S", "C", Over("", "D")};
  ASSIGN_OR_RETURN(DmTensor k_dm, Matmul(ctx, m, k_spec, x_norm, t.wk, true));
  ASSIGN_OR_RETURN(HbmTensor k, ToHbm(ctx, k_dm, m.m("S, H, C"), at + "K result"));
  const MatmulSpec v_spec{at + "V projection", "H, E / 32", "S", "E", Over("", "D")};
  ASSIGN_OR_RETURN(DmTensor v_dm, Matmul(ctx, m, v_spec, x_norm, t.wv, true));
  ASSIGN_OR_RETURN(HbmTensor v, ToHbm(ctx, v_dm, m.m("S, H, E"), at + "V result"));
  // 2.2.2 RoPE: the rotation table gathered by position (TensorDMA), then the einsum over C.
  HbmTensor t_rope = rope;
  {
    ScopedDmaOperation named(ctx.tdma, at + "RoPE table gather");
    ASSIGN_OR_RETURN(DeviceTensor gathered,
                     Gather(ctx.tdma, rope, positions, "T", Destination{Tier::kHbm, Address::Any(), {chip, m.m("S, E, C")}}));
    t_rope = HbmTensor(gathered);
  }
  const MatmulSpec q_rope_spec{at + "RoPE Q", "S, E / 32", "G, H", "E", Over("", "C")};
  ASSIGN_OR_RETURN(DmTensor q_rope_dm, Matmul(ctx, m, q_rope_spec, q, t_rope, true));
  ASSIGN_OR_RETURN(HbmTensor q_rope, ToHbm(ctx, q_rope_dm, m.m("S, G, H, E"), at + "RoPE Q result"));
  const MatmulSpec k_rope_spec{at + "RoPE K", "S, E / 32", "H", "E", Over("", "C")};
  ASSIGN_OR_RETURN(DmTensor k_rope_dm, Matmul(ctx, m, k_rope_spec, k, t_rope, true));
  ASSIGN_OR_RETURN(HbmTensor k_rope, ToHbm(ctx, k_rope_dm, m.m("S, H, E"), at + "RoPE K result"));
  // 2.2.3 KV cache store: DMA scatter at the positions, in place.
  {
    ScopedDmaOperation named(ctx.tdma, at + "K cache scatter");
    ASSIGN_OR_RETURN(DeviceTensor k_cache, Scatter(ctx.tdma, k_rope, positions, t.k_cache, "T",
                                                   Destination{Tier::kHbm, Address(t.k_cache.address()), {chip, m.m("H, T, E")}}));
    t.k_cache = HbmTensor(k_cache);
  }
  {
    ScopedDmaOperation named(ctx.tdma, at + "V cache scatter");
    ASSIGN_OR_RETURN(DeviceTensor v_cache, Scatter(ctx.tdma, v, positions, t.v_cache, "T",
                                                   Destination{Tier::kHbm, Address(t.v_cache.address()), {chip, m.m("H, T, E")}}));
    t.v_cache = HbmTensor(v_cache);
  }
  // 2.2.4.1 scores = Q_rope K^T over the cache (G broadcast from K by the slice mapping).
  const MatmulSpec scores_spec{at + "attention scores", "H, G, T / 32", "S", "T", Over("", "E")};
  ASSIGN_OR_RETURN(DmTensor scores_dm, Matmul(ctx, m, scores_spec, q_rope, t.k_cache, false));
  ASSIGN_OR_RETURN(HbmTensor scores, ToHbm(ctx, scores_dm, m.m("G, H, S, T"), at + "attention scores result"));
  // 2.2.4.1-3 scale, causal mask through the branch log, softmax over T.
  ASSIGN_OR_RETURN(HbmTensor weights, MaskedSoftmax(ctx, m, c, scores, mask, at + "softmax"));
  // 2.2.4.4 weighted sum with V (G broadcast from the V cache).
  const MatmulSpec pv_spec{at + "attention weighted sum", "H, G, E / 32", "S", "E", Over("", "T")};
  ASSIGN_OR_RETURN(DmTensor v_t, TransposeV(ctx, m, pv_spec, t.v_cache, at + "V transpose"));
  ASSIGN_OR_RETURN(DmTensor attn_dm, Matmul(ctx, m, pv_spec, weights, v_t, true));
  v_t.Release();
  ASSIGN_OR_RETURN(HbmTensor attn, ToHbm(ctx, attn_dm, m.m("S, G, H, E"), at + "attention result"));
  // 2.2.5-6 output projection, the residual add in its epilogue (Vector Engine, clip Add).
  const MatmulSpec o_spec{at + "output projection + residual", "D / 32", "S", "D", Over("G, H", "E")};
  ASSIGN_OR_RETURN(HbmTensor x_attn, ProjectionPlusResidual(ctx, m, c, o_spec, attn, t.wo, x, at + "output projection",
                                                            at + "residual result"));
  // 2.3.1 post-attention RMSNorm.
  ASSIGN_OR_RETURN(HbmTensor x_ffn, RmsNorm(ctx, m, c, x_attn, t.ffn_norm, at + "FFN RMSNorm"));
  // 2.3.2 SwiGLU: up (f32, stays in DM), then gate with SiLU(gate) x up in its epilogue.
  const MatmulSpec up_spec{at + "up projection", "F / 32", "S", "F", Over("", "D")};
  ASSIGN_OR_RETURN(DmTensor up_dm, Matmul(ctx, m, up_spec, x_ffn, t.up, false));
  ASSIGN_OR_RETURN(VrfTensor up_vrf, TileToVrf(ctx, m, up_spec, up_dm, at + "up to VRF"));
  up_dm.Release();
  const MatmulSpec gate_spec{at + "gate projection + SiLU x up", "F / 32", "S", "F", Over("", "D")};
  ASSIGN_OR_RETURN(DmTensor act_dm, Matmul(ctx, m, gate_spec, x_ffn, t.gate, true, [&](Stream s) {
                     return Enter(std::move(s))
                         .vector_split(m.m("S, F / 8 % 4, F % 8 / 4"), m.m("F % 4"))
                         .vector_stash()
                         .vector_fp_unary(FpUnaryOp::kSigmoid)
                         .vector_fp_binary(FpBinaryOp::MulF(FpMulAlu::kMul0), Stash)
                         .vector_fp_binary(FpBinaryOp::MulF(FpMulAlu::kMul1), up_vrf)
                         .vector_concat(m.m("S, F / 8 % 4"), m.m("F % 8"))
                         .vector_final();
                   }));
  ASSIGN_OR_RETURN(HbmTensor act, ToHbm(ctx, act_dm, m.m("S, F"), at + "SwiGLU result"));
  // Down projection, the residual add in its epilogue.
  const MatmulSpec down_spec{at + "down projection + residual", "D / 32", "S", "D", Over("", "F")};
  return ProjectionPlusResidual(ctx, m, c, down_spec, act, t.down, x_attn, at + "down projection", at + "layer result");
}

// The forward pass over S tokens, `c` one chip's shapes (ChipConfig). Inputs: tokens, positions, mask, last, the weights
// (kGlobalWeights, then kLayerWeights per layer), the caches (2 per layer). Outputs: the last
// position's logits [L, V] f32, then the updated caches.
KernelOf ForwardKernel(const LlamaConfig& full, int64_t tokens) {
  const absl::StatusOr<LlamaConfig> local = ChipConfig(full);
  auto scope = local.ok() ? std::make_shared<MappingScope>(*MappingScope::Parse(local->Axes(tokens))) : nullptr;
  return [local, scope](Context& ctx, const std::vector<DeviceTensor>& in) -> absl::StatusOr<std::vector<DeviceTensor>> {
    RETURN_IF_ERROR(local.status());
    const LlamaConfig& c = *local;
    const MappingScope& m = *scope;
    const Mapping chip = m.m(ChipLevel(c));
    const HbmTensor token_ids(in[0]), positions(in[1]), mask(in[2]), last(in[3]);
    const HbmTensor embedding(in[kStepInputs]), rope(in[kStepInputs + 1]), final_norm(in[kStepInputs + 2]),
        lm_head(in[kStepInputs + 3]);
    // 1. Embedding lookup: a TensorDMA gather of the token rows.
    HbmTensor x = embedding;
    {
      ScopedDmaOperation named(ctx.tdma, "embedding gather");
      ASSIGN_OR_RETURN(DeviceTensor x0, Gather(ctx.tdma, embedding, token_ids, "V",
                                               Destination{Tier::kHbm, Address::Any(), {chip, m.m("S, D")}}));
      x = HbmTensor(x0);
    }
    std::vector<DeviceTensor> caches;
    for (int64_t l = 0; l < c.layers; ++l) {
      const size_t w = static_cast<size_t>(kStepInputs + kGlobalWeights + kLayerWeights * l);
      const size_t kv = static_cast<size_t>(kStepInputs + kGlobalWeights + kLayerWeights * c.layers + 2 * l);
      LayerTensors t{HbmTensor(in[w]),     HbmTensor(in[w + 1]), HbmTensor(in[w + 2]), HbmTensor(in[w + 3]),
                     HbmTensor(in[w + 4]), HbmTensor(in[w + 5]), HbmTensor(in[w + 6]), HbmTensor(in[w + 7]),
                     HbmTensor(in[w + 8]), HbmTensor(in[kv]),    HbmTensor(in[kv + 1])};
      ASSIGN_OR_RETURN(x, Layer(ctx, m, c, l, x, t, positions, mask, rope));
      caches.push_back(t.k_cache);
      caches.push_back(t.v_cache);
    }
    // 3. Final RMSNorm; 4. the last position (a gather of one row: the page's slice) and the LM
    // head ([V, D] is w_lm_head transposed).
    ASSIGN_OR_RETURN(HbmTensor x_final, RmsNorm(ctx, m, c, x, final_norm, "final RMSNorm"));
    HbmTensor x_last = x_final;
    {
      ScopedDmaOperation named(ctx.tdma, "last position");
      ASSIGN_OR_RETURN(DeviceTensor row, Gather(ctx.tdma, x_final, last, "S",
                                                Destination{Tier::kHbm, Address::Any(), {chip, m.m("L, D")}}));
      x_last = HbmTensor(row);
    }
    const MatmulSpec head_spec{"LM head", "V / 32", "L", "V", Over("", "D")};
    ASSIGN_OR_RETURN(DmTensor logits_dm, Matmul(ctx, m, head_spec, x_last, lm_head, false));
    ASSIGN_OR_RETURN(HbmTensor logits, ToHbm(ctx, logits_dm, m.m("L, V"), "logits"));
    std::vector<DeviceTensor> out = {logits};
    out.insert(out.end(), caches.begin(), caches.end());
    return out;
  };
}

// Which chips a tensor lies on: its Chip level, and how many chips' parts its host image holds
// (chip by chip, P outermost, when more than one).
struct ChipPlacement {
  std::string level;
  int64_t parts = 1;
  std::string HostLayout(const std::string& layout) const { return parts > 1 ? "P, " + layout : layout; }
};
ChipPlacement EveryChip(const LlamaConfig& c) { return {ChipLevel(c), c.chips}; }
// Chip 0 alone: the index tensors of the gathers and scatters, which name one axis.
ChipPlacement FirstChip(const LlamaConfig& c) { return {c.chips > 1 ? absl::StrCat("1 # ", c.chips) : "1", 1}; }

// `values` holds every part, chip by chip (the same values repeated for a replicated tensor).
absl::StatusOr<DeviceTensor> Upload(Device& device, const MappingScope& m, const ChipPlacement& on, DType dtype,
                                    const std::string& layout, const std::vector<double>& values) {
  ASSIGN_OR_RETURN(HostTensor host, HostTensor::FromValues(dtype, m.m(on.HostLayout(layout)), values));
  Dma pdma = Dma::Pcie(device);
  ASSIGN_OR_RETURN(HbmTensor hbm, host.to_hbm(pdma, Address::Any(), m.m(on.level), m.m(layout)));
  return hbm;
}

std::vector<double> AsDoubles(const std::vector<float>& v) { return std::vector<double>(v.begin(), v.end()); }

// `v` in every part of a host image.
std::vector<double> Replicated(const ChipPlacement& on, const std::vector<double>& v) {
  std::vector<double> out;
  for (int64_t part = 0; part < on.parts; ++part) out.insert(out.end(), v.begin(), v.end());
  return out;
}

}  // namespace

absl::StatusOr<LlamaDeviceState> UploadModel(const LlamaConfig& full, const LlamaWeights& w, const DeviceOptions& options) {
  ASSIGN_OR_RETURN(const LlamaConfig c, ChipConfig(full));
  LlamaDeviceState state;
  ASSIGN_OR_RETURN(state.device, Device::Create(c.chips, options));
  ASSIGN_OR_RETURN(MappingScope m, MappingScope::Parse(c.Axes(1)));
  Device& d = *state.device;
  auto add = [&](const std::string& layout, const std::vector<double>& values) -> absl::Status {
    ASSIGN_OR_RETURN(DeviceTensor t, Upload(d, m, EveryChip(c), DType::kBF16, layout, values));
    state.weights.push_back(t);
    return absl::OkStatus();
  };
  auto everywhere = [&](const std::string& layout, const std::vector<float>& values) {
    return add(layout, Replicated(EveryChip(c), AsDoubles(values)));
  };
  RETURN_IF_ERROR(everywhere("V, D", w.embedding));
  RETURN_IF_ERROR(everywhere("T, E, C", w.rope));
  RETURN_IF_ERROR(everywhere("D", w.final_norm));
  RETURN_IF_ERROR(everywhere("V, D", w.lm_head));
  for (const LlamaLayerWeights& l : w.layers) {
    std::vector<LlamaLayerWeights> shares;
    for (int64_t chip = 0; chip < c.chips; ++chip) {
      ASSIGN_OR_RETURN(const ChipHeads heads, HeadsOfChip(full, chip));
      shares.push_back(ChipLayerWeights(full, heads, l, chip));
    }
    // Every chip's share of one weight, chip by chip.
    auto split = [&](const std::string& layout, std::vector<float> LlamaLayerWeights::*weight) {
      std::vector<double> values;
      for (const LlamaLayerWeights& share : shares) {
        const std::vector<double> part = AsDoubles(share.*weight);
        values.insert(values.end(), part.begin(), part.end());
      }
      return add(layout, values);
    };
    RETURN_IF_ERROR(split("D", &LlamaLayerWeights::attn_norm));
    RETURN_IF_ERROR(split("G, H, C, D", &LlamaLayerWeights::wq));
    RETURN_IF_ERROR(split("H, C, D", &LlamaLayerWeights::wk));
    RETURN_IF_ERROR(split("H, E, D", &LlamaLayerWeights::wv));
    RETURN_IF_ERROR(split("D, G, H, E", &LlamaLayerWeights::wo));
    RETURN_IF_ERROR(split("D", &LlamaLayerWeights::ffn_norm));
    RETURN_IF_ERROR(split("F, D", &LlamaLayerWeights::gate));
    RETURN_IF_ERROR(split("F, D", &LlamaLayerWeights::up));
    RETURN_IF_ERROR(split("D, F", &LlamaLayerWeights::down));
  }
  const std::vector<double> zeros(static_cast<size_t>(c.chips * c.kv_heads * c.max_positions * c.head_dim), 0.0);
  for (int64_t l = 0; l < c.layers; ++l) {
    ASSIGN_OR_RETURN(DeviceTensor k, Upload(d, m, EveryChip(c), DType::kBF16, "H, T, E", zeros));
    ASSIGN_OR_RETURN(DeviceTensor v, Upload(d, m, EveryChip(c), DType::kBF16, "H, T, E", zeros));
    state.caches.push_back(k);
    state.caches.push_back(v);
  }
  return state;
}

absl::Status ClearCaches(const LlamaConfig& full, LlamaDeviceState& state) {
  ASSIGN_OR_RETURN(const LlamaConfig c, ChipConfig(full));
  ASSIGN_OR_RETURN(MappingScope m, MappingScope::Parse(c.Axes(1)));
  const std::vector<double> zeros(static_cast<size_t>(c.chips * c.kv_heads * c.max_positions * c.head_dim), 0.0);
  Dma pdma = Dma::Pcie(*state.device);
  for (size_t i = 0; i < state.caches.size(); ++i) {
    const std::string layout = "H, T, E";
    ASSIGN_OR_RETURN(HostTensor host, HostTensor::FromValues(DType::kBF16, m.m(EveryChip(c).HostLayout(layout)), zeros));
    ASSIGN_OR_RETURN(HbmTensor cache,
                     host.to_hbm(pdma, Address(state.caches[i].address()), m.m(EveryChip(c).level), m.m(layout)));
    state.caches[i] = cache;
  }
  return absl::OkStatus();
}

namespace {

// Where step input `i` lives: the mask on every chip (each chip's softmax reads it); the others
// are the row numbers of a gather or scatter (tokens, positions, last), whose index tensor names
// one axis ("Indirect Access"), so they live on chip 0 alone and every chip's rows are moved by them.
ChipPlacement StepInputChips(const LlamaConfig& c, size_t i) { return i == 2 ? EveryChip(c) : FirstChip(c); }

// The step inputs of a phase over `tokens` positions, placed once (their values change per launch).
absl::StatusOr<std::vector<DeviceTensor>> PlaceStepInputs(const LlamaConfig& c, Device& device, int64_t tokens) {
  ASSIGN_OR_RETURN(MappingScope m, MappingScope::Parse(c.Axes(tokens)));
  std::vector<DeviceTensor> inputs;
  for (const auto& [layout, size] : std::vector<std::pair<std::string, int64_t>>{
           {"S", tokens}, {"S", tokens}, {"S, T", tokens * c.max_positions}, {"L", 1}}) {
    const ChipPlacement on = StepInputChips(c, inputs.size());
    ASSIGN_OR_RETURN(DeviceTensor t, Upload(device, m, on, DType::kI32, layout,
                                            std::vector<double>(static_cast<size_t>(on.parts * size), 0.0)));
    inputs.push_back(t);
  }
  return inputs;
}

std::vector<DeviceTensor> Inputs(const LlamaDeviceState& state, const std::vector<DeviceTensor>& step) {
  std::vector<DeviceTensor> in = step;
  in.insert(in.end(), state.weights.begin(), state.weights.end());
  in.insert(in.end(), state.caches.begin(), state.caches.end());
  return in;
}

}  // namespace

absl::StatusOr<LlamaPhase> TracePhase(const LlamaConfig& c, LlamaDeviceState& state, int64_t tokens) {
  LlamaPhase phase;
  phase.tokens = tokens;
  ASSIGN_OR_RETURN(phase.step_inputs, PlaceStepInputs(c, *state.device, tokens));
  ASSIGN_OR_RETURN(phase.program, Trace(ForwardKernel(c, tokens), Inputs(state, phase.step_inputs)));
  RETURN_IF_ERROR(ClearCaches(c, state));
  return phase;
}

absl::StatusOr<std::vector<float>> RunPhase(const LlamaConfig& c, LlamaDeviceState& state, LlamaPhase& phase,
                                            Backend& backend, const std::vector<int32_t>& tokens, int64_t start) {
  const int64_t n = phase.tokens, T = c.max_positions;
  if (static_cast<int64_t>(tokens.size()) != n || start + n > T) {
    return absl::InvalidArgumentError(absl::StrCat("llama: ", tokens.size(), " tokens at position ", start,
                                                   " do not fit a phase of ", n, " tokens and a cache of ", T));
  }
  ASSIGN_OR_RETURN(MappingScope m, MappingScope::Parse(c.Axes(n)));
  std::vector<double> ids(tokens.begin(), tokens.end()), positions, mask;
  for (int64_t i = 0; i < n; ++i) {
    positions.push_back(static_cast<double>(start + i));
    for (int64_t j = 0; j < T; ++j) mask.push_back(j > start + i ? 1.0 : 0.0);
  }
  const std::vector<std::pair<std::string, std::vector<double>>> values = {
      {"S", ids}, {"S", positions}, {"S, T", mask}, {"L", {static_cast<double>(n - 1)}}};
  for (size_t i = 0; i < values.size(); ++i) {
    const ChipPlacement on = StepInputChips(c, i);
    ASSIGN_OR_RETURN(HostTensor host, HostTensor::FromValues(DType::kI32, m.m(on.HostLayout(values[i].first)),
                                                             Replicated(on, values[i].second)));
    RETURN_IF_ERROR(WriteInto(host, phase.step_inputs[i]));
  }
  ASSIGN_OR_RETURN(std::vector<DeviceTensor> out,
                   Launch(phase.program, *state.device, backend, Inputs(state, phase.step_inputs)));
  for (size_t i = 0; i < state.caches.size(); ++i) state.caches[i] = out[i + 1];
  ASSIGN_OR_RETURN(HostTensor logits, ReadAs(out[0], m.m(c.chips > 1 ? "P, L, V" : "L, V")));
  const std::vector<double> all = logits.ToValues();
  // Every chip computes the LM head on the same replicated hidden state: the same bits, or the
  // AllReduce left the chips apart.
  for (size_t i = static_cast<size_t>(c.vocab); i < all.size(); ++i) {
    if (all[i] != all[i % static_cast<size_t>(c.vocab)]) {
      return absl::InternalError(absl::StrCat("llama: chip ", i / static_cast<size_t>(c.vocab), "'s logit ",
                                              i % static_cast<size_t>(c.vocab), " is ", all[i], ", chip 0's ",
                                              all[i % static_cast<size_t>(c.vocab)]));
    }
  }
  std::vector<float> result;
  for (size_t v = 0; v < static_cast<size_t>(c.vocab); ++v) result.push_back(static_cast<float>(all[v]));
  return result;
}

absl::StatusOr<Generation> Generate(const LlamaConfig& c, const LlamaWeights& w, Backend& backend,
                                    const std::vector<int32_t>& prompt, int64_t steps, const DeviceOptions& options,
                                    const std::function<void()>& after_launch) {
  ASSIGN_OR_RETURN(LlamaDeviceState state, UploadModel(c, w, options));
  // Both phases' step inputs are placed before either is traced, so neither program's scratch
  // (claimed again at every launch) lies over the other's inputs.
  ASSIGN_OR_RETURN(std::vector<DeviceTensor> prefill_inputs, PlaceStepInputs(c, *state.device, c.prompt));
  ASSIGN_OR_RETURN(std::vector<DeviceTensor> decode_inputs, PlaceStepInputs(c, *state.device, 1));
  LlamaPhase prefill{c.prompt, {}, prefill_inputs}, decode{1, {}, decode_inputs};
  ASSIGN_OR_RETURN(prefill.program, Trace(ForwardKernel(c, c.prompt), Inputs(state, prefill.step_inputs)));
  RETURN_IF_ERROR(ClearCaches(c, state));
  ASSIGN_OR_RETURN(decode.program, Trace(ForwardKernel(c, 1), Inputs(state, decode.step_inputs)));
  RETURN_IF_ERROR(ClearCaches(c, state));
  Generation g;
  g.prefill_program = prefill.program;
  g.decode_program = decode.program;
  auto start = std::chrono::steady_clock::now();
  ASSIGN_OR_RETURN(std::vector<float> logits, RunPhase(c, state, prefill, backend, prompt, 0));
  g.prefill_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (after_launch) after_launch();
  g.tokens.push_back(static_cast<int32_t>(std::max_element(logits.begin(), logits.end()) - logits.begin()));
  g.logits.push_back(std::move(logits));
  for (int64_t s = 0; s < steps; ++s) {
    start = std::chrono::steady_clock::now();
    ASSIGN_OR_RETURN(logits, RunPhase(c, state, decode, backend, {g.tokens.back()}, c.prompt + s));
    g.decode_seconds.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    if (after_launch) after_launch();
    g.tokens.push_back(static_cast<int32_t>(std::max_element(logits.begin(), logits.end()) - logits.begin()));
    g.logits.push_back(std::move(logits));
  }
  g.device_resident_bytes = state.device->resident_bytes();
  return g;
}

}  // namespace visa::models
