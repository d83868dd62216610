// TraceBackend: zero streams of the planned shapes; DMA moves keep the shared transfer path.
#include "runtime/trace_backend.h"

namespace visa {

absl::StatusOr<HostTensor> TraceBackend::Fetch(const std::vector<DmTensor>&, const BeginStage&,
                                               const FetchStage& stage) {
  return HostTensor::Zeros(stage.out.dtype, stage.out.Full());
}

absl::StatusOr<HostTensor> TraceBackend::Rearrange(const HostTensor& stream, const StreamShape& out) {
  return HostTensor::Zeros(stream.dtype(), out.Full());
}

absl::StatusOr<HostTensor> TraceBackend::Cast(const HostTensor&, const CastStage& stage) {
  return HostTensor::Zeros(stage.to, stage.out.Full());
}

absl::StatusOr<DeviceTensor> TraceBackend::Store(const HostTensor&, Device& device, Placement placement) {
  return DeviceTensor::Claim(device, std::move(placement));
}

absl::Status TraceBackend::StoreInto(const HostTensor&, const DmTensor&, const SliceBitmap&) {
  return absl::OkStatus();
}

absl::StatusOr<HostTensor> TraceBackend::Contract(const HostTensor&, const TrfTensor&, const AlignStage&,
                                                  const ContractStage&, const AccumulateStage& accumulate) {
  return HostTensor::Zeros(accumulate.out.dtype, accumulate.out.Full());
}

}  // namespace visa
