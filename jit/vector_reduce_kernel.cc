// IR of the Vector Engine's reductions: the interpreter's order of combination as loops over
// constant tables.
#include "jit/vector_reduce_kernel.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "dsl/vector_ops.h"
#include "interp/vector_reduce.h"
#include "jit/ir_loops.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/Intrinsics.h"
#include "llvm/IR/Module.h"

namespace visa::jit {

std::string IntraReduceKernelSpec::Key() const {
  return absl::StrCat("vector intra reduce ", VeReduceOpName(op), f32 ? " f32" : " i32",
                      packet_reduced ? " tree" : " lanes", valid_counts ? " vcg" : "", " s", slices, " o", out_steps,
                      " [", absl::StrJoin(out_time_of, ","), "]");
}

std::string InterReduceKernelSpec::Key() const {
  std::string key = absl::StrCat("vector inter reduce ", VeReduceOpName(op), f32 ? " f32" : " i32", " p", in_positions);
  for (const std::vector<int64_t>& from : sources) absl::StrAppend(&key, " [", absl::StrJoin(from, ","), "]");
  return key;
}

namespace {

using llvm::Value;

// op(acc, x) on i32 bits, or lane by lane on a vector of them: ReduceCombine's arithmetic.
Value* Combine(llvm::IRBuilder<>& b, llvm::Module& module, VeReduceOp op, bool f32, Value* acc, Value* x) {
  llvm::Type* type = acc->getType();
  auto intrinsic = [&](llvm::Intrinsic::ID id, std::vector<Value*> args) -> Value* {
    return b.CreateCall(llvm::Intrinsic::getDeclaration(&module, id, {type}), args);
  };
  if (f32) {
    if (op == VeReduceOp::kMax || op == VeReduceOp::kMin) {
      // libm's fmaxf / fminf, which the interpreter's functions call (std::fmax on floats), called
      // directly: its choice between +0 and -0 is not IR's, so the call is marked nobuiltin (never
      // turned into llvm.maxnum / minnum).
      llvm::Type* i32 = b.getInt32Ty();
      llvm::Type* f32 = b.getFloatTy();
      llvm::FunctionCallee callee = module.getOrInsertFunction(op == VeReduceOp::kMax ? "fmaxf" : "fminf",
                                                               llvm::FunctionType::get(f32, {f32, f32}, false));
      auto call = [&](Value* p, Value* q) -> Value* {
        llvm::CallInst* made = b.CreateCall(callee, {b.CreateBitCast(p, f32), b.CreateBitCast(q, f32)});
        made->addFnAttr(llvm::Attribute::NoBuiltin);
        made->setDoesNotAccessMemory();
        return b.CreateBitCast(made, i32);
      };
      auto* vector = llvm::dyn_cast<llvm::FixedVectorType>(type);
      if (vector == nullptr) return call(acc, x);
      Value* result = llvm::PoisonValue::get(type);
      for (unsigned l = 0; l < vector->getNumElements(); ++l) {
        result = b.CreateInsertElement(result, call(b.CreateExtractElement(acc, l), b.CreateExtractElement(x, l)), l);
      }
      return result;
    }
    llvm::Type* float_type = type->isVectorTy()
                                 ? static_cast<llvm::Type*>(llvm::VectorType::get(
                                       b.getFloatTy(), llvm::cast<llvm::VectorType>(type)->getElementCount()))
                                 : b.getFloatTy();
    Value* fa = b.CreateBitCast(acc, float_type);
    Value* fx = b.CreateBitCast(x, float_type);
    Value* result = b.CreateBitCast(op == VeReduceOp::kMul ? b.CreateFMul(fa, fx) : b.CreateFAdd(fa, fx), type);
    // A NaN operand's payload, quieted, the first operand's first: what the host's addss / mulss
    // give for acc + x as the interpreter computes it. LLVM may commute an fadd, which would pick
    // the other payload when both are NaN.
    Value* quiet = llvm::ConstantInt::get(type, 0x00400000u);
    Value* x_nan = b.CreateFCmpUNO(fx, fx);
    Value* a_nan = b.CreateFCmpUNO(fa, fa);
    result = b.CreateSelect(x_nan, b.CreateOr(x, quiet), result);
    return b.CreateSelect(a_nan, b.CreateOr(acc, quiet), result);
  }
  switch (op) {
    case VeReduceOp::kAdd: return b.CreateAdd(acc, x);
    case VeReduceOp::kAddSat: return intrinsic(llvm::Intrinsic::sadd_sat, {acc, x});
    case VeReduceOp::kMax: return intrinsic(llvm::Intrinsic::smax, {acc, x});
    case VeReduceOp::kMin: return intrinsic(llvm::Intrinsic::smin, {acc, x});
    case VeReduceOp::kMul: return b.CreateMul(acc, x);
  }
  return acc;
}

uint32_t Identity(VeReduceOp op, bool f32) { return interp::ReduceIdentity(op, f32 ? DType::kF32 : DType::kI32); }

llvm::FixedVectorType* Lanes(llvm::IRBuilder<>& b, int lanes) {
  return llvm::FixedVectorType::get(b.getInt32Ty(), lanes);
}

Value* LoadLanes(llvm::IRBuilder<>& b, int lanes, Value* base, Value* position) {
  Value* at = b.CreateGEP(b.getInt32Ty(), base, b.CreateMul(position, b.getInt64(lanes)));
  return b.CreateAlignedLoad(Lanes(b, lanes), at, llvm::Align(4));
}

void StoreLanes(llvm::IRBuilder<>& b, int lanes, Value* value, Value* base, Value* position) {
  Value* at = b.CreateGEP(b.getInt32Ty(), base, b.CreateMul(position, b.getInt64(lanes)));
  b.CreateAlignedStore(value, at, llvm::Align(4));
}

// Short time loops (the usual row reduce) as straight-line code: every input step's slot is known
// here, so the accumulators and their first-contribution flags are values, not memory, and without
// valid counts the flags are known at compile time. Same order, same operations as the loop.
constexpr int64_t kUnrolledSteps = 64;

void EmitUnrolledSteps(llvm::IRBuilder<>& b, llvm::Module& module, const IntraReduceKernelSpec& spec, Value* in_block,
                       Value* valid_row, Value* result_block) {
  constexpr int kLanes = 4;
  const uint32_t identity = Identity(spec.op, spec.f32);
  Value* identity_lanes = b.CreateVectorSplat(kLanes, b.getInt32(identity));
  auto combine = [&](Value* acc, Value* x) { return Combine(b, module, spec.op, spec.f32, acc, x); };
  std::vector<Value*> acc(static_cast<size_t>(spec.out_steps));  // lanes, or lane 0 with the tree
  std::vector<Value*> had(static_cast<size_t>(spec.out_steps), nullptr);  // nullptr: known false
  for (int64_t slot = 0; slot < spec.out_steps; ++slot) {
    acc[slot] = spec.packet_reduced ? static_cast<Value*>(b.getInt32(identity)) : identity_lanes;
  }
  for (int64_t t = 0; t < static_cast<int64_t>(spec.out_time_of.size()); ++t) {
    const int64_t target = spec.out_time_of[t];
    if (target < 0) continue;
    Value* x = LoadLanes(b, kLanes, in_block, b.getInt64(t));
    Value* count = spec.valid_counts ? static_cast<Value*>(b.CreateLoad(b.getInt32Ty(), b.CreateGEP(b.getInt32Ty(), valid_row, b.getInt64(t))))
                                     : nullptr;
    Value* contribution = x;
    if (spec.packet_reduced) {
      if (count != nullptr) {
        Value* lane_ids = llvm::ConstantVector::get({b.getInt32(0), b.getInt32(1), b.getInt32(2), b.getInt32(3)});
        x = b.CreateSelect(b.CreateICmpSLT(lane_ids, b.CreateVectorSplat(kLanes, count)), x, identity_lanes);
      }
      Value* l[kLanes];
      for (int k = 0; k < kLanes; ++k) l[k] = b.CreateExtractElement(x, k);
      contribution = combine(combine(l[0], l[1]), combine(l[2], l[3]));
    }
    Value* next = had[target] == nullptr ? contribution
                                         : b.CreateSelect(had[target], combine(acc[target], contribution), contribution);
    if (count == nullptr) {
      acc[target] = next;
      had[target] = b.getTrue();
    } else {
      Value* contributes = b.CreateICmpSGT(count, b.getInt32(0));
      acc[target] = b.CreateSelect(contributes, next, acc[target]);
      had[target] = had[target] == nullptr ? contributes : b.CreateOr(had[target], contributes);
    }
  }
  for (int64_t slot = 0; slot < spec.out_steps; ++slot) {
    Value* lanes = acc[slot];
    if (spec.packet_reduced) lanes = b.CreateInsertElement(identity_lanes, acc[slot], uint64_t{0});
    StoreLanes(b, kLanes, lanes, result_block, b.getInt64(slot));
  }
}

llvm::Function* NewFunction(llvm::Module& module, const std::string& name, int pointers) {
  llvm::LLVMContext& context = module.getContext();
  std::vector<llvm::Type*> params(pointers, llvm::PointerType::getUnqual(context));
  params.push_back(llvm::Type::getInt64Ty(context));
  params.push_back(llvm::Type::getInt64Ty(context));
  auto* type = llvm::FunctionType::get(llvm::Type::getVoidTy(context), params, false);
  llvm::Function* fn = llvm::Function::Create(type, llvm::Function::ExternalLinkage, name, module);
  fn->addFnAttr(llvm::Attribute::NoUnwind);
  return fn;
}

}  // namespace

void BuildIntraReduceFunction(llvm::Module& module, const std::string& name, const IntraReduceKernelSpec& spec) {
  constexpr int kLanes = 4;  // a Way4 flit
  llvm::LLVMContext& context = module.getContext();
  llvm::IRBuilder<> b(context);
  llvm::Type* i8 = b.getInt8Ty();
  llvm::Type* i32 = b.getInt32Ty();
  llvm::Function* fn = NewFunction(module, name, 4);
  b.SetInsertPoint(llvm::BasicBlock::Create(context, "entry", fn));
  Value* in = fn->getArg(0);
  Value* out = fn->getArg(1);
  Value* valid = fn->getArg(2);
  Value* have = fn->getArg(3);
  const int64_t steps = static_cast<int64_t>(spec.out_time_of.size());
  const uint32_t identity = Identity(spec.op, spec.f32);
  Value* identity_lanes = b.CreateVectorSplat(kLanes, b.getInt32(identity));
  auto combine = [&](Value* acc, Value* x) { return Combine(b, module, spec.op, spec.f32, acc, x); };
  // Up to the eight accumulator slots a reduce may use, the accumulators and their flags live on
  // the stack (registers, once the time loop unrolls) and are copied out after the block; more
  // output steps (Time not reduced) accumulate in the output itself.
  constexpr int64_t kStackSlots = 8;
  const bool on_stack = spec.out_steps <= kStackSlots;
  Value* stack_acc = nullptr;
  if (on_stack) {
    stack_acc = b.CreateAlloca(llvm::ArrayType::get(i32, spec.out_steps * kLanes));
    have = b.CreateAlloca(llvm::ArrayType::get(i8, spec.out_steps));
  }
  EmitLoop(b, fn->getArg(4), fn->getArg(5), [&](Value* block) {
    Value* in_block = b.CreateGEP(i32, in, b.CreateMul(block, b.getInt64(steps * kLanes)));
    Value* result_block = b.CreateGEP(i32, out, b.CreateMul(block, b.getInt64(spec.out_steps * kLanes)));
    Value* out_block = on_stack ? stack_acc : result_block;
    Value* valid_row = b.CreateGEP(i32, valid, b.CreateMul(b.CreateSRem(block, b.getInt64(spec.slices)),
                                                           b.getInt64(steps)));
    // Slots no contribution reaches (and lanes 1..3 of a collapsed Packet) hold the identity.
    if (on_stack) {
      for (int64_t slot = 0; slot < spec.out_steps; ++slot) {
        StoreLanes(b, kLanes, identity_lanes, out_block, b.getInt64(slot));
        b.CreateStore(b.getInt8(0), b.CreateGEP(i8, have, b.getInt64(slot)));
      }
    } else {
      EmitLoop(b, b.getInt64(0), b.getInt64(spec.out_steps),
               [&](Value* slot) { StoreLanes(b, kLanes, identity_lanes, out_block, slot); });
      b.CreateMemSet(have, b.getInt8(0), b.getInt64(spec.out_steps), llvm::MaybeAlign(1));
    }
    if (on_stack && steps <= kUnrolledSteps) {
      EmitUnrolledSteps(b, module, spec, in_block, valid_row, result_block);
      return;
    }
    EmitLoop(b, b.getInt64(0), b.getInt64(steps), [&](Value* t) {
      Value* target = b.CreateSExt(EmitTableLoad(b, module, spec.out_time_of, t, 32), b.getInt64Ty());
      Value* count = spec.valid_counts ? static_cast<Value*>(b.CreateLoad(i32, b.CreateGEP(i32, valid_row, t)))
                                       : b.getInt32(kLanes);
      Value* contributes = b.CreateAnd(b.CreateICmpSGE(target, b.getInt64(0)), b.CreateICmpSGT(count, b.getInt32(0)));
      EmitIf(b, contributes, [&] {
        Value* x = LoadLanes(b, kLanes, in_block, t);
        Value* have_ptr = b.CreateGEP(i8, have, target);
        Value* had = b.CreateICmpNE(b.CreateLoad(i8, have_ptr), b.getInt8(0));
        b.CreateStore(b.getInt8(1), have_ptr);
        if (spec.packet_reduced) {
          if (spec.valid_counts) {  // lanes at or past the valid count are the identity
            Value* lane_ids = llvm::ConstantVector::get(
                {b.getInt32(0), b.getInt32(1), b.getInt32(2), b.getInt32(3)});
            x = b.CreateSelect(b.CreateICmpSLT(lane_ids, b.CreateVectorSplat(kLanes, count)), x, identity_lanes);
          }
          Value* l[kLanes];
          for (int k = 0; k < kLanes; ++k) l[k] = b.CreateExtractElement(x, k);
          Value* tree = combine(combine(l[0], l[1]), combine(l[2], l[3]));
          Value* acc_ptr = b.CreateGEP(i32, out_block, b.CreateMul(target, b.getInt64(kLanes)));
          Value* acc = b.CreateLoad(i32, acc_ptr);
          b.CreateStore(b.CreateSelect(had, combine(acc, tree), tree), acc_ptr);
        } else {
          Value* acc = LoadLanes(b, kLanes, out_block, target);
          StoreLanes(b, kLanes, b.CreateSelect(had, combine(acc, x), x), out_block, target);
        }
      });
    });
    if (on_stack) {
      for (int64_t slot = 0; slot < spec.out_steps; ++slot) {
        StoreLanes(b, kLanes, LoadLanes(b, kLanes, stack_acc, b.getInt64(slot)), result_block, b.getInt64(slot));
      }
    }
  });
  b.CreateRetVoid();
}

void BuildInterReduceFunction(llvm::Module& module, const std::string& name, const InterReduceKernelSpec& spec) {
  constexpr int kLanes = 8;  // a Way8 flit
  llvm::LLVMContext& context = module.getContext();
  llvm::IRBuilder<> b(context);
  llvm::Type* i32 = b.getInt32Ty();
  llvm::Function* fn = NewFunction(module, name, 2);
  b.SetInsertPoint(llvm::BasicBlock::Create(context, "entry", fn));
  Value* in = fn->getArg(0);
  Value* out = fn->getArg(1);
  llvm::AllocaInst* acc_slot = b.CreateAlloca(Lanes(b, kLanes));
  // The sources as CSR tables: output q combines list[start[q] .. start[q + 1]).
  std::vector<int64_t> start{0}, list;
  for (const std::vector<int64_t>& from : spec.sources) {
    list.insert(list.end(), from.begin(), from.end());
    start.push_back(static_cast<int64_t>(list.size()));
  }
  if (list.empty()) list.push_back(0);  // never read; a table needs an entry
  const int64_t outputs = static_cast<int64_t>(spec.sources.size());
  Value* identity_lanes = b.CreateVectorSplat(kLanes, b.getInt32(Identity(spec.op, spec.f32)));
  EmitLoop(b, fn->getArg(2), fn->getArg(3), [&](Value* block) {
    Value* in_block = b.CreateGEP(i32, in, b.CreateMul(block, b.getInt64(spec.in_positions * kLanes)));
    Value* out_block = b.CreateGEP(i32, out, b.CreateMul(block, b.getInt64(outputs * kLanes)));
    EmitLoop(b, b.getInt64(0), b.getInt64(outputs), [&](Value* q) {
      Value* first = b.CreateSExt(EmitTableLoad(b, module, start, q, 32), b.getInt64Ty());
      Value* last = b.CreateSExt(EmitTableLoad(b, module, start, b.CreateAdd(q, b.getInt64(1)), 32), b.getInt64Ty());
      b.CreateStore(identity_lanes, acc_slot);  // padding outputs keep it
      EmitLoop(b, first, last, [&](Value* k) {
        Value* p = b.CreateSExt(EmitTableLoad(b, module, list, k, 32), b.getInt64Ty());
        Value* x = LoadLanes(b, kLanes, in_block, p);
        Value* acc = b.CreateLoad(Lanes(b, kLanes), acc_slot);
        Value* combined = Combine(b, module, spec.op, spec.f32, acc, x);
        b.CreateStore(b.CreateSelect(b.CreateICmpEQ(k, first), x, combined), acc_slot);
      });
      StoreLanes(b, kLanes, b.CreateLoad(Lanes(b, kLanes), acc_slot), out_block, q);
    });
  });
  b.CreateRetVoid();
}

}  // namespace visa::jit
