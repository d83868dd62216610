// The reference backend: Tensor Unit stages evaluated element by element by tensor index.
#pragma once

#include "runtime/backend.h"

namespace visa::interp {

class Interpreter : public Backend {
 public:
  const char* name() const override { return "interp"; }
  absl::StatusOr<HostTensor> Fetch(const std::vector<DmTensor>& inputs, const BeginStage& begin,
                                   const FetchStage& stage) override;
  absl::StatusOr<HostTensor> Rearrange(const HostTensor& stream, const StreamShape& out) override;
  absl::StatusOr<HostTensor> Cast(const HostTensor& stream, const CastStage& stage) override;
  absl::StatusOr<DeviceTensor> Store(const HostTensor& stream, Device& device,
                                     Placement placement) override;
  absl::Status StoreInto(const HostTensor& stream, const DmTensor& target,
                         const SliceBitmap& slices) override;
  // Defined in contraction.cc.
  absl::StatusOr<HostTensor> Contract(const HostTensor& stream, const TrfTensor& weights,
                                      const AlignStage& align, const ContractStage& contract,
                                      const AccumulateStage& accumulate) override;
};

}  // namespace visa::interp
