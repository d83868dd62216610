// Machine-readable output of the commands (`--json`): one JSON document per command on stdout,
// written with nlohmann-json. Errors stay on stderr as `error: ...` with exit code 2.
#pragma once

#include <string>

#include "nlohmann/json.hpp"
#include "runtime/op_description.h"
#include "runtime/program.h"
#include "samples/sample.h"

namespace visa::cli {

// `visa run`: {"sample", "ok", "elements", "max_error", "mismatch" (null when ok), "note",
// "kernel_seconds", "device_resident_bytes", "stream_elements"}.
nlohmann::json RunJson(const std::string& sample, const std::string& backend, const samples::SampleRun& run);

// One op of `visa explain`: {"index", "kind", "text", "resource", "cycles" (null when the manual
// gives no formula), "terms": [...], "reads": [...], "writes": [...]}.
nlohmann::json OpJson(const Op& op, size_t index);

// The whole program: {"ops": [...], "hash": "%016x"}.
nlohmann::json ProgramJson(const Program& program);

}  // namespace visa::cli
