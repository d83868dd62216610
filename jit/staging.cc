// Staging: slot-per-unit reads and writes, whole bytes directly, 4-bit windows nibble by nibble.
#include "jit/staging.h"

#include <algorithm>
#include <vector>

#include "absl/strings/str_cat.h"
#include "dsl/status_macros.h"

namespace visa::jit {
namespace {

uint8_t GetNibble(const uint8_t* bytes, int64_t i) { return (bytes[i >> 1] >> ((i & 1) * 4)) & 0xf; }
void SetNibble(uint8_t* bytes, int64_t i, uint8_t v) {
  const int shift = (i & 1) * 4;
  bytes[i >> 1] = static_cast<uint8_t>((bytes[i >> 1] & ~(0xf << shift)) | ((v & 0xf) << shift));
}

}  // namespace

absl::Status Staged::CopySlot(int64_t k, int64_t first_position, bool to_device) const {
  const Placement& p = *placement_;
  const int64_t base = p.levels.back().size();
  const int64_t start = std::min(offset_, base);
  const int64_t n = std::max<int64_t>(0, std::min(offset_ + window_, base) - start);
  if (n == 0) return absl::OkStatus();
  const int64_t slot = first_position + p.live_prefixes[k] * window_;
  uint8_t* data = data_.get();
  if (bits_ >= 8 || (start % 2 == 0 && slot % 2 == 0 && (n % 2 == 0 || start + n == base))) {
    const int64_t address = p.address + start * bits_ / 8;
    absl::Span<uint8_t> bytes(data + slot * bits_ / 8, static_cast<size_t>(StorageBytes(p.dtype, n)));
    return to_device ? device_->Write(p.tier, p.units[k], address, bytes)
                     : device_->Read(p.tier, p.units[k], address, bytes);
  }
  // 4-bit elements off a byte boundary: through a copy of the unit's bytes.
  std::vector<uint8_t> unit(static_cast<size_t>(StorageBytes(p.dtype, base)));
  RETURN_IF_ERROR(device_->Read(p.tier, p.units[k], p.address, absl::MakeSpan(unit)));
  for (int64_t i = 0; i < n; ++i) {
    if (to_device) {
      SetNibble(unit.data(), start + i, GetNibble(data, slot + i));
    } else {
      SetNibble(data, slot + i, GetNibble(unit.data(), start + i));
    }
  }
  if (!to_device) return absl::OkStatus();
  return device_->Write(p.tier, p.units[k], p.address, absl::MakeSpan(unit));
}

absl::Status Staged::ReadUnits(int64_t first_position) {
  for (size_t k = 0; k < placement_->live_prefixes.size(); ++k) {
    RETURN_IF_ERROR(CopySlot(static_cast<int64_t>(k), first_position, /*to_device=*/false));
  }
  return absl::OkStatus();
}

absl::StatusOr<Staged> Staged::Read(const DeviceTensor& tensor, int64_t tail) {
  RETURN_IF_ERROR(tensor.CheckReadable());
  Staged s;
  s.device_ = &tensor.device();
  s.placement_ = &tensor.placement();
  s.bits_ = StorageBits(tensor.dtype());
  s.window_ = tensor.element().size();
  s.offset_ = tensor.window_offset();
  s.prefix_size_ = tensor.placement().prefix_size;
  s.positions_ = s.prefix_size_ * s.window_;
  // One spare byte: a 4-bit slot may end inside a byte.
  const int64_t bytes = StorageBytes(tensor.dtype(), s.positions_);
  const int64_t tail_bytes = StorageBytes(tensor.dtype(), tail);
  s.data_.reset(new uint8_t[bytes + tail_bytes + 1]);
  std::fill(s.data_.get() + bytes, s.data_.get() + bytes + tail_bytes + 1, 0);
  RETURN_IF_ERROR(s.ReadUnits(0));
  return s;
}

absl::StatusOr<Staged> Staged::Read(Device& device, const Placement& placement, bool read) {
  Staged s;
  s.device_ = &device;
  s.owned_ = std::make_shared<const Placement>(placement);
  s.placement_ = s.owned_.get();
  s.bits_ = StorageBits(placement.dtype);
  s.window_ = placement.levels.back().size();
  s.prefix_size_ = placement.prefix_size;
  s.positions_ = s.prefix_size_ * s.window_;
  s.data_.reset(new uint8_t[StorageBytes(placement.dtype, s.positions_) + 1]);
  if (read) RETURN_IF_ERROR(s.ReadUnits(0));
  return s;
}

absl::StatusOr<Staged> Staged::ReadPair(const DeviceTensor& first, const DeviceTensor& second) {
  RETURN_IF_ERROR(first.CheckReadable());
  RETURN_IF_ERROR(second.CheckReadable());
  Staged s;
  s.device_ = &first.device();
  s.bits_ = StorageBits(first.dtype());
  s.window_ = first.element().size();
  s.offset_ = first.window_offset();
  s.prefix_size_ = first.placement().prefix_size;
  const int64_t per = s.prefix_size_ * s.window_;
  if (s.bits_ == 4 && per % 2 != 0) {
    return absl::UnimplementedError("JIT: an interleaved fetch of 4-bit tensors with an odd element count");
  }
  s.positions_ = 2 * per;
  s.data_.reset(new uint8_t[StorageBytes(first.dtype(), s.positions_) + 1]);
  s.placement_ = &first.placement();
  RETURN_IF_ERROR(s.ReadUnits(0));
  s.placement_ = &second.placement();
  s.offset_ = second.window_offset();
  RETURN_IF_ERROR(s.ReadUnits(per));
  s.placement_ = nullptr;  // a pair is only read
  return s;
}

int64_t Staged::live_bytes() const {
  if (placement_ == nullptr) return 0;
  return static_cast<int64_t>(placement_->live_prefixes.size()) * StorageBytes(placement_->dtype, window_);
}

absl::Status Staged::Write(const SliceBitmap* slices) const {
  VISA_CHECK(placement_ != nullptr, "an interleaved pair is never written back");
  for (size_t k = 0; k < placement_->live_prefixes.size(); ++k) {
    const int64_t unit = placement_->units[k];
    if (slices != nullptr && !slices->enabled(static_cast<int>(unit % kSlicesPerCluster))) continue;
    RETURN_IF_ERROR(CopySlot(static_cast<int64_t>(k), 0, /*to_device=*/true));
  }
  return absl::OkStatus();
}

}  // namespace visa::jit
