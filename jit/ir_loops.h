// IR control flow and data shared by the kernel builders: counted loops, one-armed conditionals,
// constant tables, and packed element loads.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "llvm/IR/IRBuilder.h"

namespace visa::jit {

// Emits `for (i = start; i < end; ++i) body(i)`; the body may open blocks of its own. `unroll`
// false forbids LLVM to unroll it (a large unrolled body would only cost compile time).
void EmitLoop(llvm::IRBuilder<>& b, llvm::Value* start, llvm::Value* end,
              const std::function<void(llvm::Value*)>& body, bool unroll = true);

// Runs `body` only when `cond` holds (the rest of the enclosing block follows it).
void EmitIf(llvm::IRBuilder<>& b, llvm::Value* cond, const std::function<void()>& body);

// A constant table of `bits`-bit integers in the module, read at a runtime i64 `index`.
llvm::Value* EmitTableLoad(llvm::IRBuilder<>& b, llvm::Module& m, const std::vector<int64_t>& values,
                           llvm::Value* index, int bits);

// Element `pos` (i64) of a packed array of `bits`-bit elements (4-bit elements two to a byte,
// the low nibble first), zero-extended to i32.
llvm::Value* EmitLoadRaw(llvm::IRBuilder<>& b, llvm::Value* base, llvm::Value* pos, int bits);

}  // namespace visa::jit
