// The Valid Count Generator (VCG): which lanes of each 8-way flit entering the Vector Engine hold
// real data of a padded reduce axis, so the Intra-Slice Reduce stage can leave padding out.
//
// The manual ("Valid Count Generator's Interface" / "... Implementation") describes a sequencer
// of up to 8 counters over the flat time index, each assigned to the packet dim or to a gate dim
// with a stride; the packet dim gives a count min(stride_p, max(0, V_p - idx_p(t))), each gate a
// 0 / 1 from the slice id (masked, compared with a threshold) and its own index; the valid count
// is their product. `PlanValidCount` decides whether the reduce axis's placement over Slice, Time
// and Packet is one the VCG can express (the manual's tables), derives that configuration, and
// `ValidCount` evaluates the formula. Only the reduce axis is tracked: one gate dim at most.
// A left pad of the reduce axis (`# n + R + # m`, "Masking Configuration") is beyond the VCG:
// both its counts keep a prefix (lanes [0, vc) of a flit, steps with idx < V), so the n leading
// positions cannot be left out. The manual's way out ("Padding Strategy") is the op's identity as
// the fetch adapter's pad_value: the VCG then counts R's stand-in R' = `# n + R` (n + |R| values,
// the pad included) and leaves out the right pad only.
// A flit whose Slice or Time position is padding by itself (a digit with a single live value
// names no axis, e.g. R # 16 / 8 for R = 2) holds no element at all; its count means nothing and
// the reduce never reads it (its output position is padding too).
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "dsl/stream.h"

namespace visa {

inline constexpr int kVcgCounters = 8;
inline constexpr int kVcgGateDims = 3;
inline constexpr int kVeLanes = 8;      // 32-bit lanes of a flit (Way8)
inline constexpr int kVeHalfLanes = 4;  // Way4

// Packet Reduce: the reduce axis is in Packet, each flit gets a count 0..8.
// Time Reduce: it is in Slice and / or Time only, each flit is valid (8) or not (0).
// Unneeded: the axis has no padding, every flit is full.
enum class VcgMode { kUnneeded, kPacketReduce, kTimeReduce };
const char* VcgModeName(VcgMode mode);  // "Unneeded", "Packet Reduce", "Time Reduce"

// Where the reduce axis lies (the rows of the manual's "Quick Reference").
enum class VcgPlacement { kNone, kPacket, kTimePacket, kTime, kSlice, kSliceTime, kSliceTimeTransposed };
const char* VcgPlacementName(VcgPlacement placement);  // "Packet only", "Time + Packet", ...

// Which original dimension a counter feeds.
enum class VcgDim { kUnassigned, kPacket, kGate0 };

struct VcgCounter {
  int64_t limit = 1;   // the counter cycles 0 .. limit - 1
  int64_t stride = 0;  // contribution per step to its dim's index
  VcgDim dim = VcgDim::kUnassigned;
  std::string label;   // the Time factor it walks, e.g. "R # 24 % 3"
};

struct VcgPacketDim {
  bool enabled = false;
  int64_t valid = 0;     // V_p: the axis's unpadded size
  int64_t stride_p = 8;  // lanes of the flit the axis occupies
};

struct VcgGate {
  bool enabled = false;      // disabled: mask 0, match 1 (every slice "below")
  uint32_t mask = 0;
  uint32_t match = 1;
  int64_t valid = 0;         // V_gd
  bool transposed = false;   // P_gd
};

struct ValidCountConfig {
  StreamShape in;             // the Way8 stream the VCG tags
  std::string axis;           // the reduce axis
  int64_t axis_size = 0;      // |R| (with a left pad: n + |R|, what the VCG counts)
  int64_t left_pad = 0;       // n of `# n + R`: positions the fetch filled with the op's identity
  std::string stand_in;       // R' (the name the counters carry) when left_pad > 0
  int64_t padded_size = 0;    // p of R # p (the reach of R's parts)
  VcgMode mode = VcgMode::kUnneeded;
  VcgPlacement placement = VcgPlacement::kNone;
  std::vector<VcgCounter> counters;  // innermost (fastest) first
  VcgPacketDim packet;
  std::array<VcgGate, kVcgGateDims> gates;  // only gate 0 is used for the reduce axis

  // "valid count generator: Time Reduce (Slice + Time), R = 17 padded to 24; ..."
  std::string Describe() const;
};

// A reduce axis the stream left-pads, seen as the sequencer sees it (dsl/left_padding.h).
struct LeftPaddedAxis {
  std::string axis;      // R
  std::string stand_in;  // R' = `# n + R`, n + |R| values
  int64_t left = 0;      // n
  StreamShape shifted;   // the stream with `# n + R` read as R' (Slice, Chip, Cluster as they were)
};
// nullopt when no Time or Packet of `in` left-pads `axis`; an error names the rule "Left padding"
// when the stream cannot be read through a stand-in (another axis left-padded too, two amounts).
absl::StatusOr<std::optional<LeftPaddedAxis>> FindLeftPaddedAxis(const StreamShape& in, const std::string& axis);

// Derives the VCG configuration for reducing `axis` of the Way8 stream `in` (Packet of 8 lanes),
// or says which rule of "Valid Count Generator's Interface" the placement breaks. A left-padded
// axis is planned only when `left_pad_is_identity` (the fetch filled the pad with the op's
// identity); otherwise it is an error naming the rule and that way out.
absl::StatusOr<ValidCountConfig> PlanValidCount(const StreamShape& in, const std::string& axis,
                                                bool left_pad_is_identity = false);

// vc(s, t) = packet_vc(t) x gate_0(s, t) x ...: lanes [0, vc) of flit (slice, t) are real data.
int ValidCount(const ValidCountConfig& config, int64_t slice, int64_t t);
// The counter values (c_0, c_1, ...) of time step t (mixed radix, c_0 fastest).
std::vector<int64_t> CounterValues(const ValidCountConfig& config, int64_t t);

// Way8 -> Way4 ("Downstream: 4-Way Operations"): split_way4 makes two 4-way flits (low half
// first), trim_way4 keeps the low half.
enum class Narrowing { kSplit, kTrim };
const char* NarrowingName(Narrowing narrowing);  // "split_way4", "trim_way4"
// split: low min(v, 4), high max(v - 4, 0); trim: min(v, 4) (PlanValidCount's caller checks with
// `CheckTrim` that no valid lane is dropped).
int HalfValidCount(int vc, Narrowing narrowing, int half);
// trim_way4 keeps lanes 0..3 only: in Packet Reduce mode the axis must occupy at most 4 lanes.
absl::Status CheckTrim(const ValidCountConfig& config);
// The Way4 valid counts of one slice, in Way4 time order (split: flit t gives steps 2t, 2t + 1).
std::vector<int> Way4ValidCounts(const ValidCountConfig& config, int64_t slice, Narrowing narrowing);

}  // namespace visa
