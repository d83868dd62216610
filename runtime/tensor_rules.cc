// Size, alignment and capacity rules of device tensors, with messages that name the rule.
#include "runtime/tensor_rules.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "dsl/checked_math.h"
#include "dsl/status_macros.h"

namespace visa {
namespace {

std::string Bytes(int64_t bytes) {
  if (bytes % kKiB == 0) return absl::StrCat(bytes / kKiB, " KB");
  return absl::StrCat(bytes, " bytes");
}

absl::Status SizeError(absl::string_view level, absl::string_view want, int64_t got,
                       const Mapping& mapping, absl::string_view fix) {
  return absl::InvalidArgumentError(absl::StrCat("Size Constraint: ", level, "::SIZE must be ", want,
                                                 fix, ", got ", got, " for mapping `",
                                                 mapping.ToString(), "`"));
}

}  // namespace

const std::vector<std::string>& LevelNames(Tier tier) {
  static const std::vector<std::string> host = {"Element"};
  static const std::vector<std::string> hbm = {"Chip", "Element"};
  static const std::vector<std::string> sram = {"Chip", "Cluster", "Slice", "Element"};
  static const std::vector<std::string> trf = {"Chip", "Cluster", "Slice", "Row", "Element"};
  switch (tier) {
    case Tier::kHost: return host;
    case Tier::kHbm: return hbm;
    case Tier::kTrf: return trf;
    default: return sram;
  }
}

std::string TensorTypeName(Tier tier) {
  switch (tier) {
    case Tier::kHost: return "HostTensor";
    case Tier::kHbm: return "HbmTensor";
    case Tier::kDm: return "DmTensor";
    case Tier::kSpm: return "DmTensor (SPM)";
    case Tier::kTrf: return "TrfTensor";
    case Tier::kVrf: return "VrfTensor";
  }
  return "?";
}

int64_t ElementAlignment(DType dtype) { return std::max<int64_t>(1, StorageBits(dtype) / 8); }

int64_t TierCapacity(Tier tier, TrfAddress trf) {
  if (tier == Tier::kTrf) return TrfAddressCapacity(trf);
  return TierUnitBytes(tier);
}

absl::Status CheckStorable(DType dtype, Tier tier) {
  if (IsMaterializable(dtype)) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat(
      "Scalar Type: ", std::string(Name(dtype)), " is a staging type of the Fetch Adapter's zero-point "
      "subtraction and cannot be stored in ", TierName(tier), "; store i4 / i8 and subtract the "
      "zero point at fetch"));
}

absl::Status CheckLevels(Tier tier, DType dtype, const std::vector<Mapping>& levels, int chips,
                         TrfAddress trf) {
  RETURN_IF_ERROR(CheckStorable(dtype, tier));
  const std::vector<std::string>& names = LevelNames(tier);
  if (levels.size() != names.size()) {
    return absl::InvalidArgumentError(absl::StrCat(TensorTypeName(tier), " needs ", names.size(),
                                                   " mappings (", absl::StrJoin(names, ", "),
                                                   "), got ", levels.size()));
  }
  for (size_t k = 0; k < levels.size(); ++k) {
    if (!levels[k].ok()) {
      return absl::InvalidArgumentError(absl::StrCat(TensorTypeName(tier), " ", names[k],
                                                     " mapping: ", levels[k].status().message()));
    }
  }
  if (tier != Tier::kHost && levels[0].size() != chips) {
    return SizeError("Chip", absl::StrCat(chips, " (the device's chip count, NUM_CHIPS)"),
                     levels[0].size(), levels[0], absl::StrCat(" (pad with `# ", chips, "`)"));
  }
  if (names.size() >= 4) {
    if (levels[1].size() != kClustersPerChip) {
      return SizeError("Cluster", "2", levels[1].size(), levels[1], " (pad with `# 2`)");
    }
    if (levels[2].size() != kSlicesPerCluster) {
      return SizeError("Slice", "256", levels[2].size(), levels[2], " (pad with `# 256`)");
    }
  }
  if (tier == Tier::kTrf && (levels[3].size() < 1 || levels[3].size() > kTrfRows)) {
    return SizeError("Row", "<= 8", levels[3].size(), levels[3], " (one Row per MAC row)");
  }
  if (tier == Tier::kHost) return absl::OkStatus();
  const Mapping& element = levels.back();
  const int64_t bytes = StorageBytes(dtype, element.size());
  const int64_t capacity = TierCapacity(tier, trf);
  if (bytes > capacity) {
    std::string where = tier == Tier::kTrf ? absl::StrCat(" per Row (TrfAddress::", TrfAddressName(trf), ")")
                        : tier == Tier::kHbm ? std::string(" per chip")
                                             : std::string(" per slice");
    return absl::InvalidArgumentError(absl::StrCat(
        "Size Constraint: ", TensorTypeName(tier), " Element::SIZE * size_of::<", std::string(Name(dtype)),
        ">() must be <= ", Bytes(capacity), where, ", got ", element.size(), " elements = ",
        Bytes(bytes), " for mapping `", element.ToString(),
        "`; move more of the tensor into the outer levels or tile it"));
  }
  return absl::OkStatus();
}

absl::Status CheckAlignment(Tier tier, DType dtype, int64_t address) {
  const int64_t align = ElementAlignment(dtype);
  if (address % align == 0) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrFormat(
      "Alignment Constraint: the Element start address of a %s must be a multiple of "
      "size_of::<%s>() = %d, got 0x%x",
      TierName(tier), std::string(Name(dtype)), align, address));
}

absl::Status CheckCapacity(Tier tier, int64_t address, int64_t bytes, TrfAddress trf) {
  const int64_t capacity = TierCapacity(tier, trf);
  if (RangeWithin(address, bytes, capacity)) return absl::OkStatus();
  return absl::OutOfRangeError(absl::StrFormat(
      "Capacity: the tensor's bytes [0x%x, 0x%x) run past the end of the %s (%s per %s)", address,
      SaturatingAdd(address, bytes), TierName(tier), Bytes(capacity),
      tier == Tier::kHbm ? "chip" : tier == Tier::kTrf ? "row" : "slice"));
}

}  // namespace visa
