// `visa schedule SAMPLE --html FILE`: the schedule viewer, one self-contained HTML page (inline CSS
// and script, no network) drawn by its script from the schedule embedded as JSON: lanes per
// context (per chip when the program spans several), ops labelled by the kernel's names and
// coloured by engine, a memory view (each tensor a rectangle over its lifetime and address range,
// per tier), brush zoom on both axes, the description of a clicked op and what it waited on, the
// critical path, and a header with the makespan, each context's busy share and (with --jit) the
// host's measured time per op.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "nlohmann/json.hpp"
#include "runtime/program.h"
#include "runtime/scheduler.h"
#include "tools/kernel_span.h"

namespace visa::cli {

// The ops on the chain that reaches the makespan, last first: from an op ending at the makespan,
// each op's `waited_on` op in turn, until an op that waited on nothing.
std::vector<int> CriticalPath(const Schedule& schedule);

// The engine an op's box is coloured by, read from its label's stage chain: "dma", "contract",
// "vector", "transpose", "load" (to TRF / VRF), "memset", "move" (fetch and commit alone).
std::string EngineOf(const std::string& label);

// The model step of a label: its `.named(...)` name up to a bracketed detail ("Q projection [g0 k1]
// operands: ..." -> "Q projection"); empty when the op has no name.
std::string StepOfLabel(const std::string& label);

struct ViewerInput {
  const Schedule* schedule = nullptr;
  const Program* program = nullptr;
  const std::vector<ScheduleInput>* inputs = nullptr;
  std::string sample, description;
  // The host's measured seconds per op on the JIT (`--jit`), in program order (none for a host
  // move, which runs outside the backend); empty: not measured.
  std::vector<std::optional<double>> host_seconds;
};

// What the page draws: {"sample", "description", "makespan", "kernel_span": [from, to],
// "chips", "lanes": [{"id", "resource", "chip"}], "busy": {"main": share, ...}, "critical_path",
// "ops": [{"op", "label", "name", "step", "engine", "resource", "chip" (the lane's), "chips", "lane", "start", "end",
// "ready", "waited_on": {...}, "hazards", "explain", "reads", "writes", "host_s", "starving"}],
// "tensors": [{"tensor", "tier", "begin", "end", "first", "last", "ops"}], "warnings"}.
nlohmann::json ViewerJson(const ViewerInput& input);

// The whole page.
std::string ScheduleHtml(const ViewerInput& input);

}  // namespace visa::cli
