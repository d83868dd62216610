// Compiler: the JIT's one owner of an ORC LLJIT instance. Modules built with IRBuilder are
// optimized with the pipeline their Optimization names for the host CPU (its name and features, so
// AVX2 / AVX-512 are used), compiled, and their functions looked up by name. With the disk cache
// on (object_cache.h), a module whose object some process stored before is linked from disk:
// neither optimized nor code-generated.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/statusor.h"

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
};

struct CompilerOptions {
  bool disk_cache = false;  // keep compiled objects on disk (VISA_JIT_CACHE=off overrides)
  std::string cache_dir = {};  // empty: $VISA_CACHE_DIR, $XDG_CACHE_HOME/visa/jit, $HOME/.cache/visa/jit
};

class Compiler {
 public:
  static absl::StatusOr<std::unique_ptr<Compiler>> Create(const CompilerOptions& options = {});
  ~Compiler();

  // A fresh module whose data layout and triple are the host's.
  std::unique_ptr<llvm::Module> NewModule(llvm::LLVMContext& context, const std::string& name) const;

  // Verifies, optimizes and compiles `module` (or loads its object from the disk cache), and
  // returns the address of `function`, which is linked under a name derived from the module's
  // bitcode: a module equal to one compiled before returns that one's address.
  absl::StatusOr<void*> Compile(std::unique_ptr<llvm::Module> module,
                                std::unique_ptr<llvm::LLVMContext> context, const std::string& function,
                                Optimization optimization = {});

  // "skylake-avx512 (+avx2,+avx512f,...)": what the code is tuned for.
  std::string target() const;

  // Modules optimized and code-generated; the disk cache's directory (empty when it is off) and
  // the objects loaded from it and stored in it.
  int64_t compiles() const;
  std::string disk_cache_directory() const;
  int64_t disk_hits() const;
  int64_t disk_writes() const;

 private:
  struct Impl;
  explicit Compiler(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace visa::jit
