// Contraction kernels in IR: widened products, the unrolled pairwise tree, accumulation slots.
#include "jit/contraction_kernel.h"

#include <functional>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "dsl/status_macros.h"
#include "jit/stable_hash.h"
#include "jit/accumulator_math.h"
#include "jit/element_op.h"
#include "llvm/IR/Constants.h"
#include "llvm/IR/GlobalVariable.h"
#include "jit/ir_loops.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/Module.h"

namespace visa::jit {
namespace {

using llvm::Value;


// A constant table of `values` read at a runtime index.
template <typename T>
Value* Lookup(llvm::IRBuilder<>& b, llvm::Module& m, const std::vector<T>& values, Value* index, int bits) {
  return EmitTableLoad(b, m, std::vector<int64_t>(values.begin(), values.end()), index, bits);
}

// One operand element widened to the accumulator type, as an i32 pattern.
Value* LoadWidened(llvm::IRBuilder<>& b, llvm::Module& m, const ElementOp& widen, Value* base, Value* pos) {
  return EmitElementOp(b, m, widen, EmitLoadRaw(b, base, pos, StorageBits(widen.from)), pos);
}


}  // namespace

std::string ContractionSpec::Key() const {
  return absl::StrFormat("contract %s*%s>%s %s o%d r%d t%d p%d g%d ot%d op%d %016x %016x %016x %016x %016x "
                         "w%d,%d %016x %016x",
                         std::string(Name(x_type)), std::string(Name(w_type)), std::string(Name(acc_type)),
                         ReduceOpName(op), outer, rows, times, packet, group, out_times, out_packet,
                         StableHash(retained), StableHash(target), StableHash(live_outer),
                         StableHash(live_row), StableHash(live_packet), w_outer, w_row, StableHash(w_time),
                         StableHash(w_packet));
}

void BuildContractionFunction(llvm::Module& module, const std::string& name, const ContractionSpec& spec) {
  llvm::LLVMContext& ctx = module.getContext();
  llvm::IRBuilder<> b(ctx);
  llvm::Type* ptr = b.getPtrTy();
  llvm::Type* i64 = b.getInt64Ty();
  llvm::Type* i32 = b.getInt32Ty();
  auto* type = llvm::FunctionType::get(b.getVoidTy(), {ptr, ptr, ptr, ptr, i64, i64}, false);
  auto* fn = llvm::Function::Create(type, llvm::Function::ExternalLinkage, name, module);
  fn->addFnAttr(llvm::Attribute::NoUnwind);
  for (unsigned a = 0; a < 4; ++a) fn->addParamAttr(a, llvm::Attribute::NoAlias);
  Value* acc = fn->getArg(0);
  Value* written = fn->getArg(1);
  Value* x = fn->getArg(2);
  Value* w = fn->getArg(3);
  b.SetInsertPoint(llvm::BasicBlock::Create(ctx, "entry", fn));

  absl::StatusOr<ElementOp> widen_x = ConversionOp(ConversionStage::kContraction, spec.x_type, spec.acc_type);
  absl::StatusOr<ElementOp> widen_w = ConversionOp(ConversionStage::kContraction, spec.w_type, spec.acc_type);
  VISA_CHECK(widen_x.ok() && widen_w.ok(), "the planner only pairs widenable operand types");
  AccumulatorMath math{b, IsFloat(spec.acc_type), spec.op};
  const int64_t groups = spec.packet / spec.group;
  // Padded packet positions contribute the identity (the weight read there is a broadcast copy,
  // so the product is not always +0).
  const bool mask_packet = true;

  EmitLoop(b, fn->getArg(4), fn->getArg(5), [&](Value* o) {
    Value* live_o = b.CreateICmpNE(Lookup(b, module, spec.live_outer, o, 8), b.getInt8(0));
    EmitIf(b, live_o, [&] {
      EmitLoop(b, b.getInt64(0), b.getInt64(spec.rows), [&](Value* r) {
        Value* live_r = b.CreateICmpNE(Lookup(b, module, spec.live_row, r, 8), b.getInt8(0));
        EmitIf(b, live_r, [&] {
          EmitLoop(b, b.getInt64(0), b.getInt64(spec.times), [&](Value* t) {
            Value* ret = Lookup(b, module, spec.retained, t, 64);
            EmitIf(b, b.CreateICmpSGE(ret, b.getInt64(0)), [&] {
              Value* xb = b.CreateMul(b.CreateAdd(b.CreateMul(o, b.getInt64(spec.times)), t), b.getInt64(spec.packet));
              Value* wb = b.CreateAdd(b.CreateAdd(b.CreateMul(o, b.getInt64(spec.w_outer)), b.CreateMul(r, b.getInt64(spec.w_row))),
                                      Lookup(b, module, spec.w_time, t, 64));
              Value* slot_base = b.CreateMul(
                  b.CreateAdd(b.CreateMul(b.CreateAdd(b.CreateMul(o, b.getInt64(spec.rows)), r), b.getInt64(spec.out_times)),
                              ret),
                  b.getInt64(spec.out_packet));
              EmitLoop(b, b.getInt64(0), b.getInt64(groups), [&](Value* g) {
                Value* tg = Lookup(b, module, spec.target, g, 64);
                EmitIf(b, b.CreateICmpSGE(tg, b.getInt64(0)), [&] {
                  std::vector<Value*> level;
                  Value* first = b.CreateMul(g, b.getInt64(spec.group));
                  for (int64_t k = 0; k < spec.group; ++k) {
                    Value* p = b.CreateAdd(first, b.getInt64(k));
                    Value* wp = b.CreateAdd(wb, Lookup(b, module, spec.w_packet, p, 64));
                    Value* product = math.Multiply(LoadWidened(b, module, *widen_x, x, b.CreateAdd(xb, p)),
                                                   LoadWidened(b, module, *widen_w, w, wp));
                    if (mask_packet) {
                      Value* live = b.CreateICmpNE(Lookup(b, module, spec.live_packet, p, 8), b.getInt8(0));
                      product = b.CreateSelect(live, product, math.Identity());
                    }
                    level.push_back(product);
                  }
                  for (size_t width = level.size(); width > 1; width /= 2) {
                    for (size_t k = 0; k < width / 2; ++k) level[k] = math.Combine(level[2 * k], level[2 * k + 1]);
                  }
                  Value* slot = b.CreateAdd(slot_base, tg);
                  Value* acc_ptr = b.CreateGEP(i32, acc, slot);
                  Value* seen_ptr = b.CreateGEP(b.getInt8Ty(), written, slot);
                  Value* seen = b.CreateICmpNE(b.CreateLoad(b.getInt8Ty(), seen_ptr), b.getInt8(0));
                  Value* combined = math.Combine(b.CreateLoad(i32, acc_ptr), level[0]);
                  b.CreateStore(b.CreateSelect(seen, combined, level[0]), acc_ptr);
                  b.CreateStore(b.getInt8(1), seen_ptr);
                });
              });
            });
          });
        });
      });
    });
  });
  b.CreateRetVoid();
}

}  // namespace visa::jit
