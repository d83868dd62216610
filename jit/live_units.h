// Pipelines over padded units: the manual's kernels often place a tensor on one cluster of two
// (`1 # 2`) or one slice of 256 (`1 # 256`), and a rank of an mpirun launch runs one chip's part of
// a pipeline (`# c + Chip + # n`, mpi/chip_range_pipeline.h). The stage-by-stage walk builds its
// stream images over every unit of the chip / cluster / slice mappings, so such a kernel paid for
// 512 units (or 4 chips' units) to compute one. A copy of the pipeline with the padding taken off
// those mappings walks the live units alone: per level a live range [lo, lo + count) of its padded
// size, a box of chip x cluster x slice. Moves by index between the trimmed streams and the
// tensors are unchanged (a live position holds the index it held); moves by unit number (the
// sequencer nests) address a box's units through BoxLevels, since a stream unit's number is no
// longer the device unit's unless the box is a prefix of the units.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <vector>

#include "jit/move_nest.h"
#include "runtime/program.h"

namespace visa::jit {

// The live units of a stream: per level (chip, cluster, slice) the first live position `lo`, the
// live positions `count` and the padded level's `size` (the device's units of that level).
struct LiveBox {
  std::array<int64_t, 3> lo{0, 0, 0};
  std::array<int64_t, 3> count{1, 1, 1};
  std::array<int64_t, 3> size{1, 1, 1};

  int64_t units() const { return count[0] * count[1] * count[2]; }
  // The device unit number of the box's first unit, (chip * clusters + cluster) * slices + slice.
  int64_t first_unit() const { return (lo[0] * size[1] + lo[1]) * size[2] + lo[2]; }
  // Whether the live units are units 0 .. units() - 1: then a stream unit's number is the device
  // unit's, and a nest over `units()` consecutive units addresses them.
  bool IsPrefix() const;
};

// A pipeline trimmed to its live units and the box they form.
struct LivePipeline {
  PipelineOp op;
  LiveBox box;
};

// The pipeline with its units' padding removed, or nullopt when there is none to remove or the
// trim would change what runs: the Switch Engine (it moves data between slices), a commit to some
// slices only, an interleaved fetch, an indirect fetch off a prefix (its walk addresses the table's
// first units), stages whose units differ (an inter-slice reduce's output), an inter-slice reduce
// over a trimmed slice level (its source table numbers the padded slices) or an intra-slice reduce
// over slices that do not start at 0 (its valid counts are by slice number), a level whose
// live positions are not one range (padding inside it). The trimmed op has its own serial: a
// vector stage's kept plan (op_memo.h) is by serial and holds the layouts of the walk that made it.
std::optional<LivePipeline> TrimToLiveUnits(const PipelineOp& op);

// The live box of a stream's units, nullopt when some level's live positions are not one range.
std::optional<LiveBox> LiveBoxOf(const StreamShape& shape);

// How many of a stream's units (chip x cluster x slice, in that order) come before its last one
// that holds an index, when those are the first ones: all units without padding, nullopt when the
// live units are not a prefix.
std::optional<int64_t> LiveUnitPrefix(const StreamShape& shape);

// Whether a tensor's live units (its placement's live prefixes, numbered as the device's units)
// are exactly the box's: then a nest over the box writes every live unit and no other.
bool LiveUnitsAreTheBox(const Placement& placement, const LiveBox& box);

// Whether every chip the box spans holds a live unit of the tensor: a walk of the device's memory
// in place over the box then stays on memory the tensor's chips keep (in_place.h).
bool BoxStaysOnLiveChips(const Placement& placement, const LiveBox& box);

// The outer levels of a nest over a box's units, innermost (slice) first: each stream unit is
// `stream_unit` positions after the previous one, each device unit `buffer_unit` positions; the
// walk starts at the box's first unit (buffer position first_unit() * buffer_unit).
std::vector<NestLevel> BoxLevels(const LiveBox& box, int64_t stream_unit, int64_t buffer_unit, bool stream_is_dst);

// `nest` with its outermost level (one over units) replaced by the box's levels.
MoveNest OverBox(MoveNest nest, const LiveBox& box, int64_t stream_unit, int64_t buffer_unit, bool stream_is_dst);

}  // namespace visa::jit
