// Names and per-unit capacities of the memory tiers.
#include "runtime/tier.h"

namespace visa {

const char* TierName(Tier tier) {
  switch (tier) {
    case Tier::kHost: return "host";
    case Tier::kHbm: return "HBM";
    case Tier::kDm: return "DM";
    case Tier::kSpm: return "SPM";
    case Tier::kTrf: return "TRF";
    case Tier::kVrf: return "VRF";
  }
  return "?";
}

int64_t TierUnitBytes(Tier tier) {
  switch (tier) {
    case Tier::kHost: return 0;
    case Tier::kHbm: return kHbmBytesPerChip;
    case Tier::kDm: return kDmBytesPerSlice;
    case Tier::kSpm: return kSpmBytesPerSlice;
    case Tier::kTrf: return kTrfRowBytes;
    case Tier::kVrf: return kVrfBytesPerSlice;
  }
  return 0;
}

}  // namespace visa
