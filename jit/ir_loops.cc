// IR control flow and data shared by the kernel builders.
#include "jit/ir_loops.h"

#include "llvm/IR/Constants.h"
#include "llvm/IR/GlobalVariable.h"
#include "llvm/IR/Metadata.h"
#include "llvm/IR/Module.h"

namespace visa::jit {

void EmitLoop(llvm::IRBuilder<>& b, llvm::Value* start, llvm::Value* end,
              const std::function<void(llvm::Value*)>& body, bool unroll) {
  llvm::Function* fn = b.GetInsertBlock()->getParent();
  llvm::LLVMContext& ctx = b.getContext();
  llvm::BasicBlock* pre = b.GetInsertBlock();
  llvm::BasicBlock* loop = llvm::BasicBlock::Create(ctx, "loop", fn);
  llvm::BasicBlock* after = llvm::BasicBlock::Create(ctx, "after", fn);
  b.CreateCondBr(b.CreateICmpSLT(start, end), loop, after);
  b.SetInsertPoint(loop);
  llvm::PHINode* i = b.CreatePHI(b.getInt64Ty(), 2, "i");
  i->addIncoming(start, pre);
  body(i);
  llvm::Value* next = b.CreateNSWAdd(i, b.getInt64(1));
  i->addIncoming(next, b.GetInsertBlock());
  llvm::BranchInst* back = b.CreateCondBr(b.CreateICmpSLT(next, end), loop, after);
  if (!unroll) {
    llvm::LLVMContext& c = b.getContext();
    llvm::MDNode* disable = llvm::MDNode::get(c, {llvm::MDString::get(c, "llvm.loop.unroll.disable")});
    llvm::MDNode* self = llvm::MDNode::getDistinct(c, {nullptr, disable});
    self->replaceOperandWith(0, self);
    back->setMetadata(llvm::LLVMContext::MD_loop, self);
  }
  b.SetInsertPoint(after);
}

void EmitIf(llvm::IRBuilder<>& b, llvm::Value* cond, const std::function<void()>& body) {
  llvm::Function* fn = b.GetInsertBlock()->getParent();
  llvm::BasicBlock* then = llvm::BasicBlock::Create(b.getContext(), "then", fn);
  llvm::BasicBlock* done = llvm::BasicBlock::Create(b.getContext(), "done", fn);
  b.CreateCondBr(cond, then, done);
  b.SetInsertPoint(then);
  body();
  b.CreateBr(done);
  b.SetInsertPoint(done);
}

llvm::Value* EmitTableLoad(llvm::IRBuilder<>& b, llvm::Module& m, const std::vector<int64_t>& values,
                           llvm::Value* index, int bits) {
  llvm::Type* type = b.getIntNTy(bits);
  std::vector<llvm::Constant*> entries;
  entries.reserve(values.size());
  for (int64_t v : values) entries.push_back(llvm::ConstantInt::get(type, static_cast<uint64_t>(v)));
  auto* array = llvm::ArrayType::get(type, values.size());
  auto* global = new llvm::GlobalVariable(m, array, true, llvm::GlobalValue::PrivateLinkage,
                                          llvm::ConstantArray::get(array, entries), "table");
  return b.CreateLoad(type, b.CreateInBoundsGEP(array, global, {b.getInt64(0), index}));
}

llvm::Value* EmitLoadRaw(llvm::IRBuilder<>& b, llvm::Value* base, llvm::Value* pos, int bits) {
  if (bits == 4) {
    llvm::Value* byte = b.CreateLoad(b.getInt8Ty(), b.CreateGEP(b.getInt8Ty(), base, b.CreateLShr(pos, 1)));
    llvm::Value* shift = b.CreateTrunc(b.CreateShl(b.CreateAnd(pos, 1), 2), b.getInt8Ty());
    return b.CreateZExt(b.CreateAnd(b.CreateLShr(byte, shift), b.getInt8(15)), b.getInt32Ty());
  }
  llvm::Type* type = b.getIntNTy(bits);
  llvm::Value* raw = b.CreateAlignedLoad(type, b.CreateGEP(type, base, pos), llvm::Align(1));
  return bits < 32 ? b.CreateZExt(raw, b.getInt32Ty()) : raw;
}

}  // namespace visa::jit
