// What the schedule tests share: running `visa schedule` in process with its output captured, and
// a hand-made scheduled op. Header-only: test common code links before the command-line library.
#pragma once

#include <sstream>
#include <string>

#include "runtime/scheduler.h"
#include "tools/schedule_command.h"

namespace visa::cli::schedule_test {

struct ScheduleResult {
  int code;
  std::string out, err;
};

inline ScheduleResult RunSchedule(const ScheduleOptions& options) {
  std::ostringstream out, err;
  const int code = ScheduleSampleCommand(options, out, err);
  return {code, out.str(), err.str()};
}

// An op on `resource` over [start, end), ready at its start, waiting for `on` for `kind`.
inline ScheduledOp Op(int index, const std::string& label, Resource resource, int64_t start, int64_t end,
                      WaitReason::Kind kind = WaitReason::Kind::kNone, int on = -1) {
  ScheduledOp op;
  op.index = index;
  op.label = label;
  op.resource = resource;
  op.start = op.ready = start;
  op.end = end;
  op.waited_on.kind = kind;
  op.waited_on.on = on;
  return op;
}

}  // namespace visa::cli::schedule_test
