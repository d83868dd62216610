// The interpreter's stages, each evaluated element by element by tensor index (interpreter.cc,
// contraction.cc); Interpreter::Run walks a pipeline through them (runtime/pipeline_walk.h).
#pragma once

#include <vector>

#include "absl/status/statusor.h"
#include "runtime/host_tensor.h"
#include "runtime/program.h"
#include "runtime/tensor.h"

namespace visa::interp {

// The fetched stream (laid out by `stage.out.Full()`, in the output dtype) of the DM tensors:
// one, or two alternating along the begin stage's interleave axis.
absl::StatusOr<HostTensor> FetchStream(const std::vector<DmTensor>& inputs, const BeginStage& begin,
                                       const FetchStage& stage);
// The Fetch Adapter over a source image holding `tensors` tensors one after the other (an
// interleave's), then the move into the stream laid out by `stage.out.Full()`.
absl::StatusOr<HostTensor> FetchFromImage(const HostTensor& source, const BeginStage& begin, const FetchStage& stage,
                                          int64_t tensors);
// An indirect fetch (FetchStage::indirect, interp/indirect_fetch.cc): the index tensor's rows
// checked, the rows W = index[k] gathered into K index by index, then fetched as FetchFromImage.
absl::StatusOr<HostTensor> IndirectFetchStream(const DmTensor& table, const DeviceTensor& index,
                                               const BeginStage& begin, const FetchStage& stage);
// An engine that only changes which position holds which index (switch, collect, transpose).
absl::StatusOr<HostTensor> RearrangeStream(const HostTensor& stream, const StreamShape& out);
// The Cast Engine: every element converted, then laid out by the stage's output shape.
absl::StatusOr<HostTensor> CastStream(const HostTensor& stream, const CastStage& stage);
// The Contraction Engine, align .. accumulate as one step: the collect stream paired with the TRF
// weights, multiplied, reduced by the spatial tree and accumulated over time; the result is laid
// out by `accumulate.out.Full()` in the accumulator type.
absl::StatusOr<HostTensor> ContractStream(const HostTensor& stream, const TrfTensor& weights,
                                          const AlignStage& align, const ContractStage& contract,
                                          const AccumulateStage& accumulate);
// The Vector Engine's intra-slice block (vector_init .. vector_final), element by element; `vrfs`
// are the tensors its VRF operands read (PipelineTensors::vrf_operands).
absl::StatusOr<HostTensor> VectorStream(const HostTensor& stream, const VectorStage& stage,
                                        const std::vector<DeviceTensor>& vrfs);
// Writes the stream into `output` (a new tensor, or a commit_view target): only the live positions
// of `output` on enabled slices change; indices `output` does not hold are dropped (the commit
// adapter's truncation).
absl::Status StoreStream(const HostTensor& stream, const DeviceTensor& output, const SliceBitmap& slices);

}  // namespace visa::interp
