// The Mixture of Experts samples (moe_samples.h).
#include "samples/models/moe_samples.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <optional>
#include <string_view>

#include "absl/strings/str_cat.h"
#include "dsl/status_macros.h"
#include "samples/models/moe_blocks.h"
#include "samples/models/moe_cases.h"
#include "samples/models/moe_experts.h"
#include "samples/models/moe_layer.h"
#include "samples/models/moe_reference.h"

namespace visa::samples {
namespace {

using models::MoeCase;
using models::MoeShape;

// f32 exp, sum and division of K weights in [0, 1]: a few f32 ulps; 2^-20 leaves room.
constexpr double kWeightBound = 0x1p-20;

// The first difference between the device's routing and the reference's, if any.
std::optional<std::string> FirstMismatch(const MoeShape& shape, const models::MoeRoutingRun& got,
                                         const models::MoeRouting& want, double& max_error) {
  for (size_t i = 0; i < want.scores.size(); ++i) {
    if (got.scores[i] != want.scores[i]) {
      return absl::StrCat("scores[t ", i / shape.experts, ", e ", i % shape.experts, "]: got ", got.scores[i],
                          ", want ", want.scores[i]);
    }
    if (got.rank[i] != want.rank[i]) {
      return absl::StrCat("rank[t ", i / shape.experts, ", e ", i % shape.experts, "]: got ", got.rank[i], ", want ",
                          want.rank[i]);
    }
  }
  for (size_t i = 0; i < want.topk.size(); ++i) {
    const std::string at = absl::StrCat("[t ", i / shape.top_k, ", k ", i % shape.top_k, "]");
    if (got.topk[i] != want.topk[i]) return absl::StrCat("topk", at, ": got ", got.topk[i], ", want ", want.topk[i]);
    const double error = std::fabs(got.weights[i] - want.weights[i]);
    if (!(error <= kWeightBound)) {
      return absl::StrCat("weight", at, ": got ", got.weights[i], ", want ", want.weights[i], " (bound 2^-20)");
    }
    max_error = std::max(max_error, error);
  }
  return std::nullopt;
}

Sample RoutingSample(const std::string& name, MoeCase c) {
  const MoeShape shape;
  Sample s;
  s.name = name;
  s.description = absl::StrCat(
      "Mixture of Experts routing (", models::MoeCaseName(c), " case): router scores on the Contraction Engine, "
      "branchless TopK on the Vector Engine (bit packing with the comparison trick, all-pairs ranking by a "
      "reduce-sum, rank-slot selection, unpacking, softmax over K = ", shape.top_k, ")");
  s.axes = shape.Axes();
  s.runner = [shape, c](Backend& backend, const DeviceOptions& options) -> absl::StatusOr<SampleRun> {
    const models::MoeInputs in = models::MakeMoeInputs(shape, c);
    ASSIGN_OR_RETURN(models::MoeRoutingRun got, models::RunMoeRouting(backend, shape, in.x, in.w_router, options));
    SampleRun run;
    run.program = got.program;
    run.kernel_seconds = got.kernel_seconds;
    run.device_resident_bytes = got.device_resident_bytes;
    run.stream_elements = StreamPositions(run.program);
    if (std::string_view(backend.name()) == "trace") return run;
    const models::MoeRouting want =
        models::ReferenceRouting(shape, models::ReferenceScores(shape, in.x, in.w_router));
    run.mismatch = FirstMismatch(shape, got, want, run.max_error);
    run.elements = static_cast<int64_t>(2 * want.scores.size() + 2 * want.topk.size());
    const models::MoeBlocks blocks = models::ReferenceBlocks(shape, want);
    run.note = absl::StrCat("scores, ranks and top-", shape.top_k,
                            " experts exact, weights within 2^-20; the reference's grid ", blocks.grid, " of at most ",
                            shape.WorstGrid(), " blocks of ", shape.block);
    return run;
  };
  s.time_reference = [shape, c]() -> absl::StatusOr<double> {
    const models::MoeInputs in = models::MakeMoeInputs(shape, c);
    const auto start = std::chrono::steady_clock::now();
    const models::MoeRouting r = models::ReferenceRouting(shape, models::ReferenceScores(shape, in.x, in.w_router));
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    volatile int32_t keep = r.topk.back();
    (void)keep;
    return seconds;
  };
  return s;
}

// The layer's output bound: the device rounds the SwiGLU activation to bf16 (the down projection's
// operand), a relative 2^-9 of each term; f32 sums, SiLU and routing weights add f32 ulps.
constexpr double kOutputBound = 0x1p-8;

// The first difference between the device's layer and the reference's: the token-to-expert
// assignment and every index-generation stage exactly, the output within kOutputBound of sum |terms|.
std::optional<std::string> FirstLayerMismatch(const MoeShape& shape, const models::MoeLayerRun& got,
                                              const models::MoeRouting& routing, const models::MoeBlocks& blocks,
                                              const models::MoeOutput& want, double& max_error,
                                              double& max_bound_fraction) {
  if (got.blocks.topk != routing.topk) return "top-k experts differ from the reference's";
  const models::MoeBlocks& b = got.blocks.blocks;
  if (b.count != blocks.count) return "histogram (Count) differs from the reference's";
  if (b.num_blocks != blocks.num_blocks) return "Num_Blocks differs from the reference's";
  if (b.global_offset != blocks.global_offset) return "Global_Offset differs from the reference's";
  if (b.local_offset != blocks.local_offset) return "Local_Offset differs from the reference's";
  if (b.scatter_idx != blocks.scatter_idx) return "Scatter_Idx differs from the reference's";
  std::vector<int32_t> padded = blocks.expert_ids;
  padded.resize(static_cast<size_t>(models::MoeGridCapacity(shape)), static_cast<int32_t>(shape.experts));
  if (got.blocks.expert_ids_capacity != padded) return "Expert_IDs differ from the reference's";
  for (size_t i = 0; i < want.out.size(); ++i) {
    const double error = std::fabs(got.out[i] - want.out[i]);
    if (!(error <= kOutputBound * want.magnitude[i] + 1e-6)) {
      return absl::StrCat("out[t ", i / shape.hidden, ", d ", i % shape.hidden, "]: got ", got.out[i], ", want ",
                          want.out[i], " (bound 2^-8 of ", want.magnitude[i], ")");
    }
    max_error = std::max(max_error, error);
    max_bound_fraction = std::max(max_bound_fraction, error / (kOutputBound * want.magnitude[i] + 1e-6));
  }
  return std::nullopt;
}

Sample LayerSample(const std::string& name, MoeCase c) {
  const MoeShape shape;
  Sample s;
  s.name = name;
  s.description = absl::StrCat(
      "Mixture of Experts layer (", models::MoeCaseName(c), " case, T = ", shape.tokens, ", E = ", shape.experts,
      ", K = ", shape.top_k, ", B = ", shape.block, "): branchless routing, index generation (histogram, blocks, "
      "cumsum offsets, Scatter_Idx, Expert_IDs), DMA scatter dispatch, weights gathered by Expert_IDs, blockwise "
      "SwiGLU, combine");
  s.axes = models::MoeBlockAxes(shape);
  s.runner = [shape, c](Backend& backend, const DeviceOptions& options) -> absl::StatusOr<SampleRun> {
    const models::MoeInputs in = models::MakeMoeInputs(shape, c);
    const models::MoeExpertWeights w = models::MakeMoeExpertWeights(shape);
    ASSIGN_OR_RETURN(models::MoeLayerRun got, models::RunMoeLayer(backend, shape, in.x, in.w_router, w, options));
    SampleRun run;
    run.program = got.program;
    run.kernel_seconds = got.kernel_seconds;
    run.device_resident_bytes = got.device_resident_bytes;
    run.stream_elements = StreamPositions(run.program);
    if (std::string_view(backend.name()) == "trace") return run;
    const models::MoeRouting routing =
        models::ReferenceRouting(shape, models::ReferenceScores(shape, in.x, in.w_router));
    const models::MoeBlocks blocks = models::ReferenceBlocks(shape, routing);
    const models::MoeOutput want = models::ReferenceMoe(shape, routing, in.x, w.w_gate, w.w_up, w.w_down);
    double bound_fraction = 0;
    run.mismatch = FirstLayerMismatch(shape, got, routing, blocks, want, run.max_error, bound_fraction);
    run.elements = static_cast<int64_t>(want.out.size());
    run.note = absl::StrCat("top-k and index generation exact, output within 2^-8 of sum |terms| (bf16 SwiGLU "
                            "activation; the largest error ", absl::SixDigits(bound_fraction),
                            " of its bound); grid ", blocks.grid, " of capacity ", models::MoeGridCapacity(shape));
    return run;
  };
  s.time_reference = [shape, c]() -> absl::StatusOr<double> {
    const models::MoeInputs in = models::MakeMoeInputs(shape, c);
    const models::MoeExpertWeights w = models::MakeMoeExpertWeights(shape);
    const auto start = std::chrono::steady_clock::now();
    const models::MoeRouting r = models::ReferenceRouting(shape, models::ReferenceScores(shape, in.x, in.w_router));
    const models::MoeBlocks b = models::ReferenceBlocks(shape, r);
    const models::MoeOutput o = models::ReferenceMoe(shape, r, in.x, w.w_gate, w.w_up, w.w_down);
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    volatile double keep = o.out.back() + b.grid;
    (void)keep;
    return seconds;
  };
  return s;
}

}  // namespace

std::vector<Sample> MoeSamples() {
  return {RoutingSample("moe_routing", MoeCase::kRandom), RoutingSample("moe_routing_skewed", MoeCase::kSkewed),
          RoutingSample("moe_routing_tied", MoeCase::kTied),
          RoutingSample("moe_routing_worst_grid", MoeCase::kWorstGrid), LayerSample("moe_layer", MoeCase::kRandom),
          LayerSample("moe_layer_skewed", MoeCase::kSkewed), LayerSample("moe_layer_tied", MoeCase::kTied),
          LayerSample("moe_layer_worst_grid", MoeCase::kWorstGrid)};
}

}  // namespace visa::samples
