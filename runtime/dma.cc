// DMA moves: context rules, DMA alignment, the SPM same-chip rule, and the member-function forms.
#include "runtime/dma.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "dsl/dma_packet.h"
#include "dsl/status_macros.h"
#include "runtime/backend.h"
#include "runtime/tensor_unit.h"
#include "runtime/device.h"
#include "runtime/host_read_hook.h"
#include "runtime/move_descriptors.h"
#include "runtime/tensor_rules.h"
#include "runtime/uninitialized_reads.h"

namespace visa {

// Records a move in its context's Program and, unless the context only records, carries it out.
class DmaAccess {
 public:
  static absl::Status Submit(Dma& dma, const TransferReport& report, DmaOp op, const DmaTensors& tensors) {
    op.operation = dma.operation_;
    if (dma.context_ != nullptr) {
      RETURN_IF_ERROR(dma.context_->Submit(Op{std::move(op)}, tensors));
    } else {
      RETURN_IF_ERROR(TransferInto(tensors.src, tensors.dst));
    }
    Count(dma, report);
    return absl::OkStatus();
  }
  // A move to or from the host: its data path is not a device op, so it is recorded after it ran.
  static void RecordHostMove(Dma& dma, const TransferReport& report, DmaOp op) {
    if (dma.context_ != nullptr) dma.context_->Record(Op{std::move(op)});
    Count(dma, report);
  }
  static bool Executes(const Dma& dma) { return dma.context_ == nullptr || dma.context_->executes(); }

 private:
  static void Count(Dma& dma, const TransferReport& report) {
    dma.last_ = report;
    ++dma.moves_;
  }
};

namespace {

TensorRef RefOf(const DeviceTensor& t) { return TensorRef{t.ToString(), t.id(), t}; }

// A move between device memories, with the descriptors it runs from (or why none does).
DmaOp DeviceMoveOp(const Dma& dma, const DeviceTensor& src, const DeviceTensor& dst) {
  DmaMove move;
  absl::StatusOr<DmaDescriptors> descriptors = MoveDescriptors(src, dst);
  if (descriptors.ok()) {
    move.descriptors = *std::move(descriptors);
  } else {
    move.no_descriptors = std::string(descriptors.status().message());
  }
  return DmaOp{dma.kind(), RefOf(src), RefOf(dst), std::move(move)};
}
// Host images have no device id; they print by type and layout (not by value).
TensorRef RefOf(const HostTensor& t) {
  return TensorRef{absl::StrCat("HostTensor<", std::string(Name(t.dtype())), ", [",
                                t.mapping().ToString(), "]>"),
                   0, std::nullopt};
}

bool IsSram(Tier tier) { return tier == Tier::kDm || tier == Tier::kSpm; }

std::string MoveName(Tier from, Tier to) { return absl::StrCat(TierName(from), " -> ", TierName(to)); }

// The context table of dma.h.
absl::Status CheckContext(const Dma& dma, Tier from, Tier to) {
  if (from == Tier::kTrf || from == Tier::kVrf || to == Tier::kTrf || to == Tier::kVrf) {
    return absl::InvalidArgumentError(absl::StrCat(
        "DMA Context: ", MoveName(from, to), " is not a DMA move; TRF and VRF are loaded through "
        "the Tensor Unit (`to_trf`, `to_vrf`), and DMA moves between HBM, DM and SPM (manual, "
        "\"Moving Tensors\")"));
  }
  const bool host = from == Tier::kHost || to == Tier::kHost;
  if (host && dma.kind() != ContextKind::kPdma) {
    return absl::InvalidArgumentError(absl::StrCat(
        "DMA Context: ", MoveName(from, to), " crosses PCIe between host and device and needs the "
        "PCIe DMA context (`ctx.pdma`), got `", dma.name(), "`"));
  }
  if (host && (IsSram(from) || IsSram(to))) {
    return absl::InvalidArgumentError(absl::StrCat(
        "DMA Context: ", MoveName(from, to), " is not a move; the host reaches DM only through HBM"));
  }
  if ((IsSram(from) || IsSram(to)) && dma.kind() != ContextKind::kTdma) {
    return absl::InvalidArgumentError(absl::StrCat(
        "DMA Context: ", MoveName(from, to), " reads or writes on-chip SRAM and needs the Tensor "
        "DMA context (`ctx.tdma`), got `", dma.name(), "`"));
  }
  return absl::OkStatus();
}

// DMA Engine alignment: DM / SPM writes 8 bytes, HBM -> DM also the read address.
absl::Status CheckDmaAlignment(Tier from, int64_t read_address, Tier to, int64_t write_address) {
  constexpr int64_t kAlign = 8;
  if (IsSram(to) && write_address % kAlign != 0) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "DMA Alignment: the %s write address must be a multiple of 8 bytes (SRAM banks write "
        "8-byte units; manual, \"DMA Engine\" > Alignment Constraints), got 0x%x",
        TierName(to), write_address));
  }
  if (from == Tier::kHbm && IsSram(to) && read_address % kAlign != 0) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "DMA Alignment: HBM-to-%s transfers need an 8-byte aligned read address (manual, \"DMA "
        "Engine\" > Alignment Constraints), got 0x%x",
        TierName(to), read_address));
  }
  return absl::OkStatus();
}

// Where a handle's first element starts (a view starts inside its tensor); -1 when it does not
// start on a byte.
int64_t ReadAddress(const DeviceTensor& t) {
  const int64_t bits = StorageBits(t.dtype()) * t.window_offset();
  return bits % 8 == 0 ? t.address() + bits / 8 : -1;
}

MemoryTier MemoryTierOf(Tier tier) {
  return tier == Tier::kDm ? MemoryTier::kDm : tier == Tier::kSpm ? MemoryTier::kSpm : MemoryTier::kHbm;
}

// The 8-byte rule on the packets the two layouts give (the rule `visa seq --dma` checks on a
// given stream, dsl/dma_packet.h), with a hint naming both layouts.
absl::Status CheckDmaPackets(const DmaPacketScan& packets, DmaAlignedSides sides, const DeviceTensor& src,
                             const Placement& dst) {
  auto where = [&](absl::string_view what, int64_t position, int64_t prefix) {
    return absl::StrCat(what, " element position ", position, " of ", UnitName(SpaceOf(dst.tier), dst.UnitOf(prefix)));
  };
  absl::Status status;
  if (packets.write()) {
    const DmaPacketScan::Violation& v = *packets.write();
    status = CheckDmaPacketBits(v.elements * StorageBits(dst.dtype), WriteRuleName(MemoryTierOf(dst.tier)),
                                where("at", v.position, v.dst_unit));
  }
  if (status.ok() && sides.read && packets.read()) {  // (scanned only when the rule holds)
    const DmaPacketScan::Violation& v = *packets.read();
    status = CheckDmaOffsetBits(v.src_position * StorageBits(src.dtype()), kReadRuleName,
                                absl::StrCat("the packet read from source element position ", v.src_position,
                                             " (written at destination element position ", v.position, ")"));
  }
  if (status.ok()) return status;
  return absl::InvalidArgumentError(absl::StrCat(
      status.message(), "; a packet is the run of destination elements `", dst.levels.back().ToString(),
      "` that the source `", src.element().ToString(),
      "` holds contiguously (with the destination's padding after it): keep the innermost axes of "
      "both in the same order, or pad the destination's innermost run to a multiple of 8 bytes"));
}

absl::Status CheckSpmChip(Tier from, Tier to, const TransferReport& report) {
  if (!report.crosses_chips || (from != Tier::kSpm && to != Tier::kSpm)) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat(
      "SPM: ", MoveName(from, to), " moves elements to another chip, but SPM transfers are "
      "restricted to the same chip (manual, \"DMA Engine\" > Performance); keep the Chip mapping "
      "or go through HBM"));
}

}  // namespace

absl::StatusOr<DeviceTensor> Move(Dma& dma, const DeviceTensor& src, const Destination& dst) {
  RETURN_IF_ERROR(CheckContext(dma, src.tier(), dst.tier));
  RETURN_IF_ERROR(src.CheckDeviceAlive());
  if (&dma.device() != &src.device()) {
    return absl::InvalidArgumentError("DMA Context: the context is bound to another device");
  }
  RETURN_IF_ERROR(src.CheckReadable());
  ASSIGN_OR_RETURN(Placement placement,
                   Place(dma.device(), src.dtype(), dst.tier, dst.levels, dst.address));
  const int64_t read = ReadAddress(src);
  RETURN_IF_ERROR(CheckDmaAlignment(src.tier(), read < 0 ? 1 : read, dst.tier, placement.address));
  const DmaAlignedSides sides = AlignedSides(MemoryTierOf(src.tier()), MemoryTierOf(dst.tier));
  DmaPacketScan packets(placement.levels.back().size(), src.element().size(), StorageBits(src.dtype()));
  const bool scan = sides.write && dma.device().dma_packet_rule();
  ASSIGN_OR_RETURN(TransferReport report, PlanTransfer(src, placement, scan ? &packets : nullptr));
  RETURN_IF_ERROR(CheckDmaPackets(packets, sides, src, placement));
  RETURN_IF_ERROR(CheckSpmChip(src.tier(), dst.tier, report));
  // The source is read before the destination owns its ranges (a move may overwrite its source).
  DeviceTensor out = DeviceTensor::Reserve(dma.device(), std::move(placement));
  absl::Status done = DmaAccess::Submit(dma, report, DeviceMoveOp(dma, src, out), DmaTensors{src, out});
  if (!done.ok()) {
    out.Release();
    return done;
  }
  out.ClaimRanges();
  return out;
}

absl::StatusOr<DeviceTensor> Move(Dma& dma, const HostTensor& src, const Destination& dst) {
  RETURN_IF_ERROR(CheckContext(dma, Tier::kHost, dst.tier));
  ASSIGN_OR_RETURN(Placement placement,
                   Place(dma.device(), src.dtype(), dst.tier, dst.levels, dst.address));
  TransferReport report;
  auto check = [](const TransferReport&) { return absl::OkStatus(); };
  ASSIGN_OR_RETURN(DeviceTensor out,
                   DmaAccess::Executes(dma)
                       ? TransferToDevice(src, dma.device(), std::move(placement), check, &report)
                       : absl::StatusOr<DeviceTensor>(DeviceTensor::Claim(dma.device(), std::move(placement))));
  DmaAccess::RecordHostMove(dma, report, DmaOp{dma.kind(), RefOf(src), RefOf(out)});
  return out;
}

absl::StatusOr<HostTensor> MoveToHost(Dma& dma, const DeviceTensor& src, const Mapping& element) {
  RETURN_IF_ERROR(CheckContext(dma, src.tier(), Tier::kHost));
  RETURN_IF_ERROR(src.CheckDeviceAlive());
  if (&dma.device() != &src.device()) {
    return absl::InvalidArgumentError("DMA Context: the context is bound to another device");
  }
  RETURN_IF_ERROR(element.status());
  TransferReport report;
  auto check = [](const TransferReport&) { return absl::OkStatus(); };
  if (DmaAccess::Executes(dma)) RETURN_IF_ERROR(CheckAllWritten(src, absl::StrCat("a ", dma.name(), " to_host")));
  if (DmaAccess::Executes(dma)) RETURN_IF_ERROR(BeforeHostRead(src));  // under mpirun: other ranks' chips gathered
  ASSIGN_OR_RETURN(HostTensor out, DmaAccess::Executes(dma) ? TransferToHost(src, element, check, &report)
                                                            : HostTensor::Zeros(src.dtype(), element));
  DmaAccess::RecordHostMove(dma, report, DmaOp{dma.kind(), RefOf(src), RefOf(out)});
  return out;
}

namespace {

// A view seen as a tensor of its own: its Element at the byte its window starts.
absl::StatusOr<Placement> WindowPlacement(const DeviceTensor& dst) {
  Placement window = dst.placement();
  const int64_t start = ReadAddress(dst);
  if (start < 0) {
    return absl::InvalidArgumentError(absl::StrCat("DMA: the destination ", dst.ToString(),
                                                   " starts inside a byte; a move writes whole bytes"));
  }
  window.address = start;
  window.levels.back() = dst.element();
  return window;
}

}  // namespace

absl::Status MoveInto(Dma& dma, const DeviceTensor& src, const DeviceTensor& dst) {
  RETURN_IF_ERROR(CheckContext(dma, src.tier(), dst.tier()));
  RETURN_IF_ERROR(src.CheckDeviceAlive());
  RETURN_IF_ERROR(dst.CheckDeviceAlive());
  if (&dma.device() != &src.device() || &dma.device() != &dst.device()) {
    return absl::InvalidArgumentError("DMA Context: the context is bound to another device");
  }
  if (src.dtype() != dst.dtype()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "DMA: a move keeps the element type, but ", src.ToString(), " holds ", Name(src.dtype()), " and ",
        dst.ToString(), " holds ", Name(dst.dtype())));
  }
  RETURN_IF_ERROR(src.CheckReadable());
  RETURN_IF_ERROR(dst.CheckReadable());  // the destination still owns its bytes
  ASSIGN_OR_RETURN(Placement window, WindowPlacement(dst));
  const int64_t read = ReadAddress(src);
  RETURN_IF_ERROR(CheckDmaAlignment(src.tier(), read < 0 ? 1 : read, dst.tier(), window.address));
  const DmaAlignedSides sides = AlignedSides(MemoryTierOf(src.tier()), MemoryTierOf(dst.tier()));
  DmaPacketScan packets(window.levels.back().size(), src.element().size(), StorageBits(src.dtype()));
  const bool scan = sides.write && dma.device().dma_packet_rule();
  ASSIGN_OR_RETURN(TransferReport report, PlanTransfer(src, window, scan ? &packets : nullptr));
  RETURN_IF_ERROR(CheckDmaPackets(packets, sides, src, window));
  RETURN_IF_ERROR(CheckSpmChip(src.tier(), dst.tier(), report));
  return DmaAccess::Submit(dma, report, DeviceMoveOp(dma, src, dst), DmaTensors{src, dst});
}

absl::Status MoveInto(Dma& pdma, const HostTensor& src, const HbmTensor& dst) {
  // Through a scratch HBM tensor laid out as the host image, then HBM -> HBM into the view.
  RETURN_IF_ERROR(CheckContext(pdma, Tier::kHost, Tier::kHbm));
  ASSIGN_OR_RETURN(DeviceTensor scratch,
                   Move(pdma, src, Destination{Tier::kHbm, Address::Any(), {dst.chip(), src.mapping()}}));
  absl::Status done = MoveInto(pdma, scratch, dst);
  scratch.Release();
  return done;
}

// ---- Member forms --------------------------------------------------------------------------

absl::StatusOr<HbmTensor> HostTensor::to_hbm(Dma& pdma, Address address, const Mapping& chip,
                                             const Mapping& element) const {
  ASSIGN_OR_RETURN(DeviceTensor t, Move(pdma, *this, Destination{Tier::kHbm, address, {chip, element}}));
  return HbmTensor(std::move(t));
}

absl::StatusOr<HostTensor> HbmTensor::to_host(Dma& pdma, const Mapping& element) const {
  return MoveToHost(pdma, *this, element);
}

absl::StatusOr<HbmTensor> HbmTensor::to_hbm(Dma& dma, Address address, const Mapping& element) const {
  return to_hbm(dma, address, chip(), element);
}

absl::StatusOr<HbmTensor> HbmTensor::to_hbm(Dma& dma, Address address, const Mapping& chip,
                                            const Mapping& element) const {
  ASSIGN_OR_RETURN(DeviceTensor t, Move(dma, *this, Destination{Tier::kHbm, address, {chip, element}}));
  return HbmTensor(std::move(t));
}

absl::StatusOr<DmTensor> HbmTensor::to_dm(Dma& tdma, Address address, const Mapping& cluster,
                                          const Mapping& slice, const Mapping& element) const {
  return to_dm(tdma, address, chip(), cluster, slice, element);
}

absl::StatusOr<DmTensor> HbmTensor::to_dm(Dma& tdma, Address address, const Mapping& chip,
                                          const Mapping& cluster, const Mapping& slice,
                                          const Mapping& element) const {
  ASSIGN_OR_RETURN(DeviceTensor t, Move(tdma, *this, Destination{Tier::kDm, address,
                                                                 {chip, cluster, slice, element}}));
  return DmTensor(std::move(t));
}

absl::StatusOr<DmTensor> HbmTensor::to_spm(Dma& tdma, Address address, const Mapping& cluster,
                                           const Mapping& slice, const Mapping& element) const {
  ASSIGN_OR_RETURN(DeviceTensor t, Move(tdma, *this, Destination{Tier::kSpm, address,
                                                                 {chip(), cluster, slice, element}}));
  return DmTensor(std::move(t));
}

absl::StatusOr<HbmTensor> DmTensor::to_hbm(Dma& tdma, Address address, const Mapping& element) const {
  return to_hbm(tdma, address, chip(), element);
}

absl::StatusOr<HbmTensor> DmTensor::to_hbm(Dma& tdma, Address address, const Mapping& chip,
                                           const Mapping& element) const {
  ASSIGN_OR_RETURN(DeviceTensor t, Move(tdma, *this, Destination{Tier::kHbm, address, {chip, element}}));
  return HbmTensor(std::move(t));
}

absl::StatusOr<DmTensor> DmTensor::to_dm(Dma& tdma, Address address, const Mapping& cluster,
                                         const Mapping& slice, const Mapping& element) const {
  return to_dm(tdma, address, chip(), cluster, slice, element);
}

absl::StatusOr<DmTensor> DmTensor::to_dm(Dma& tdma, Address address, const Mapping& chip,
                                         const Mapping& cluster, const Mapping& slice,
                                         const Mapping& element) const {
  ASSIGN_OR_RETURN(DeviceTensor t, Move(tdma, *this, Destination{Tier::kDm, address,
                                                                 {chip, cluster, slice, element}}));
  return DmTensor(std::move(t));
}

absl::StatusOr<DmTensor> DmTensor::to_spm(Dma& tdma, Address address, const Mapping& cluster,
                                          const Mapping& slice, const Mapping& element) const {
  ASSIGN_OR_RETURN(DeviceTensor t, Move(tdma, *this, Destination{Tier::kSpm, address,
                                                                 {chip(), cluster, slice, element}}));
  return DmTensor(std::move(t));
}

}  // namespace visa
