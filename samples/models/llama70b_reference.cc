// The host reference of the Llama 3 70B layer's decode step (llama70b_layer.h): the device's
// arithmetic in f32 with its bf16 roundings at the same points, the dot products summed in double.
//
// The bound on |device - reference| of each output element, from the rounding:
//   - Summation order: the device sums a dot product in f32 through the Reducer (a packet of 32,
//     then up to 32 packets in time) and one VRF add per 1024-value chunk, so each term passes at
//     most 64 + chunks f32 additions: gamma = (64 + chunks) * 2^-24 of sum |terms| (Higham).
//   - bf16 roundings upstream: an intermediate stored in bf16 (the SwiGLU activation, the
//     attention output, and everything before them) rounds the same on both sides unless its
//     value straddles a rounding point, and then the two are one bf16 ulp apart (at most 2^-7
//     relative). Allowing every input of the last two projections to be one ulp off, with
//     independent signs, the sum's difference has a standard deviation of 2^-7 sqrt(sum terms^2);
//     kSigmas of them, doubled for the differences the upstream roundings carry into those inputs.
//   Both for the down projection and for the output projection whose result the residual carries.
// A layout or indexing error moves an output by the size of the output itself (about
// sqrt(sum terms^2)), 1 / (2 kSigmas 2^-7) = 10x more than the bound.
#include <chrono>
#include <cmath>
#include <limits>

#include "samples/models/llama70b_layer.h"

namespace visa::models {
namespace {

constexpr double kSigmas = 6.0;

float Rms(const std::vector<float>& x, const std::vector<uint16_t>& w, float eps, std::vector<float>& out) {
  float sum = 0;
  for (float v : x) sum += v * v + eps;
  const float inverse = 1.0f / std::sqrt(sum * (1.0f / static_cast<float>(x.size())));
  out.resize(x.size());
  for (size_t i = 0; i < x.size(); ++i) out[i] = RoundBf16(x[i] * inverse * Bf16ToFloat(w[i]));
  return inverse;
}

// y[r] = sum_k w[r, k] x[k] (double sums); optionally each row's sum |terms| and sum terms^2.
void MatVec(const std::vector<uint16_t>& w, const std::vector<float>& x, int64_t rows, std::vector<float>& y,
            std::vector<double>* abs_sum = nullptr, std::vector<double>* sq_sum = nullptr) {
  const size_t depth = x.size();
  y.assign(static_cast<size_t>(rows), 0.0f);
  if (abs_sum) abs_sum->assign(static_cast<size_t>(rows), 0.0);
  if (sq_sum) sq_sum->assign(static_cast<size_t>(rows), 0.0);
  std::vector<float> row(depth);
  for (int64_t r = 0; r < rows; ++r) {
    const uint16_t* wr = &w[static_cast<size_t>(r) * depth];
    for (size_t k = 0; k < depth; ++k) row[k] = Bf16ToFloat(wr[k]);
    double sum = 0, a = 0, q = 0;
    for (size_t k = 0; k < depth; ++k) {
      const double term = static_cast<double>(row[k]) * x[k];
      sum += term;
      a += std::fabs(term);
      q += term * term;
    }
    y[static_cast<size_t>(r)] = static_cast<float>(sum);
    if (abs_sum) (*abs_sum)[static_cast<size_t>(r)] = a;
    if (sq_sum) (*sq_sum)[static_cast<size_t>(r)] = q;
  }
}

void RoundAll(std::vector<float>& v) {
  for (float& x : v) x = RoundBf16(x);
}

}  // namespace

Llama70bReference ReferenceDecode(const Llama70bConfig& c, const Llama70bWeights& w) {
  const auto start = std::chrono::steady_clock::now();
  const int64_t D = c.hidden, F = c.ffn, H = c.kv_heads, G = c.groups, E = c.head_dim, T = c.max_positions;
  const int64_t p = c.position;
  std::vector<float> xn, q, k, v;
  Rms(w.x, w.attn_norm, c.eps, xn);
  MatVec(w.wq, xn, c.q_cols(), q);
  MatVec(w.wk, xn, c.kv_cols(), k);
  MatVec(w.wv, xn, c.kv_cols(), v);
  RoundAll(q);
  RoundAll(k);
  RoundAll(v);
  // RoPE with the table row at p: out[e] = sum_c rope[p, e, c] in[c], rounded to bf16.
  auto rotate = [&](const float* in, float* out) {
    for (int64_t e = 0; e < E; ++e) {
      double sum = 0;
      for (int64_t cc = 0; cc < E; ++cc) sum += static_cast<double>(Bf16ToFloat(w.rope[static_cast<size_t>((p * E + e) * E + cc)])) * in[cc];
      out[e] = RoundBf16(static_cast<float>(sum));
    }
  };
  std::vector<float> q_rope(q.size()), k_rope(k.size());
  for (int64_t head = 0; head < H * G; ++head) rotate(&q[static_cast<size_t>(head * E)], &q_rope[static_cast<size_t>(head * E)]);
  for (int64_t h = 0; h < H; ++h) rotate(&k[static_cast<size_t>(h * E)], &k_rope[static_cast<size_t>(h * E)]);
  auto cache_at = [&](const std::vector<uint16_t>& cache, const std::vector<float>& row, int64_t h, int64_t t, int64_t e) {
    return t == p ? row[static_cast<size_t>(h * E + e)] : Bf16ToFloat(cache[static_cast<size_t>((h * T + t) * E + e)]);
  };
  // Attention: query head h * G + g over the cache of KV head h (positions > p masked).
  const float scale = 1.0f / std::sqrt(static_cast<float>(E));
  std::vector<float> attn(static_cast<size_t>(H * G * E));
  std::vector<float> scores(static_cast<size_t>(T)), weights(static_cast<size_t>(T));
  for (int64_t h = 0; h < H; ++h) {
    for (int64_t g = 0; g < G; ++g) {
      const float* qh = &q_rope[static_cast<size_t>((h * G + g) * E)];
      float max = -std::numeric_limits<float>::infinity();
      for (int64_t t = 0; t < T; ++t) {
        double sum = 0;
        for (int64_t e = 0; e < E; ++e) sum += static_cast<double>(qh[e]) * cache_at(w.k_cache, k_rope, h, t, e);
        scores[static_cast<size_t>(t)] = t > p ? -std::numeric_limits<float>::infinity() : static_cast<float>(sum) * scale;
        max = std::max(max, scores[static_cast<size_t>(t)]);
      }
      float total = 0;
      for (int64_t t = 0; t < T; ++t) total += std::exp(scores[static_cast<size_t>(t)] - max);
      for (int64_t t = 0; t < T; ++t) weights[static_cast<size_t>(t)] = RoundBf16(std::exp(scores[static_cast<size_t>(t)] - max) / total);
      for (int64_t e = 0; e < E; ++e) {
        double sum = 0;
        for (int64_t t = 0; t < T; ++t) sum += static_cast<double>(weights[static_cast<size_t>(t)]) * cache_at(w.v_cache, v, h, t, e);
        attn[static_cast<size_t>((h * G + g) * E + e)] = RoundBf16(static_cast<float>(sum));
      }
    }
  }
  std::vector<float> o, xf, up, gate, down;
  std::vector<double> o_abs, o_sq, down_abs, down_sq;
  MatVec(w.wo, attn, D, o, &o_abs, &o_sq);
  std::vector<float> x_attn(static_cast<size_t>(D));
  for (int64_t i = 0; i < D; ++i) x_attn[static_cast<size_t>(i)] = w.x[static_cast<size_t>(i)] + o[static_cast<size_t>(i)];
  Rms(x_attn, w.ffn_norm, c.eps, xf);
  MatVec(w.up, xf, F, up);
  MatVec(w.gate, xf, F, gate);
  std::vector<float> act(static_cast<size_t>(F));
  for (int64_t f = 0; f < F; ++f) {
    const float g = gate[static_cast<size_t>(f)];
    act[static_cast<size_t>(f)] = RoundBf16(g / (1.0f + std::exp(-g)) * up[static_cast<size_t>(f)]);
  }
  MatVec(w.down, act, D, down, &down_abs, &down_sq);
  Llama70bReference r;
  r.out.resize(static_cast<size_t>(D));
  r.bound.resize(static_cast<size_t>(D));
  const double ulp = std::ldexp(1.0, -7), f32 = std::ldexp(1.0, -24);
  for (size_t i = 0; i < static_cast<size_t>(D); ++i) {
    r.out[i] = x_attn[i] + down[i];
    r.bound[i] = 2 * kSigmas * ulp * (std::sqrt(o_sq[i]) + std::sqrt(down_sq[i])) +
                 static_cast<double>(64 + c.q_cols() / kTileDepth) * f32 * o_abs[i] +
                 static_cast<double>(64 + F / kTileDepth) * f32 * down_abs[i];
  }
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return r;
}

}  // namespace visa::models
