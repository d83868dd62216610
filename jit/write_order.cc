// Write order: sorting a nest's levels by destination stride and taking its broadcast levels out.
#include "jit/write_order.h"

#include <algorithm>

#include "dsl/layout.h"

namespace visa::jit {
namespace {

std::vector<NestLevel> SortedByDestination(std::vector<NestLevel> levels) {
  std::stable_sort(levels.begin(), levels.end(),
                   [](const NestLevel& a, const NestLevel& b) { return a.dst_stride < b.dst_stride; });
  return levels;
}

}  // namespace

bool DistinctWrites(const MoveNest& nest) {
  int64_t reach = 0;  // the largest offset the levels below reach
  for (const NestLevel& level : SortedByDestination(nest.levels)) {
    if (level.count <= 1) continue;
    if (level.dst_stride <= reach) return false;
    reach += (level.count - 1) * level.dst_stride;
  }
  return true;
}

MoveNest InWriteOrder(const MoveNest& nest) {
  return MoveNest{Coalesce(SortedByDestination(nest.levels))};
}

WritePlan PlanWrites(const MoveNest& nest) {
  if (!DistinctWrites(nest)) return WritePlan{nest, {}};
  WritePlan plan;
  std::vector<NestLevel> footprint;  // the positions written so far, as a copy of themselves
  std::vector<NestLevel> broadcast;
  for (const NestLevel& level : SortedByDestination(nest.levels)) {
    if (level.count <= 1) continue;
    if (level.src_stride == 0) {
      broadcast.push_back(level);
    } else {
      plan.first.levels.push_back(level);
      footprint.push_back({level.count, level.dst_stride, level.dst_stride});
    }
  }
  plan.first = InWriteOrder(plan.first.levels.empty() ? MoveNest{{{1, 1, 0}}} : plan.first);
  for (const NestLevel& level : broadcast) {
    // Copies 1 .. count - 1 of everything written so far, from copy 0.
    std::vector<NestLevel> copy = footprint;
    copy.push_back({level.count - 1, level.dst_stride, 0});
    plan.copies.push_back({InWriteOrder(MoveNest{copy}), level.dst_stride});
    footprint.push_back({level.count, level.dst_stride, level.dst_stride});
  }
  return plan;
}

}  // namespace visa::jit
