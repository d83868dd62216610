// Whole-kernel figures of one sample (`visa bench SAMPLE`, `visa bench --all`): the interpreter's
// run, the JIT's first compile, its whole run on a fresh device (what `visa run --backend jit`
// does, compile excluded) and relaunched on a warm device (a decode loop), each op's time in both
// with the bytes it reads and writes, and references measured in the same process: the sample's
// host reference and memcpy of the bytes the run (and each op) writes. Every figure is the median
// of `repeat` runs; a figure not measured says why (`skipped`), never reads as zero.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "samples/sample.h"
#include "tools/progress.h"

namespace visa::cli {

struct WholeKernelSettings {
  int repeat = 3;   // runs per figure (the median is reported)
  int threads = 0;  // JIT threads; 0: the host's
  // The interpreter's runs of one sample stop once they took this long together (the first run is
  // abandoned at an op boundary past it and the figure is skipped); 0 skips the interpreter.
  double max_interp_seconds = 30;
};

// A measured time, or why there is none.
struct Figure {
  std::optional<double> seconds;
  std::string skipped;  // the reason, when `seconds` is empty
  static Figure Of(double s) { return {s, ""}; }
  static Figure Skipped(std::string why) { return {std::nullopt, std::move(why)}; }
};

struct OpFigures {
  std::string kind;  // "pipeline main", "dma tdma", ...
  std::string resource;  // "main", "sub", "dma" (runtime/op_description.h)
  // The compute engines a pipeline runs ("contraction", "vector", "transpose"); none for a move,
  // a register load or a plain fetch-commit. Lets a reader hold Vector Engine pipelines to a host loop.
  std::vector<std::string> engines;
  int64_t read_bytes = 0, written_bytes = 0;  // the op's description's ranges
  double fresh_seconds = 0;   // in the run on a fresh device (its last launch of the program, for a decode loop)
  int64_t fresh_page_faults = 0;  // minor page faults during it: the pages it touched first
  Figure warm;                // in a warm relaunch
  double memcpy_seconds = 0;  // memcpy of `written_bytes`, warm buffers
  double memcpy_fresh_seconds = 0;  // the same into pages never touched (what a fresh device's op pays)
  // The same with the source just written and the destination out of the core's caches, as a
  // relaunch's op finds them (MemcpyColdDestinationSeconds): what the warm target is judged by.
  double memcpy_cold_dst_seconds = 0;
};

struct SampleFigures {
  std::string sample;
  int repeat = 0, threads = 0;
  std::string target;
  Figure interp;
  int interp_runs = 0;  // runs behind the interpreter's median (fewer than `repeat` past the budget)
  double compile_first = 0, compile_cached = 0;
  double jit_fresh = 0;  // whole run on a fresh device, uninstrumented
  Figure jit_warm;       // whole relaunch on the device of a finished run
  Figure host_reference;
  int64_t read_bytes = 0, written_bytes = 0;  // summed over the ops
  double memcpy_written = 0;                  // memcpy of `written_bytes`, warm buffers
  double memcpy_written_fresh = 0;            // the same into pages never touched (page faults included)
  std::vector<OpFigures> ops;
  // The cost of an op in a warm relaunch that moves almost nothing: the fastest op of the relaunch
  // (an upper bound on the fixed cost every op pays), and the relaunch's time outside the ops per op.
  Figure warm_fastest_op, warm_outside_ops_per_op;
};

// Measures `sample`; an error when a run fails or the JIT's fresh result disagrees with the
// sample's reference (Internal). `progress` is stepped once per run.
absl::StatusOr<SampleFigures> MeasureWholeKernel(const samples::Sample& sample, const WholeKernelSettings& settings,
                                                 Progress& progress);

// Progress steps MeasureWholeKernel takes for one sample.
int64_t WholeKernelSteps(const WholeKernelSettings& settings);

// a / b, nullopt when either is missing or b is not positive.
std::optional<double> Ratio(const Figure& a, const Figure& b);

// The text of one sample (its figures, then one line per op) and the summary table of many.
std::string WholeKernelText(const SampleFigures& f);
std::string WholeKernelTable(const std::vector<SampleFigures>& all);

}  // namespace visa::cli
