// A Schedule as JSON (`visa schedule --json`) and in the Chrome trace event format (`--trace`):
// one track per resource, each op a complete event ("ph": "X") with its configuration and cycle
// terms in args, each hazard an arrow between the two ops (flow events "s" / "f"). Perfetto and
// chrome://tracing open it; one trace microsecond is one cycle.
#pragma once

#include <string>

#include "nlohmann/json.hpp"
#include "runtime/program.h"
#include "runtime/scheduler.h"

namespace visa::cli {

// {"sample", "makespan", "ops": [{"op", "label", "resource", "start", "end", "cycles",
// "estimated", "waited_on": {"kind", "op", "hazard", "tensor", "text"}, "hazards": [...],
// "longest_bank_run", "holds_dma"}], "warnings": [{"ops", "dma_op", "bank", "accesses", "message"}]}
nlohmann::json ScheduleJson(const Schedule& schedule, const std::string& sample);

// `program` gives each op's configuration (its text) and `descriptions` its cycle terms.
nlohmann::json ScheduleTrace(const Schedule& schedule, const Program& program,
                             const std::vector<ScheduleInput>& inputs, const std::string& sample);

}  // namespace visa::cli
