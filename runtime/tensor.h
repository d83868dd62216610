// Device tensor handles: HbmTensor, DmTensor (DM or SPM), TrfTensor, VrfTensor and their views.
//
// A handle is a runtime value (no templates encode mappings): dtype, one mapping per hardware
// level (outermost first, as the manual's type parameters), the tier and the address inside each
// unit. Position (chip, ..., element) of the levels' pair holds the union of the levels' indices
// (manual, "Memory and Stream", Formal Definition). Handles are cheap to copy; copies denote the
// same tensor. A view (`view()`, `tile()`) is a handle of the same type whose Element is the
// window's mapping (tile-local coordinates, the base's footprint) starting `window_offset()`
// element positions into the tensor; moves accept views as sources.
//
// The moves (`to_dm`, `to_hbm`, ...) are declared here and defined in dma.cc.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "dsl/mapping.h"
#include "runtime/address.h"
#include "runtime/address_book.h"
#include "runtime/dtype.h"
#include "runtime/host_tensor.h"
#include "runtime/layouts.h"
#include "runtime/tier.h"

namespace visa {

class Context;
class Device;
class Dma;
class DmTensor;
class HbmTensor;
class TrfTensor;
class VrfTensor;

// Where a tensor is placed, validated against the manual's rules (tensor_rules.h).
struct Placement {
  DType dtype = DType::kI8;
  Tier tier = Tier::kHbm;
  std::vector<Mapping> levels;  // outermost first; the last is the Element
  int64_t address = 0;          // the Element's start in every unit (TRF: inside the row)
  TrfAddress trf = TrfAddress::kFull;
  int64_t prefix_size = 1;      // positions of the spatial levels (all but Element)
  std::vector<int64_t> live_prefixes;  // spatial positions that hold data, increasing
  std::vector<int64_t> units;          // the device unit of each live prefix position

  int64_t unit_bytes() const;          // StorageBytes(dtype, Element::SIZE)
  ByteRange range() const { return {address, address + unit_bytes()}; }
  // The device unit of a spatial position (TRF rows are numbered 8 per slice).
  int64_t UnitOf(int64_t prefix) const;
  // The chip of a spatial position.
  int64_t ChipOf(int64_t prefix, int chips) const { return prefix / (prefix_size / chips); }
};

// Validates levels and address and computes the live units; Address::Any() picks the lowest free
// range aligned to `any_alignment` (0: the tier's default) in every live unit.
absl::StatusOr<Placement> Place(const Device& device, DType dtype, Tier tier,
                                std::vector<Mapping> levels, Address address,
                                TrfAddress trf = TrfAddress::kFull, int64_t any_alignment = 0);

// What every device tensor handle shares.
class DeviceTensor {
 public:
  Device& device() const { return *device_; }
  int64_t id() const { return id_; }
  std::string name() const;
  void SetName(std::string name) const;  // names appear in collision messages

  DType dtype() const { return placement_->dtype; }
  Tier tier() const { return placement_->tier; }
  const Placement& placement() const { return *placement_; }
  // The placement object itself, shared by every handle placed alike (PlacementSet keys by it).
  const std::shared_ptr<const Placement>& shared_placement() const { return placement_; }
  int64_t address() const { return placement_->address; }
  // The placement of the tensor this handle is part of (a relabeling's own placement differs).
  const Placement& owner_placement() const { return owner_placement_ ? *owner_placement_ : *placement_; }

  // Level mappings as this handle sees them (a view's Element is its window mapping).
  std::vector<Mapping> levels() const;
  const Mapping& element() const { return element_; }
  const Mapping& base_element() const { return placement_->levels.back(); }
  // Pair of levels(): the mapping of the handle's positions.
  Mapping full_mapping() const;

  bool is_view() const { return view_; }
  int64_t window_offset() const { return window_offset_; }

  // Registers a tensor at `placement`: it becomes the owner of its byte range in every live unit
  // (clobbering any tensor there) without writing the bytes (they keep what memory holds: zero if
  // never written). The manual's `from_addr` and the destination of every move.
  static DeviceTensor Claim(Device& device, Placement placement);
  // The same in two steps, for an op that must read its inputs before its output's ranges change
  // owner: Reserve gives the handle (and its id) without claiming, ClaimRanges claims.
  static DeviceTensor Reserve(Device& device, Placement placement);
  // The same for a new tensor placed exactly like `like` (a traced handle): the placement is
  // shared, not copied, so a relaunch builds none.
  static DeviceTensor ReserveLike(Device& device, const DeviceTensor& like);
  void ClaimRanges() const;

  // OK unless the bytes this handle covers were overwritten by another tensor or released, or the
  // tensor's Device was destroyed ("Tensor Lifetime": the handle outlives the device's record).
  absl::Status CheckReadable() const;
  // OK while the Device this handle was placed on exists; "Tensor Lifetime" error after.
  absl::Status CheckDeviceAlive() const;
  // Frees the tensor's ranges for Address::Any(); reading it afterwards is an error.
  void Release() const;

  // This handle with `like`'s placement object in place of its own placement of equal value (Launch
  // binds a program's inputs so: what a backend derived from the traced placement holds for them).
  DeviceTensor SharingPlacementOf(const DeviceTensor& like) const {
    DeviceTensor t = *this;
    t.placement_ = like.placement_;
    return t;
  }

  // This tensor seen through the same window as `like` (a view of a tensor with this placement,
  // or a relabeling of it, which keeps its own placement).
  DeviceTensor WindowLike(const DeviceTensor& like) const {
    if (like.relabeled_) return like.RebindTo(*this);
    return like.is_view() ? Window(like.element(), like.window_offset()) : *this;
  }

  // The bytes of this tensor from `offset_bytes` on, in the units `levels` place, seen under those
  // level mappings (the notes' unsafe `reshape`, narrowed to what stays inside the tensor): the
  // same tensor (its id), so a read checks this tensor's ownership and a write through it keeps
  // this tensor the owner. What makes a chip's part a tensor of its own (runtime/chip_view.h).
  // Every unit `levels` place must be one of this tensor's and the new Element's bytes must lie
  // inside this one's; the result is a view (only its live positions are written).
  absl::StatusOr<DeviceTensor> Relabel(std::vector<Mapping> levels, int64_t offset_bytes) const;

  // "DmTensor<bf16, [A], [1 # 2], [B / 2], [B % 2]> `dm#2` at DM 0x10000" (+ " view +12").
  std::string ToString() const;

 protected:
  DeviceTensor() = default;
  // A view of this handle's Element: `element` with `offset` more positions of window.
  DeviceTensor Window(Mapping element, int64_t offset) const;
  // `*this` (a relabeling) as a relabeling of `tensor`, which has the placement it was made from.
  DeviceTensor RebindTo(const DeviceTensor& tensor) const;
  absl::StatusOr<DeviceTensor> TileImpl(const Mapping& dim, int64_t len, int64_t start,
                                        const Mapping* expected) const;

 private:
  Device* device_ = nullptr;
  int64_t id_ = 0;
  std::shared_ptr<const Placement> placement_;
  Mapping element_;
  int64_t window_offset_ = 0;
  bool view_ = false;
  bool relabeled_ = false;  // made by Relabel: its placement is its own, not the tensor's
  // Shared by every handle of the tensor: the last one gone forgets it (AddressBook::Lease).
  std::shared_ptr<const void> lease_;
  std::shared_ptr<const Placement> owner_placement_;  // a relabeling's tensor's placement
};

class HbmTensor : public DeviceTensor {
 public:
  explicit HbmTensor(DeviceTensor tensor);  // the tier must be HBM
  // A handle of another tier is not an HBM tensor: converting one does not compile, and From
  // (for a tensor whose tier is known only at run time) fails with "Tensor Tier".
  HbmTensor(const DmTensor&) = delete;
  HbmTensor(const TrfTensor&) = delete;
  HbmTensor(const VrfTensor&) = delete;
  static absl::StatusOr<HbmTensor> From(DeviceTensor tensor);

  // A tensor at an address (the manual's `from_addr`); see DeviceTensor::Claim.
  static absl::StatusOr<HbmTensor> Create(Device& device, DType dtype, const Mapping& chip,
                                          const Mapping& element, Address address);
  // The same with named levels (layouts.h): `{.chip = ..., .element = ...}`.
  static absl::StatusOr<HbmTensor> Create(Device& device, DType dtype, const HbmLayout& layout, Address address);

  const Mapping& chip() const { return placement().levels[0]; }

  HbmTensor view() const;
  // `len` values of the tile dimension `dim` from `start` (dsl/tile.h); `expected` is the manual's
  // E2 and must be equivalent to the derived window mapping.
  absl::StatusOr<HbmTensor> tile(const Mapping& dim, int64_t len, int64_t start) const;
  absl::StatusOr<HbmTensor> tile(const Mapping& dim, int64_t len, const Mapping& expected,
                                 int64_t start) const;

  // Moves (dma.cc). Each keeps the mathematical tensor and changes its layout.
  absl::StatusOr<HostTensor> to_host(Dma& pdma, const Mapping& element) const;
  absl::StatusOr<HbmTensor> to_hbm(Dma& dma, Address address, const Mapping& element) const;
  absl::StatusOr<HbmTensor> to_hbm(Dma& dma, Address address, const Mapping& chip,
                                   const Mapping& element) const;
  absl::StatusOr<DmTensor> to_dm(Dma& tdma, Address address, const Mapping& cluster,
                                 const Mapping& slice, const Mapping& element) const;
  absl::StatusOr<DmTensor> to_dm(Dma& tdma, Address address, const Mapping& chip,
                                 const Mapping& cluster, const Mapping& slice,
                                 const Mapping& element) const;
  absl::StatusOr<DmTensor> to_spm(Dma& tdma, Address address, const Mapping& cluster,
                                  const Mapping& slice, const Mapping& element) const;
  absl::StatusOr<DmTensor> to_spm(Dma& tdma, Address address, const Mapping& chip, const Mapping& cluster,
                                  const Mapping& slice, const Mapping& element) const;
  // The moves with named levels (layouts.h); a Chip left out keeps this tensor's.
  absl::StatusOr<HbmTensor> to_hbm(Dma& dma, Address address, const HbmLayout& layout) const;
  absl::StatusOr<DmTensor> to_dm(Dma& tdma, Address address, const DmLayout& layout) const;
  absl::StatusOr<DmTensor> to_spm(Dma& tdma, Address address, const DmLayout& layout) const;
};

// A DM tensor, or (tier() == Tier::kSpm) an SPM tensor: same levels, SPM addresses.
class DmTensor : public DeviceTensor {
 public:
  explicit DmTensor(DeviceTensor tensor);  // the tier must be DM or SPM
  DmTensor(const HbmTensor&) = delete;  // as HbmTensor's: use From for a run-time tier
  DmTensor(const TrfTensor&) = delete;
  DmTensor(const VrfTensor&) = delete;
  static absl::StatusOr<DmTensor> From(DeviceTensor tensor);

  static absl::StatusOr<DmTensor> Create(Device& device, DType dtype, const Mapping& chip,
                                         const Mapping& cluster, const Mapping& slice,
                                         const Mapping& element, Address address,
                                         Tier tier = Tier::kDm);
  // The same with named levels (layouts.h).
  static absl::StatusOr<DmTensor> Create(Device& device, DType dtype, const DmLayout& layout, Address address,
                                         Tier tier = Tier::kDm);

  const Mapping& chip() const { return placement().levels[0]; }
  const Mapping& cluster() const { return placement().levels[1]; }
  const Mapping& slice() const { return placement().levels[2]; }

  DmTensor view() const;
  absl::StatusOr<DmTensor> tile(const Mapping& dim, int64_t len, int64_t start) const;
  absl::StatusOr<DmTensor> tile(const Mapping& dim, int64_t len, const Mapping& expected,
                                int64_t start) const;

  // Moves (dma.cc).
  absl::StatusOr<HbmTensor> to_hbm(Dma& tdma, Address address, const Mapping& element) const;
  absl::StatusOr<HbmTensor> to_hbm(Dma& tdma, Address address, const Mapping& chip,
                                   const Mapping& element) const;
  absl::StatusOr<DmTensor> to_dm(Dma& tdma, Address address, const Mapping& cluster,
                                 const Mapping& slice, const Mapping& element) const;
  absl::StatusOr<DmTensor> to_dm(Dma& tdma, Address address, const Mapping& chip,
                                 const Mapping& cluster, const Mapping& slice,
                                 const Mapping& element) const;
  absl::StatusOr<DmTensor> to_spm(Dma& tdma, Address address, const Mapping& cluster,
                                  const Mapping& slice, const Mapping& element) const;
  absl::StatusOr<DmTensor> to_spm(Dma& tdma, Address address, const Mapping& chip, const Mapping& cluster,
                                  const Mapping& slice, const Mapping& element) const;
  // The moves with named levels (layouts.h); a Chip left out keeps this tensor's.
  absl::StatusOr<HbmTensor> to_hbm(Dma& tdma, Address address, const HbmLayout& layout) const;
  absl::StatusOr<DmTensor> to_dm(Dma& tdma, Address address, const DmLayout& layout) const;
  absl::StatusOr<DmTensor> to_spm(Dma& tdma, Address address, const DmLayout& layout) const;

  // Reads the tensor back to the host laid out by `element`, as the manual's programs end with
  // `.to_host(&mut ctx.pdma)`: the host reaches DM only through HBM, so this moves the tensor to
  // a scratch HBM tensor the device picks (ctx.tdma), from there to the host (ctx.pdma), and
  // frees the scratch. Both moves are recorded in the context's Program.
  absl::StatusOr<HostTensor> to_host(Context& ctx, const Mapping& element) const;
};

// Written by the Tensor Unit (`to_trf`), read by the TRF Sequencer; not reachable by DMA.
class TrfTensor : public DeviceTensor {
 public:
  explicit TrfTensor(DeviceTensor tensor);  // the tier must be TRF
  TrfTensor(const HbmTensor&) = delete;  // as HbmTensor's: use From for a run-time tier
  TrfTensor(const DmTensor&) = delete;
  TrfTensor(const VrfTensor&) = delete;
  static absl::StatusOr<TrfTensor> From(DeviceTensor tensor);

  static absl::StatusOr<TrfTensor> Create(Device& device, DType dtype, const Mapping& chip,
                                          const Mapping& cluster, const Mapping& slice,
                                          const Mapping& row, const Mapping& element,
                                          TrfAddress address);
  static absl::StatusOr<TrfTensor> Create(Device& device, DType dtype, const TrfLayout& layout, TrfAddress address);

  const Mapping& chip() const { return placement().levels[0]; }
  const Mapping& cluster() const { return placement().levels[1]; }
  const Mapping& slice() const { return placement().levels[2]; }
  const Mapping& row() const { return placement().levels[3]; }
  TrfAddress trf_address() const { return placement().trf; }
};

// Written by the Tensor Unit (`to_vrf`), read by the Vector Engine; not reachable by DMA.
class VrfTensor : public DeviceTensor {
 public:
  explicit VrfTensor(DeviceTensor tensor);  // the tier must be VRF
  VrfTensor(const HbmTensor&) = delete;  // as HbmTensor's: use From for a run-time tier
  VrfTensor(const DmTensor&) = delete;
  VrfTensor(const TrfTensor&) = delete;
  static absl::StatusOr<VrfTensor> From(DeviceTensor tensor);

  static absl::StatusOr<VrfTensor> Create(Device& device, DType dtype, const Mapping& chip,
                                          const Mapping& cluster, const Mapping& slice,
                                          const Mapping& element, Address address);
  static absl::StatusOr<VrfTensor> Create(Device& device, DType dtype, const VrfLayout& layout, Address address);

  const Mapping& chip() const { return placement().levels[0]; }
  const Mapping& cluster() const { return placement().levels[1]; }
  const Mapping& slice() const { return placement().levels[2]; }
};

}  // namespace visa
