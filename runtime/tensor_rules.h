// The manual's placement rules for device tensors ("Memory and Stream"): level sizes, tier
// capacity of the Element, alignment of the address, and the byte range fitting its unit.
//
// Each failure is an InvalidArgument (OutOfRange for capacity) whose message starts with the rule's
// name ("Size Constraint", "Alignment Constraint", "Capacity", "Scalar Type") and suggests the fix.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "dsl/mapping.h"
#include "runtime/address.h"
#include "runtime/dtype.h"
#include "runtime/tier.h"

namespace visa {

// The level names of a tier's tensors, outermost first: HBM {Chip, Element}; DM, SPM, VRF
// {Chip, Cluster, Slice, Element}; TRF {Chip, Cluster, Slice, Row, Element}; host {Element}.
const std::vector<std::string>& LevelNames(Tier tier);

// "HbmTensor", "DmTensor", "DmTensor (SPM)", "TrfTensor", "VrfTensor", "HostTensor".
std::string TensorTypeName(Tier tier);

// size_of::<D>() of the manual: the bytes of one element, 1 for i4 (two share a byte).
int64_t ElementAlignment(DType dtype);

// Staging types (i5, i9) never reach memory.
absl::Status CheckStorable(DType dtype, Tier tier);

// Valid mappings, the right number of levels, Chip::SIZE == chips, Cluster::SIZE == 2,
// Slice::SIZE == 256, 1 <= Row::SIZE <= 8, and the Element's bytes within the tier's per-unit
// capacity (DM 512 KB, SPM 64 KB, TRF 8 KB per row or 4 KB in a half mode, VRF 8 KB).
absl::Status CheckLevels(Tier tier, DType dtype, const std::vector<Mapping>& levels, int chips,
                         TrfAddress trf = TrfAddress::kFull);

// The Element's start address must be a multiple of size_of::<D>().
absl::Status CheckAlignment(Tier tier, DType dtype, int64_t address);

// [address, address + bytes) must lie inside the unit (for TRF: inside the mode's region).
absl::Status CheckCapacity(Tier tier, int64_t address, int64_t bytes, TrfAddress trf = TrfAddress::kFull);

// Bytes per unit a tier offers to one tensor (TRF: per row of the mode's region).
int64_t TierCapacity(Tier tier, TrfAddress trf = TrfAddress::kFull);

}  // namespace visa
