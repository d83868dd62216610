// IR control flow shared by the kernel builders.
#include "jit/ir_loops.h"

namespace visa::jit {

void EmitLoop(llvm::IRBuilder<>& b, llvm::Value* start, llvm::Value* end,
              const std::function<void(llvm::Value*)>& body) {
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
  b.CreateCondBr(b.CreateICmpSLT(next, end), loop, after);
  b.SetInsertPoint(after);
}

}  // namespace visa::jit
