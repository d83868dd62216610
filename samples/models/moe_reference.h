// The Mixture of Experts layer's host reference (manual, "Mixture of Experts"): plain loops over
// the model's definition, written independently of the branchless kernel (moe_layer.h). The
// router's top K is a selection by (score, expert id) descending, the blocks are counted and
// offset by sequential loops, each expert's SwiGLU FFN runs token by token.
//
// Decided here (the page leaves it open, the kernel's packing implies it): among tied scores the
// higher expert id ranks first (the packed value keeps the id in its low 16 bits). The K selected
// experts of a token are listed best first (rank 0, 1, ...): the DSL's Filter stage does not
// compact (dsl/vector_filter.cc), so the kernel selects the entry of rank r for each r < K (a
// one-hot sum), which lists them in rank order; the page's compaction would keep them in expert
// order. The routing and the layer's output do not depend on the order.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace visa::models {

struct MoeShape {
  int64_t tokens = 64;  // T
  int64_t hidden = 64;  // D
  int64_t ffn = 32;     // F
  int64_t experts = 32;  // E
  int64_t top_k = 2;    // K
  int64_t block = 8;    // B
  std::string Axes() const;  // "T = 64, D = 64, F = 32, E = 32, I = 32, R = 2"
  // The page's worst-case grid: every expert's last block holds one token, (T*K - E) / B + E.
  int64_t WorstGrid() const;
};

// The router and the top K of every token.
struct MoeRouting {
  std::vector<float> scores;          // [T, E] as given (the router's bf16 values)
  std::vector<int32_t> rank;          // [T, E]: experts scoring above this one (ties: higher id first)
  std::vector<int32_t> topk;          // [T, K], best first
  std::vector<double> weights;        // [T, K]: softmax over the K selected scores
};

// The page's index generation (3.3), by sequential loops.
struct MoeBlocks {
  std::vector<int32_t> count;          // [E] tokens per expert (the histogram)
  std::vector<int32_t> num_blocks;     // [E] ceil(count / B)
  std::vector<int32_t> global_offset;  // [E] first block of each expert
  std::vector<int32_t> expert_ids;     // [G] the expert of each used block
  std::vector<int32_t> local_offset;   // [T, K] position in the expert's queue (token order, then k)
  std::vector<int32_t> scatter_idx;    // [T, K] global_offset * B + local_offset
  int64_t grid = 0;                    // G: blocks used
};

// scores [T, E] row-major (the values the router produced).
MoeRouting ReferenceRouting(const MoeShape& shape, const std::vector<float>& scores);
MoeBlocks ReferenceBlocks(const MoeShape& shape, const MoeRouting& routing);

// Router scores in f64 from x [T, D] and w_router [D, E], each rounded to bf16 (the kernel's
// router output type).
std::vector<float> ReferenceScores(const MoeShape& shape, const std::vector<double>& x,
                                   const std::vector<double>& w_router);

// The layer's output [T, D] in f64: sum over k of weight[t, k] * FFN_e(x[t]), e = topk[t, k], with
// FFN_e(x) = (silu(x W_gate[e]) * (x W_up[e])) W_down[e]; w_gate, w_up [E, D, F], w_down [E, F, D].
struct MoeOutput {
  std::vector<double> out;        // [T, D]
  std::vector<double> magnitude;  // [T, D]: the same sums over |terms| (error bounds' scale)
};
MoeOutput ReferenceMoe(const MoeShape& shape, const MoeRouting& routing, const std::vector<double>& x,
                       const std::vector<double>& w_gate, const std::vector<double>& w_up,
                       const std::vector<double>& w_down);

}  // namespace visa::models
