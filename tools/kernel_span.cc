// IsHostTransfer and KernelSpan.
#include "tools/kernel_span.h"

#include <algorithm>
#include <optional>

#include "absl/strings/match.h"

namespace visa::cli {

bool IsHostTransfer(const std::string& label) {
  return absl::StrContains(label, "host ->") || absl::StrContains(label, "-> host");
}

CycleSpan KernelSpan(const Schedule& schedule) {
  std::optional<CycleSpan> span;
  for (const ScheduledOp& op : schedule.ops) {
    if (IsHostTransfer(op.label)) continue;
    if (!span) span = CycleSpan{op.start, op.end};
    span->from = std::min(span->from, op.start);
    span->to = std::max(span->to, op.end);
  }
  if (!span || span->to <= span->from) return {0, schedule.makespan};
  return *span;
}

}  // namespace visa::cli
