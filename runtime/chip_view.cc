// Chip and cluster views: a unit's bytes of a tensor relabeled as a one-unit tensor.
#include "runtime/chip_view.h"

#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "dsl/axes.h"
#include "dsl/status_macros.h"
#include "runtime/device.h"

namespace visa {
namespace {

// `# unit + Name + # (count - 1 - unit)` over a fresh axis `Name = 1`.
absl::StatusOr<Mapping> OneUnit(const char* name, int64_t unit, int64_t count) {
  ASSIGN_OR_RETURN(Axes axes, Axes::Parse(absl::StrCat(name, " = 1")));
  Mapping one = axes[name].left_pad(unit).pad(count);
  RETURN_IF_ERROR(one.status());
  return one;
}

absl::StatusOr<DeviceTensor> UnitView(const DeviceTensor& tensor, size_t level, const char* level_name,
                                      int64_t unit, int64_t count, const Mapping& element, int64_t offset_bytes) {
  const std::vector<Mapping> levels = tensor.levels();
  const Mapping& selected = levels[level];
  if (selected.kind() != Mapping::Kind::kSymbol || selected.size() != count) {
    return absl::InvalidArgumentError(absl::StrCat(
        level_name, " view: the ", level_name, " level of ", tensor.ToString(), " is `", selected.ToString(),
        "`; a view of one ", level_name, " needs a single axis of ", count,
        " values there (position c holding its value c)"));
  }
  if (unit < 0 || unit >= count) {
    return absl::InvalidArgumentError(absl::StrCat(level_name, " view: ", level_name, " ", unit,
                                                   " is outside [0, ", count, ")"));
  }
  std::vector<Mapping> relabeled = levels;
  ASSIGN_OR_RETURN(relabeled[level], OneUnit(level == 0 ? "Chip" : "Cluster", unit, count));
  relabeled.back() = element;
  return tensor.Relabel(std::move(relabeled), offset_bytes);
}

}  // namespace

absl::StatusOr<DeviceTensor> ChipView(const DeviceTensor& tensor, int64_t chip) {
  if (tensor.is_view()) {
    return absl::InvalidArgumentError(absl::StrCat("chip view: ", tensor.ToString(),
                                                   " is a view; take the chip view of the tensor"));
  }
  return ChipView(tensor, chip, tensor.element(), 0);
}

absl::StatusOr<DeviceTensor> ChipView(const DeviceTensor& tensor, int64_t chip, const Mapping& element,
                                      int64_t offset_bytes) {
  return UnitView(tensor, 0, "chip", chip, tensor.device().chips(), element, offset_bytes);
}

absl::StatusOr<DeviceTensor> ClusterView(const DeviceTensor& tensor, int64_t cluster, const Mapping& element,
                                         int64_t offset_bytes) {
  if (tensor.tier() != Tier::kDm && tensor.tier() != Tier::kSpm) {
    return absl::InvalidArgumentError(absl::StrCat("cluster view: ", tensor.ToString(), " has no Cluster level"));
  }
  return UnitView(tensor, 1, "cluster", cluster, kClustersPerChip, element, offset_bytes);
}

}  // namespace visa
