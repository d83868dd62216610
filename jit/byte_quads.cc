// ByteQuads: the eligibility rule and the IR of a quad multiply-add and a weight sum.
#include "jit/byte_quads.h"

#include "llvm/IR/IntrinsicsX86.h"

namespace visa::jit {

namespace {

bool FitsSignedByte(DType type) { return type == DType::kI4 || type == DType::kI5 || type == DType::kI8; }

}  // namespace

bool UsesByteQuads(DType x_type, DType w_type, DType acc_type, ReduceOp op, int64_t group, bool host_has_vnni) {
  return host_has_vnni && acc_type == DType::kI32 && op == ReduceOp::kAdd && group % 4 == 0 && FitsSignedByte(x_type) &&
         FitsSignedByte(w_type);
}

llvm::Value* EmitQuadMultiplyAdd(llvm::IRBuilder<>& b, llvm::Value* sum, llvm::Value* x, llvm::Value* w) {
  return b.CreateIntrinsic(llvm::Intrinsic::x86_avx512_vpdpbusd_512, {}, {sum, x, w});
}

llvm::Value* EmitSignedByteSum(llvm::IRBuilder<>& b, llvm::Value* bytes, int64_t count) {
  auto* byte_vector = llvm::FixedVectorType::get(b.getInt8Ty(), static_cast<unsigned>(count));
  auto* wide_vector = llvm::FixedVectorType::get(b.getInt32Ty(), static_cast<unsigned>(count));
  llvm::Value* values = b.CreateAlignedLoad(byte_vector, bytes, llvm::Align(4));
  // As unsigned bytes w + 128, whose sum the backend takes with psadbw (a sum of eight bytes per
  // instruction, where sign extension took four instructions per sixteen bytes), less 128 each.
  llvm::Value* biased = b.CreateXor(values, llvm::ConstantInt::get(byte_vector, 0x80));
  llvm::Value* sum = b.CreateAddReduce(b.CreateZExt(biased, wide_vector));
  return b.CreateSub(sum, b.getInt32(static_cast<uint32_t>(128 * count)));
}

}  // namespace visa::jit
