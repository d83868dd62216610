// TraceBackend: records a kernel's Program without computing its streams (every stream is zero),
// so `visa explain` and JIT tracing cost what planning costs, not what the interpreter costs.
#pragma once

#include "runtime/backend.h"

namespace visa {

class TraceBackend : public Backend {
 public:
  const char* name() const override { return "trace"; }
  absl::StatusOr<HostTensor> Fetch(const std::vector<DmTensor>& inputs, const BeginStage& begin,
                                   const FetchStage& stage) override;
  absl::StatusOr<HostTensor> Rearrange(const HostTensor& stream, const StreamShape& out) override;
  absl::StatusOr<HostTensor> Cast(const HostTensor& stream, const CastStage& stage) override;
  // The new tensor claims its bytes without writing them.
  absl::StatusOr<DeviceTensor> Store(const HostTensor& stream, Device& device, Placement placement) override;
  absl::Status StoreInto(const HostTensor& stream, const DmTensor& target, const SliceBitmap& slices) override;
  absl::StatusOr<HostTensor> Contract(const HostTensor& stream, const TrfTensor& weights, const AlignStage& align,
                                      const ContractStage& contract, const AccumulateStage& accumulate) override;
};

}  // namespace visa
