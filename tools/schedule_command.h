// `visa schedule SAMPLE`: the sample's program placed on main / sub / DMA by the scheduler; prints
// the table (op, resource, start, end, cycles, waited on) and the makespan, or `--json` the same
// as JSON; `--trace FILE` writes the Chrome trace event format, `--svg FILE` the timeline picture,
// `--html FILE` the interactive viewer (tools/schedule_html.h), with `--jit` the host's time per op.
#pragma once

#include <ostream>
#include <string>

#include "CLI/CLI.hpp"

namespace visa::cli {

struct ScheduleOptions {
  std::string sample;
  bool json = false;
  std::string trace_path;  // empty: no trace
  std::string svg_path;    // empty: no picture
  std::string svg_window;  // "FROM:TO" cycles drawn, empty: the kernel's own ops (host transfers folded)
  std::string html_path;   // empty: no viewer page
  bool jit_times = false;  // run the sample on the JIT, op by op timed, for the viewer's host times
  bool avoid_starvation = false;  // ops with 64+ same-bank runs hold the DMA engine too
};

// Exit codes: 0 scheduled (warnings included), 2 an error (unknown sample, a file not written).
int ScheduleSampleCommand(const ScheduleOptions& options, std::ostream& out, std::ostream& err);

void AddScheduleCommand(CLI::App& app, ScheduleOptions& options, int& exit_code);

}  // namespace visa::cli
