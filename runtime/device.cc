// Device: one lazily committed block per memory, unit addressing and bounds checks.
#include "runtime/device.h"

#include <sys/mman.h>

#include <atomic>
#include <iostream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "dsl/checked_math.h"
#include "dsl/status_macros.h"
#include "runtime/kept_chips.h"
#include "runtime/tensor.h"

namespace visa {
namespace {

uint64_t NextDeviceSerial() {
  static std::atomic<uint64_t> next{1};
  return next.fetch_add(1, std::memory_order_relaxed);
}

int64_t UnitsPerChip(Tier tier) {
  switch (tier) {
    case Tier::kHbm: return 1;
    case Tier::kTrf: return int64_t{kSlicesPerChip} * kTrfRows;
    default: return kSlicesPerChip;
  }
}

}  // namespace

Device::Device(int chips, DeviceOptions options)
    : chips_(chips), serial_(NextDeviceSerial()), options_(std::move(options)) {
  VISA_CHECK(chips >= 1 && chips <= kMaxChips, "Device needs 1 to kMaxChips chips");
  hbm_ = std::make_unique<HbmMemory>(chips, kHbmBytesPerChip);
  // One block per memory for all chips, so a unit's bytes are at unit * stride in every chip.
  dm_ = std::make_unique<DenseMemory>(chips * UnitsPerChip(Tier::kDm) * kDmBytesPerSlice);
  trf_ = std::make_unique<DenseMemory>(chips * UnitsPerChip(Tier::kTrf) * kTrfRowBytes);
  vrf_ = std::make_unique<DenseMemory>(chips * UnitsPerChip(Tier::kVrf) * kVrfBytesPerSlice);
  // A register-file load often writes a few bytes into every slice's VRF or whole rows of every
  // slice's TRF: most of each 2 MiB it touches, whose 512 small faults cost 5-10x one huge one;
  // but a small TRF load touches one page in 16. The first tensor placed in a region decides
  // (huge_page_advice.h). DM stays in 4 KiB pages: its slices are 512 KiB apart and most tensors
  // use a little of each.
  trf_huge_ = std::make_unique<HugePageAdvice>(*trf_, kTrfRowBytes);
  vrf_huge_ = std::make_unique<HugePageAdvice>(*vrf_, kVrfBytesPerSlice);
  if (!tracks_writes()) return;
  for (int c = 0; c < chips; ++c) hbm_written_.push_back(std::make_unique<WrittenBytes>(kHbmBytesPerChip));
  dm_written_ = std::make_unique<WrittenBytes>(dm_->capacity());
  trf_written_ = std::make_unique<WrittenBytes>(trf_->capacity());
  vrf_written_ = std::make_unique<WrittenBytes>(vrf_->capacity());
}

absl::StatusOr<std::unique_ptr<Device>> Device::Create(int chips, DeviceOptions options) {
  if (chips < 1 || chips > kMaxChips) {
    return absl::InvalidArgumentError(
        absl::StrCat("Device: a device has 1 to ", kMaxChips, " chips, got ", chips));
  }
  return std::make_unique<Device>(chips, std::move(options));
}

int64_t Device::Units(Tier tier) const {
  if (tier == Tier::kHost) return 0;
  return chips_ * UnitsPerChip(tier);
}

absl::StatusOr<Device::Located> Device::Locate(Tier tier, int64_t unit, int64_t address, int64_t size) const {
  if (tier == Tier::kHost) {
    return absl::InvalidArgumentError("Device: host memory is not device memory");
  }
  if (unit < 0 || unit >= Units(tier)) {
    return absl::OutOfRangeError(absl::StrCat("Device: ", TierName(tier), " unit ", unit,
                                              " does not exist on a ", chips_, "-chip device"));
  }
  const int64_t capacity = TierUnitBytes(tier);
  if (!RangeWithin(address, size, capacity)) {
    return absl::OutOfRangeError(absl::StrFormat(
        "Capacity: %s access [0x%x, 0x%x) at %s leaves the %d bytes of the unit",
        TierName(tier), address, SaturatingAdd(address, size), UnitName(SpaceOf(tier), unit),
        capacity));
  }
  switch (tier) {
    case Tier::kHbm:
      return Located{.hbm = true,
                     .unit = unit,
                     .written = tracks_writes() ? hbm_written_[unit].get() : nullptr,
                     .address = address};
    case Tier::kDm:
    case Tier::kSpm:
    case Tier::kTrf:
    case Tier::kVrf:
      return Located{.dense = DenseOf(tier), .written = WrittenOf(tier),
                     .address = unit * UnitStride(tier) + (tier == Tier::kSpm ? kSpmOffsetInDm : 0) + address};
    case Tier::kHost:
      break;
  }
  return absl::InternalError("unreachable tier");
}

absl::Status Device::Read(Tier tier, int64_t unit, int64_t address, absl::Span<uint8_t> out) const {
  ASSIGN_OR_RETURN(Located at, Locate(tier, unit, address, static_cast<int64_t>(out.size())));
  return at.hbm ? hbm_->Read(static_cast<int>(at.unit), at.address, out) : at.dense->Read(at.address, out);
}

absl::Status Device::Write(Tier tier, int64_t unit, int64_t address,
                           absl::Span<const uint8_t> data) {
  ASSIGN_OR_RETURN(Located at, Locate(tier, unit, address, static_cast<int64_t>(data.size())));
  if (!at.hbm) return at.dense->Write(at.address, data);
  if (!KeepsHbmOf(static_cast<int>(unit), chips_)) return absl::OkStatus();  // another rank's chip
  return hbm_->Write(static_cast<int>(unit), at.address, data);
}

int64_t Device::UnitStride(Tier tier) {
  switch (tier) {
    case Tier::kDm:
    case Tier::kSpm: return kDmBytesPerSlice;
    case Tier::kTrf: return kTrfRowBytes;
    case Tier::kVrf: return kVrfBytesPerSlice;
    case Tier::kHbm: return kHbmBytesPerChip;
    default: return 0;
  }
}

void Device::NotePlaced(const Placement& placement) {
  HugePageAdvice* advice = placement.tier == Tier::kTrf   ? trf_huge_.get()
                           : placement.tier == Tier::kVrf ? vrf_huge_.get()
                                                          : nullptr;
  if (advice != nullptr) advice->Place(placement.units, placement.range());
}

void Device::NoteInPlaceWrite(Tier tier, int64_t unit, int64_t begin, int64_t end) {
  if (tier != Tier::kHbm) return;
  absl::StatusOr<Located> at = Locate(tier, unit, begin, end - begin);
  VISA_CHECK(at.ok(), "NoteInPlaceWrite: a range outside its unit");
  hbm_->NoteWritten(static_cast<int>(unit), begin, end);
}

DenseMemory* Device::DenseOf(Tier tier) const {
  switch (tier) {
    case Tier::kDm:
    case Tier::kSpm: return dm_.get();
    case Tier::kTrf: return trf_.get();
    case Tier::kVrf: return vrf_.get();
    default: return nullptr;
  }
}

WrittenBytes* Device::WrittenOf(Tier tier) const {
  switch (tier) {
    case Tier::kDm:
    case Tier::kSpm: return dm_written_.get();
    case Tier::kTrf: return trf_written_.get();
    case Tier::kVrf: return vrf_written_.get();
    default: return nullptr;
  }
}

void Device::MarkWritten(Tier tier, int64_t unit, int64_t address, int64_t size) {
  if (!tracks_writes()) return;
  absl::StatusOr<Located> at = Locate(tier, unit, address, size);
  VISA_CHECK(at.ok(), "MarkWritten: a range outside its unit");
  at->written->Mark(at->address, size);
}

std::optional<int64_t> Device::FirstUnwritten(Tier tier, int64_t unit, int64_t address, int64_t size) const {
  if (!tracks_writes()) return std::nullopt;
  absl::StatusOr<Located> at = Locate(tier, unit, address, size);
  VISA_CHECK(at.ok(), "FirstUnwritten: a range outside its unit");
  std::optional<int64_t> first = at->written->FirstUnwritten(at->address, size);
  if (!first) return std::nullopt;
  return *first - at->address + address;  // back to the tier's own addresses
}

void Device::Warn(std::string message) {
  if (options_.on_warning) {
    options_.on_warning(message);
  } else {
    std::cerr << "warning: " << message << "\n";
  }
  warnings_.push_back(std::move(message));
}

int64_t Device::shadow_bytes() const {
  int64_t total = 0;
  for (const auto& shadow : hbm_written_) total += shadow->resident_bytes();
  for (const WrittenBytes* shadow : {dm_written_.get(), trf_written_.get(), vrf_written_.get()}) {
    if (shadow != nullptr) total += shadow->resident_bytes();
  }
  return total;
}

uint8_t* Device::UnitData(Tier tier, int64_t unit) const {
  absl::StatusOr<Located> at = Locate(tier, unit, 0, 0);
  if (!at.ok()) return nullptr;
  if (at->hbm) return hbm_->data() + unit * kHbmBytesPerChip;
  return at->dense->data() + at->address;
}

namespace {

absl::Status CheckSlice(SliceId s, int chips) {
  if (s.chip < 0 || s.chip >= chips || s.cluster < 0 || s.cluster >= kClustersPerChip ||
      s.slice < 0 || s.slice >= kSlicesPerCluster) {
    return absl::OutOfRangeError(absl::StrCat("Device: no slice (chip ", s.chip, ", cluster ",
                                              s.cluster, ", slice ", s.slice, ") on a ", chips,
                                              "-chip device"));
  }
  return absl::OkStatus();
}

absl::Status CheckRow(int row) {
  if (row < 0 || row >= kTrfRows) {
    return absl::OutOfRangeError(absl::StrCat("Device: TRF row ", row, " is not in [0, 8)"));
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status Device::ReadHbm(int chip, int64_t address, absl::Span<uint8_t> out) const {
  return Read(Tier::kHbm, chip, address, out);
}
absl::Status Device::WriteHbm(int chip, int64_t address, absl::Span<const uint8_t> data) {
  return Write(Tier::kHbm, chip, address, data);
}
absl::Status Device::ReadDm(SliceId slice, int64_t address, absl::Span<uint8_t> out) const {
  RETURN_IF_ERROR(CheckSlice(slice, chips_));
  return Read(Tier::kDm, slice.unit(), address, out);
}
absl::Status Device::WriteDm(SliceId slice, int64_t address, absl::Span<const uint8_t> data) {
  RETURN_IF_ERROR(CheckSlice(slice, chips_));
  return Write(Tier::kDm, slice.unit(), address, data);
}
absl::Status Device::ReadSpm(SliceId slice, int64_t address, absl::Span<uint8_t> out) const {
  RETURN_IF_ERROR(CheckSlice(slice, chips_));
  return Read(Tier::kSpm, slice.unit(), address, out);
}
absl::Status Device::WriteSpm(SliceId slice, int64_t address, absl::Span<const uint8_t> data) {
  RETURN_IF_ERROR(CheckSlice(slice, chips_));
  return Write(Tier::kSpm, slice.unit(), address, data);
}
absl::Status Device::ReadTrf(SliceId slice, int row, int64_t address, absl::Span<uint8_t> out) const {
  RETURN_IF_ERROR(CheckSlice(slice, chips_));
  RETURN_IF_ERROR(CheckRow(row));
  return Read(Tier::kTrf, slice.unit() * kTrfRows + row, address, out);
}
absl::Status Device::WriteTrf(SliceId slice, int row, int64_t address,
                              absl::Span<const uint8_t> data) {
  RETURN_IF_ERROR(CheckSlice(slice, chips_));
  RETURN_IF_ERROR(CheckRow(row));
  return Write(Tier::kTrf, slice.unit() * kTrfRows + row, address, data);
}
absl::Status Device::ReadVrf(SliceId slice, int64_t address, absl::Span<uint8_t> out) const {
  RETURN_IF_ERROR(CheckSlice(slice, chips_));
  return Read(Tier::kVrf, slice.unit(), address, out);
}
absl::Status Device::WriteVrf(SliceId slice, int64_t address, absl::Span<const uint8_t> data) {
  RETURN_IF_ERROR(CheckSlice(slice, chips_));
  return Write(Tier::kVrf, slice.unit(), address, data);
}

int64_t Device::resident_bytes() const {
  int64_t total = hbm_->resident_bytes();
  for (const DenseMemory* memory : {dm_.get(), trf_.get(), vrf_.get()}) total += memory->resident_bytes();
  return total;
}

}  // namespace visa
