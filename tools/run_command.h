// `visa run` and `visa explain`: run a sample on a backend, or print its program.
#pragma once

#include <ostream>
#include <string>

#include "CLI/CLI.hpp"

namespace visa::cli {

struct RunOptions {
  std::string sample;
  std::string backend = "interp";
  bool list = false;
  bool time = false;  // also print the kernel time and the interpreter's throughput
  // Reads of device memory nothing wrote: "error" (the run fails), "warn" (a warning on the
  // error stream, the run goes on) or "off" (no tracking). See runtime/uninitialized_reads.h.
  std::string uninitialized = "error";
  bool json = false;          // one JSON object (or the list as an array) on stdout, tools/json_output.h
  bool explain_json = false;  // `visa explain --json` (the explain subcommand shares these options)
};

// Exit codes: 0 ok, 1 mismatch, 2 error.
int RunSampleCommand(const RunOptions& options, std::ostream& out, std::ostream& err);
int ExplainSampleCommand(const std::string& sample, std::ostream& out, std::ostream& err);
// With `json`, the program as tools/json_output.h's ProgramJson plus "sample" and "description".
int ExplainSampleCommand(const std::string& sample, bool json, std::ostream& out, std::ostream& err);

void AddRunCommands(CLI::App& app, RunOptions& run, std::string& explain_sample, int& exit_code);

}  // namespace visa::cli
