// The reductions over a stream's blocks, in the layout StreamShape::Full() gives (chip, cluster,
// slice, time, packet, outermost first): a slice's Time x Packet lanes are contiguous, and so are a
// cluster's Slice x Time x Packet lanes.
#include "interp/vector_reduce_stage.h"

#include "dsl/status_macros.h"
#include "interp/vector_reduce.h"

namespace visa::interp {

int64_t IntraSliceBlocks(const IntraSliceReduceStage& stage) {
  return stage.in.chip.size() * stage.in.cluster.size() * stage.in.slice.size();
}

void IntraSliceReduceBlocks(const IntraSliceReduceStage& stage, absl::Span<const uint32_t> in,
                            absl::Span<uint32_t> out, int64_t begin, int64_t end) {
  const int64_t in_block = stage.in.time.size() * kVeHalfLanes;
  const int64_t out_block = stage.out.time.size() * kVeHalfLanes;
  VISA_CHECK(static_cast<int64_t>(in.size()) == IntraSliceBlocks(stage) * in_block, "intra-slice reduce: stream size");
  VISA_CHECK(static_cast<int64_t>(out.size()) == IntraSliceBlocks(stage) * out_block,
             "intra-slice reduce: output stream size");
  const int64_t slices = stage.in.slice.size();
  for (int64_t b = begin; b < end; ++b) {
    const std::vector<int> valid = IntraSliceValidCounts(stage, b % slices);
    IntraSliceReduce(stage, in.subspan(b * in_block, in_block), valid, out.subspan(b * out_block, out_block));
  }
}

int64_t InterSliceBlocks(const InterSliceReduceStage& stage) { return stage.in.chip.size() * stage.in.cluster.size(); }

void InterSliceReduceBlocks(const InterSliceReduceStage& stage, absl::Span<const uint32_t> in,
                            absl::Span<uint32_t> out, int64_t begin, int64_t end) {
  const int64_t in_block = stage.in.slice.size() * stage.in.time.size() * kVeLanes;
  const int64_t out_block = stage.out.slice.size() * stage.out.time.size() * kVeLanes;
  VISA_CHECK(static_cast<int64_t>(in.size()) == InterSliceBlocks(stage) * in_block, "inter-slice reduce: stream size");
  VISA_CHECK(static_cast<int64_t>(out.size()) == InterSliceBlocks(stage) * out_block,
             "inter-slice reduce: output stream size");
  for (int64_t b = begin; b < end; ++b) {
    InterSliceReduce(stage, in.subspan(b * in_block, in_block), out.subspan(b * out_block, out_block));
  }
}

std::vector<uint32_t> IntraSliceReduceStream(const IntraSliceReduceStage& stage, absl::Span<const uint32_t> in) {
  std::vector<uint32_t> out(static_cast<size_t>(stage.out.Full().size()));
  IntraSliceReduceBlocks(stage, in, absl::MakeSpan(out), 0, IntraSliceBlocks(stage));
  return out;
}

std::vector<uint32_t> InterSliceReduceStream(const InterSliceReduceStage& stage, absl::Span<const uint32_t> in) {
  std::vector<uint32_t> out(static_cast<size_t>(stage.out.Full().size()));
  InterSliceReduceBlocks(stage, in, absl::MakeSpan(out), 0, InterSliceBlocks(stage));
  return out;
}

}  // namespace visa::interp
