// Host byte image of N elements of a DType: i4 two per byte, multi-byte types little-endian.
#include "runtime/packed_storage.h"

#include <algorithm>
#include <string>
#include <utility>

#include "absl/strings/str_format.h"
#include "absl/types/span.h"
#include "dsl/status_macros.h"
#include "runtime/scalar_convert.h"

namespace visa {
namespace {

// Message text (the absl in use has its own string_view, so DType goes through std::string).
std::string Str(DType type) { return std::string(Name(type)); }

// The index must name an element whose bytes lie inside the image.
absl::Status CheckIndex(DType dtype, size_t byte_size, int64_t index) {
  const int64_t capacity = static_cast<int64_t>(byte_size) * 8 / StorageBits(dtype);
  if (index < 0 || index >= capacity) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "element index %d is outside a %s buffer of %d elements (%d bytes)", index, Str(dtype),
        capacity, byte_size));
  }
  return absl::OkStatus();
}

absl::Status CheckCount(DType dtype, int64_t count) {
  if (count < 0 || count > kMaxStorageElements) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "cannot store %d elements of %s: the count must lie in [0, 2^52]", count, Str(dtype)));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<uint32_t> LoadElementBits(DType dtype, std::span<const uint8_t> bytes,
                                         int64_t index) {
  if (absl::Status ok = CheckIndex(dtype, bytes.size(), index); !ok.ok()) return ok;
  if (dtype == DType::kI4) {
    const uint8_t byte = bytes[static_cast<size_t>(index / 2)];
    return (index % 2 == 0) ? (byte & 0x0fu) : (byte >> 4);
  }
  const int width = StorageBits(dtype) / 8;
  const size_t offset = static_cast<size_t>(index) * width;
  uint32_t stored = 0;
  for (int i = 0; i < width; ++i) stored |= static_cast<uint32_t>(bytes[offset + i]) << (8 * i);
  // i5 / i9 are held sign-extended in a wider slot; hand back just their own bits.
  return Bits(dtype) < 32 ? stored & ((1u << Bits(dtype)) - 1) : stored;
}

absl::Status StoreElementBits(DType dtype, std::span<uint8_t> bytes, int64_t index,
                              uint32_t bits) {
  if (absl::Status ok = CheckIndex(dtype, bytes.size(), index); !ok.ok()) return ok;
  if (absl::Status ok = CheckBitsFit(dtype, bits); !ok.ok()) return ok;
  if (dtype == DType::kI4) {
    uint8_t& byte = bytes[static_cast<size_t>(index / 2)];
    byte = (index % 2 == 0) ? static_cast<uint8_t>((byte & 0xf0) | bits)
                            : static_cast<uint8_t>((byte & 0x0f) | (bits << 4));
    return absl::OkStatus();
  }
  const int width = StorageBits(dtype) / 8;
  // Sign-extending makes the i5 / i9 slot read as an ordinary int8 / int16; for the other types
  // the storage is exactly Bits wide and this is the identity.
  const uint32_t stored =
      IsStaging(dtype) ? static_cast<uint32_t>(SignExtend(bits, Bits(dtype))) : bits;
  const size_t offset = static_cast<size_t>(index) * width;
  for (int i = 0; i < width; ++i) bytes[offset + i] = static_cast<uint8_t>(stored >> (8 * i));
  return absl::OkStatus();
}

absl::StatusOr<PackedStorage> PackedStorage::Create(DType dtype, int64_t count) {
  if (absl::Status ok = CheckCount(dtype, count); !ok.ok()) return ok;
  return PackedStorage(dtype, count,
                       std::vector<uint8_t>(static_cast<size_t>(StorageBytes(dtype, count)), 0));
}

absl::StatusOr<PackedStorage> PackedStorage::FromBytes(DType dtype, int64_t count,
                                                       std::vector<uint8_t> bytes) {
  if (absl::Status ok = CheckCount(dtype, count); !ok.ok()) return ok;
  const int64_t expected = StorageBytes(dtype, count);
  if (static_cast<int64_t>(bytes.size()) != expected) {
    return absl::InvalidArgumentError(
        absl::StrFormat("%d elements of %s take %d bytes, but the image has %d", count, Str(dtype),
                        expected, bytes.size()));
  }
  return PackedStorage(dtype, count, std::move(bytes));
}

absl::StatusOr<uint32_t> PackedStorage::GetBits(int64_t index) const {
  // Bounds against the element count, not the byte size: an odd i4 count has a spare nibble.
  if (index < 0 || index >= count_) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "element index %d is outside a %s storage of %d elements", index, Str(dtype_), count_));
  }
  return LoadElementBits(dtype_, bytes_, index);
}

absl::Status PackedStorage::SetBits(int64_t index, uint32_t bits) {
  if (index < 0 || index >= count_) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "element index %d is outside a %s storage of %d elements", index, Str(dtype_), count_));
  }
  return StoreElementBits(dtype_, std::span<uint8_t>(bytes_), index, bits);
}

namespace {

// Little-endian loads and stores of one element slot of `width` bytes (1, 2 or 4).
template <int kWidth>
uint32_t LoadSlot(const uint8_t* at) {
  uint32_t v = 0;
  for (int i = 0; i < kWidth; ++i) v |= static_cast<uint32_t>(at[i]) << (8 * i);
  return v;
}
template <int kWidth>
void StoreSlot(uint8_t* at, uint32_t v) {
  for (int i = 0; i < kWidth; ++i) at[i] = static_cast<uint8_t>(v >> (8 * i));
}

template <int kWidth>
void DecodeAll(const uint8_t* bytes, uint32_t mask, absl::Span<uint32_t> out) {
  for (size_t k = 0; k < out.size(); ++k) out[k] = LoadSlot<kWidth>(bytes + k * kWidth) & mask;
}

}  // namespace

std::vector<uint32_t> PackedStorage::AllBits() const {
  std::vector<uint32_t> bits(static_cast<size_t>(count_));
  const uint32_t mask = Bits(dtype_) < 32 ? (1u << Bits(dtype_)) - 1 : 0xffffffffu;
  switch (StorageBits(dtype_)) {
    case 4:
      for (int64_t k = 0; k < count_; ++k) bits[k] = (bytes_[k / 2] >> (4 * (k % 2))) & 0x0fu;
      break;
    case 8: DecodeAll<1>(bytes_.data(), mask, absl::MakeSpan(bits)); break;
    case 16: DecodeAll<2>(bytes_.data(), mask, absl::MakeSpan(bits)); break;
    case 32: DecodeAll<4>(bytes_.data(), mask, absl::MakeSpan(bits)); break;
    default: VISA_CHECK(false, "a storage slot of 4, 8, 16 or 32 bits");
  }
  return bits;
}

absl::Status PackedStorage::SetAllBits(std::span<const uint32_t> bits) {
  if (static_cast<int64_t>(bits.size()) != count_) {
    return absl::InvalidArgumentError(absl::StrFormat("%d bit patterns given for a %s storage of %d elements",
                                                      bits.size(), Str(dtype_), count_));
  }
  const int width = Bits(dtype_);
  for (size_t k = 0; k < bits.size(); ++k) {
    if (width < 32 && (bits[k] >> width) != 0) {
      return absl::InvalidArgumentError(absl::StrFormat("element %d: bit pattern 0x%x does not fit %s (%d bits)",
                                                        k, bits[k], Str(dtype_), width));
    }
  }
  uint8_t* out = bytes_.data();
  switch (StorageBits(dtype_)) {
    case 4:
      std::fill(bytes_.begin(), bytes_.end(), uint8_t{0});  // the spare nibble of an odd count stays zero
      for (size_t k = 0; k < bits.size(); ++k) out[k / 2] |= static_cast<uint8_t>(bits[k] << (4 * (k % 2)));
      break;
    case 8:
      for (size_t k = 0; k < bits.size(); ++k) {
        out[k] = static_cast<uint8_t>(IsStaging(dtype_) ? SignExtend(bits[k], width) : bits[k]);
      }
      break;
    case 16:
      for (size_t k = 0; k < bits.size(); ++k) {
        const uint32_t v = IsStaging(dtype_) ? static_cast<uint32_t>(SignExtend(bits[k], width)) : bits[k];
        StoreSlot<2>(out + 2 * k, v);
      }
      break;
    case 32:
      for (size_t k = 0; k < bits.size(); ++k) StoreSlot<4>(out + 4 * k, bits[k]);
      break;
    default: VISA_CHECK(false, "a storage slot of 4, 8, 16 or 32 bits");
  }
  return absl::OkStatus();
}

absl::StatusOr<double> PackedStorage::GetDouble(int64_t index) const {
  absl::StatusOr<uint32_t> bits = GetBits(index);
  if (!bits.ok()) return bits.status();
  return BitsToDouble(dtype_, *bits);
}

absl::Status PackedStorage::SetDouble(int64_t index, double value) {
  absl::StatusOr<uint32_t> bits = DoubleToBits(dtype_, value);
  if (!bits.ok()) return bits.status();
  return SetBits(index, *bits);
}

}  // namespace visa
