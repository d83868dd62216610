// Descriptor entries to loop-nest levels.
#include "jit/dma_nest.h"

#include <cstdlib>

#include "dsl/status_macros.h"
#include "runtime/device.h"

namespace visa::jit {
namespace {

// The buffer stride of a descriptor stride: whole units rescaled, a stride inside a unit kept (its
// reach is checked by InsideElement).
int64_t Rescale(int64_t stride, const DmaEnd& end) {
  if (end.unit_span == end.unit_positions || stride % end.unit_span != 0) return stride;
  return stride / end.unit_span * end.unit_positions;
}

// Whether the levels that stay inside a unit reach no further than the staged Element.
bool InsideElement(const std::vector<MoveLevel>& levels, const DmaEnd& end, bool dst) {
  if (end.unit_span == end.unit_positions) return true;
  int64_t reach = 0;
  for (const MoveLevel& level : levels) {
    const int64_t stride = dst ? level.dst_stride : level.src_stride;
    if (stride % end.unit_span != 0) reach += (level.count - 1) * std::llabs(stride);
  }
  return reach < end.element_size;
}

}  // namespace

DmaEnd DmaEndOf(const DeviceTensor& tensor, bool in_place) {
  const Tier tier = tensor.placement().tier;
  const int64_t unit_bytes = tier == Tier::kHbm ? kHbmBytesPerChip : Device::UnitStride(tier);
  DmaEnd end;
  end.unit_span = unit_bytes * 8 / StorageBits(tensor.dtype());
  end.element_size = tensor.element().size();
  end.unit_positions = in_place ? end.unit_span : end.element_size;
  return end;
}

std::optional<MoveNest> DmaNestOf(const DmaDescriptors& descriptors, const DmaEnd& src, const DmaEnd& dst) {
  const std::vector<MoveLevel> levels = descriptors.Levels();
  if (!InsideElement(levels, src, false) || !InsideElement(levels, dst, true)) return std::nullopt;
  MoveNest nest;
  for (const MoveLevel& level : levels) {
    nest.levels.push_back({level.count, Rescale(level.dst_stride, dst), Rescale(level.src_stride, src)});
  }
  return nest;
}

int64_t FirstPositionOf(int64_t first_position, const DmaEnd& end) { return Rescale(first_position, end); }

InPlace FromFirstPosition(InPlace end, int64_t first_position, int bits) {
  VISA_CHECK(first_position >= 0 && first_position <= end.positions && first_position * bits % 8 == 0,
             "a descriptor's first position is a whole byte inside its end");
  end.data += first_position * bits / 8;
  end.positions -= first_position;
  return end;
}

}  // namespace visa::jit
