// The `visa` command line: subcommands for exploring mappings (and, later, running kernels).
#include <iostream>

#include "CLI/CLI.hpp"
#include "tools/bench_command.h"
#include "tools/check_command.h"
#include "tools/fuzz_diff_command.h"
#include "tools/map_command.h"
#include "tools/run_command.h"
#include "tools/schedule_command.h"
#include "tools/seq_command.h"

int main(int argc, char** argv) {
  CLI::App app{"visa: the TCP Virtual ISA in C++ (mappings, kernels, interpreter and JIT)"};
  app.require_subcommand(1);
  int exit_code = 0;
  visa::cli::MapOptions map_options;
  visa::cli::AddMapCommand(app, map_options, exit_code);
  visa::cli::SeqOptions seq_options;
  visa::cli::AddSeqCommand(app, seq_options, exit_code);
  visa::cli::RunOptions run_options;
  std::string explain_sample;
  visa::cli::AddRunCommands(app, run_options, explain_sample, exit_code);
  visa::cli::CheckOptions check_options;
  visa::cli::AddCheckCommand(app, check_options, exit_code);
  visa::cli::BenchOptions bench_options;
  visa::cli::AddBenchCommand(app, bench_options, exit_code);
  visa::cli::FuzzDiffOptions fuzz_diff_options;
  visa::cli::AddFuzzDiffCommand(app, fuzz_diff_options, exit_code);
  visa::cli::ScheduleOptions schedule_options;
  visa::cli::AddScheduleCommand(app, schedule_options, exit_code);
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::cerr << "error: " << e.what() << "\n";
    return 2;
  }
  return exit_code;
}
