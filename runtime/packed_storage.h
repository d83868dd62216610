// Host byte image of N elements of a DType: i4 two per byte, multi-byte types little-endian.
//
// Layout (the same byte image the device memories hold, so a buffer can be copied byte for byte):
//   i4: element 2k in the low nibble of byte k, element 2k+1 in the high nibble; an odd count
//       leaves the last high nibble unused (kept zero).
//   i8, f8e4m3, f8e5m2: one byte per element.
//   i16, bf16, f16, i32, f32: 2 / 4 bytes per element, least significant byte first.
//   i5 / i9 (staging types, never in device memory): one / two bytes per element holding the
//       value sign-extended, i.e. an int8 / little-endian int16.
// Elements are read and written as raw bit patterns (the low Bits(dtype) bits of a uint32_t, as in
// scalar_convert.h) or, for convenience, as double values.
#pragma once

#include <cstdint>
#include <span>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "runtime/dtype.h"

namespace visa {

// Element access on a caller-owned byte image laid out as above. `index` must address an element
// inside `bytes` (InvalidArgument otherwise); `bits` must fit Bits(dtype).
absl::StatusOr<uint32_t> LoadElementBits(DType dtype, std::span<const uint8_t> bytes,
                                         int64_t index);
absl::Status StoreElementBits(DType dtype, std::span<uint8_t> bytes, int64_t index, uint32_t bits);

class PackedStorage {
 public:
  // `count` zero elements (all-zero bytes: +0.0 for the floats).
  static absl::StatusOr<PackedStorage> Create(DType dtype, int64_t count);

  // Adopts an existing image; its size must be exactly StorageBytes(dtype, count).
  static absl::StatusOr<PackedStorage> FromBytes(DType dtype, int64_t count,
                                                 std::vector<uint8_t> bytes);

  DType dtype() const { return dtype_; }
  int64_t size() const { return count_; }
  const std::vector<uint8_t>& bytes() const { return bytes_; }
  // Gives the image away (the storage is left empty).
  std::vector<uint8_t> TakeBytes() { return std::move(bytes_); }

  absl::StatusOr<uint32_t> GetBits(int64_t index) const;
  absl::Status SetBits(int64_t index, uint32_t bits);

  // Every element's bits at once, as GetBits / SetBits one by one would (the interpreter converts
  // whole images: a per-element status check cost more than the conversion). SetAllBits wants
  // exactly size() patterns, each fitting Bits(dtype); on a refusal the image is unspecified.
  std::vector<uint32_t> AllBits() const;
  absl::Status SetAllBits(std::span<const uint32_t> bits);

  // The exact value of the element (BitsToDouble); storing goes through DoubleToBits, so integers
  // that are out of range or fractional are refused and floats are rounded to nearest.
  absl::StatusOr<double> GetDouble(int64_t index) const;
  absl::Status SetDouble(int64_t index, double value);

  bool operator==(const PackedStorage&) const = default;

 private:
  PackedStorage(DType dtype, int64_t count, std::vector<uint8_t> bytes)
      : dtype_(dtype), count_(count), bytes_(std::move(bytes)) {}

  DType dtype_;
  int64_t count_;
  std::vector<uint8_t> bytes_;
};

}  // namespace visa
