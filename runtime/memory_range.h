// MemoryRange: the device bytes an op reads or writes (tier, units, byte intervals per unit), and
// Overlaps, the test the scheduler's RAW / WAR / WAW hazards are built on (manual, "Scheduling":
// "The scheduler detects these hazards by analyzing the memory addresses specified in the program").
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "runtime/program.h"
#include "runtime/tensor.h"
#include "runtime/tier.h"

namespace visa {

// A half-open interval [begin, end) of units or of bytes.
struct Interval {
  int64_t begin = 0;
  int64_t end = 0;
  int64_t size() const { return end - begin; }
  bool operator==(const Interval&) const = default;
};

// Sorts, drops empty intervals and merges overlapping or touching ones.
std::vector<Interval> Coalesce(std::vector<Interval> intervals);

// The same byte intervals in every unit of `units`. Units are the Placement's: chips (HBM), slices
// numbered chip * 512 + cluster * 256 + slice (DM, SPM, VRF), TRF rows numbered 8 per slice. Bytes
// are the tier's own addresses (SPM address 0 is DM byte kSpmOffsetInDm; Overlaps knows).
struct MemoryRange {
  Tier tier = Tier::kDm;
  std::vector<Interval> units;  // sorted, disjoint, coalesced
  std::vector<Interval> bytes;  // sorted, disjoint, coalesced; exact for views
  std::string tensor;           // the tensor's printed name, e.g. "dm#2"

  int64_t unit_count() const;
  int64_t bytes_per_unit() const;
  int64_t total_bytes() const { return unit_count() * bytes_per_unit(); }
  // "DM slices 0-255 bytes [0x0, 0x20) `dm#2`" (several byte intervals print as a count and hull).
  std::string ToString() const;
  bool operator==(const MemoryRange&) const = default;
};

// Same address space (SPM lies in DM), a common unit and intersecting bytes. Touching intervals
// ([0, 8) and [8, 16)) do not overlap.
bool Overlaps(const MemoryRange& a, const MemoryRange& b);

// The bytes a handle covers: a tensor its whole claim [address, address + unit_bytes()); a view
// exactly the bytes of its window's live positions (4-bit types rounded outward to whole bytes).
// `name` is the tensor's printed name.
MemoryRange RangeOf(const DeviceTensor& tensor, const std::string& name);

// A recorded ref's range; nullopt for host images, which have no device bytes.
std::optional<MemoryRange> RangeOf(const TensorRef& ref);

// The name between backquotes in a TensorRef's text ("... `dm#2` at DM 0x0" -> "dm#2"). Read from
// the text because a traced program may outlive the device whose address book holds the names.
std::string TensorNameOf(const TensorRef& ref);

}  // namespace visa
