// Reduction steps of a vector stage on the JIT: parallel over blocks, each block through the
// interpreter's own reduction function (the order of combination is part of the result).
#include "jit/vector_reduce_stage.h"

#include <algorithm>

#include "absl/types/span.h"
#include "dsl/status_macros.h"
#include "interp/vector_reduce_stage.h"
#include "jit/parallel.h"

namespace visa::jit {

std::vector<uint8_t> RunReduceStep(const VeStep& step, const std::vector<uint8_t>& data, int threads) {
  VISA_CHECK(step.kind == VeStep::Kind::kIntraReduce || step.kind == VeStep::Kind::kInterReduce,
             "a reduce step is a reduction");
  const absl::Span<const uint32_t> in(reinterpret_cast<const uint32_t*>(data.data()), data.size() / 4);
  std::vector<uint8_t> out(static_cast<size_t>(4 * step.out.Full().size()), 0);
  const absl::Span<uint32_t> lanes(reinterpret_cast<uint32_t*>(out.data()), out.size() / 4);
  const auto threads_for = [&](int64_t blocks) {
    return static_cast<int>(std::max<int64_t>(1, std::min<int64_t>(ThreadsFor(in.size(), threads), blocks)));
  };
  if (step.kind == VeStep::Kind::kIntraReduce) {
    const IntraSliceReduceStage& stage = *step.intra_reduce;
    const int64_t blocks = interp::IntraSliceBlocks(stage);
    Parallel(blocks, threads_for(blocks),
             [&](int64_t begin, int64_t end) { interp::IntraSliceReduceBlocks(stage, in, lanes, begin, end); }, 1);
  } else {
    const InterSliceReduceStage& stage = *step.inter_reduce;
    const int64_t blocks = interp::InterSliceBlocks(stage);
    Parallel(blocks, threads_for(blocks),
             [&](int64_t begin, int64_t end) { interp::InterSliceReduceBlocks(stage, in, lanes, begin, end); }, 1);
  }
  return out;
}

}  // namespace visa::jit
