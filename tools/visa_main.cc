// The `visa` command line: cli::Main over the repository's samples (tools/cli_main.h), the same
// entry a kernel program of one's own calls with its kernels.
#include "tools/cli_main.h"

int main(int argc, char** argv) {
  return visa::cli::Main(argc, argv, {}, {.name = "visa", .keep_builtin_samples = true});
}
