// Compiler: the JIT's one owner of an ORC LLJIT instance. Kernels are named by their key (the spec
// their IR is generated from); a kernel is built with IRBuilder, optimized with the pipeline its
// Optimization names for the host CPU (its name and features, so AVX2 / AVX-512 are used),
// compiled, and its function looked up by name. With the disk cache on (object_cache.h), a kernel
// whose object some process stored before is linked from disk: no IR is built, nothing optimized
// or code-generated.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "jit/object_cache.h"

namespace llvm {
class LLVMContext;
class Module;
}  // namespace llvm

namespace visa::jit {

// The IR passes a kernel is optimized with.
enum class IrPipeline {
  kNone = 0,    // no passes: slow code, for kernels run once
  kKernel = 1,  // the few passes the JIT's explicit IR needs (compiler.cc)
  kO2 = 2,      // LLVM's default O2 pipeline
};

// The optimization a kernel is compiled with: its IR pipeline and the code generator's level (0
// None, 1 Less, 2 Default, 3 Aggressive). Chosen per kernel kind by measurement (kernel_cache.cc);
// part of the module, so of its symbol and of its disk cache key.
struct Optimization {
  IrPipeline ir = IrPipeline::kKernel;
  int codegen = 3;
  // Loop strength reduction in code generation. Off for move kernels: a third of their code
  // generation time, and their loops' addresses are already base + index (compiler.cc).
  bool strength_reduction = true;
};

// The optimization as one number (ir * 4 + codegen, plus 16 without strength reduction): the
// module flag it travels as, and which module of a program a kernel goes to.
int OptimizationCode(Optimization optimization);

// What names a kernel's code: its key (the kernel spec's Key(), which must name everything its IR
// generator reads) and its optimization. With the Compiler's CodegenConfig it is the disk cache key
// (ObjectKey).
std::string KernelIdentity(absl::string_view kernel_key, Optimization optimization);

struct CompilerOptions {
  bool disk_cache = false;  // keep compiled objects on disk (VISA_JIT_CACHE=off overrides)
  std::string cache_dir = {};  // empty: $VISA_CACHE_DIR, $XDG_CACHE_HOME/visa/jit, $HOME/.cache/visa/jit
  // Threads a program's kernels are compiled on (CompileProgram); 0: $VISA_JIT_COMPILE_THREADS,
  // else the host's hardware threads (CompileThreads). Independent of the threads ops run on.
  int compile_threads = 0;
};

// More compile threads than this split a program's code too finely to gain anything.
inline constexpr int kMaxCompileThreads = 8;

// The compile threads `requested` (CompilerOptions::compile_threads) resolves to, 1 to
// kMaxCompileThreads.
int CompileThreads(int requested);

class Compiler {
 public:
  static absl::StatusOr<std::unique_ptr<Compiler>> Create(const CompilerOptions& options = {});
  ~Compiler();

  // A fresh module whose data layout and triple are the host's.
  std::unique_ptr<llvm::Module> NewModule(llvm::LLVMContext& context, const std::string& name) const;

  // Adds the function `name` to the module it is given.
  using BuildFn = std::function<void(llvm::Module& module, const std::string& name)>;

  // The address of the kernel `kernel_key` names (see KernelIdentity). On a disk cache hit its
  // object is linked and `build` never runs; else `build` makes the module, which is verified,
  // optimized and compiled (and stored on disk). A module whose bitcode equals one compiled before
  // in this process returns that one's address (and is stored on disk under its own key too).
  absl::StatusOr<void*> Compile(const std::string& kernel_key, Optimization optimization, const BuildFn& build);

  // One kernel of a program compiled ahead (CompileProgram).
  struct Request {
    std::string kernel_key;
    Optimization optimization;
    BuildFn build;
  };
  // The addresses of a program's kernels, in the requests' order. Kernels linked before in this
  // process are not built again; the others, when there are several, are compiled together: one
  // module per optimization among them and compile thread, each optimized and code-generated once
  // (the fixed cost of a module, paid once rather than per kernel; the threads in parallel,
  // program_partition.h), and with the disk cache on stored as one entry
  // keyed by the set of their identities (program_entry.h), which a later process links whole.
  // A single new kernel goes Compile's way (its own entry, shared with a lazy compile of it).
  absl::StatusOr<std::vector<void*>> CompileProgram(const std::vector<Request>& requests);

  // What the disk cache key depends on besides each kernel's identity.
  const CodegenConfig& config() const;

  // "skylake-avx512 (+avx2,+avx512f,...)": what the code is tuned for.
  std::string target() const;

  // Modules optimized and code-generated, and the kernels they held; the disk cache's directory
  // (empty when it is off), the kernels linked from it, its entries read and those written.
  int64_t compiles() const;
  int64_t kernels_compiled() const;
  int64_t disk_loads() const;
  // Kernels compiled as a wrapper around the body of another kernel equal to it but for its
  // tables' contents (shared_body.h): their code generated once.
  int64_t bodies_shared() const;
  std::string disk_cache_directory() const;
  int64_t disk_hits() const;
  int64_t disk_writes() const;

 private:
  struct Impl;
  explicit Compiler(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace visa::jit
