// Memory tiers and the device geometry the manual fixes (RNGD): capacities and unit counts.
#pragma once

#include <cstdint>
#include <string_view>

#include "dsl/stream.h"

namespace visa {

// Where a tensor lives. SPM is a region of each slice's DM (see kSpmOffsetInDm); TRF and VRF are
// per-slice register files written by the Tensor Unit.
enum class Tier { kHost, kHbm, kDm, kSpm, kTrf, kVrf };

const char* TierName(Tier tier);  // "host", "HBM", "DM", "SPM", "TRF", "VRF"

// ---- Geometry (manual "Memory and Stream", "Memory Performance", "TRF Sequencer") -------------

inline constexpr int64_t kKiB = int64_t{1} << 10;
inline constexpr int64_t kGiB = int64_t{1} << 30;

inline constexpr int64_t kHbmBytesPerChip = 48 * kGiB;
// kClustersPerChip and kSlicesPerCluster come from dsl/stream.h (the rules use them too).
inline constexpr int kSlicesPerChip = kClustersPerChip * kSlicesPerCluster;
inline constexpr int64_t kDmBytesPerSlice = 512 * kKiB;

// The manual leaves SPM's capacity open ("hardware-specific details ... are pending") and calls it
// "a smaller high-speed buffer within each DM". We model it as the top 64 KB of every slice's DM:
// SPM address a is DM byte kSpmOffsetInDm + a, so DM and SPM tensors collide like any two tensors.
inline constexpr int64_t kSpmBytesPerSlice = 64 * kKiB;
inline constexpr int64_t kSpmOffsetInDm = kDmBytesPerSlice - kSpmBytesPerSlice;

// TRF: 8 rows (one per MAC row) of 8 KB; the halves split every row at 4 KB.
inline constexpr int kTrfRows = 8;
inline constexpr int64_t kTrfRowBytes = 8 * kKiB;
inline constexpr int64_t kTrfHalfBytes = kTrfRowBytes / 2;
inline constexpr int64_t kVrfBytesPerSlice = 8 * kKiB;

// Devices larger than this are refused (the manual's systems have 1, 4 or 8 chips).
inline constexpr int kMaxChips = 64;

// Bytes each unit of `tier` holds (HBM: a chip; DM/SPM/VRF: a slice; TRF: one row of a slice).
int64_t TierUnitBytes(Tier tier);

}  // namespace visa
