// Element types of the TCP Virtual ISA: names, widths, host storage size, classification.
#include "dsl/dtype.h"

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"

namespace visa {
namespace {

// One row per type, in enum order, so every per-type query is a table read.
struct DTypeInfo {
  DType type;
  const char* name;
  int bits;
  int wire_bits;
  int storage_bits;
  bool is_float;
};

constexpr std::array<DTypeInfo, kAllDTypes.size()> kInfo = {{
    {DType::kI4, "i4", 4, 4, 4, false},
    {DType::kI5, "i5", 5, 4, 8, false},
    {DType::kI8, "i8", 8, 8, 8, false},
    {DType::kI9, "i9", 9, 8, 16, false},
    {DType::kI16, "i16", 16, 16, 16, false},
    {DType::kI32, "i32", 32, 32, 32, false},
    {DType::kF8E4M3, "f8e4m3", 8, 8, 8, true},
    {DType::kF8E5M2, "f8e5m2", 8, 8, 8, true},
    {DType::kBF16, "bf16", 16, 16, 16, true},
    {DType::kF16, "f16", 16, 16, 16, true},
    {DType::kF32, "f32", 32, 32, 32, true},
}};

// The table is indexed by the enum value; this catches a reordering of either.
constexpr bool TableMatchesEnum() {
  for (size_t i = 0; i < kInfo.size(); ++i) {
    if (static_cast<size_t>(kInfo[i].type) != i || kAllDTypes[i] != kInfo[i].type) return false;
  }
  return true;
}
static_assert(TableMatchesEnum(), "kInfo must list the DType enumerators in order");

const DTypeInfo& Info(DType type) { return kInfo[static_cast<size_t>(type)]; }

}  // namespace

const char* Name(DType type) { return Info(type).name; }

absl::StatusOr<DType> ParseDType(std::string_view name) {
  for (const DTypeInfo& info : kInfo) {
    if (name == info.name) return info.type;
  }
  if (name == "fp16") return DType::kF16;
  std::vector<std::string> names;
  for (const DTypeInfo& info : kInfo) names.emplace_back(info.name);
  return absl::InvalidArgumentError(absl::StrCat("unknown element type \"", std::string(name),
                                                 "\"; valid types are ",
                                                 absl::StrJoin(names, ", ")));
}

int Bits(DType type) { return Info(type).bits; }
absl::Status CheckBitsFit(DType type, uint32_t bits) {
  if (Bits(type) < 32 && (bits >> Bits(type)) != 0) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "bit pattern 0x%x does not fit %s, whose patterns have %d bits", bits,
        std::string(Name(type)), Bits(type)));
  }
  return absl::OkStatus();
}

int WireBits(DType type) { return Info(type).wire_bits; }
int StorageBits(DType type) { return Info(type).storage_bits; }

int64_t StorageBytes(DType type, int64_t count) {
  return (count * StorageBits(type) + 7) / 8;
}

bool IsFloat(DType type) { return Info(type).is_float; }
bool IsSignedInt(DType type) { return !Info(type).is_float; }
bool IsStaging(DType type) { return type == DType::kI5 || type == DType::kI9; }
bool IsMaterializable(DType type) { return !IsStaging(type); }

int64_t IntMin(DType type) {
  return IsSignedInt(type) ? -(int64_t{1} << (Bits(type) - 1)) : 0;
}

int64_t IntMax(DType type) {
  return IsSignedInt(type) ? (int64_t{1} << (Bits(type) - 1)) - 1 : 0;
}

std::ostream& operator<<(std::ostream& os, DType type) { return os << Name(type); }

}  // namespace visa
