// DMA contexts and the explicit-address moves between host, HBM, DM and SPM.
//
// Each move is the identity on the mathematical tensor while changing its layout (manual, "Tensor
// Functions", "DMA Engine"); the data path is transfer.h. Which context may run which move:
//
//   move                                   tdma (Tensor DMA)   pdma (PCIe DMA)
//   host -> HBM, HBM -> host               no                  yes
//   HBM -> HBM (same chip or across)       yes                 yes
//   any move reading or writing DM / SPM   yes                 no
//   TRF, VRF                               no (the Tensor Unit writes them: to_trf / to_vrf)
//
// SPM transfers stay on their chip (manual, "DMA Engine" > Performance: "Restricted to same-chip
// transfers"). Moves that write DM / SPM need an 8-byte aligned destination address, and HBM -> DM
// also an 8-byte aligned source address (manual, "DMA Engine" > Alignment Constraints); the packet
// size part of those rules depends on the sequencer configuration and is checked there.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "dsl/mapping.h"
#include "runtime/address.h"
#include "runtime/host_tensor.h"
#include "runtime/program.h"
#include "runtime/tensor.h"
#include "runtime/transfer.h"

namespace visa {

class Context;
class Device;

// A DMA context of the manual's `Context` (`ctx.tdma`, `ctx.pdma`), bound to a device.
class Dma {
 public:
  Dma(Device& device, ContextKind kind) : device_(&device), kind_(kind) {}
  static Dma Tensor(Device& device) { return Dma(device, ContextKind::kTdma); }
  static Dma Pcie(Device& device) { return Dma(device, ContextKind::kPdma); }

  ContextKind kind() const { return kind_; }  // kTdma or kPdma
  Device& device() const { return *device_; }
  const char* name() const { return ContextName(kind_); }

  // What the last successful move did (elements, bytes, whether it crossed chips).
  const TransferReport& last() const { return last_; }
  int64_t moves() const { return moves_; }

  // The Context whose Program records this context's moves and whose backend runs them; without
  // one (a Dma made on its own) a move runs at once through the shared transfer path.
  void set_context(Context* context) { context_ = context; }
  Context* context() const { return context_; }

  // The named operation the device moves recorded from now on belong to ("ChipShuffle ..."), shown
  // by `visa explain`; empty for none. ScopedDmaOperation sets it for a scope.
  void set_operation(std::string operation) { operation_ = std::move(operation); }
  const std::string& operation() const { return operation_; }

 private:
  friend class DmaAccess;
  Device* device_;
  ContextKind kind_;
  TransferReport last_;
  int64_t moves_ = 0;
  Context* context_ = nullptr;
  std::string operation_;
};

// Names the moves of `dma` inside a scope; the previous name comes back at its end.
class ScopedDmaOperation {
 public:
  ScopedDmaOperation(Dma& dma, std::string operation) : dma_(dma), previous_(dma.operation()) {
    dma_.set_operation(std::move(operation));
  }
  ~ScopedDmaOperation() { dma_.set_operation(std::move(previous_)); }
  ScopedDmaOperation(const ScopedDmaOperation&) = delete;
  ScopedDmaOperation& operator=(const ScopedDmaOperation&) = delete;

 private:
  Dma& dma_;
  std::string previous_;
};

// The destination of a move: its tier, address and level mappings (see tensor_rules.h).
struct Destination {
  Tier tier = Tier::kHbm;
  Address address = Address::Any();
  std::vector<Mapping> levels;
};

// The general forms behind the member functions of HostTensor, HbmTensor and DmTensor.
absl::StatusOr<DeviceTensor> Move(Dma& dma, const DeviceTensor& src, const Destination& dst);
absl::StatusOr<DeviceTensor> Move(Dma& dma, const HostTensor& src, const Destination& dst);
absl::StatusOr<HostTensor> MoveToHost(Dma& dma, const DeviceTensor& src, const Mapping& element);

// The manual's `dma(&input, &mut output, stream)`: moves `src` into an existing tensor or view
// `dst` of the same dtype, so pieces assemble one tensor through its tile views without computing
// addresses. The indices `src` holds must be the ones `dst` holds (a tile view's are tile-local,
// dsl/tile.h); only `dst`'s live positions are written, the rest of its tensor keeps its bytes.
// The context table, alignment (at the view's first byte), packet and SPM rules are those of a move.
absl::Status MoveInto(Dma& dma, const DeviceTensor& src, const DeviceTensor& dst);
// Host -> an existing HBM tensor or view over PCIe (`ctx.pdma`).
absl::Status MoveInto(Dma& pdma, const HostTensor& src, const HbmTensor& dst);

}  // namespace visa
