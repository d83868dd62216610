// ChipRangeMove: the per-chip parts of a move that keeps every element on its chip.
#include "mpi/chip_range_move.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "dsl/status_macros.h"
#include "runtime/chip_view.h"
#include "runtime/device.h"
#include "runtime/transfer.h"

namespace visa::mpi {
namespace {

// The same single axis over every chip of the device at both ends' Chip level.
bool SameChipAxis(const DeviceTensor& src, const DeviceTensor& dst) {
  const Mapping from = src.levels().front();  // levels() is a copy
  const Mapping to = dst.levels().front();
  const int64_t chips = dst.device().chips();
  return from.kind() == Mapping::Kind::kSymbol && to.kind() == Mapping::Kind::kSymbol &&
         from.axis().name == to.axis().name && from.size() == chips && to.size() == chips;
}

absl::Status NotSplit(const DmaTensors& tensors, const std::string& why) {
  return absl::InvalidArgumentError(absl::StrCat("chip range move of ", tensors.src.ToString(), " -> ",
                                                 tensors.dst.ToString(), ": ", why));
}

}  // namespace

absl::StatusOr<bool> SplitsByChip(const DmaOp& op, const DmaTensors& tensors) {
  if (op.fill() != nullptr || op.indirect() != nullptr || op.index() != nullptr || tensors.index || tensors.base) {
    return false;
  }
  const DeviceTensor& src = tensors.src;
  const DeviceTensor& dst = tensors.dst;
  if (src.tier() == Tier::kHost || dst.tier() == Tier::kHost || src.is_view() || dst.is_view()) return false;
  if (&src.device() != &dst.device() || !SameChipAxis(src, dst)) return false;
  ASSIGN_OR_RETURN(TransferReport plan, PlanTransfer(src, dst.placement()));
  return !plan.crosses_chips;
}

absl::Status RunChipRange(Backend& backend, const DmaOp& op, const DmaTensors& tensors, int first, int count) {
  const int chips = tensors.dst.device().chips();
  if (first < 0 || count < 1 || first + count > chips) {
    return NotSplit(tensors, absl::StrCat("the chips [", first, ", ", first + count,
                                          ") leave the device's chips [0, ", chips, ")"));
  }
  ASSIGN_OR_RETURN(bool splits, SplitsByChip(op, tensors));
  if (!splits) {
    return NotSplit(tensors, "a move runs by chip only when it is a plain move between two whole tensors with the "
                             "same single axis over every chip as their Chip level, each element staying on its chip");
  }
  // The recorded descriptors and the op's identity describe the whole move: each part is planned
  // from its two chip views (a backend keeps nothing of an op without a serial).
  DmaOp part = op;
  part.work = DmaMove{};
  part.serial = 0;
  for (int chip = first; chip < first + count; ++chip) {
    ASSIGN_OR_RETURN(DeviceTensor from, ChipView(tensors.src, chip));
    ASSIGN_OR_RETURN(DeviceTensor to, ChipView(tensors.dst, chip));
    RETURN_IF_ERROR(backend.Run(part, DmaTensors{.src = from, .dst = to}));
  }
  return absl::OkStatus();
}

}  // namespace visa::mpi
