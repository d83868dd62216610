// Element types of the TCP Virtual ISA: names, widths, host storage size, classification.
#pragma once

#include <array>
#include <cstdint>
#include <ostream>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace visa {

// The manual's scalar types. i5 and i9 are not storage types: they are the staging types that the
// Fetch Adapter's zero-point subtraction produces from i4 / i8 (value - zero_point needs one more
// bit) and that only the Contraction Engine consumes. They can never be written to HBM / DM / host.
enum class DType { kI4, kI5, kI8, kI9, kI16, kI32, kF8E4M3, kF8E5M2, kBF16, kF16, kF32 };

inline constexpr std::array<DType, 11> kAllDTypes = {
    DType::kI4,     DType::kI5,     DType::kI8,  DType::kI9,  DType::kI16, DType::kI32,
    DType::kF8E4M3, DType::kF8E5M2, DType::kBF16, DType::kF16, DType::kF32};

// The manual's spelling: "i4", "i5", "i8", "i9", "i16", "i32", "f8e4m3", "f8e5m2", "bf16", "f16",
// "f32".
const char* Name(DType type);

// Inverse of Name. Also accepts "fp16", the manual's spelling of f16 in the DMA command grammar.
// An unknown name is an InvalidArgument error that names it and lists the valid names.
absl::StatusOr<DType> ParseDType(std::string_view name);

// Width of the value's bit pattern: 4, 5, 8, 9, 16, 32 for the integers; 8, 8, 16, 16, 32 for the
// floats. Raw bit patterns handed around as uint32_t use exactly this many low bits.
int Bits(DType type);

// OK if the raw pattern `bits` uses only the low Bits(type) bits; InvalidArgument otherwise.
absl::Status CheckBitsFit(DType type, uint32_t bits);

// Width counted by the packet-size rules (bytes = elements * WireBits / 8). Equal to Bits except
// for the staging types, which travel in the slot of their source type: the manual sizes a 320-bit
// reducer input as "64 elements for i4/i5, 32 for i8/f8/i9", so i5 counts as 4 bits and i9 as 8.
int WireBits(DType type);

// Bits one element occupies in host storage: 4 for i4 (two per byte), a whole byte for i5 and two
// bytes for i9 (held sign-extended, as an int8 / int16), Bits for the others.
int StorageBits(DType type);

// Host bytes needed for `count` elements: ceil(count * StorageBits / 8), so an odd i4 count rounds
// up to a whole byte. Requires 0 <= count <= kMaxStorageElements (checked by the callers that take
// user input, e.g. PackedStorage::Create).
int64_t StorageBytes(DType type, int64_t count);

// Largest element count host storage accepts; keeps count * 32 bits far from int64 overflow.
inline constexpr int64_t kMaxStorageElements = int64_t{1} << 52;

bool IsFloat(DType type);
bool IsSignedInt(DType type);  // every integer type of the ISA is signed

// i5 / i9: produced by zero-point subtraction, consumed by the contraction, never stored.
bool IsStaging(DType type);

// May live in HBM / DM / host memory (every type except the staging ones).
bool IsMaterializable(DType type);

// Value range of a signed integer type, e.g. [-8, 7] for i4, [-16, 15] for i5. Zero for floats.
int64_t IntMin(DType type);
int64_t IntMax(DType type);

// Printing to streams (gtest messages) shows the manual's name. (The absl in use predates
// AbslStringify and its absl::string_view is not std::string_view: build messages from
// std::string(Name(type)).)
std::ostream& operator<<(std::ostream& os, DType type);

}  // namespace visa
