// `visa schedule SAMPLE [--json] [--trace FILE] [--svg FILE]`.
#include "tools/schedule_command.h"

#include <algorithm>
#include <fstream>
#include <iostream>
#include <optional>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "dsl/text_excerpt.h"
#include "runtime/scheduler.h"
#include "runtime/trace_backend.h"
#include "samples/sample.h"
#include "jit/jit_backend.h"
#include "runtime/timing_backend.h"
#include "tools/schedule_html.h"
#include "tools/schedule_json.h"
#include "tools/schedule_svg.h"
#include "tools/text_flag.h"
#include "tools/vector_pass_label.h"
#include "runtime/trace_options.h"

namespace visa::cli {
namespace {

bool WriteFile(const std::string& path, const std::string& text, const char* what, std::ostream& err) {
  std::ofstream file(path, std::ios::binary);
  file << text;
  file.close();
  if (!file) {
    err << "error: " << what << ": cannot write `" << Excerpt(path, 0) << "`\n";
    return false;
  }
  return true;
}

// "FROM:TO" with 0 <= FROM < TO, in cycles; an error states the schedule's range.
bool ParseWindow(const std::string& text, int64_t makespan, SvgWindow& window, std::ostream& err) {
  const size_t colon = text.find(':');
  int64_t from = 0, to = 0;
  if (colon == std::string::npos || !absl::SimpleAtoi(text.substr(0, colon), &from) ||
      !absl::SimpleAtoi(text.substr(colon + 1), &to) || from < 0 || to <= from) {
    err << "error: --window: expected FROM:TO cycles with 0 <= FROM < TO, got `" << Excerpt(text, 0)
        << "`; the schedule spans cycles 0 to " << makespan << "\n";
    return false;
  }
  window.from = from;
  window.to = to;
  return true;
}

// The window within the schedule: FROM before the makespan (a window past it would draw an empty
// chart), TO cut at the makespan (the tick loop then never runs near the int64 limit). Every op
// starts when another ends or starts, so the ops cover [0, makespan) without a gap: a window
// within it always shows an op. Errors state the schedule's range.
bool FitWindow(const Schedule& schedule, SvgWindow& window, std::ostream& err) {
  const int64_t makespan = schedule.makespan;
  if (window.from >= makespan) {
    err << "error: --window: FROM " << window.from << " is at or past the schedule's makespan of " << makespan
        << " cycles: nothing would be drawn; the schedule spans cycles 0 to " << makespan
        << " (hint: --window 0:" << makespan << ")\n";
    return false;
  }
  window.to = std::min(*window.to, makespan);
  return true;
}

// A host move (a tensor from or to host memory) runs outside every backend: the JIT times no such op.
bool IsHostMove(const Op& op) {
  const auto* dma = std::get_if<DmaOp>(&op.body);
  return dma != nullptr && (!dma->src.handle || !dma->dst.handle);
}

// The host's seconds per op in one run on the JIT (compile excluded, a fresh device), in program
// order; none for a host move.
absl::StatusOr<std::vector<std::optional<double>>> JitSecondsPerOp(const samples::Sample& sample,
                                                                   const Program& program) {
  absl::StatusOr<std::unique_ptr<jit::JitBackend>> jit = jit::JitBackend::Create({});
  if (!jit.ok()) return jit.status();
  // Compiled first (the program the trace recorded), so the times are the runs', not the compiles'.
  if (absl::StatusOr<double> compiled = (*jit)->Prepare(program); !compiled.ok()) return compiled.status();
  TimingBackend timed(**jit);
  absl::StatusOr<samples::SampleRun> run = sample.Run(timed);
  if (!run.ok()) return run.status();
  const auto device_ops = static_cast<size_t>(std::count_if(program.ops.begin(), program.ops.end(),
                                                            [](const Op& op) { return !IsHostMove(op); }));
  if (timed.times().size() != device_ops) {
    return absl::InternalError(absl::StrCat("the JIT ran ", timed.times().size(), " device ops, the trace recorded ",
                                            device_ops));
  }
  std::vector<std::optional<double>> seconds;
  size_t next = 0;
  for (const Op& op : program.ops) {
    seconds.push_back(IsHostMove(op) ? std::nullopt : std::optional<double>(timed.times()[next++].seconds));
  }
  return seconds;
}

}  // namespace

int ScheduleSampleCommand(const ScheduleOptions& options, std::ostream& out, std::ostream& err) {
  if (options.jit_times && options.html_path.empty()) {
    err << "error: --jit measures the host's time per op for the viewer; add --html FILE\n";
    return 2;
  }
  if (!options.svg_window.empty() && options.svg_path.empty()) {
    err << "error: --window says which cycles the SVG draws; add --svg FILE\n";
    return 2;
  }
  const samples::Sample* sample = samples::FindSample(options.sample);
  if (sample == nullptr) {
    err << "error: unknown sample `" << Excerpt(options.sample, 0) << "` (see `visa run --list`)\n";
    return 2;
  }
  // Planning alone gives every op's resource, cycles and ranges: the trace backend computes nothing.
  TraceBackend trace;
  absl::StatusOr<samples::SampleRun> run = sample->Run(trace, TracingOptions());
  if (!run.ok()) {
    err << "error: " << run.status().message() << "\n";
    return 2;
  }
  const std::vector<ScheduleInput> inputs = ScheduleInputs(run->program);
  const Schedule schedule = MakeSchedule(inputs, SchedulerOptions{.starving_ops_hold_dma = options.avoid_starvation});
  if (!options.trace_path.empty() &&
      !WriteFile(options.trace_path, ScheduleTrace(schedule, run->program, inputs, sample->name).dump(1) + "\n",
                 "--trace", err)) {
    return 2;
  }
  // The pictures tell Vector Engine passes apart by what they compute (the table keeps the
  // scheduler's labels).
  Schedule pictured = schedule;
  for (ScheduledOp& op : pictured.ops) op.label = VectorPassLabel(run->program.ops[op.index], op.label);
  SvgWindow window;
  window.fold_host_transfers = options.svg_window.empty();
  if (!options.svg_window.empty() &&
      (!ParseWindow(options.svg_window, schedule.makespan, window, err) || !FitWindow(schedule, window, err))) {
    return 2;
  }
  if (!options.html_path.empty()) {
    ViewerInput viewer{.schedule = &pictured, .program = &run->program, .inputs = &inputs, .sample = sample->name,
                       .description = sample->description, .host_seconds = {}};
    if (options.jit_times) {
      absl::StatusOr<std::vector<std::optional<double>>> seconds = JitSecondsPerOp(*sample, run->program);
      if (!seconds.ok()) {
        err << "error: --jit: " << seconds.status().message() << "\n";
        return 2;
      }
      viewer.host_seconds = *std::move(seconds);
    }
    if (!WriteFile(options.html_path, ScheduleHtml(viewer), "--html", err)) return 2;
  }
  if (!options.svg_path.empty() &&
      !WriteFile(options.svg_path, ScheduleSvg(pictured, "visa schedule " + sample->name, window), "--svg", err)) {
    return 2;
  }
  if (options.json) {
    out << ScheduleJson(schedule, sample->name).dump(2) << "\n";
    // The table ends with the warnings; JSON holds them too, and stderr tells the reader.
    for (const StarvationWarning& w : schedule.warnings) err << w.ToString() << "\n";
  } else {
    out << "# " << sample->name << ": " << sample->description << "\n" << schedule.ToText();
  }
  return 0;
}

void AddScheduleCommand(CLI::App& app, ScheduleOptions& options, int& exit_code) {
  CLI::App* cmd = app.add_subcommand(
      "schedule", "Place a sample's ops on main / sub / DMA: start, end, what each waited on, the makespan");
  cmd->add_option("sample", options.sample, "Sample name (see `visa run --list`)")->required();
  cmd->add_flag("--json", options.json, "Print the schedule as JSON");
  cmd->add_option("--trace", options.trace_path, "Write the Chrome trace event format (Perfetto) to FILE")
      ->check(NonEmptyText("a FILE"));
  cmd->add_option("--svg", options.svg_path, "Write the timeline as an SVG picture to FILE")->check(NonEmptyText("a FILE"));
  cmd->add_flag("--avoid-starvation", options.avoid_starvation,
                "Schedule ops with 64+ consecutive same-bank DM accesses as if they occupied DMA (the compiler's remedy)");
  cmd->add_option("--html", options.html_path,
                  "Write the schedule viewer to FILE: one HTML page, no network (lanes, memory, zoom, op details)")
      ->check(NonEmptyText("a FILE"));
  cmd->add_flag("--jit", options.jit_times, "With --html: run the sample on the JIT and show the host's time per op");
  cmd->add_option("--window", options.svg_window,
                  "Draw only cycles FROM:TO in the SVG (default: the kernel's own ops, host transfers folded)")
      ->check(NonEmptyText("cycles FROM:TO"));
  cmd->callback([&options, &exit_code] { exit_code = ScheduleSampleCommand(options, std::cout, std::cerr); });
}

}  // namespace visa::cli
