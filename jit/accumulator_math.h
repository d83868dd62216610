// AccumulatorMath: the Contraction Engine's arithmetic in IR on 32-bit patterns (f32 or i32), on
// scalars or on vectors of `lanes`: products, the reduce op's combine, and its identity. Both
// contraction kernels build their trees from it, so their bits cannot drift apart.
//
// f32 operations carry no fast-math flags: adds are never fused or reassociated, except by an
// explicit MultiplyAdd where the product is exact.
#pragma once

#include <cstdint>

#include "dsl/contraction_engine.h"
#include "llvm/IR/IRBuilder.h"

namespace visa::jit {

struct AccumulatorMath {
  llvm::IRBuilder<>& b;
  bool is_float;
  ReduceOp op;
  int64_t lanes = 1;  // 1: scalars

  llvm::Type* IntType() { return Shaped(b.getInt32Ty()); }
  llvm::Type* FloatType() { return Shaped(b.getFloatTy()); }
  llvm::Value* F(llvm::Value* v) { return b.CreateBitCast(v, FloatType()); }
  llvm::Value* I(llvm::Value* v) { return b.CreateBitCast(v, IntType()); }
  // +0 for add; -inf or INT32_MIN for max.
  llvm::Value* Identity() {
    const uint32_t bits = op == ReduceOp::kAdd ? 0u : (is_float ? 0xff800000u : 0x80000000u);
    return lanes == 1 ? b.getInt32(bits) : b.CreateVectorSplat(static_cast<unsigned>(lanes), b.getInt32(bits));
  }
  llvm::Value* Multiply(llvm::Value* x, llvm::Value* w) {
    return is_float ? I(b.CreateFMul(F(x), F(w))) : b.CreateMul(x, w);
  }
  // x * w + addend rounded once: only where x * w is known exact (exact_products.h), which makes it
  // Combine(Multiply(x, w), addend) bit for bit.
  llvm::Value* MultiplyAdd(llvm::Value* x, llvm::Value* w, llvm::Value* addend) {
    return I(b.CreateIntrinsic(llvm::Intrinsic::fma, {FloatType()}, {F(x), F(w), F(addend)}));
  }
  llvm::Value* Combine(llvm::Value* a, llvm::Value* c) {
    if (op == ReduceOp::kMax) {
      llvm::Value* greater = is_float ? b.CreateFCmpOGT(F(c), F(a)) : b.CreateICmpSGT(c, a);
      return b.CreateSelect(greater, c, a);
    }
    return is_float ? I(b.CreateFAdd(F(a), F(c))) : b.CreateAdd(a, c);
  }

 private:
  llvm::Type* Shaped(llvm::Type* element) {
    return lanes == 1 ? element : llvm::FixedVectorType::get(element, static_cast<unsigned>(lanes));
  }
};

}  // namespace visa::jit
