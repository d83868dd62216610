// The kernel's own ops' cycles: the schedule without its host transfers (pdma host -> HBM and
// back), which at full range dwarf a small kernel's compute. The SVG and the HTML viewer open on it.
#pragma once

#include <cstdint>
#include <string>

#include "runtime/scheduler.h"

namespace visa::cli {

// A host transfer by its label ("pdma host -> hbm#1", "pdma hbm#7 -> host").
bool IsHostTransfer(const std::string& label);

struct CycleSpan {
  int64_t from = 0, to = 0;
};

// From the first start to the last end of the ops that are not host transfers; the whole schedule
// [0, makespan) when every op is one (or there is none).
CycleSpan KernelSpan(const Schedule& schedule);

}  // namespace visa::cli
