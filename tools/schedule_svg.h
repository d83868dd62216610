// The timeline of a Schedule as an SVG picture readable without any tool: one lane per resource
// (main, sub, DMA), each op a labelled box as long as its cycles, the time an op waited on a
// hazard shaded before it with an arrow from the op it waited for, a cycle axis, and a legend
// listing every op. Ops named by a bank-starvation warning are outlined in red. A key explains the
// colours, the hatching and the arrows. By default the host transfers are folded into narrow grey
// bands at the edges so the kernel's own ops get the width.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "runtime/scheduler.h"

namespace visa::cli {

// The cycles drawn: [from, to); the whole schedule by default. Ops outside are left out of the
// lanes (the legend lists every op), ops across an edge are cut at it.
struct SvgWindow {
  int64_t from = 0;
  std::optional<int64_t> to;  // nullopt: the makespan
  // With no explicit window: the host transfers before and after the kernel's own ops
  // (tools/kernel_span.h) drawn in bands of a fixed narrow width, not to scale.
  bool fold_host_transfers = false;
};

// `title` heads the picture (e.g. the sample's name). Every op drawn is a
// <rect class="op-box" data-op="N">.
std::string ScheduleSvg(const Schedule& schedule, const std::string& title, const SvgWindow& window = {});

}  // namespace visa::cli
