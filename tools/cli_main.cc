// visa::cli::Main: the subcommands of tools/visa_main.cc over registered kernels.
#include "tools/cli_main.h"

#include <cstdio>
#include <iostream>

#include "CLI/CLI.hpp"
#include "mpi/mpi_command.h"
#include "tools/bench_command.h"
#include "tools/check_command.h"
#include "tools/fuzz_diff_command.h"
#include "tools/map_command.h"
#include "tools/run_command.h"
#include "tools/schedule_command.h"
#include "tools/seq_command.h"
#include "tools/text_flag.h"

namespace visa::cli {

int CheckStandardOutput() {
  // A command's result is its output: one lost (a full disk, a closed pipe) is a failure, not exit 0.
  std::cout.flush();
  if (std::cout.good() && std::fflush(stdout) == 0 && !std::ferror(stdout)) return 0;
  std::cerr << "error: standard output: writing the result failed (a full disk or a closed pipe?)\n";
  return 2;
}

namespace {

int RunMain(int argc, char** argv, std::vector<samples::Sample> kernels, const MainOptions& options);

}  // namespace

int Main(int argc, char** argv, std::vector<samples::Sample> kernels, const MainOptions& options) {
  mpi::MpiCommand launched;  // under mpirun: one output, compared across the ranks (mpi/mpi_command.h)
  const int exit_code = RunMain(argc, argv, std::move(kernels), options);
  return launched.Finish(exit_code);
}

namespace {

int RunMain(int argc, char** argv, std::vector<samples::Sample> kernels, const MainOptions& options) {
  if (absl::Status registered = samples::RegisterSamples(std::move(kernels), options.keep_builtin_samples);
      !registered.ok()) {
    std::cerr << "error: " << registered.message() << "\n";
    return 2;
  }
  CLI::App app{options.name + ": kernels on the TCP Virtual ISA (interpreter and JIT)", options.name};
  app.require_subcommand(1);
  int exit_code = 0;
  MapOptions map_options;
  AddMapCommand(app, map_options, exit_code);
  SeqOptions seq_options;
  AddSeqCommand(app, seq_options, exit_code);
  RunOptions run_options;
  std::string explain_sample;
  AddRunCommands(app, run_options, explain_sample, exit_code);
  CheckOptions check_options;
  AddCheckCommand(app, check_options, exit_code);
  BenchOptions bench_options;
  AddBenchCommand(app, bench_options, exit_code);
  FuzzDiffOptions fuzz_diff_options;
  AddFuzzDiffCommand(app, fuzz_diff_options, exit_code);
  ScheduleOptions schedule_options;
  AddScheduleCommand(app, schedule_options, exit_code);
  RefuseEmptyValues(app);
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
  return exit_code == 0 ? CheckStandardOutput() : exit_code;
}

}  // namespace

}  // namespace visa::cli
