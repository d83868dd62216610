// IR control flow shared by the kernel builders: counted loops and one-armed conditionals.
#pragma once

#include <functional>

#include "llvm/IR/IRBuilder.h"

namespace visa::jit {

// Emits `for (i = start; i < end; ++i) body(i)`; the body may open blocks of its own.
void EmitLoop(llvm::IRBuilder<>& b, llvm::Value* start, llvm::Value* end,
              const std::function<void(llvm::Value*)>& body);

}  // namespace visa::jit
