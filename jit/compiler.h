// Compiler: the JIT's one owner of an ORC LLJIT instance. Modules built with IRBuilder are
// optimized with the new pass manager's O3 pipeline for the host CPU (its name and features, so
// AVX2 / AVX-512 are used), compiled, and their functions looked up by name.
#pragma once

#include <memory>
#include <string>

#include "absl/status/statusor.h"

namespace llvm {
class LLVMContext;
class Module;
}  // namespace llvm

namespace visa::jit {

class Compiler {
 public:
  static absl::StatusOr<std::unique_ptr<Compiler>> Create();
  ~Compiler();

  // A fresh module whose data layout and triple are the host's.
  std::unique_ptr<llvm::Module> NewModule(llvm::LLVMContext& context, const std::string& name) const;

  // Verifies, optimizes (O3) and compiles `module`, and returns the address of `function`.
  absl::StatusOr<void*> Compile(std::unique_ptr<llvm::Module> module,
                                std::unique_ptr<llvm::LLVMContext> context, const std::string& function);

  // "skylake-avx512 (+avx2,+avx512f,...)": what the code is tuned for.
  std::string target() const;

 private:
  struct Impl;
  explicit Compiler(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace visa::jit
