// ProgramPartition: how the new kernels of a program (Compiler::CompileProgram) are spread over
// the compile threads and into modules. Code generation costs per function (instruction
// selection, register allocation), so a program's kernels are split by their size over the
// threads, largest first onto the least loaded; each thread then compiles one module per
// optimization level among its kernels (a module has one level: the code generator's belongs to
// the target machine). A program too small to be worth a second thread stays on one.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace visa::jit {

struct KernelCost {
  int level = 0;              // which optimization (one module per level and thread)
  int64_t instructions = 0;   // its IR's size before optimization
};

struct PlannedModule {
  int level = 0;
  std::vector<size_t> kernels;  // positions in the costs given, ascending
};

// What compiling a function costs beyond its instructions, in instructions: a move of 80
// instructions took ~5 ms to generate alone, a lane kernel of 4,700 ~120 ms.
inline constexpr int64_t kFunctionCost = 250;
// Below this many (cost-weighted) instructions a program is compiled on one thread: a second
// thread's module costs about a millisecond of its own.
inline constexpr int64_t kMinInstructionsPerThread = 1500;

// The modules each thread compiles: at most `threads` lists (fewer when the program is small),
// none empty, the same for the same costs whatever their order of equal kernels.
std::vector<std::vector<PlannedModule>> PartitionKernels(const std::vector<KernelCost>& kernels, int threads);

}  // namespace visa::jit
