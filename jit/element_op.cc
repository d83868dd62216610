// ElementOp IR: integer resizing, zero points, tables, and the f32 narrowings as integer code.
#include "jit/element_op.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "dsl/status_macros.h"
#include "jit/stable_hash.h"
#include "llvm/IR/Constants.h"
#include "llvm/IR/GlobalVariable.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/Module.h"

namespace visa::jit {
namespace {

using llvm::Value;

const char* KindName(ElementOp::Kind kind) {
  switch (kind) {
    case ElementOp::Kind::kCopy: return "copy";
    case ElementOp::Kind::kTable: return "table";
    case ElementOp::Kind::kZeroPoint: return "zp";
    case ElementOp::Kind::kIntResize: return "int";
    case ElementOp::Kind::kF32ToBf16: return "bf16";
    case ElementOp::Kind::kF32ToF16: return "f16";
    case ElementOp::Kind::kF32ToF8E4M3: return "f8e4m3";
    case ElementOp::Kind::kF32ToF8E5M2: return "f8e5m2";
    case ElementOp::Kind::kBf16ToF32: return "bf16>f32";
    case ElementOp::Kind::kF32ToBf16Relu: return "relu>bf16";
  }
  return "?";
}

// The conversion of one raw pattern, as the reference computes it (for tables).
uint32_t Reference(ConversionStage stage, DType from, DType to, uint32_t bits) {
  absl::StatusOr<uint32_t> out = Convert(stage, from, to, bits);
  VISA_CHECK(out.ok(), "a checked conversion failed on a representable pattern");
  return *out;
}

// Small helpers over i32 values.
struct I32 {
  llvm::IRBuilderBase& b;
  Value* c(uint32_t v) { return b.getInt32(v); }
  Value* And(Value* x, uint32_t m) { return b.CreateAnd(x, c(m)); }
  Value* Shr(Value* x, uint32_t s) { return b.CreateLShr(x, c(s)); }
  Value* Sel(Value* cond, Value* t, Value* f) { return b.CreateSelect(cond, t, f); }
  Value* Sel(Value* cond, uint32_t t, Value* f) { return b.CreateSelect(cond, c(t), f); }
  Value* Umin(Value* x, uint32_t m) { return Sel(b.CreateICmpULT(x, c(m)), x, c(m)); }
  // Shift right by a variable amount in [0, 63], as if the amount were unbounded: amounts of 32
  // and more give what 31 gives for the 24-bit significands these are used on.
  Value* ClampShift(Value* shift) {
    Value* s = b.CreateSelect(b.CreateICmpSLT(shift, c(0)), c(0), shift);
    return b.CreateSelect(b.CreateICmpSGT(s, c(31)), c(31), s);
  }
  // sig / 2^shift rounded to nearest, ties to even (ShiftRightNearestEven).
  Value* ShiftNearestEven(Value* sig, Value* shift) {
    Value* s = ClampShift(shift);
    Value* q = b.CreateLShr(sig, s);
    Value* mask = b.CreateSub(b.CreateShl(c(1), s), c(1));
    Value* rem = b.CreateAnd(sig, mask);
    Value* half = b.CreateLShr(b.CreateShl(c(1), s), c(1));  // 0 when s == 0
    Value* up = b.CreateOr(b.CreateICmpUGT(rem, half),
                           b.CreateAnd(b.CreateICmpEQ(rem, half), b.CreateICmpNE(And(q, 1), c(0))));
    up = b.CreateAnd(up, b.CreateICmpNE(s, c(0)));
    return b.CreateAdd(q, b.CreateZExt(up, b.getInt32Ty()));
  }
  // sig / 2^shift rounded to nearest, ties away from zero (ShiftRightHalfAway); shift >= 1.
  Value* ShiftHalfAway(Value* sig, Value* shift) {
    Value* s = ClampShift(shift);
    Value* q = b.CreateLShr(sig, s);
    Value* rem = b.CreateAnd(sig, b.CreateSub(b.CreateShl(c(1), s), c(1)));
    Value* half = b.CreateLShr(b.CreateShl(c(1), s), c(1));
    return b.CreateAdd(q, b.CreateZExt(b.CreateICmpUGE(rem, half), b.getInt32Ty()));
  }
};

// Facts about an f32 pattern shared by the narrowings.
struct F32Parts {
  Value* is_nan;
  Value* is_inf;
  Value* zero_or_sub;
  Value* biased;  // the 8-bit exponent field
  Value* sig;     // 24-bit significand with the implicit one
};

F32Parts Split(I32& m, Value* x) {
  Value* abs = m.And(x, 0x7fffffffu);
  return {m.b.CreateICmpUGT(abs, m.c(0x7f800000u)), m.b.CreateICmpEQ(abs, m.c(0x7f800000u)),
          m.b.CreateICmpEQ(m.And(x, 0x7f800000u), m.c(0)), m.And(m.Shr(x, 23), 0xff),
          m.b.CreateOr(m.And(x, 0x007fffffu), m.c(0x00800000u))};
}

Value* EmitBf16(I32& m, Value* x) {
  F32Parts p = Split(m, x);
  Value* rounded = m.Shr(m.b.CreateAdd(m.b.CreateAdd(x, m.c(0x7fff)), m.And(m.Shr(x, 16), 1)), 16);
  Value* out = m.Sel(p.zero_or_sub, m.And(m.Shr(x, 16), 0x8000), rounded);
  return m.Sel(p.is_nan, 0x7fc0, out);
}

// f16 and f8e4m3 share the formula of F32BitsToF8E4M3: the coded exponent, nearest-even steps
// of the target quantum, and the carry into the next binade through the code's addition.
Value* EmitNarrowNearestEven(I32& m, Value* x, int mant_bits, int bias, int max_exponent,
                             uint32_t overflow_code, uint32_t clamp_code, uint32_t nan_code,
                             uint32_t sign_shift) {
  F32Parts p = Split(m, x);
  llvm::IRBuilderBase& b = m.b;
  Value* sign = m.And(m.Shr(x, sign_shift), sign_shift == 16 ? 0x8000 : 0x80);
  Value* exponent = b.CreateSub(p.biased, m.c(127 - bias));  // may be negative (signed)
  Value* coded = b.CreateSelect(b.CreateICmpSLT(exponent, m.c(1)), m.c(1), exponent);
  Value* shift = b.CreateAdd(m.c(23 - mant_bits), b.CreateSub(coded, exponent));
  Value* steps = m.ShiftNearestEven(p.sig, shift);
  Value* code = b.CreateSub(b.CreateAdd(b.CreateShl(coded, m.c(mant_bits)), steps), m.c(1u << mant_bits));
  code = m.Umin(code, clamp_code);
  Value* out = b.CreateOr(sign, code);
  out = m.Sel(b.CreateICmpSGT(exponent, m.c(max_exponent)), b.CreateOr(sign, m.c(overflow_code)), out);
  out = m.Sel(p.is_inf, b.CreateOr(sign, m.c(overflow_code)), out);
  out = m.Sel(p.zero_or_sub, sign, out);
  return m.Sel(p.is_nan, nan_code, out);
}

Value* EmitF8E5M2(I32& m, Value* x) {
  F32Parts p = Split(m, x);
  llvm::IRBuilderBase& b = m.b;
  Value* sign = m.And(m.Shr(x, 24), 0x80);
  Value* exponent = b.CreateSub(p.biased, m.c(127 - 15));
  Value* sub_code = m.Umin(m.ShiftHalfAway(p.sig, b.CreateSub(m.c(134), p.biased)), 3);
  Value* steps = m.ShiftHalfAway(p.sig, m.c(21));
  Value* code = m.Umin(b.CreateSub(b.CreateAdd(b.CreateShl(exponent, m.c(2)), steps), m.c(4)), 0x7c);
  code = m.Sel(b.CreateICmpSLE(exponent, m.c(0)), sub_code, code);
  Value* out = b.CreateOr(sign, code);
  Value* inf = b.CreateOr(sign, m.c(0x7c));
  out = m.Sel(b.CreateICmpSGE(exponent, m.c(31)), inf, out);
  out = m.Sel(p.zero_or_sub, sign, out);
  out = m.Sel(p.is_inf, inf, out);
  return m.Sel(p.is_nan, 0x7e, out);
}

// The raw pattern of `bits` bits read as a signed value.
Value* SignExtend(I32& m, Value* raw, int bits) {
  if (bits >= 32) return raw;
  return m.b.CreateAShr(m.b.CreateShl(raw, m.c(32 - bits)), m.c(32 - bits));
}

Value* EmitTable(llvm::IRBuilderBase& b, llvm::Module& module, const ElementOp& op, Value* raw) {
  llvm::Type* i32 = b.getInt32Ty();
  std::vector<llvm::Constant*> entries;
  entries.reserve(op.table.size());
  for (uint32_t v : op.table) entries.push_back(llvm::ConstantInt::get(i32, v));
  llvm::ArrayType* type = llvm::ArrayType::get(i32, op.table.size());
  auto* table = new llvm::GlobalVariable(module, type, /*isConstant=*/true, llvm::GlobalValue::PrivateLinkage,
                                         llvm::ConstantArray::get(type, entries), "table");
  Value* index = b.CreateZExt(raw, b.getInt64Ty());
  Value* slot = b.CreateInBoundsGEP(type, table, {b.getInt64(0), index});
  return b.CreateLoad(i32, slot);
}

}  // namespace

std::string ElementOp::Key() const {
  std::string key = absl::StrCat(KindName(kind), ":", std::string(Name(from)), ">", std::string(Name(to)));
  if (kind == Kind::kTable) absl::StrAppend(&key, absl::StrFormat(":%016x", StableHash(table)));
  if (kind == Kind::kZeroPoint) {
    absl::StrAppend(&key, ":", zero_points[0], ",", zero_points[1], "@", second_from);
  }
  return key;
}

ElementOp CopyOp(DType type) { return ElementOp{ElementOp::Kind::kCopy, type, type, {}, {0, 0}, -1}; }

ElementOp TableOp(DType from, DType to, std::vector<uint32_t> table) {
  return ElementOp{ElementOp::Kind::kTable, from, to, std::move(table), {0, 0}, -1};
}

ElementOp ZeroPointOp(DType from, DType to, int32_t first, int32_t second, int64_t second_from) {
  return ElementOp{ElementOp::Kind::kZeroPoint, from, to, {}, {first, second}, second_from};
}

absl::StatusOr<ElementOp> ConversionOp(ConversionStage stage, DType from, DType to) {
  RETURN_IF_ERROR(CheckConversion(stage, from, to));
  if (from == to) return CopyOp(from);
  ElementOp op{ElementOp::Kind::kIntResize, from, to, {}, {0, 0}, -1};
  if (IsSignedInt(from) && IsSignedInt(to)) return op;
  if (from == DType::kF32) {
    switch (to) {
      case DType::kBF16: op.kind = ElementOp::Kind::kF32ToBf16; return op;
      case DType::kF16: op.kind = ElementOp::Kind::kF32ToF16; return op;
      case DType::kF8E4M3: op.kind = ElementOp::Kind::kF32ToF8E4M3; return op;
      case DType::kF8E5M2: op.kind = ElementOp::Kind::kF32ToF8E5M2; return op;
      default: break;
    }
  }
  if (from == DType::kBF16 && to == DType::kF32) {
    op.kind = ElementOp::Kind::kBf16ToF32;  // a 64K-entry table would dominate compile time
    return op;
  }
  if (Bits(from) > 16) {
    return absl::UnimplementedError(absl::StrCat("JIT: no code for the conversion ", std::string(Name(from)),
                                                 " -> ", std::string(Name(to))));
  }
  // Narrow inputs: the reference itself fills the table, so the table is exact by construction.
  std::vector<uint32_t> table(size_t{1} << Bits(from));
  for (uint32_t bits = 0; bits < table.size(); ++bits) table[bits] = Reference(stage, from, to, bits);
  return TableOp(from, to, std::move(table));
}

Value* EmitElementOp(llvm::IRBuilderBase& b, llvm::Module& module, const ElementOp& op, Value* raw,
                     Value* src_pos) {
  I32 m{b};
  switch (op.kind) {
    case ElementOp::Kind::kCopy: return raw;
    case ElementOp::Kind::kTable: return EmitTable(b, module, op, raw);
    case ElementOp::Kind::kIntResize: {
      Value* value = SignExtend(m, raw, Bits(op.from));
      const int bits = Bits(op.to);
      return bits >= 32 ? value : m.And(value, (1u << bits) - 1);
    }
    case ElementOp::Kind::kZeroPoint: {
      Value* value = SignExtend(m, raw, Bits(op.from));
      Value* zp = m.c(static_cast<uint32_t>(op.zero_points[0]));
      if (op.second_from >= 0) {
        zp = b.CreateSelect(b.CreateICmpSGE(src_pos, b.getInt64(op.second_from)),
                            m.c(static_cast<uint32_t>(op.zero_points[1])), zp);
      }
      return b.CreateSub(value, zp);  // the staging types are stored sign-extended
    }
    case ElementOp::Kind::kF32ToBf16: return EmitBf16(m, raw);
    case ElementOp::Kind::kF32ToBf16Relu: {
      // CommitCastRelu: a set sign bit on a non-NaN pattern becomes +0.
      Value* negative = b.CreateICmpNE(m.Shr(raw, 31), m.c(0));
      Value* nan = b.CreateICmpUGT(m.And(raw, 0x7fffffff), m.c(0x7f800000));
      return EmitBf16(m, m.Sel(b.CreateAnd(negative, b.CreateNot(nan)), 0u, raw));
    }
    case ElementOp::Kind::kF32ToF16:
      return EmitNarrowNearestEven(m, raw, 10, 15, 30, 0x7c00, 0x7c00, 0x7e00, 16);
    case ElementOp::Kind::kF32ToF8E4M3:
      return EmitNarrowNearestEven(m, raw, 3, 7, 15, 0x7e, 0x7e, 0x7f, 24);
    case ElementOp::Kind::kF32ToF8E5M2: return EmitF8E5M2(m, raw);
    case ElementOp::Kind::kBf16ToF32: {
      // Bf16ToF32Bits: NaN -> 0x7fc00000, subnormal -> signed zero, otherwise the bits shifted up.
      Value* nan = b.CreateICmpUGT(m.And(raw, 0x7fff), m.c(0x7f80));
      Value* sub = b.CreateICmpEQ(m.And(raw, 0x7f80), m.c(0));
      Value* out = b.CreateShl(raw, m.c(16));
      out = m.Sel(sub, b.CreateShl(m.And(raw, 0x8000), m.c(16)), out);
      return m.Sel(nan, 0x7fc00000u, out);
    }
  }
  return raw;
}

absl::StatusOr<ElementOp> CastOp(const CastStage& stage) {
  switch (stage.kind) {
    case CastKind::kEngine: return ConversionOp(ConversionStage::kCastEngine, stage.from, stage.to);
    case CastKind::kCommit: return ConversionOp(ConversionStage::kCommitCast, stage.from, stage.to);
    case CastKind::kCommitRelu: {
      ASSIGN_OR_RETURN(ElementOp op, ConversionOp(ConversionStage::kCommitCast, stage.from, stage.to));
      VISA_CHECK(op.kind == ElementOp::Kind::kF32ToBf16, "commit_cast is f32 -> bf16");
      op.kind = ElementOp::Kind::kF32ToBf16Relu;
      return op;
    }
  }
  return absl::InternalError("unknown cast kind");
}

absl::StatusOr<ElementOp> FetchAdapterOp(const FetchStage& stage, bool interleaved, int64_t per_tensor) {
  const FetchAdapter& adapter = stage.adapter;
  if (!adapter.table.empty()) return TableOp(stage.in_dtype, stage.out.dtype, adapter.table);
  if (!adapter.zero_points.empty()) {
    const int32_t first = adapter.zero_points[0];
    const int32_t second = adapter.zero_points.size() > 1 ? adapter.zero_points[1] : first;
    return ZeroPointOp(stage.in_dtype, stage.out.dtype, first, second, interleaved ? per_tensor : -1);
  }
  return ConversionOp(ConversionStage::kFetchCast, stage.in_dtype, stage.out.dtype);
}

}  // namespace visa::jit
