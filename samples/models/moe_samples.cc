// The Mixture of Experts samples (moe_samples.h).
#include "samples/models/moe_samples.h"

#include <chrono>
#include <cmath>
#include <string_view>

#include "absl/strings/str_cat.h"
#include "dsl/status_macros.h"
#include "samples/models/moe_cases.h"
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

}  // namespace

std::vector<Sample> MoeSamples() {
  return {RoutingSample("moe_routing", MoeCase::kRandom), RoutingSample("moe_routing_skewed", MoeCase::kSkewed),
          RoutingSample("moe_routing_tied", MoeCase::kTied),
          RoutingSample("moe_routing_worst_grid", MoeCase::kWorstGrid)};
}

}  // namespace visa::samples
