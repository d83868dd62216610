// Device: the memories of an N-chip TCP system (HBM, DM with SPM, TRF, VRF) and who owns them.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "runtime/address_book.h"
#include "runtime/dense_memory.h"
#include "runtime/hbm_memory.h"
#include "runtime/huge_page_advice.h"
#include "runtime/placement_set.h"
#include "runtime/tier.h"
#include "runtime/written_bytes.h"

namespace visa {

// What a read of a live device byte nothing ever wrote does (uninitialized_reads.h). The device
// itself would return whatever the memory held; here unwritten bytes read as zero, so the
// interpreter reports such reads, like JAX Pallas's interpret mode.
enum class UninitializedReads {
  kOff,    // no tracking at all: no shadow memory, no marking, no check (nothing to pay)
  kWarn,   // each offending read is reported as a warning and the run goes on, reading zero
  kError,  // the op that reads fails with a FailedPrecondition status naming the read
};

struct DeviceOptions {
  UninitializedReads uninitialized_reads = UninitializedReads::kError;
  // Receives each warning of kWarn; unset, warnings are printed to standard error as
  // "warning: ...". Either way they are also kept (Device::warnings()).
  std::function<void(const std::string&)> on_warning;
};

// One slice of one chip: cluster in [0, 2), slice in [0, 256).
struct SliceId {
  int chip = 0;
  int cluster = 0;
  int slice = 0;
  // The slice's unit number: chip * 512 + cluster * 256 + slice.
  int64_t unit() const {
    return int64_t{chip} * kSlicesPerChip + int64_t{cluster} * kSlicesPerCluster + slice;
  }
};

// Per chip: 48 GB of HBM; 2 clusters x 256 slices, each slice with 512 KB of DM (whose top
// 64 KB is the SPM), a TRF of 8 rows x 8 KB and an 8 KB VRF. All memories are sparse: unwritten
// bytes read as zero and only written pages take host memory. Each memory of all chips (HBM:
// hbm_memory.h; DM with SPM, TRF, VRF: dense_memory.h) is one contiguous block that kernels
// address in place through UnitData.
//
// Memory is addressed per unit: a chip for HBM, a slice for DM / SPM / VRF, a slice's row for TRF
// (unit = slice unit * 8 + row). Every access is bounds-checked and returns OutOfRange when it
// leaves the unit.
class Device {
 public:
  // `chips` must be in [1, kMaxChips] (use Create for unchecked input).
  explicit Device(int chips, DeviceOptions options = {});
  static absl::StatusOr<std::unique_ptr<Device>> Create(int chips, DeviceOptions options = {});

  Device(const Device&) = delete;
  Device& operator=(const Device&) = delete;

  int chips() const { return chips_; }
  // A number no other device of this process has (an address can be reused once a device is
  // gone): a kept move knows by it whether it runs again on the device whose memory it wrote
  // (jit/ready_moves.h).
  uint64_t serial() const { return serial_; }

  // Whether DMA moves into DM / SPM must obey the DMA Engine's 8-byte packet rule
  // (dsl/dma_packet.h); on by default. Off only for kernels the manual writes with moves its own
  // rule forbids (the Hello TCP GEMM's transposing `b.to_dm`), which the device would refuse:
  // such a run says so on its output line.
  bool dma_packet_rule() const { return dma_packet_rule_; }
  void set_dma_packet_rule(bool enforce) { dma_packet_rule_ = enforce; }

  // Units of `tier` on the whole device (HBM: chips; DM/SPM/VRF: chips * 512; TRF: chips * 4096).
  int64_t Units(Tier tier) const;

  // Generic byte access: `address` is in the tier's own addresses (SPM address 0 is the first SPM
  // byte), `unit` as above. These are raw accesses: Write does not mark the bytes written for
  // uninitialized-read tracking, because the runtime's writers store whole units of which only
  // the live positions hold data; they mark by tensor position (uninitialized_reads.h), and a
  // raw writer that wants its bytes to count calls MarkWritten.
  absl::Status Read(Tier tier, int64_t unit, int64_t address, absl::Span<uint8_t> out) const;
  absl::Status Write(Tier tier, int64_t unit, int64_t address, absl::Span<const uint8_t> data);

  // Named forms of the same accesses.
  absl::Status ReadHbm(int chip, int64_t address, absl::Span<uint8_t> out) const;
  absl::Status WriteHbm(int chip, int64_t address, absl::Span<const uint8_t> data);
  absl::Status ReadDm(SliceId slice, int64_t address, absl::Span<uint8_t> out) const;
  absl::Status WriteDm(SliceId slice, int64_t address, absl::Span<const uint8_t> data);
  absl::Status ReadSpm(SliceId slice, int64_t address, absl::Span<uint8_t> out) const;
  absl::Status WriteSpm(SliceId slice, int64_t address, absl::Span<const uint8_t> data);
  absl::Status ReadTrf(SliceId slice, int row, int64_t address, absl::Span<uint8_t> out) const;
  absl::Status WriteTrf(SliceId slice, int row, int64_t address, absl::Span<const uint8_t> data);
  absl::Status ReadVrf(SliceId slice, int64_t address, absl::Span<uint8_t> out) const;
  absl::Status WriteVrf(SliceId slice, int64_t address, absl::Span<const uint8_t> data);

  // The first byte of a unit (an HBM chip, DM, SPM, TRF row, VRF) in host memory, for compiled
  // kernels that read and write it in place; nullptr for host and units that do not exist. A
  // unit's bytes are [UnitData, UnitData + TierUnitBytes(tier)). Writes there bypass Write: an
  // HBM writer calls NoteInPlaceWrite first (and is not used for other ranks' chips,
  // kept_chips.h).
  uint8_t* UnitData(Tier tier, int64_t unit) const;
  // Bytes from one unit's data to the next one's (on every chip: one block per memory); 0 for
  // host.
  static int64_t UnitStride(Tier tier);
  // An in-place writer is about to write bytes of [begin, end) of `unit` (the tier's own
  // addresses): HBM counts committed pages only where something was written (hbm_memory.h).
  // Nothing for SRAM.
  void NoteInPlaceWrite(Tier tier, int64_t unit, int64_t begin, int64_t end);

  // A tensor was placed on this device (DeviceTensor::Reserve): the first tensor in each 2 MiB
  // region of a register file decides whether the host backs it with huge pages
  // (huge_page_advice.h). Nothing for HBM and DM.
  void NotePlaced(const Placement& placement);
  const HugePageAdvice& trf_huge_pages() const { return *trf_huge_; }
  const HugePageAdvice& vrf_huge_pages() const { return *vrf_huge_; }

  // Host bytes the written pages of all memories take (shadow bitmaps not included).
  int64_t resident_bytes() const;

  // ---- Uninitialized-read tracking (uninitialized_reads.h) ----------------------------------
  const DeviceOptions& options() const { return options_; }
  UninitializedReads uninitialized_reads() const { return options_.uninitialized_reads; }
  bool tracks_writes() const { return options_.uninitialized_reads != UninitializedReads::kOff; }
  // Marks a range of a unit written; nothing without tracking. The range must be inside the unit
  // (an internal invariant: callers mark ranges of placed tensors).
  void MarkWritten(Tier tier, int64_t unit, int64_t address, int64_t size);
  // The first byte (the tier's own address) of a unit's range that was never marked, or nullopt
  // when all were or the device does not track.
  std::optional<int64_t> FirstUnwritten(Tier tier, int64_t unit, int64_t address, int64_t size) const;
  // Reports a warning (kWarn) to the options' sink and keeps it.
  void Warn(std::string message);
  const std::vector<std::string>& warnings() const { return warnings_; }
  // Host bytes the shadow bitmaps take.
  int64_t shadow_bytes() const;
  // Placements whose every live position was marked written (MarkWritten of a whole tensor):
  // marks are never undone, so a program run again marks its outputs once, not on every run.
  PlacementSet& wholly_marked() { return wholly_marked_; }

  // Ownership of device bytes by tensors (collisions, Address::Any placement).
  AddressBook& book() { return book_; }
  const AddressBook& book() const { return book_; }

 private:
  // Checks tier, unit and the range against the unit's capacity; returns the backing memory and
  // the linear address inside it.
  struct Located {
    bool hbm = false;                // chip `unit` of hbm_, else `address` in `dense`
    int64_t unit = 0;
    DenseMemory* dense = nullptr;    // SRAM
    WrittenBytes* written = nullptr;  // its shadow; null without tracking
    int64_t address = 0;             // inside that memory
  };
  absl::StatusOr<Located> Locate(Tier tier, int64_t unit, int64_t address, int64_t size) const;
  DenseMemory* DenseOf(Tier tier) const;
  WrittenBytes* WrittenOf(Tier tier) const;  // null for HBM and without tracking

  int chips_;
  uint64_t serial_;
  bool dma_packet_rule_ = true;
  // One block per memory for all chips; units are laid out back to back inside it.
  std::unique_ptr<HbmMemory> hbm_;
  std::unique_ptr<DenseMemory> dm_, trf_, vrf_;
  std::unique_ptr<HugePageAdvice> trf_huge_, vrf_huge_;
  // Shadows of the same memories (uninitialized-read tracking), only when the device tracks.
  std::vector<std::unique_ptr<WrittenBytes>> hbm_written_;
  std::unique_ptr<WrittenBytes> dm_written_, trf_written_, vrf_written_;
  PlacementSet wholly_marked_;
  DeviceOptions options_;
  std::vector<std::string> warnings_;
  AddressBook book_;
};

}  // namespace visa
