// Backend: how a Context executes the Tensor Unit stages it records (the interpreter implements
// it; it is the seam where a program-at-a-time JIT plugs in later).
#pragma once

#include <vector>

#include "absl/status/statusor.h"
#include "runtime/host_tensor.h"
#include "runtime/program.h"
#include "runtime/tensor.h"
#include "runtime/transfer.h"

namespace visa {

class Backend {
 public:
  virtual ~Backend() = default;
  virtual const char* name() const = 0;

  // The fetched stream (laid out by `stage.out.Full()`, in the output dtype) of the DM tensors:
  // one, or two alternating along the begin stage's interleave axis.
  virtual absl::StatusOr<HostTensor> Fetch(const std::vector<DmTensor>& inputs,
                                           const BeginStage& begin, const FetchStage& stage) = 0;
  // An engine that only changes which position holds which index (switch, collect, transpose).
  virtual absl::StatusOr<HostTensor> Rearrange(const HostTensor& stream, const StreamShape& out) = 0;
  // The Cast Engine: every element converted, then laid out by the stage's output shape.
  virtual absl::StatusOr<HostTensor> Cast(const HostTensor& stream, const CastStage& stage) = 0;
  // Writes the stream into a new tensor at `placement` (commit, to_trf, to_vrf); indices the
  // placement does not hold are dropped (the commit adapter's truncation).
  virtual absl::StatusOr<DeviceTensor> Store(const HostTensor& stream, Device& device,
                                             Placement placement) = 0;
  // Writes the stream into an existing DM tensor or view (commit_view, a commit with a slice
  // bitmap): only the target's live positions on enabled slices change; every other byte of the
  // tensor keeps what memory holds. Indices the target does not hold are dropped.
  virtual absl::Status StoreInto(const HostTensor& stream, const DmTensor& target,
                                 const SliceBitmap& slices) = 0;
  // The Contraction Engine, align .. accumulate as one step: the collect stream paired with the
  // TRF weights, multiplied, reduced by the spatial tree and accumulated over time; the result
  // is laid out by `accumulate.out.Full()` in the accumulator type.
  virtual absl::StatusOr<HostTensor> Contract(const HostTensor& stream, const TrfTensor& weights,
                                              const AlignStage& align, const ContractStage& contract,
                                              const AccumulateStage& accumulate) = 0;
  // A DMA move's data path (dma.cc, after its context and alignment rules): the source tensor or
  // view relaid into a new tensor at `dst`, once `check` accepts what the move would do. The
  // default is the shared transfer path (transfer.h), which the interpreter uses.
  virtual absl::StatusOr<DeviceTensor> Transfer(const DeviceTensor& src, Device& device, Placement dst,
                                                TransferCheck check, TransferReport* report) {
    return TransferToDevice(src, device, std::move(dst), check, report);
  }
};

}  // namespace visa
