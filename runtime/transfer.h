// Transfer: executes a relayout between a device tensor (or host image) and a new device tensor
// (or host image), staging bytes in host memory so that a failed transfer writes nothing.
//
// This is the data path shared by the DMA moves (dma.h) and, later, by the Tensor Unit's engines
// that read DM into streams or write streams into DM / TRF / VRF: they only differ in which
// context may run them and in the rules checked before the transfer commits. Every transfer into
// the device marks the live positions it wrote (uninitialized_reads.h); none checks its source
// (the interpreter and the host read-back `to_host` do).
#pragma once

#include <cstdint>

#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "dsl/dma_packet.h"
#include "dsl/mapping.h"
#include "runtime/host_tensor.h"
#include "runtime/tensor.h"

namespace visa {

// What a transfer did, for the caller's rules and for performance models.
struct TransferReport {
  bool crosses_chips = false;   // some element lands on another chip than it was read from
  int64_t elements = 0;         // destination elements written
  int64_t bytes_read = 0;       // source bytes staged
  int64_t bytes_written = 0;    // destination bytes written back
};

// Called after the relayout is computed and before anything is written to the device.
using TransferCheck = absl::FunctionRef<absl::Status(const TransferReport&)>;

// Device (or view) -> new device tensor at `dst`; the destination becomes the owner of its ranges.
absl::StatusOr<DeviceTensor> TransferToDevice(const DeviceTensor& src, Device& device,
                                              Placement dst, TransferCheck check,
                                              TransferReport* report = nullptr);
// Host image -> new device tensor at `dst`.
absl::StatusOr<DeviceTensor> TransferToDevice(const HostTensor& src, Device& device, Placement dst,
                                              TransferCheck check,
                                              TransferReport* report = nullptr);
// Device (or view) -> host image laid out by `layout`.
absl::StatusOr<HostTensor> TransferToHost(const DeviceTensor& src, const Mapping& layout,
                                          TransferCheck check, TransferReport* report = nullptr);

// Device (or view) -> an existing tensor or view `dst` (claimed by the caller): only the live
// positions of `dst` are written; the rest of its bytes keep what memory holds.
absl::Status TransferInto(const DeviceTensor& src, const DeviceTensor& dst, TransferReport* report = nullptr);
// Host image -> an existing whole tensor, likewise.
absl::Status WriteInto(const HostTensor& src, const DeviceTensor& dst);
// What a transfer of `src` into a tensor at `dst` would do, from the mappings alone (no bytes are
// read): the elements, the staged bytes and whether an element changes chip. Fails as the
// transfer would on an index one side does not hold.
// `packets`, when given, receives every run of the move (the DMA's packets, dsl/dma_packet.h).
absl::StatusOr<TransferReport> PlanTransfer(const DeviceTensor& src, const Placement& dst,
                                            DmaPacketScan* packets = nullptr);

// The same without extra rules. ReadAs is a read of the tensor's values (a host read-back): like
// `to_host` it fails with "Uninitialized Read" when a live element was never written (device
// option). ReadImage reads the bytes as they are, written or not: the identity relayouts the
// engines build on, which check the reads they make themselves (a scatter reads its whole base).
absl::StatusOr<HostTensor> ReadAs(const DeviceTensor& src, const Mapping& layout);
absl::StatusOr<HostTensor> ReadImage(const DeviceTensor& src, const Mapping& layout);
absl::StatusOr<DeviceTensor> WriteAs(const HostTensor& src, Device& device, Placement dst);

}  // namespace visa
