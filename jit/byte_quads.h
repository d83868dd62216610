// ByteQuads: integer contractions on VNNI's byte dot product (vpdpbusd: four u8 x s8 products
// summed into each 32-bit lane per instruction, twice the 16-bit pairs' work per instruction).
// The instruction's first factor is unsigned, so the lane kernel packs the operand as x + 128 and
// starts every sum at -128 times its weights' sum: integer sums are exact in any order, and i32
// wraps alike on every path, so the bits are the interpreter's.
#pragma once

#include <cstdint>

#include "dsl/contraction_engine.h"
#include "dsl/dtype.h"
#include "llvm/IR/IRBuilder.h"

namespace visa::jit {

// Whether a contraction may run on byte quads: an integer sum whose operand and weights both fit a
// signed byte (i4, i5, i8), tree groups of whole quads, and a host with AVX512-VNNI and -BW.
bool UsesByteQuads(DType x_type, DType w_type, DType acc_type, ReduceOp op, int64_t group, bool host_has_vnni);

// sum + the four products of x's unsigned and w's signed bytes, per 32-bit lane (<16 x i32>).
llvm::Value* EmitQuadMultiplyAdd(llvm::IRBuilder<>& b, llvm::Value* sum, llvm::Value* x, llvm::Value* w);

// The i32 sum of `count` signed bytes at `bytes` (count a multiple of 4).
llvm::Value* EmitSignedByteSum(llvm::IRBuilder<>& b, llvm::Value* bytes, int64_t count);

}  // namespace visa::jit
