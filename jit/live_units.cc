// Trimming a pipeline's padded units to their live box (live_units.h).
#include "jit/live_units.h"

#include <memory>
#include <variant>

#include "jit/mapping_facts.h"

namespace visa::jit {
namespace {

// One level of units (chip, cluster or slice) as `# lo + live # size`: its live positions are one
// range, and `live` holds the indices they hold.
struct Level {
  Mapping live;
  int64_t lo = 0;
  int64_t size = 1;
};

std::optional<Level> LiveRange(const Mapping& units) {
  Level level{units, 0, units.size()};
  if (level.live.kind() == Mapping::Kind::kPadding) level.live = level.live.inner();
  if (level.live.kind() == Mapping::Kind::kLeftPad) {
    level.lo = level.live.argument();
    level.live = level.live.inner();
  }
  if (HasPadding(level.live)) return std::nullopt;  // padding inside: no one range
  return level;
}

// The trimmed chip, cluster and slice and their box.
struct Trim {
  std::array<Mapping, 3> live;
  LiveBox box;
};
std::optional<Trim> TrimOf(const StreamShape& shape) {
  Trim trim;
  const std::array<const Mapping*, 3> levels = {&shape.chip, &shape.cluster, &shape.slice};
  for (int i = 0; i < 3; ++i) {
    std::optional<Level> level = LiveRange(*levels[i]);
    if (!level) return std::nullopt;
    trim.live[i] = level->live;
    trim.box.lo[i] = level->lo;
    trim.box.count[i] = level->live.size();
    trim.box.size[i] = level->size;
  }
  return trim;
}

// What a vector stage's trim must keep: an intra-slice reduce's valid counts are by slice number
// (its VCG's counters, kept untrimmed), so its slices must keep their numbers; an inter-slice
// reduce's source table numbers the padded slices, and its output's Slice is not the units'.
bool VectorStageTrims(const VectorStage& stage, const LiveBox& box) {
  for (const VeStep& step : stage.steps) {
    if (step.kind == VeStep::Kind::kInterReduce) return false;
    if (step.kind == VeStep::Kind::kIntraReduce && box.lo[2] != 0) return false;
  }
  return true;
}

// Every stream shape a stage holds, given to `f`; false when the stage cannot be trimmed.
template <typename F>
bool ForEachShape(Stage& stage, const LiveBox& box, F&& f) {
  return std::visit(
      [&](auto& s) -> bool {
        using S = std::decay_t<decltype(s)>;
        if constexpr (std::is_same_v<S, BeginStage>) {
          return f(s.shape);
        } else if constexpr (std::is_same_v<S, AlignStage> || std::is_same_v<S, AccumulateStage>) {
          return f(s.in) && f(s.out);
        } else if constexpr (std::is_same_v<S, FetchStage>) {
          // An indirect fetch's walk (indirect_fetch.h) reads the table's first units.
          if (s.indirect && !box.IsPrefix()) return false;
          return f(s.out);
        } else if constexpr (std::is_same_v<S, CollectStage> || std::is_same_v<S, CastStage> ||
                             std::is_same_v<S, TransposeStage> || std::is_same_v<S, ContractStage>) {
          return f(s.out);
        } else if constexpr (std::is_same_v<S, CommitStage>) {
          return s.slices.all();
        } else if constexpr (std::is_same_v<S, RegisterLoadStage>) {
          return true;
        } else if constexpr (std::is_same_v<S, VectorStage>) {
          if (!VectorStageTrims(s, box) || !f(s.in) || !f(s.out)) return false;
          for (VeStep& step : s.steps) {
            if (!f(step.out)) return false;
            if (step.intra_reduce) {
              auto reduce = std::make_shared<IntraSliceReduceStage>(*step.intra_reduce);
              if (!f(reduce->in) || !f(reduce->out)) return false;
              step.intra_reduce = std::move(reduce);
            }
          }
          return true;
        } else {
          static_assert(std::is_same_v<S, SwitchStage>);
          return false;  // the Switch Engine moves data between slices
        }
      },
      stage);
}

}  // namespace

bool LiveBox::IsPrefix() const {
  bool partial_below = false;  // a level inside this one has padding
  for (int i = 2; i >= 0; --i) {
    if (lo[i] != 0 || (partial_below && count[i] > 1)) return false;
    partial_below = partial_below || count[i] < size[i];
  }
  return true;
}

std::optional<LiveBox> LiveBoxOf(const StreamShape& shape) {
  std::optional<Trim> trim = TrimOf(shape);
  if (!trim) return std::nullopt;
  return trim->box;
}

std::optional<LivePipeline> TrimToLiveUnits(const PipelineOp& op) {
  if (op.stages.empty()) return std::nullopt;
  const auto* begin = std::get_if<BeginStage>(&op.stages.front());
  if (begin == nullptr || begin->interleave) return std::nullopt;
  const StreamShape& units = begin->shape;
  std::optional<Trim> trim = TrimOf(units);
  if (!trim) return std::nullopt;
  const LiveBox& box = trim->box;
  if (box.units() == box.size[0] * box.size[1] * box.size[2]) return std::nullopt;  // no padding
  if (op.fetch_index && !box.IsPrefix()) return std::nullopt;
  LivePipeline trimmed{op, box};
  // Not the untrimmed op's serial: what a walk keeps by serial holds its layouts (op_memo.h).
  if (op.serial != 0) trimmed.op.serial = op.serial | (uint64_t{1} << 63);
  for (Stage& stage : trimmed.op.stages) {
    const bool kept = ForEachShape(stage, box, [&](StreamShape& shape) {
      if (!(shape.chip == units.chip && shape.cluster == units.cluster && shape.slice == units.slice)) return false;
      shape.chip = trim->live[0];
      shape.cluster = trim->live[1];
      shape.slice = trim->live[2];
      return true;
    });
    if (!kept) return std::nullopt;
  }
  return trimmed;
}

std::optional<int64_t> LiveUnitPrefix(const StreamShape& shape) {
  std::optional<LiveBox> box = LiveBoxOf(shape);
  if (!box || !box->IsPrefix()) return std::nullopt;
  return box->units();
}

bool LiveUnitsAreTheBox(const Placement& placement, const LiveBox& box) {
  if (placement.prefix_size != box.size[0] * box.size[1] * box.size[2]) return false;
  if (static_cast<int64_t>(placement.live_prefixes.size()) != box.units()) return false;
  size_t k = 0;
  for (int64_t chip = box.lo[0]; chip < box.lo[0] + box.count[0]; ++chip) {
    for (int64_t cluster = box.lo[1]; cluster < box.lo[1] + box.count[1]; ++cluster) {
      const int64_t row = (chip * box.size[1] + cluster) * box.size[2];
      for (int64_t slice = box.lo[2]; slice < box.lo[2] + box.count[2]; ++slice) {
        if (placement.live_prefixes[k++] != row + slice) return false;
      }
    }
  }
  return true;
}

bool BoxStaysOnLiveChips(const Placement& placement, const LiveBox& box) {
  const int64_t chips = placement.levels.front().size();
  if (chips != box.size[0] || placement.prefix_size % chips != 0) return false;
  std::vector<bool> live(static_cast<size_t>(chips), false);
  for (int64_t prefix : placement.live_prefixes) live[static_cast<size_t>(placement.ChipOf(prefix, static_cast<int>(chips)))] = true;
  for (int64_t chip = box.lo[0]; chip < box.lo[0] + box.count[0]; ++chip) {
    if (!live[static_cast<size_t>(chip)]) return false;
  }
  return true;
}

std::vector<NestLevel> BoxLevels(const LiveBox& box, int64_t stream_unit, int64_t buffer_unit, bool stream_is_dst) {
  std::vector<NestLevel> levels;
  int64_t stream_stride = stream_unit, buffer_stride = buffer_unit;
  for (int i = 2; i >= 0; --i) {
    if (stream_is_dst) {
      levels.push_back({box.count[i], stream_stride, buffer_stride});
    } else {
      levels.push_back({box.count[i], buffer_stride, stream_stride});
    }
    stream_stride *= box.count[i];
    buffer_stride *= box.size[i];
  }
  return levels;
}

MoveNest OverBox(MoveNest nest, const LiveBox& box, int64_t stream_unit, int64_t buffer_unit, bool stream_is_dst) {
  nest.levels.pop_back();
  for (const NestLevel& level : BoxLevels(box, stream_unit, buffer_unit, stream_is_dst)) nest.levels.push_back(level);
  return nest;
}

}  // namespace visa::jit
