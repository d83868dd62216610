// Trimming a pipeline's padded units (live_units.h).
#include "jit/live_units.h"

#include <array>
#include <variant>

#include "jit/mapping_facts.h"

namespace visa::jit {
namespace {

// One level of units (chip, cluster or slice) without its padding.
struct Level {
  Mapping live;
  bool padded = false;
};

std::optional<Level> Unpadded(const Mapping& units) {
  if (units.kind() == Mapping::Kind::kPadding) {
    const Mapping& inner = units.inner();
    if (HasPadding(inner)) return std::nullopt;
    return Level{inner, inner.size() < units.size()};
  }
  if (HasPadding(units)) return std::nullopt;  // padding inside: its live units are not a prefix
  return Level{units, false};
}

// The trimmed chip, cluster and slice, when the live units are positions 0 .. L - 1 of the
// padded ones: the unit number is (chip * clusters + cluster) * slices + slice, so below a padded
// level every outer level must have one live unit.
std::optional<std::array<Mapping, 3>> LivePrefix(const StreamShape& shape) {
  std::array<Mapping, 3> trimmed;
  const std::array<const Mapping*, 3> levels = {&shape.chip, &shape.cluster, &shape.slice};
  bool padded_below = false, any_padding = false;
  for (int i = 2; i >= 0; --i) {
    std::optional<Level> level = Unpadded(*levels[i]);
    if (!level) return std::nullopt;
    if (padded_below && level->live.size() > 1) return std::nullopt;
    padded_below = padded_below || level->padded;
    any_padding = any_padding || level->padded;
    trimmed[i] = level->live;
  }
  if (!any_padding) return std::nullopt;
  return trimmed;
}

// Every stream shape a stage holds.
template <typename F>
bool ForEachShape(Stage& stage, F&& f) {
  return std::visit(
      [&](auto& s) -> bool {
        using S = std::decay_t<decltype(s)>;
        if constexpr (std::is_same_v<S, BeginStage>) {
          return f(s.shape);
        } else if constexpr (std::is_same_v<S, AlignStage> || std::is_same_v<S, AccumulateStage>) {
          return f(s.in) && f(s.out);
        } else if constexpr (std::is_same_v<S, FetchStage> || std::is_same_v<S, CollectStage> ||
                             std::is_same_v<S, CastStage> || std::is_same_v<S, TransposeStage> ||
                             std::is_same_v<S, ContractStage>) {
          return f(s.out);
        } else if constexpr (std::is_same_v<S, CommitStage>) {
          return s.slices.all();
        } else if constexpr (std::is_same_v<S, RegisterLoadStage>) {
          return true;
        } else {
          // SwitchStage moves data between slices. VectorStage: trimming its streams, its steps'
          // and a copy of each intra-slice reduce's shapes still crashes llama_tiny_decode (in
          // RunImageMove, vector_stage.cc, on a staged contraction + vector pipeline), not yet
          // understood; jit/in_place_reduce.h computes only the live units instead.
          return false;
        }
      },
      stage);
}

}  // namespace

std::optional<PipelineOp> TrimToLiveUnits(const PipelineOp& op) {
  if (op.stages.empty()) return std::nullopt;
  const auto* begin = std::get_if<BeginStage>(&op.stages.front());
  if (begin == nullptr || begin->interleave) return std::nullopt;
  const StreamShape& units = begin->shape;
  std::optional<std::array<Mapping, 3>> live = LivePrefix(units);
  if (!live) return std::nullopt;
  PipelineOp trimmed = op;
  for (Stage& stage : trimmed.stages) {
    const bool kept = ForEachShape(stage, [&](StreamShape& shape) {
      if (!(shape.chip == units.chip && shape.cluster == units.cluster && shape.slice == units.slice)) return false;
      shape.chip = (*live)[0];
      shape.cluster = (*live)[1];
      shape.slice = (*live)[2];
      return true;
    });
    if (!kept) return std::nullopt;
  }
  return trimmed;
}

std::optional<int64_t> LiveUnitPrefix(const StreamShape& shape) {
  if (!HasPadding(shape.chip) && !HasPadding(shape.cluster) && !HasPadding(shape.slice)) {
    return shape.chip.size() * shape.cluster.size() * shape.slice.size();
  }
  std::optional<std::array<Mapping, 3>> live = LivePrefix(shape);
  if (!live) return std::nullopt;
  return (*live)[0].size() * (*live)[1].size() * (*live)[2].size();
}

int64_t LiveUnitCount(const PipelineOp& op) {
  const StreamShape& units = std::get<BeginStage>(op.stages.front()).shape;
  return units.chip.size() * units.cluster.size() * units.slice.size();
}

}  // namespace visa::jit
