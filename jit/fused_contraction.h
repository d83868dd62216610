// FusedContraction: whether a pipeline's front (begin, fetch, collects, align, contract,
// accumulate) runs as one lane contraction kernel per slice (lane_contraction_kernel.h) reading
// DM and TRF in place, and the kernel's spec when it does.
//
// What fuses: one fetched tensor (no interleave), collects that keep every slice's element order
// (they only repacketize the stream), an align whose computation mapping has the collect's
// element order, weights addressed through the TRF Sequencer, no stream padding, and a retained
// time digit along which the weights are broadcast (the lanes); without one, each time step is a
// block of one lane, run by the packet kernel where it takes the types. What does not, and why:
//  - a switch exchanges data across slices through the ring: the pipeline would split there;
//  - a transpose reorders time and packet through its buffer;
//  - an align that broadcasts or shifts the stream over time (convolutions' shift-reuse) reads a
//    stream element at several steps: the operand blocks would need the index inverse;
// those pipelines run stage by stage (jit_backend.cc). Every refusal carries its reason.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <variant>

#include "absl/status/statusor.h"
#include "jit/lane_contraction_kernel.h"
#include "jit/packet_contraction_kernel.h"
#include "runtime/program.h"
#include "runtime/tensor.h"

namespace visa::jit {

struct FusedContraction {
  LaneContractionSpec spec;
  int64_t outer = 1;             // slices (chip x cluster x slice positions)
  size_t accumulate_stage = 0;   // the stages after it run on the accumulator image
  Mapping acc_layout;            // [outer, row, retained time, contracted packet]
  Mapping out_layout;            // the Reducer's output stream
  // One slice's part of each ([row, retained time, contracted packet] and [time, packet]) when
  // both images hold a slice's positions in one block, slice after slice in the same order: the
  // accumulators then move into the stream image slice by slice, live slices only.
  std::optional<std::pair<Mapping, Mapping>> slice_layouts;  // {out, acc}
  DType acc_type = DType::kF32;
  std::string lanes;             // the time digit the lanes run along, for explain / debugging
  // The same kernel with its first tree level fused (exact_products.h) when the types allow it
  // (a float sum of bf16 / f8 operands fetched without conversion); a run uses it when a scan of
  // the operands it reads finds every product exact.
  std::optional<LaneContractionSpec> fma_spec;
  // The same kernel with its first tree level on vdpbf16ps pairs (LaneContractionSpec::bf16_pairs)
  // where the types and the host allow it; a run uses it for each slice whose operands a scan
  // finds in range (SliceAllowsBf16Pairs).
  std::optional<LaneContractionSpec> pairs_spec;
  int64_t x_extent = 0, w_extent = 0;  // elements the kernel reads from each x_base / w_base
  // Without lanes (blocks of one lane: no retained time digit broadcasts the weights), the packet
  // kernel (packet_contraction_kernel.h) where it takes the spec; it runs instead of `spec`.
  std::optional<PacketContractionSpec> packet_spec;
};

// The plan, or the reason the op runs stage by stage. Depends only on the op's configuration.
absl::StatusOr<std::variant<FusedContraction, std::string>> PlanFusedContraction(const PipelineOp& op);

// A cache key of the op's configuration: every stage's description and the stream layouts.
std::string PipelineKey(const PipelineOp& op);

// The per-slice DM pointers of the fetched tensor and per-(slice, Row) TRF pointers of the
// weights, in place; an error names what does not line up (the caller then runs stage by stage).
// Whether every product of the operands at `x_base` / `w_base` (PointersOf) is exact in f32, so
// the run may use `plan.fma_spec`. Scans the bytes the kernel reads: about one pass over them.
bool ProductsAreExact(const FusedContraction& plan, const std::vector<const uint8_t*>& x_base,
                      const std::vector<const uint8_t*>& w_base);

// Whether slice `o`'s operand and weights (PointersOf) allow plan.pairs_spec: every product exact
// and every sum of two normal or zero (PairSumsAreExact). Scans the bytes the slice's kernel
// reads, which also brings them into the cache it is about to read them from.
bool SliceAllowsBf16Pairs(const FusedContraction& plan, const std::vector<const uint8_t*>& x_base,
                          const std::vector<const uint8_t*>& w_base, int64_t o);

absl::Status PointersOf(const FusedContraction& plan, const DmTensor& input, const TrfTensor& weights,
                        std::vector<const uint8_t*>& x_base, std::vector<const uint8_t*>& w_base);

}  // namespace visa::jit
