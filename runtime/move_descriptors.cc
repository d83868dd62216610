// A move's ends as chip-level DMA sides.
#include "runtime/move_descriptors.h"

#include <vector>

#include "absl/strings/str_cat.h"
#include "dsl/status_macros.h"
#include "runtime/device.h"

namespace visa {

absl::StatusOr<DmaSide> DmaSideOf(const DeviceTensor& tensor) {
  const Placement& placement = tensor.placement();
  const int bits = StorageBits(tensor.dtype());
  DmaSide side;
  std::vector<Mapping> levels(placement.levels.begin(), placement.levels.end() - 1);
  int64_t unit_bytes = 0;
  switch (placement.tier) {
    case Tier::kHbm:
      side.tier = MemoryTier::kHbm;
      unit_bytes = kHbmBytesPerChip;
      break;
    case Tier::kDm:
    case Tier::kSpm:
      side.tier = placement.tier == Tier::kDm ? MemoryTier::kDm : MemoryTier::kSpm;
      unit_bytes = Device::UnitStride(placement.tier);
      break;
    default:
      return absl::InvalidArgumentError(absl::StrCat("DMA descriptor: ", TierName(placement.tier),
                                                     " is not a DMA memory (HBM, DM, SPM)"));
  }
  const int64_t offset_bits = tensor.window_offset() * bits;
  if (offset_bits % 8 != 0) {
    return absl::InvalidArgumentError(absl::StrCat("DMA descriptor: ", tensor.ToString(),
                                                   " starts inside a byte; a descriptor's base is a byte address"));
  }
  const int64_t unit_elements = unit_bytes * 8 / bits;
  levels.push_back(tensor.element().pad(unit_elements));
  // Every unit of a chip lies between its chip's first and next: the levels below the Chip have
  // the sizes the tier requires (Cluster 2, Slice 256), so a chip spans them all. A chip view's
  // Chip level is left-padded: its side starts at its chip.
  std::vector<Mapping> below(levels.begin() + 1, levels.end());
  return MakeDmaSide(side.tier, levels.front(), below.size() == 1 ? below.front() : Pair(below),
                     placement.address + offset_bits / 8);
}

absl::StatusOr<DmaDescriptors> MoveDescriptors(const DeviceTensor& src, const DeviceTensor& dst) {
  ASSIGN_OR_RETURN(DmaSide from, DmaSideOf(src));
  ASSIGN_OR_RETURN(DmaSide to, DmaSideOf(dst));
  return DeriveMoveDescriptors(from, to, ElementBits{StorageBits(src.dtype())});
}

}  // namespace visa
