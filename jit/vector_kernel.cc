// IR of a vector segment: a loop calling the scalar functions per position.
#include "jit/vector_kernel.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "dsl/vector_nan_payload.h"
#include "jit/ir_loops.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/Intrinsics.h"
#include "llvm/IR/Module.h"

namespace visa::jit {

uint16_t AdmitMask(const TagGuard& guard) {
  uint16_t mask = 0;
  for (uint8_t id = 0; id < 16; ++id) {
    if (guard.Admits(id)) mask |= static_cast<uint16_t>(1u << id);
  }
  return mask;
}

std::string VectorKernelSpec::Key() const {
  std::string key = "vector";
  if (compare) {
    for (const InputCmp& c : *compare) absl::StrAppend(&key, " cmp", static_cast<int>(c.kind), ":", c.dtype == DType::kF32, ":", c.value);
  }
  for (const Op& op : ops) {
    absl::StrAppend(&key, "|", op.symbol, " f", static_cast<int>(op.fn), " ", op.arity, " ", op.from[0], op.from[1], op.from[2], " ", op.conversion,
                    " ", op.param, " g", op.guard ? *op.guard : -1);
    for (const Slot& s : op.slots) {
      absl::StrAppend(&key, " [", s.admits, " ", s.constant ? absl::StrCat("c", *s.constant) : absl::StrCat("i", s.image),
                      " ", s.o1, "]");
    }
  }
  return key;
}

namespace {

using llvm::Value;

// Whether `mask` admits the execution id `tag` (i32): bit `tag` of the mask.
Value* Admits(llvm::IRBuilder<>& b, uint16_t mask, Value* tag) {
  Value* shifted = b.CreateLShr(b.getInt32(mask), tag);
  return b.CreateICmpNE(b.CreateAnd(shifted, b.getInt32(1)), b.getInt32(0));
}

// InputCmp::Holds on the element's bits.
Value* Holds(llvm::IRBuilder<>& b, const InputCmp& c, Value* x) {
  Value* v = b.getInt32(c.value);
  const bool f = c.dtype == DType::kF32;
  Value* fx = b.CreateBitCast(x, b.getFloatTy());
  Value* fv = b.CreateBitCast(v, b.getFloatTy());
  switch (c.kind) {
    case InputCmp::Kind::kTrue: return b.getTrue();
    case InputCmp::Kind::kFalse: return b.getFalse();
    case InputCmp::Kind::kEqual: return f ? b.CreateFCmpOEQ(fx, fv) : b.CreateICmpEQ(x, v);
    case InputCmp::Kind::kLess: return f ? b.CreateFCmpOLT(fx, fv) : b.CreateICmpSLT(x, v);
    case InputCmp::Kind::kGreater: return f ? b.CreateFCmpOGT(fx, fv) : b.CreateICmpSGT(x, v);
    case InputCmp::Kind::kLessUnsigned: return b.CreateICmpULT(x, v);
    case InputCmp::Kind::kGreaterUnsigned: return b.CreateICmpUGT(x, v);
  }
  return b.getFalse();
}

// The NaN-payload rule (dsl/vector_nan_payload.h) over i32 bits: the first NaN operand, quieted,
// else `result`. Folded from the last operand to the first, so the first NaN wins. The last
// operand needs no select: when it is the only NaN, the host's arithmetic already returns it
// quieted (x86 propagates a lone NaN operand, whichever operand order LLVM chose), and LLVM folds
// an op with a NaN constant to that NaN. One select fewer per op: bias + SiLU's element loop took
// 2.57 ms of CPU with a select per operand, 2.33 ms so (1.94 ms without the rule).
Value* WithNanPayload(llvm::IRBuilder<>& b, Value* result, std::initializer_list<Value*> operands) {
  std::vector<Value*> in(operands);
  for (size_t k = in.size() - 1; k-- > 0;) {
    Value* magnitude = b.CreateAnd(in[k], b.getInt32(0x7fffffffu));
    Value* nan = b.CreateICmpUGT(magnitude, b.getInt32(0x7f800000u));
    result = b.CreateSelect(nan, b.CreateOr(in[k], b.getInt32(kF32QuietBit)), result);
  }
  return result;
}

// The op inline, bit for bit what its scalar function computes; nullptr for ops that stay calls
// (libm's functions, fmaxf / fminf's signed-zero choice, the conversions).
Value* EmitInline(llvm::IRBuilder<>& b, llvm::Module& module, VeFn fn, Value* a, Value* c, Value* d) {
  llvm::Type* i32 = b.getInt32Ty();
  llvm::Type* i64 = b.getInt64Ty();
  llvm::Type* f32 = b.getFloatTy();
  auto amount = [&] { return b.CreateAnd(c, b.getInt32(31)); };  // shifts take the amount modulo 32
  auto intrinsic = [&](llvm::Intrinsic::ID id, llvm::Type* type, std::vector<Value*> args) -> Value* {
    return b.CreateCall(llvm::Intrinsic::getDeclaration(&module, id, {type}), args);
  };
  auto fa = [&] { return b.CreateBitCast(a, f32); };
  auto fc = [&] { return b.CreateBitCast(c, f32); };
  auto bits = [&](Value* f) { return b.CreateBitCast(f, i32); };
  auto saturate = [&](Value* wide) {
    Value* high = intrinsic(llvm::Intrinsic::smin, i64, {wide, b.getInt64(2147483647)});
    return b.CreateTrunc(intrinsic(llvm::Intrinsic::smax, i64, {high, b.getInt64(-2147483648LL)}), i32);
  };
  auto wrapped_abs = [&](Value* x) { return intrinsic(llvm::Intrinsic::abs, i32, {x, b.getFalse()}); };
  switch (fn) {
    case VeFn::kBitAnd: return b.CreateAnd(a, c);
    case VeFn::kFilterOut: return b.getInt32(0);
    case VeFn::kBitOr: return b.CreateOr(a, c);
    case VeFn::kBitXor: return b.CreateXor(a, c);
    case VeFn::kLeftShift: return b.CreateShl(a, amount());
    case VeFn::kLogicRightShift: return b.CreateLShr(a, amount());
    case VeFn::kArithRightShift: return b.CreateAShr(a, amount());
    case VeFn::kAddFxp: return b.CreateAdd(a, c);
    case VeFn::kSubFxp: return b.CreateSub(a, c);
    case VeFn::kMulInt: return b.CreateMul(a, c);
    case VeFn::kAddFxpSat: return intrinsic(llvm::Intrinsic::sadd_sat, i32, {a, c});
    case VeFn::kSubFxpSat: return intrinsic(llvm::Intrinsic::ssub_sat, i32, {a, c});
    case VeFn::kFxpLeftShiftSat: {
      Value* multiplier = b.CreateSExt(b.CreateShl(b.getInt32(1), amount()), i64);
      return saturate(b.CreateMul(b.CreateSExt(a, i64), multiplier));
    }
    case VeFn::kMulFxp: {
      Value* product = b.CreateMul(b.CreateSExt(a, i64), b.CreateSExt(c, i64));
      Value* rounded = b.CreateAShr(b.CreateAdd(b.CreateAShr(product, b.getInt64(30)), b.getInt64(1)), b.getInt64(1));
      Value* both_min = b.CreateAnd(b.CreateICmpEQ(a, b.getInt32(0x80000000u)), b.CreateICmpEQ(c, b.getInt32(0x80000000u)));
      return b.CreateSelect(both_min, b.getInt32(0x7fffffff), b.CreateTrunc(rounded, i32));
    }
    case VeFn::kMinI32: return intrinsic(llvm::Intrinsic::smin, i32, {a, c});
    case VeFn::kMaxI32: return intrinsic(llvm::Intrinsic::smax, i32, {a, c});
    case VeFn::kAbsMinI32: return b.CreateSelect(b.CreateICmpSLT(wrapped_abs(a), wrapped_abs(c)), a, c);
    case VeFn::kAbsMaxI32: return b.CreateSelect(b.CreateICmpSGT(wrapped_abs(a), wrapped_abs(c)), a, c);
    case VeFn::kAddF:
    case VeFn::kAddF32Clip: return WithNanPayload(b, bits(b.CreateFAdd(fa(), fc())), {a, c});
    case VeFn::kSubF: return WithNanPayload(b, bits(b.CreateFSub(fa(), fc())), {a, c});
    case VeFn::kMulF: return WithNanPayload(b, bits(b.CreateFMul(fa(), fc())), {a, c});
    case VeFn::kDivF: return WithNanPayload(b, bits(b.CreateFDiv(fa(), fc())), {a, c});
    case VeFn::kFmaF:
      return WithNanPayload(b, bits(intrinsic(llvm::Intrinsic::fma, f32, {fa(), fc(), b.CreateBitCast(d, f32)})), {a, c, d});
    case VeFn::kSqrt: return bits(intrinsic(llvm::Intrinsic::sqrt, f32, {fa()}));
    // The scalar functions' std::exp(float) is libm's expf, called here directly (from the
    // process's libm, as memcpy): the same function on the same bits, one call instead of two.
    case VeFn::kExp:
    case VeFn::kNegExp: {
      llvm::FunctionCallee expf = module.getOrInsertFunction("expf", llvm::FunctionType::get(f32, {f32}, false));
      Value* x = fn == VeFn::kExp ? fa() : b.CreateFNeg(fa());
      llvm::CallInst* call = b.CreateCall(expf, {x});
      call->addFnAttr(llvm::Attribute::NoBuiltin);  // libm's function itself, never an intrinsic's lowering
      call->setDoesNotAccessMemory();  // errno aside, as the scalar function's call: nothing the loop reads
      return bits(call);
    }
    case VeFn::kArithRightShiftRound: {
      // floor((a + 2^(s-1)) / 2^s) in 64 bits; (1 << s) >> 1 is the half, 0 for s = 0.
      Value* s = b.CreateZExt(amount(), i64);
      Value* half = b.CreateLShr(b.CreateShl(b.getInt64(1), s), b.getInt64(1));
      return b.CreateTrunc(b.CreateAShr(b.CreateAdd(b.CreateSExt(a, i64), half), s), i32);
    }
    case VeFn::kMaskMulF:
    case VeFn::kMaskFmaF: {
      // A zero factor turns its partner into +-1 (ve::MaskMulF).
      Value* x = fa();
      Value* y = fc();
      Value* one = llvm::ConstantFP::get(f32, 1.0);
      Value* x_zero = b.CreateFCmpOEQ(x, llvm::ConstantFP::get(f32, 0.0));
      Value* y_zero = b.CreateFCmpOEQ(y, llvm::ConstantFP::get(f32, 0.0));
      Value* x_masked = b.CreateSelect(b.CreateAnd(b.CreateNot(x_zero), y_zero),
                                       intrinsic(llvm::Intrinsic::copysign, f32, {one, x}), x);
      Value* y_masked = b.CreateSelect(x_zero, intrinsic(llvm::Intrinsic::copysign, f32, {one, y}), y);
      if (fn == VeFn::kMaskMulF) return WithNanPayload(b, bits(b.CreateFMul(x_masked, y_masked)), {bits(x_masked), bits(y_masked)});
      return WithNanPayload(b, bits(intrinsic(llvm::Intrinsic::fma, f32, {x_masked, y_masked, b.CreateBitCast(d, f32)})),
                            {bits(x_masked), bits(y_masked), d});
    }
    case VeFn::kAbsMinF32: {
      Value* fabs_a = intrinsic(llvm::Intrinsic::fabs, f32, {fa()});
      Value* fabs_c = intrinsic(llvm::Intrinsic::fabs, f32, {fc()});
      return b.CreateSelect(b.CreateFCmpOLT(fabs_a, fabs_c), a, c);
    }
    case VeFn::kAbsMaxF32: {
      Value* fabs_a = intrinsic(llvm::Intrinsic::fabs, f32, {fa()});
      Value* fabs_c = intrinsic(llvm::Intrinsic::fabs, f32, {fc()});
      return b.CreateSelect(b.CreateFCmpOGT(fabs_a, fabs_c), a, c);
    }
    default: return nullptr;
  }
}

// A kernel `void name(ptr, ptr, ptr, i64 begin, i64 end)`, as both vector kernels are called.
llvm::Function* NewKernel(llvm::Module& module, const std::string& name) {
  llvm::LLVMContext& context = module.getContext();
  llvm::Type* ptr = llvm::PointerType::getUnqual(context);
  llvm::Type* i64 = llvm::Type::getInt64Ty(context);
  auto* type = llvm::FunctionType::get(llvm::Type::getVoidTy(context), {ptr, ptr, ptr, i64, i64}, false);
  llvm::Function* fn = llvm::Function::Create(type, llvm::Function::ExternalLinkage, name, module);
  fn->addFnAttr(llvm::Attribute::NoUnwind);
  return fn;
}

}  // namespace

void BuildVectorFunction(llvm::Module& module, const std::string& name, const VectorKernelSpec& spec) {
  llvm::LLVMContext& context = module.getContext();
  llvm::IRBuilder<> b(context);
  llvm::Type* ptr = b.getPtrTy();
  llvm::Type* i32 = b.getInt32Ty();
  llvm::Function* fn = NewKernel(module, name);
  auto* scalar_type = llvm::FunctionType::get(i32, {i32, i32, i32}, false);
  b.SetInsertPoint(llvm::BasicBlock::Create(context, "entry", fn));
  Value* data = fn->getArg(0);
  Value* tags = fn->getArg(1);
  Value* images = fn->getArg(2);
  // The image pointers, loaded once.
  int images_used = 0;
  for (const VectorKernelSpec::Op& op : spec.ops) {
    for (const VectorKernelSpec::Slot& s : op.slots) images_used = std::max(images_used, s.image + 1);
  }
  std::vector<Value*> image_base;
  for (int k = 0; k < images_used; ++k) {
    image_base.push_back(b.CreateLoad(ptr, b.CreateGEP(ptr, images, b.getInt64(k))));
  }
  EmitLoop(b, fn->getArg(3), fn->getArg(4), [&](Value* p) {
    Value* slot_ptr = b.CreateGEP(i32, data, p);
    Value* tag_ptr = b.CreateGEP(b.getInt8Ty(), tags, p);
    Value* x = b.CreateLoad(i32, slot_ptr);
    Value* tag8;
    if (spec.compare) {
      tag8 = b.getInt8(0);
      for (int i = 0; i < 4; ++i) {
        Value* bit = b.CreateZExt(Holds(b, (*spec.compare)[i], x), b.getInt8Ty());
        tag8 = b.CreateOr(tag8, b.CreateShl(bit, b.getInt8(i)));
      }
      b.CreateStore(tag8, tag_ptr);
    } else {
      tag8 = b.CreateLoad(b.getInt8Ty(), tag_ptr);
    }
    Value* tag = b.CreateZExt(tag8, i32);
    for (const VectorKernelSpec::Op& op : spec.ops) {
      Value* applies = op.guard ? Admits(b, *op.guard, tag) : b.getTrue();
      Value* v[3] = {x, b.getInt32(0), b.getInt32(0)};
      if (!op.slots.empty()) {
        // First match: fold from the last slot to the first.
        Value* any = b.getFalse();
        for (size_t k = op.slots.size(); k-- > 0;) {
          const VectorKernelSpec::Slot& s = op.slots[k];
          Value* admits = Admits(b, s.admits, tag);
          Value* o0 = s.constant ? static_cast<Value*>(b.getInt32(*s.constant))
                                 : b.CreateLoad(i32, b.CreateGEP(i32, image_base[s.image], p));
          v[1] = b.CreateSelect(admits, o0, v[1]);
          v[2] = b.CreateSelect(admits, b.getInt32(s.o1), v[2]);
          any = b.CreateOr(any, admits);
        }
        applies = b.CreateAnd(applies, any);
      }
      Value* a = v[op.from[0]];
      Value* bb = op.conversion ? b.getInt32(static_cast<uint32_t>(op.param)) : op.arity > 1 ? v[op.from[1]] : b.getInt32(0);
      Value* c = op.arity > 2 ? v[op.from[2]] : b.getInt32(0);
      Value* result = EmitInline(b, module, op.fn, a, bb, c);
      if (result == nullptr) result = b.CreateCall(module.getOrInsertFunction(op.symbol, scalar_type), {a, bb, c});
      x = b.CreateSelect(applies, result, x);
    }
    b.CreateStore(x, slot_ptr);
  });
  b.CreateRetVoid();
}

std::string ZipKernelSpec::Key() const { return absl::StrCat("vector zip ", symbol, " ", from[0], from[1]); }

void BuildZipFunction(llvm::Module& module, const std::string& name, const ZipKernelSpec& spec) {
  llvm::LLVMContext& context = module.getContext();
  llvm::IRBuilder<> b(context);
  llvm::Type* i32 = b.getInt32Ty();
  llvm::Type* i64 = b.getInt64Ty();
  llvm::Function* fn = NewKernel(module, name);
  auto* scalar_type = llvm::FunctionType::get(i32, {i32, i32, i32}, false);
  llvm::FunctionCallee callee = module.getOrInsertFunction(spec.symbol, scalar_type);
  b.SetInsertPoint(llvm::BasicBlock::Create(context, "entry", fn));
  Value* out = fn->getArg(0);
  Value* in = fn->getArg(1);
  Value* from = fn->getArg(2);
  EmitLoop(b, fn->getArg(3), fn->getArg(4), [&](Value* p) {
    Value* pair = b.CreateShl(p, b.getInt64(1));
    Value* q0 = b.CreateLoad(i64, b.CreateGEP(i64, from, pair));
    EmitIf(b, b.CreateICmpSGE(q0, b.getInt64(0)), [&] {
      Value* q1 = b.CreateLoad(i64, b.CreateGEP(i64, from, b.CreateAdd(pair, b.getInt64(1))));
      Value* v[2] = {b.CreateLoad(i32, b.CreateGEP(i32, in, q0)), b.CreateLoad(i32, b.CreateGEP(i32, in, q1))};
      Value* result = b.CreateCall(callee, {v[spec.from[0]], v[spec.from[1]], b.getInt32(0)});
      b.CreateStore(result, b.CreateGEP(i32, out, p));
    });
  });
  b.CreateRetVoid();
}

}  // namespace visa::jit
