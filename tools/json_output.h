// Machine-readable output of the commands (`--json`): one JSON document per command on stdout,
// written with nlohmann-json. Errors stay on stderr as `error: ...` with exit code 2.
#pragma once

#include <string>

#include "nlohmann/json.hpp"
#include "runtime/op_description.h"
#include "runtime/program.h"
#include "samples/sample.h"
#include "tools/whole_kernel_bench.h"

namespace visa::cli {

// `visa run`: {"sample", "ok", "elements", "max_error", "mismatch" (null when ok), "note",
// "kernel_seconds", "device_resident_bytes", "stream_elements"}.
nlohmann::json RunJson(const std::string& sample, const std::string& backend, const samples::SampleRun& run);

// One op of `visa explain`: {"index", "kind", "text", "resource", "cycles" (null when the manual
// gives no formula), "terms": [...], "reads": [...], "writes": [...]}.
nlohmann::json OpJson(const Op& op, size_t index);

// The whole program: {"ops": [...], "hash": "%016x"}.
nlohmann::json ProgramJson(const Program& program);

// `visa bench SAMPLE`: one object; `visa bench --all`: an array of them, one per sample (a sample
// whose measurement failed: {"sample", "error"}). Times are seconds, medians of "repeat" runs; a
// figure not measured is null and its "..._skipped" says why (null when measured):
// {"sample", "repeat", "threads", "target",
//  "interp_s", "interp_runs", "interp_skipped",
//  "jit_compile_first_s", "jit_compile_cached_s",
//  "jit_run_s" (whole run on a fresh device), "jit_warm_s", "jit_warm_skipped" (relaunch, warm device),
//  "host_reference_s", "host_reference_skipped", "read_bytes", "written_bytes",
//  "memcpy_s" (memcpy of "written_bytes"),
//  "interp_over_jit", "interp_over_jit_warm", "jit_over_host_reference", "jit_warm_over_host_reference",
//  "host_reference_over_jit", "jit_over_memcpy", "jit_warm_over_memcpy" (null when a figure is missing),
//  "warm_fastest_op_s", "warm_outside_ops_per_op_s" (the fixed cost per op of a warm relaunch),
//  "ops": [{"index", "kind", "resource", "read_bytes", "written_bytes", "jit_run_s", "jit_warm_s",
//           "memcpy_s", "jit_over_memcpy", "jit_warm_over_memcpy"}]}
nlohmann::json BenchJson(const SampleFigures& figures);

}  // namespace visa::cli
