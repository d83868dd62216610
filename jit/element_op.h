// ElementOp: what happens to each element on its way through a compiled move (a copy, the Fetch
// Adapter's table / zero point / type cast, the Cast Engine's narrowing), and its LLVM IR.
//
// Every conversion is bit-exact with runtime/scalar_convert.h: integer resizing and the f32
// narrowings are emitted as the same integer arithmetic; every other conversion has an input of at
// most 16 bits and is emitted as a lookup table filled by the reference function itself.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "dsl/cast_engine.h"
#include "dsl/dtype.h"
#include "dsl/fetch_engine.h"
#include "dsl/scalar_convert.h"

namespace llvm {
class Module;
class Value;
class IRBuilderBase;
}  // namespace llvm

namespace visa::jit {

struct ElementOp {
  enum class Kind { kCopy, kTable, kZeroPoint, kIntResize, kF32ToBf16, kF32ToF16, kF32ToF8E4M3, kF32ToF8E5M2, kBf16ToF32,
                    kF32ToBf16Relu };  // commit_cast_relu: the ReLU, then the bf16 rule
  Kind kind = Kind::kCopy;
  DType from = DType::kI8;
  DType to = DType::kI8;
  std::vector<uint32_t> table;   // kTable: output bits indexed by input bits
  int32_t zero_points[2] = {0, 0};
  int64_t second_from = -1;      // kZeroPoint: source positions from here use zero_points[1]

  // Identifies the generated code (part of a kernel's cache key).
  std::string Key() const;
};

ElementOp CopyOp(DType type);
// The conversion `stage` performs from `from` to `to` (InvalidArgument when it performs none).
absl::StatusOr<ElementOp> ConversionOp(ConversionStage stage, DType from, DType to);
// What a recorded cast does to each element: the Cast Engine's narrowing or the Commit Adapter's
// commit_cast (with its ReLU).
absl::StatusOr<ElementOp> CastOp(const CastStage& stage);
ElementOp TableOp(DType from, DType to, std::vector<uint32_t> table);
// i4 -> i5 or i8 -> i9: value - zero point; one zero point per interleaved tensor.
ElementOp ZeroPointOp(DType from, DType to, int32_t first, int32_t second, int64_t second_from);

// The Fetch Adapter as an element op: its table, its zero points (one per interleaved tensor: the
// second tensor's positions start at `per_tensor`) or its type cast.
absl::StatusOr<ElementOp> FetchAdapterOp(const FetchStage& stage, bool interleaved, int64_t per_tensor);

// Emits the converted element: `raw` is the source's raw pattern zero-extended to i32 and `src_pos`
// the source position (i64); the result is the output's storage value in an i32 (the raw pattern,
// or for i5 / i9 the value sign-extended).
llvm::Value* EmitElementOp(llvm::IRBuilderBase& b, llvm::Module& module, const ElementOp& op,
                           llvm::Value* raw, llvm::Value* src_pos);

}  // namespace visa::jit
