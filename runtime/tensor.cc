// Device tensor handles: placement (rules, units, automatic addresses), views, tiles, printing.
#include "runtime/tensor.h"

#include <algorithm>
#include <initializer_list>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "dsl/status_macros.h"
#include "dsl/tile.h"
#include "runtime/device.h"
#include "runtime/relayout.h"
#include "runtime/tensor_rules.h"

namespace visa {
namespace {

// Address::Any() alignment: HBM's 256-byte access unit (manual, "Memory Performance": aligned
// accesses avoid the read penalty and the read-modify-write of partial writes); 8 bytes in SRAM,
// the DM bank width and the DMA write alignment.
int64_t DefaultAnyAlignment(Tier tier) { return tier == Tier::kHbm ? 256 : 8; }

std::string DefaultName(Tier tier, int64_t id) {
  return absl::StrCat(absl::AsciiStrToLower(TierName(tier)), "#", id);
}

}  // namespace

int64_t Placement::unit_bytes() const { return StorageBytes(dtype, levels.back().size()); }

int64_t Placement::UnitOf(int64_t prefix) const {
  if (tier != Tier::kTrf) return prefix;
  const int64_t rows = levels[3].size();
  return prefix / rows * kTrfRows + prefix % rows;
}

absl::StatusOr<Placement> Place(const Device& device, DType dtype, Tier tier,
                                std::vector<Mapping> levels, Address address, TrfAddress trf,
                                int64_t any_alignment) {
  if (tier == Tier::kHost) {
    return absl::InvalidArgumentError("Place: host tensors have no device placement");
  }
  RETURN_IF_ERROR(CheckLevels(tier, dtype, levels, device.chips(), trf));
  Placement p;
  p.dtype = dtype;
  p.tier = tier;
  p.trf = trf;
  p.levels = std::move(levels);
  Mapping prefix = Pair(std::vector<Mapping>(p.levels.begin(), p.levels.end() - 1));
  RETURN_IF_ERROR(prefix.status());
  p.prefix_size = prefix.size();
  ASSIGN_OR_RETURN(p.live_prefixes, LivePositions(prefix));
  for (int64_t prefix_position : p.live_prefixes) p.units.push_back(p.UnitOf(prefix_position));
  const int64_t bytes = p.unit_bytes();
  if (tier == Tier::kTrf) {
    // The mode decides the region; an explicit address has no meaning in the TRF.
    p.address = TrfAddressBase(trf);
    return p;
  }
  if (address.is_any()) {
    int64_t align = std::max(any_alignment > 0 ? any_alignment : DefaultAnyAlignment(tier),
                             ElementAlignment(dtype));
    std::optional<int64_t> found =
        device.book().FindFree(tier, p.units, bytes, align, TierCapacity(tier));
    if (!found) {
      return absl::ResourceExhaustedError(absl::StrFormat(
          "Capacity: Address::Any() found no free %d-aligned range of %d bytes in the %s of every "
          "unit the tensor occupies; release tensors or place it explicitly",
          align, bytes, TierName(tier)));
    }
    p.address = *found;
    return p;
  }
  RETURN_IF_ERROR(CheckAlignment(tier, dtype, address.bytes()));
  RETURN_IF_ERROR(CheckCapacity(tier, address.bytes(), bytes));
  p.address = address.bytes();
  return p;
}

DeviceTensor DeviceTensor::Claim(Device& device, Placement placement) {
  DeviceTensor t = Reserve(device, std::move(placement));
  t.ClaimRanges();
  return t;
}

DeviceTensor DeviceTensor::Reserve(Device& device, Placement placement) {
  DeviceTensor t;
  t.device_ = &device;
  t.id_ = device.book().Add("", placement.tier);
  device.book().SetName(t.id_, DefaultName(placement.tier, t.id_));
  t.lease_ = device.book().Lease(t.id_);
  t.element_ = placement.levels.back();
  t.placement_ = std::make_shared<const Placement>(std::move(placement));
  device.NotePlaced(*t.placement_);
  return t;
}

DeviceTensor DeviceTensor::ReserveLike(Device& device, const DeviceTensor& like) {
  DeviceTensor t;
  t.device_ = &device;
  t.id_ = device.book().Add("", like.placement_->tier);
  device.book().SetName(t.id_, DefaultName(like.placement_->tier, t.id_));
  t.lease_ = device.book().Lease(t.id_);
  t.element_ = like.placement_->levels.back();
  t.placement_ = like.placement_;
  device.NotePlaced(*t.placement_);
  return t;
}

void DeviceTensor::ClaimRanges() const { device_->book().Claim(id_, placement_->units, placement_->range()); }

absl::Status DeviceTensor::CheckDeviceAlive() const {
  // The lease's book is a member of the device: alive exactly while the device is.
  if (AddressBook::BookOf(lease_) != nullptr) return absl::OkStatus();
  // The device is gone: nothing of it (its book, its names) may be touched.
  return absl::FailedPreconditionError(absl::StrCat(
      "Tensor Lifetime: tensor #", id_, " (", std::string(TierName(placement_->tier)),
      ") is used after the Device it was placed on was destroyed; a handle is valid only while its "
      "Device exists"));
}

std::string DeviceTensor::name() const {
  if (AddressBook::BookOf(lease_) == nullptr) return absl::StrCat("#", id_, " of a destroyed Device");
  return device_->book().Name(id_);
}
void DeviceTensor::SetName(std::string name) const {
  if (AddressBook::BookOf(lease_) == nullptr) return;  // a destroyed device's tensor has no record
  device_->book().SetName(id_, std::move(name));
}

std::vector<Mapping> DeviceTensor::levels() const {
  std::vector<Mapping> levels = placement_->levels;
  levels.back() = element_;
  return levels;
}

Mapping DeviceTensor::full_mapping() const { return Pair(levels()); }

absl::Status DeviceTensor::CheckReadable() const {
  RETURN_IF_ERROR(CheckDeviceAlive());
  // The bytes of the window: from the first to the last element position the view can reach.
  const int64_t base = base_element().size();
  ASSIGN_OR_RETURN(int64_t extent, LiveExtent(element_));
  const int64_t first = std::min(window_offset_, base);
  const int64_t last = std::max(first, std::min(window_offset_ + extent, base));
  const int64_t begin = placement_->address + first * StorageBits(dtype()) / 8;
  const int64_t end = placement_->address + StorageBytes(dtype(), last);
  return device_->book().CheckReadable(id_, placement_->units, ByteRange{begin, end});
}

void DeviceTensor::Release() const {
  if (AddressBook::BookOf(lease_) == nullptr) return;  // the device took its ranges with it
  device_->book().Release(id_);
}

std::string DeviceTensor::ToString() const {
  std::vector<std::string> parts;
  for (const Mapping& m : levels()) parts.push_back(absl::StrCat("[", m.ToString(), "]"));
  std::string where = tier() == Tier::kTrf
                          ? absl::StrCat("TRF ", TrfAddressName(placement_->trf))
                          : absl::StrFormat("%s 0x%x", TierName(tier()), address());
  std::string text = absl::StrCat(TensorTypeName(tier() == Tier::kSpm ? Tier::kDm : tier()), "<",
                                  std::string(Name(dtype())), ", ", absl::StrJoin(parts, ", "),
                                  "> `", name(), "` at ", where);
  if (view_) absl::StrAppend(&text, " view +", window_offset_);
  return text;
}

absl::StatusOr<DeviceTensor> DeviceTensor::Relabel(std::vector<Mapping> levels, int64_t offset_bytes) const {
  if (levels.size() != placement_->levels.size()) {
    return absl::InvalidArgumentError(absl::StrCat("Relabel: ", ToString(), " has ", placement_->levels.size(),
                                                   " levels, the relabeling ", levels.size()));
  }
  ASSIGN_OR_RETURN(Placement p, Place(*device_, dtype(), tier(), std::move(levels),
                                      Address::At(placement_->address + offset_bytes), placement_->trf));
  if (offset_bytes < 0 || offset_bytes + p.unit_bytes() > placement_->unit_bytes()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "Relabel: bytes [", offset_bytes, ", ", offset_bytes + p.unit_bytes(), ") of ", ToString(),
        " lie outside its ", placement_->unit_bytes(), " bytes per unit"));
  }
  for (int64_t unit : p.units) {
    if (std::find(placement_->units.begin(), placement_->units.end(), unit) == placement_->units.end()) {
      return absl::InvalidArgumentError(absl::StrCat("Relabel: the relabeling places bytes in ",
                                                     UnitName(SpaceOf(tier()), unit), ", where ",
                                                     ToString(), " has none"));
    }
  }
  DeviceTensor t = *this;
  if (!t.owner_placement_) t.owner_placement_ = placement_;
  t.element_ = p.levels.back();
  t.placement_ = std::make_shared<const Placement>(std::move(p));
  t.window_offset_ = 0;
  t.view_ = true;
  t.relabeled_ = true;
  return t;
}

DeviceTensor DeviceTensor::RebindTo(const DeviceTensor& tensor) const {
  DeviceTensor t = *this;
  t.device_ = tensor.device_;
  t.id_ = tensor.id_;
  t.lease_ = tensor.lease_;
  t.owner_placement_ = tensor.placement_;
  return t;
}

DeviceTensor DeviceTensor::Window(Mapping element, int64_t offset) const {
  DeviceTensor t = *this;
  t.element_ = std::move(element);
  t.window_offset_ += offset;
  t.view_ = true;
  return t;
}

absl::StatusOr<DeviceTensor> DeviceTensor::TileImpl(const Mapping& dim, int64_t len, int64_t start,
                                                    const Mapping* expected) const {
  absl::StatusOr<TileView> tile = expected ? Tile(element_, dim, len, *expected, start)
                                           : Tile(element_, dim, len, start);
  RETURN_IF_ERROR(tile.status());
  return Window(tile->mapping, tile->offset);
}

// ---- Typed handles ---------------------------------------------------------------------------

HbmTensor::HbmTensor(DeviceTensor tensor) : DeviceTensor(std::move(tensor)) {
  VISA_CHECK(tier() == Tier::kHbm, "HbmTensor of a non-HBM tensor");
}

absl::StatusOr<HbmTensor> HbmTensor::Create(Device& device, DType dtype, const Mapping& chip,
                                            const Mapping& element, Address address) {
  ASSIGN_OR_RETURN(Placement p, Place(device, dtype, Tier::kHbm, {chip, element}, address));
  return HbmTensor(Claim(device, std::move(p)));
}

HbmTensor HbmTensor::view() const { return HbmTensor(Window(element(), 0)); }

absl::StatusOr<HbmTensor> HbmTensor::tile(const Mapping& dim, int64_t len, int64_t start) const {
  ASSIGN_OR_RETURN(DeviceTensor t, TileImpl(dim, len, start, nullptr));
  return HbmTensor(std::move(t));
}

absl::StatusOr<HbmTensor> HbmTensor::tile(const Mapping& dim, int64_t len, const Mapping& expected,
                                          int64_t start) const {
  ASSIGN_OR_RETURN(DeviceTensor t, TileImpl(dim, len, start, &expected));
  return HbmTensor(std::move(t));
}

namespace {

// "Tensor Tier" unless `tensor` lives in one of `tiers`.
absl::Status CheckTier(const DeviceTensor& tensor, std::initializer_list<Tier> tiers, const char* type) {
  RETURN_IF_ERROR(tensor.CheckDeviceAlive());
  for (Tier tier : tiers) {
    if (tensor.tier() == tier) return absl::OkStatus();
  }
  return absl::InvalidArgumentError(absl::StrCat("Tensor Tier: ", tensor.ToString(), " lives in ",
                                                 std::string(TierName(tensor.tier())), "; a ", type, " cannot hold it"));
}

}  // namespace

absl::StatusOr<HbmTensor> HbmTensor::From(DeviceTensor tensor) {
  RETURN_IF_ERROR(CheckTier(tensor, {Tier::kHbm}, "HbmTensor"));
  return HbmTensor(std::move(tensor));
}

absl::StatusOr<DmTensor> DmTensor::From(DeviceTensor tensor) {
  RETURN_IF_ERROR(CheckTier(tensor, {Tier::kDm, Tier::kSpm}, "DmTensor"));
  return DmTensor(std::move(tensor));
}

absl::StatusOr<TrfTensor> TrfTensor::From(DeviceTensor tensor) {
  RETURN_IF_ERROR(CheckTier(tensor, {Tier::kTrf}, "TrfTensor"));
  return TrfTensor(std::move(tensor));
}

absl::StatusOr<VrfTensor> VrfTensor::From(DeviceTensor tensor) {
  RETURN_IF_ERROR(CheckTier(tensor, {Tier::kVrf}, "VrfTensor"));
  return VrfTensor(std::move(tensor));
}

DmTensor::DmTensor(DeviceTensor tensor) : DeviceTensor(std::move(tensor)) {
  VISA_CHECK(tier() == Tier::kDm || tier() == Tier::kSpm, "DmTensor of a non-DM tensor");
}

absl::StatusOr<DmTensor> DmTensor::Create(Device& device, DType dtype, const Mapping& chip,
                                          const Mapping& cluster, const Mapping& slice,
                                          const Mapping& element, Address address, Tier tier) {
  if (tier != Tier::kDm && tier != Tier::kSpm) {
    return absl::InvalidArgumentError("DmTensor lives in DM or SPM");
  }
  ASSIGN_OR_RETURN(Placement p, Place(device, dtype, tier, {chip, cluster, slice, element}, address));
  return DmTensor(Claim(device, std::move(p)));
}

DmTensor DmTensor::view() const { return DmTensor(Window(element(), 0)); }

absl::StatusOr<DmTensor> DmTensor::tile(const Mapping& dim, int64_t len, int64_t start) const {
  ASSIGN_OR_RETURN(DeviceTensor t, TileImpl(dim, len, start, nullptr));
  return DmTensor(std::move(t));
}

absl::StatusOr<DmTensor> DmTensor::tile(const Mapping& dim, int64_t len, const Mapping& expected,
                                        int64_t start) const {
  ASSIGN_OR_RETURN(DeviceTensor t, TileImpl(dim, len, start, &expected));
  return DmTensor(std::move(t));
}

TrfTensor::TrfTensor(DeviceTensor tensor) : DeviceTensor(std::move(tensor)) {
  VISA_CHECK(tier() == Tier::kTrf, "TrfTensor of a non-TRF tensor");
}

absl::StatusOr<TrfTensor> TrfTensor::Create(Device& device, DType dtype, const Mapping& chip,
                                            const Mapping& cluster, const Mapping& slice,
                                            const Mapping& row, const Mapping& element,
                                            TrfAddress address) {
  ASSIGN_OR_RETURN(Placement p, Place(device, dtype, Tier::kTrf,
                                      {chip, cluster, slice, row, element}, Address(0), address));
  return TrfTensor(Claim(device, std::move(p)));
}

VrfTensor::VrfTensor(DeviceTensor tensor) : DeviceTensor(std::move(tensor)) {
  VISA_CHECK(tier() == Tier::kVrf, "VrfTensor of a non-VRF tensor");
}

absl::StatusOr<VrfTensor> VrfTensor::Create(Device& device, DType dtype, const Mapping& chip,
                                            const Mapping& cluster, const Mapping& slice,
                                            const Mapping& element, Address address) {
  ASSIGN_OR_RETURN(Placement p,
                   Place(device, dtype, Tier::kVrf, {chip, cluster, slice, element}, address));
  return VrfTensor(Claim(device, std::move(p)));
}

}  // namespace visa
