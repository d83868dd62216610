// The Llama 3 70B layer's decode step on the device (llama70b_layer.h).
//
// Choices the page leaves open at these shapes, and why:
//   - Where the weights live: in HBM (1.7 GB of bf16 does not fit a chip's 256 MB of DM), streamed
//     into DM one tile per op: each projection's ops cover up to 8192 output columns (256 slices x
//     32) and 1024 contracted values (a TRF row holds 4 columns x 1024 bf16), 64 KB of weights per
//     slice per op (tiled_projection.h).
//   - Which reduce: the contracted axis D (8192) or F (28672) is cut into chunks of 1024; each
//     chunk's GEMM adds the previous chunk's f32 sums in its Vector Engine epilogue (the sums
//     stay in DM and enter through the VRF), so no slice or chip reduce is needed and one chip
//     runs the layer. Rejected: a split reduce over slices (Slice [N / 32, K / 1024] and a second
//     Vector Engine pass adding the K / 1024 partials), which would leave 7 of 8 slices' outputs
//     as partial sums to move and add, for the same weight traffic.
//   - How Q, K, V lie: Wq's rows are ordered [H, G, C] (query head h * G + g), so one KV head's
//     G queries are one contiguous 1024-column block: attention runs per KV head on the tiny
//     model's steps (llama_steps.h) with H = 1, reading its [T, E] block of the caches, and each
//     head's output [G, E] is exactly one 1024-value chunk of the output projection's input.
//   - The tiles are double buffered (tiled_projection.cc): the step takes 7,941,419 cycles in the
//     cycle model, against 8,929,120 for the rejected single-buffered order (each tile's move
//     waiting for the previous GEMM to free its DM); the DMA's 7.72 M cycles are the floor.
//   - The RoPE table, the caches ([H, T, E] rows, a scatter at the position) and the softmax are
//     the tiny model's (llama_program.cc).
//   - Over several chips (Llama70bConfig::chips, llama70b_chip_split.h) the same kernel runs on
//     each chip's heads and F columns, every tensor on the Chip level P; the output and down
//     projections' sums are AllReduced (PlusResidual) before the residual add.
#include "samples/models/llama70b_layer.h"

#include <chrono>
#include <cmath>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "dsl/mapping_parser.h"
#include "dsl/status_macros.h"
#include "runtime/dma.h"
#include "runtime/indirect_dma.h"
#include "runtime/launch.h"
#include "runtime/transfer.h"
#include "samples/models/chip_all_reduce.h"
#include "samples/models/llama70b_chip_split.h"
#include "samples/models/llama_chip_split.h"
#include "samples/models/llama_steps.h"

namespace visa::models {
namespace {

class Generator {  // splitmix64, as llama_config.cc
 public:
  explicit Generator(uint64_t seed) : state_(seed) {}
  float Symmetric() {
    uint64_t z = (state_ += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    z ^= z >> 31;
    return static_cast<float>(static_cast<double>(z >> 11) / 4503599627370496.0 - 1.0);
  }

 private:
  uint64_t state_;
};

uint16_t Bf16Bits(float x) {
  const float r = RoundBf16(x);
  uint32_t u;
  std::memcpy(&u, &r, 4);
  return static_cast<uint16_t>(u >> 16);
}

std::vector<uint16_t> Uniform(uint64_t seed, int64_t n, float scale, float offset = 0.0f) {
  Generator gen(seed);
  std::vector<uint16_t> v(static_cast<size_t>(n));
  for (uint16_t& x : v) x = Bf16Bits(offset + scale * gen.Symmetric());
  return v;
}

double Since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace

LlamaConfig Llama70bConfig::AsLlama(int64_t heads) const {
  LlamaConfig c;
  c.vocab = 32;
  c.hidden = hidden;
  c.ffn = ffn;
  c.layers = 1;
  c.kv_heads = heads;
  c.groups = groups;
  c.head_dim = head_dim;
  c.max_positions = max_positions;
  c.prompt = 1;
  c.eps = eps;
  c.rope_theta = rope_theta;
  c.chips = chips;
  return c;
}

Llama70bConfig ReducedLlama70b() {
  Llama70bConfig c;
  c.hidden = 2048;
  c.ffn = 3072;
  c.kv_heads = 2;
  c.max_positions = 64;
  c.position = 40;
  return c;
}

int64_t Llama70bWeights::weight_bytes() const {
  return 2 * static_cast<int64_t>(attn_norm.size() + ffn_norm.size() + wq.size() + wk.size() + wv.size() + wo.size() +
                                  gate.size() + up.size() + down.size());
}

Llama70bWeights MakeLlama70bWeights(const Llama70bConfig& c) {
  const int64_t D = c.hidden, F = c.ffn, H = c.kv_heads, E = c.head_dim, T = c.max_positions;
  const float in_d = 1.0f / std::sqrt(static_cast<float>(D)), in_f = 1.0f / std::sqrt(static_cast<float>(F));
  const float in_q = 1.0f / std::sqrt(static_cast<float>(c.q_cols()));
  Llama70bWeights w;
  uint64_t s = c.seed * 100;
  w.attn_norm = Uniform(++s, D, 0.1f, 1.0f);
  w.ffn_norm = Uniform(++s, D, 0.1f, 1.0f);
  w.wq = Uniform(++s, c.q_cols() * D, in_d);
  w.wk = Uniform(++s, c.kv_cols() * D, in_d);
  w.wv = Uniform(++s, c.kv_cols() * D, in_d);
  w.wo = Uniform(++s, D * c.q_cols(), in_q);
  w.gate = Uniform(++s, F * D, in_d);
  w.up = Uniform(++s, F * D, in_d);
  w.down = Uniform(++s, D * F, in_f);
  w.rope.assign(static_cast<size_t>(T * E * E), 0);
  for (int64_t t = 0; t < T; ++t) {
    for (int64_t r = 0; r < E / 2; ++r) {
      const double angle = static_cast<double>(t) * std::pow(static_cast<double>(c.rope_theta), -2.0 * r / E);
      const float cs = static_cast<float>(std::cos(angle)), sn = static_cast<float>(std::sin(angle));
      const float block[2][2] = {{cs, -sn}, {sn, cs}};
      for (int a = 0; a < 2; ++a) {
        for (int b = 0; b < 2; ++b) {
          w.rope[static_cast<size_t>((t * E + 2 * r + a) * E + 2 * r + b)] = Bf16Bits(block[a][b]);
        }
      }
    }
  }
  w.k_cache = Uniform(++s, H * T * E, 1.0f);
  w.v_cache = Uniform(++s, H * T * E, 1.0f);
  for (int64_t h = 0; h < H; ++h) {
    for (int64_t t = c.position; t < T; ++t) {
      for (int64_t e = 0; e < E; ++e) {
        w.k_cache[static_cast<size_t>((h * T + t) * E + e)] = 0;
        w.v_cache[static_cast<size_t>((h * T + t) * E + e)] = 0;
      }
    }
  }
  Generator gen(++s);
  w.x.resize(static_cast<size_t>(D));
  for (float& v : w.x) v = gen.Symmetric();
  return w;
}

namespace {

constexpr size_t kFixedInputs = 8;  // x, positions, mask, attn_norm, ffn_norm, rope, k_cache, v_cache

// The tiles of the seven projections, in the kernel's input order after the fixed inputs.
struct LayerTiles {
  TiledWeights wq, wk, wv, wo, up, gate, down;
  std::vector<TiledWeights*> all() { return {&wq, &wk, &wv, &wo, &up, &gate, &down}; }
};

// Loads up's tile of a group into the VRF (past the partial sums) for the gate's last
// chunk, and finishes with SiLU(gate) x up (the tiny model's SwiGLU epilogue over N).
struct SwiGlu {
  const Activation* up = nullptr;
  std::optional<VrfTensor> up_vrf;

  ProjectionOptions Options() {
    ProjectionOptions o;
    o.bf16_out = true;
    o.prepare = [this](Context& ctx, const MappingScope& m, const MatmulSpec& spec, int64_t g,
                       VrfArena& vrf) -> absl::Status {
      ASSIGN_OR_RETURN(HbmTensor tile, up->Columns(1, g * up->group, up->group, {up->groups[0].chip(), m.m("S, N")}));
      ASSIGN_OR_RETURN(const int64_t up_at, vrf.Take(32 * 4, spec.step + " up"));
      ASSIGN_OR_RETURN(VrfTensor loaded, ResidualToVrf(ctx, m, spec, tile, spec.step + " up", up_at));
      up_vrf = loaded;
      return absl::OkStatus();
    };
    o.finish = [this](Stream s, const MappingScope& m, const std::optional<VrfTensor>& partial) {
      Stream v = std::move(s).vector_split(m.m("S, N / 8 % 4, N % 8 / 4"), m.m("N % 4"));
      if (partial) v = std::move(v).vector_fp_binary(FpBinaryOp::AddF(), *partial);
      return std::move(v)
          .vector_stash()
          .vector_fp_unary(FpUnaryOp::kSigmoid)
          .vector_fp_binary(FpBinaryOp::MulF(FpMulAlu::kMul0), Stash)
          .vector_fp_binary(FpBinaryOp::MulF(FpMulAlu::kMul1), *up_vrf)
          .vector_concat(m.m("S, N / 8 % 4"), m.m("N % 8"));
    };
    return o;
  }
};

// x W^T + residual for the output and down projections: on one chip the residual enters the
// first chunk's epilogue; split over chips each chip's sums are partial (its heads, its F
// columns), so they are added over the chips (AllReduce) before the residual is.
ProjectionOptions PlusResidual(int64_t chips, const Activation* residual) {
  ProjectionOptions o;
  if (chips == 1) {
    o.residual = residual;
    return o;
  }
  o.reduce = [chips, residual](Context& ctx, const MappingScope& m, const MatmulSpec& spec, int64_t g,
                               const DmTensor& sums) -> absl::StatusOr<DmTensor> {
    Scratch scratch;
    scratch(sums);
    ASSIGN_OR_RETURN(DmTensor reduced, AllReduceTiles(ctx, m, spec, sums, chips, spec.step));
    scratch(reduced);
    ASSIGN_OR_RETURN(HbmTensor r, residual->Columns(1, g * residual->group, residual->group,
                                                    {residual->groups[0].chip(), m.m("S, N")}));
    ASSIGN_OR_RETURN(VrfTensor r_vrf, ResidualToVrf(ctx, m, spec, r, spec.step + " residual"));
    return AddTileInVrf(ctx, m, spec, reduced, r_vrf, spec.step + " residual add");
  };
  return o;
}

// One KV head's attention (H = 1 in `m`): RoPE of its G queries, scores over the cache, masked
// softmax, the weighted sum with V; the head's output [S, G, H, E] (bf16).
absl::StatusOr<HbmTensor> HeadAttention(Context& ctx, const MappingScope& m, const LlamaConfig& hc, int64_t h,
                                        const Activation& q, const HbmTensor& t_rope, const DeviceTensor& k_cache,
                                        const DeviceTensor& v_cache, const HbmTensor& mask) {
  // "attention [head 0] scores": one step "attention" on the timeline's band, the head in brackets.
  const std::string at = absl::StrCat("attention [head ", h, "] ");
  const int64_t G = hc.groups, E = hc.head_dim, T = hc.max_positions;
  const Mapping chip = q.groups[0].chip();
  ASSIGN_OR_RETURN(HbmTensor q_h, q.Columns(1, h * G * E, G * E, {chip, m.m("S, G, H, C")}));
  const MatmulSpec rope_spec{at + "RoPE Q", "S, E / 32", "G, H", "E", Over("", "C")};
  ASSIGN_OR_RETURN(DmTensor q_rope_dm, Matmul(ctx, m, rope_spec, q_h, t_rope, true));
  ASSIGN_OR_RETURN(HbmTensor q_rope, ToHbm(ctx, q_rope_dm, m.m("S, G, H, E"), at + "RoPE Q result"));
  const int64_t head_bytes = h * T * E * 2;
  ASSIGN_OR_RETURN(DeviceTensor k_h, k_cache.Relabel({chip, m.m("H, T, E")}, head_bytes));
  ASSIGN_OR_RETURN(DeviceTensor v_h, v_cache.Relabel({chip, m.m("H, T, E")}, head_bytes));
  const MatmulSpec scores_spec{at + "scores", "H, G, T / 32", "S", "T", Over("", "E")};
  ASSIGN_OR_RETURN(DmTensor scores_dm, Matmul(ctx, m, scores_spec, q_rope, k_h, false));
  ASSIGN_OR_RETURN(HbmTensor scores, ToHbm(ctx, scores_dm, m.m("G, H, S, T"), at + "scores result"));
  ASSIGN_OR_RETURN(HbmTensor weights, MaskedSoftmax(ctx, m, hc, scores, mask, at + "softmax"));
  const MatmulSpec pv_spec{at + "weighted sum", "H, G, E / 32", "S", "E", Over("", "T")};
  ASSIGN_OR_RETURN(DmTensor v_t, TransposeV(ctx, m, pv_spec, HbmTensor(v_h), at + "V transpose"));
  ASSIGN_OR_RETURN(DmTensor out_dm, Matmul(ctx, m, pv_spec, weights, v_t, true));
  v_t.Release();
  return ToHbm(ctx, out_dm, m.m("S, G, H, E"), at + "result");
}

// The decode step, `c` one chip's shapes (Llama70bChipConfig; every tensor on the Chip level P
// when split). Inputs: kFixedInputs, then the tiles of LayerTiles in order. Outputs: the layer's
// output [S, D] f32 (as one tile group), the K and V caches.
KernelOf LayerKernel(const Llama70bConfig& c, LayerTiles shapes) {
  const LlamaConfig lc = c.AsLlama(c.kv_heads), hc = c.AsLlama(1);
  auto ml = std::make_shared<MappingScope>(*MappingScope::Parse(lc.Axes(1)));
  auto mh = std::make_shared<MappingScope>(*MappingScope::Parse(hc.Axes(1)));
  return [c, lc, hc, ml, mh, shapes](Context& ctx,
                                      const std::vector<DeviceTensor>& in) -> absl::StatusOr<std::vector<DeviceTensor>> {
    const MappingScope& m = *ml;
    const Mapping chip = m.m(ChipLevel(lc));
    const HbmTensor x(in[0]), positions(in[1]), mask(in[2]), attn_norm(in[3]), ffn_norm(in[4]), rope(in[5]);
    size_t next = kFixedInputs;
    LayerTiles t = shapes;
    for (TiledWeights* w : t.all()) {
      *w = TilesOf(*w, in, next);
      next += w->tiles.size();
    }
    const int64_t D = c.hidden;
    // 2.1 input RMSNorm; 2.2.1 the Q, K, V projections (weights streamed tile by tile).
    ASSIGN_OR_RETURN(HbmTensor x_norm, RmsNorm(ctx, m, lc, x, attn_norm, "attn RMSNorm"));
    const Activation xn{{x_norm}, D, DType::kBF16};
    ProjectionOptions bf16;
    bf16.bf16_out = true;
    ASSIGN_OR_RETURN(Activation q, TiledProjection(ctx, 1, xn, t.wq, "Q projection", bf16));
    ASSIGN_OR_RETURN(Activation k, TiledProjection(ctx, 1, xn, t.wk, "K projection", bf16));
    ASSIGN_OR_RETURN(Activation v, TiledProjection(ctx, 1, xn, t.wv, "V projection", bf16));
    // 2.2.2 RoPE: the table gathered by position, K's einsum for all heads (rows H).
    HbmTensor t_rope = rope;
    {
      ScopedDmaOperation named(ctx.tdma, "RoPE table gather");
      ASSIGN_OR_RETURN(DeviceTensor gathered,
                       Gather(ctx.tdma, rope, positions, "T", Destination{Tier::kHbm, Address::Any(), {chip, m.m("S, E, C")}}));
      t_rope = HbmTensor(gathered);
    }
    ASSIGN_OR_RETURN(HbmTensor k_hc, k.Columns(1, 0, c.kv_cols(), {chip, m.m("S, H, C")}));
    const MatmulSpec k_rope_spec{"RoPE K", "S, E / 32", "H", "E", Over("", "C")};
    ASSIGN_OR_RETURN(DmTensor k_rope_dm, Matmul(ctx, m, k_rope_spec, k_hc, t_rope, true));
    ASSIGN_OR_RETURN(HbmTensor k_rope, ToHbm(ctx, k_rope_dm, m.m("S, H, E"), "RoPE K result"));
    ASSIGN_OR_RETURN(HbmTensor v_he, v.Columns(1, 0, c.kv_cols(), {chip, m.m("S, H, E")}));
    // 2.2.3 KV cache store at the position (TensorDMA scatter, in place).
    DeviceTensor k_cache = in[6], v_cache = in[7];
    {
      ScopedDmaOperation named(ctx.tdma, "K cache scatter");
      ASSIGN_OR_RETURN(k_cache, Scatter(ctx.tdma, k_rope, positions, k_cache, "T",
                                        Destination{Tier::kHbm, Address(k_cache.address()), {chip, m.m("H, T, E")}}));
    }
    {
      ScopedDmaOperation named(ctx.tdma, "V cache scatter");
      ASSIGN_OR_RETURN(v_cache, Scatter(ctx.tdma, v_he, positions, v_cache, "T",
                                        Destination{Tier::kHbm, Address(v_cache.address()), {chip, m.m("H, T, E")}}));
    }
    // 2.2.4 grouped-query attention, one KV head at a time.
    Activation attn{{}, c.groups * c.head_dim, DType::kBF16};
    for (int64_t h = 0; h < c.kv_heads; ++h) {
      ASSIGN_OR_RETURN(HbmTensor head, HeadAttention(ctx, *mh, hc, h, q, t_rope, k_cache, v_cache, mask));
      attn.groups.push_back(head);
    }
    // 2.2.5-6 output projection + residual; 2.3.1 post-attention RMSNorm.
    const Activation x_in{{x}, D, DType::kF32};
    ASSIGN_OR_RETURN(Activation x_attn, TiledProjection(ctx, 1, attn, t.wo, "output projection + residual",
                                                        PlusResidual(c.chips, &x_in)));
    ASSIGN_OR_RETURN(HbmTensor x_attn_d, x_attn.Columns(1, 0, D, {chip, m.m("S, D")}));
    ASSIGN_OR_RETURN(HbmTensor x_ffn, RmsNorm(ctx, m, lc, x_attn_d, ffn_norm, "FFN RMSNorm"));
    // 2.3.2 SwiGLU: up (f32), then gate with SiLU(gate) x up in its last chunk's epilogue; down
    // with the residual.
    const Activation xf{{x_ffn}, D, DType::kBF16};
    ASSIGN_OR_RETURN(Activation up, TiledProjection(ctx, 1, xf, t.up, "up projection"));
    SwiGlu swiglu{&up, std::nullopt};
    ASSIGN_OR_RETURN(Activation act, TiledProjection(ctx, 1, xf, t.gate, "gate projection + SiLU x up", swiglu.Options()));
    ASSIGN_OR_RETURN(Activation out, TiledProjection(ctx, 1, act, t.down, "down projection + residual",
                                                     PlusResidual(c.chips, &x_attn)));
    return std::vector<DeviceTensor>{out.groups[0], k_cache, v_cache};
  };
}

// Where a tensor lies: the Chip level, and how many chips' parts its host image holds (P
// outermost when more than one).
struct Placement {
  std::string level = "1";
  int64_t parts = 1;
  std::string Host(const std::string& layout) const { return parts > 1 ? "P, " + layout : layout; }
};
Placement EveryChip(int64_t chips) { return chips > 1 ? Placement{"P", chips} : Placement{}; }
// Chip 0 alone: the row numbers of a gather or scatter (an index tensor names one axis).
Placement FirstChip(int64_t chips) { return chips > 1 ? Placement{absl::StrCat("1 # ", chips), 1} : Placement{}; }

// `v` in every part of a host image.
template <typename T>
std::vector<T> Replicated(const Placement& on, const std::vector<T>& v) {
  std::vector<T> out;
  out.reserve(v.size() * static_cast<size_t>(on.parts));
  for (int64_t part = 0; part < on.parts; ++part) out.insert(out.end(), v.begin(), v.end());
  return out;
}

// `bits` holds every part of the host image, chip by chip.
absl::StatusOr<DeviceTensor> UploadBits(Device& device, const MappingScope& m, const Placement& on,
                                        const std::string& layout, const std::vector<uint16_t>& bits,
                                        Address at = Address::Any()) {
  std::vector<uint8_t> bytes(bits.size() * 2);
  std::memcpy(bytes.data(), bits.data(), bytes.size());
  ASSIGN_OR_RETURN(HostTensor host, HostTensor::FromBytes(DType::kBF16, m.m(on.Host(layout)), std::move(bytes)));
  Dma pdma = Dma::Pcie(device);
  ASSIGN_OR_RETURN(HbmTensor hbm, host.to_hbm(pdma, at, m.m(on.level), m.m(layout)));
  return hbm;
}

absl::StatusOr<DeviceTensor> UploadValues(Device& device, const MappingScope& m, const Placement& on, DType dtype,
                                          const std::string& layout, const std::vector<double>& values) {
  ASSIGN_OR_RETURN(HostTensor host, HostTensor::FromValues(dtype, m.m(on.Host(layout)), Replicated(on, values)));
  Dma pdma = Dma::Pcie(device);
  ASSIGN_OR_RETURN(HbmTensor hbm, host.to_hbm(pdma, Address::Any(), m.m(on.level), m.m(layout)));
  return hbm;
}

// The projections' tiles, each chip its share (llama70b_chip_split.h) when split.
absl::StatusOr<LayerTiles> UploadLayerTiles(Device& device, const Llama70bConfig& full, const Llama70bConfig& c,
                                            const Llama70bWeights& w) {
  LayerTiles tiles;
  const std::vector<std::tuple<TiledWeights*, std::vector<uint16_t> Llama70bWeights::*, int64_t, int64_t>> matrices = {
      {&tiles.wq, &Llama70bWeights::wq, c.q_cols(), c.hidden},    {&tiles.wk, &Llama70bWeights::wk, c.kv_cols(), c.hidden},
      {&tiles.wv, &Llama70bWeights::wv, c.kv_cols(), c.hidden},   {&tiles.wo, &Llama70bWeights::wo, c.hidden, c.q_cols()},
      {&tiles.up, &Llama70bWeights::up, c.ffn, c.hidden},         {&tiles.gate, &Llama70bWeights::gate, c.ffn, c.hidden},
      {&tiles.down, &Llama70bWeights::down, c.hidden, c.ffn}};
  for (const auto& [tiled, matrix, cols, depth] : matrices) {
    // One matrix's shares at a time: the host holds at most one matrix twice (the 70B layer's
    // gate is 470 MB).
    std::vector<std::vector<uint16_t>> shares;
    for (int64_t chip = 0; c.chips > 1 && chip < c.chips; ++chip) {
      shares.push_back(Llama70bChipShare(full, w, matrix, chip));
    }
    std::vector<const std::vector<uint16_t>*> parts;
    if (c.chips == 1) parts.push_back(&(w.*matrix));
    for (const std::vector<uint16_t>& share : shares) parts.push_back(&share);
    ASSIGN_OR_RETURN(*tiled, UploadTiledOverChips(device, parts, cols, depth));
  }
  return tiles;
}

}  // namespace

absl::StatusOr<Llama70bRun> RunLlama70bDecode(const Llama70bConfig& full, const Llama70bWeights& w, Backend& backend,
                                              const DeviceOptions& options, int64_t launches) {
  Llama70bConfig c = full;
  if (full.chips > 1) {
    ASSIGN_OR_RETURN(c, Llama70bChipConfig(full));
  }
  if (c.groups * c.head_dim != kTileDepth || c.hidden % kTileDepth != 0 || c.ffn % kTileDepth != 0 ||
      c.position < 0 || c.position >= c.max_positions) {
    return absl::InvalidArgumentError(absl::StrCat("llama70b: G x d_k must be ", kTileDepth, ", D and F multiples of it, ",
                                                   "and the position inside the cache"));
  }
  Llama70bRun run;
  auto start = std::chrono::steady_clock::now();
  ASSIGN_OR_RETURN(std::unique_ptr<Device> device, Device::Create(c.chips, options));
  ASSIGN_OR_RETURN(MappingScope m, MappingScope::Parse(c.AsLlama(c.kv_heads).Axes(1)));
  const Placement every = EveryChip(c.chips);
  std::vector<DeviceTensor> in;
  ASSIGN_OR_RETURN(DeviceTensor x,
                   UploadValues(*device, m, every, DType::kF32, "S, D", std::vector<double>(w.x.begin(), w.x.end())));
  ASSIGN_OR_RETURN(DeviceTensor positions,
                   UploadValues(*device, m, FirstChip(c.chips), DType::kI32, "S", {static_cast<double>(c.position)}));
  std::vector<double> mask;
  for (int64_t t = 0; t < c.max_positions; ++t) mask.push_back(t > c.position ? 1.0 : 0.0);
  ASSIGN_OR_RETURN(DeviceTensor mask_ids, UploadValues(*device, m, every, DType::kI32, "S, T", mask));
  in = {x, positions, mask_ids};
  for (const auto& [layout, bits] : std::vector<std::pair<std::string, const std::vector<uint16_t>*>>{
           {"D", &w.attn_norm}, {"D", &w.ffn_norm}, {"T, E, C", &w.rope}}) {
    ASSIGN_OR_RETURN(DeviceTensor t, UploadBits(*device, m, every, layout, Replicated(every, *bits)));
    in.push_back(t);
  }
  // The caches [H, T, E]: chip p's heads are the p-th block of rows, so the full cache is the
  // host image chip by chip.
  for (const std::vector<uint16_t>* cache : {&w.k_cache, &w.v_cache}) {
    ASSIGN_OR_RETURN(DeviceTensor t, UploadBits(*device, m, every, "H, T, E", *cache));
    in.push_back(t);
  }
  ASSIGN_OR_RETURN(LayerTiles tiles, UploadLayerTiles(*device, full, c, w));
  for (TiledWeights* tiled : tiles.all()) in.insert(in.end(), tiled->tiles.begin(), tiled->tiles.end());
  run.upload_seconds = Since(start);
  start = std::chrono::steady_clock::now();
  ASSIGN_OR_RETURN(run.program, Trace(LayerKernel(c, tiles), in));
  run.trace_seconds = Since(start);
  // Tracing reserved the outputs, the caches written in place among them: their bytes are written
  // again (fresh handles at the same addresses) before the launch.
  for (size_t i : {size_t{6}, size_t{7}}) {
    ASSIGN_OR_RETURN(in[i], UploadBits(*device, m, every, "H, T, E", i == 6 ? w.k_cache : w.v_cache,
                                       Address(in[i].address())));
  }
  start = std::chrono::steady_clock::now();
  ASSIGN_OR_RETURN(std::vector<DeviceTensor> out, Launch(run.program, *device, backend, in));
  run.launch_seconds = Since(start);
  // Later launches decode the same token again (its K and V rows rewritten with the same bits):
  // the time per token without the first launch's compilation.
  for (int64_t again = 1; again < launches; ++again) {
    in[6] = out[1];
    in[7] = out[2];
    out.clear();  // the previous output's handles: the launch writes it again at its traced address
    start = std::chrono::steady_clock::now();
    ASSIGN_OR_RETURN(out, Launch(run.program, *device, backend, in));
    run.relaunch_seconds.push_back(Since(start));
  }
  run.device_resident_bytes = device->resident_bytes();
  ASSIGN_OR_RETURN(MappingScope tile_scope, MappingScope::Parse(TileAxes(1, c.hidden, c.chips)));
  ASSIGN_OR_RETURN(HostTensor result, ReadAs(out[0], tile_scope.m(every.Host("S, N"))));
  const std::vector<double> all = result.ToValues();
  const size_t D = static_cast<size_t>(c.hidden);
  // Every chip ends with the same output (the AllReduce's butterfly gives each the same sums).
  for (size_t i = D; i < all.size(); ++i) {
    if (all[i] != all[i % D]) {
      return absl::InternalError(absl::StrCat("llama70b: chip ", i / D, "'s output ", i % D, " is ", all[i],
                                              ", chip 0's ", all[i % D]));
    }
  }
  for (size_t i = 0; i < D; ++i) run.out.push_back(static_cast<float>(all[i]));
  return run;
}

}  // namespace visa::models
