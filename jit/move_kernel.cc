// Move kernels in IR: loads and stores by storage width (nibbles for i4), nested counted loops.
#include "jit/move_kernel.h"

#include <algorithm>
#include <functional>
#include <vector>

#include "absl/strings/str_cat.h"
#include "jit/ir_loops.h"
#include "jit/shared_body.h"
#include "jit/streaming_move.h"
#include "dsl/status_macros.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/Metadata.h"
#include "llvm/IR/Module.h"
#include "llvm/Support/raw_ostream.h"

namespace visa::jit {
namespace {

using llvm::Value;


// Element access by storage width: 4-bit elements are nibbles (even positions low).
class Elements {
 public:
  Elements(llvm::IRBuilder<>& b, DType type) : b_(b), bits_(StorageBits(type)) {}

  llvm::Type* type() const { return b_.getIntNTy(bits_ == 4 ? 8 : bits_); }

  // The stored value zero-extended to i32.
  Value* Load(Value* base, Value* pos) {
    if (bits_ == 4) {
      Value* byte = b_.CreateLoad(b_.getInt8Ty(), b_.CreateGEP(b_.getInt8Ty(), base, b_.CreateLShr(pos, 1)));
      Value* shift = b_.CreateTrunc(b_.CreateShl(b_.CreateAnd(pos, 1), 2), b_.getInt8Ty());
      return b_.CreateZExt(b_.CreateAnd(b_.CreateLShr(byte, shift), b_.getInt8(15)), b_.getInt32Ty());
    }
    Value* v = b_.CreateAlignedLoad(type(), b_.CreateGEP(type(), base, pos), llvm::Align(1));
    return bits_ == 32 ? v : b_.CreateZExt(v, b_.getInt32Ty());
  }

  // Stores the low bits of an i32.
  void Store(Value* base, Value* pos, Value* value) {
    if (bits_ == 4) {
      Value* addr = b_.CreateGEP(b_.getInt8Ty(), base, b_.CreateLShr(pos, 1));
      Value* byte = b_.CreateLoad(b_.getInt8Ty(), addr);
      Value* shift = b_.CreateTrunc(b_.CreateShl(b_.CreateAnd(pos, 1), 2), b_.getInt8Ty());
      Value* nibble = b_.CreateShl(b_.CreateAnd(b_.CreateTrunc(value, b_.getInt8Ty()), b_.getInt8(15)), shift);
      Value* keep = b_.CreateAnd(byte, b_.CreateNot(b_.CreateShl(b_.getInt8(15), shift)));
      b_.CreateStore(b_.CreateOr(keep, nibble), addr);
      return;
    }
    Value* v = bits_ == 32 ? value : b_.CreateTrunc(value, type());
    b_.CreateAlignedStore(v, b_.CreateGEP(type(), base, pos), llvm::Align(1));
  }

  // Same-width copies skip the i32 round trip, so contiguous runs become plain vector moves.
  bool direct() const { return bits_ != 4; }

 private:
  llvm::IRBuilder<>& b_;
  int bits_;
};

void EmitElement(llvm::IRBuilder<>& b, llvm::Module& module, const ElementOp& op, Value* dst, Value* src,
                 Value* d, Value* s) {
  Elements in(b, op.from), out(b, op.to);
  if (op.kind == ElementOp::Kind::kCopy && in.direct()) {
    Value* v = b.CreateAlignedLoad(in.type(), b.CreateGEP(in.type(), src, s), llvm::Align(1));
    b.CreateAlignedStore(v, b.CreateGEP(in.type(), dst, d), llvm::Align(1));
    return;
  }
  out.Store(dst, d, EmitElementOp(b, module, op, in.Load(src, s), s));
}

// The streaming kernel's innermost level: one vector of `level.count` elements stored to `d`
// with its true alignment (the caller guarantees a vector-aligned base and whole-vector strides)
// and !nontemporal, so x86 emits vmovntdq. A same-type copy of a contiguous source loads one
// vector; anything else builds it lane by lane.
void EmitStreamedVector(llvm::IRBuilder<>& b, llvm::Module& module, const ElementOp& op, const NestLevel& level,
                        Value* dst, Value* src, Value* d, Value* s) {
  Elements in(b, op.from), out(b, op.to);
  auto* vector_type = llvm::FixedVectorType::get(out.type(), static_cast<unsigned>(level.count));
  Value* vector = nullptr;
  if (op.kind == ElementOp::Kind::kCopy && in.direct() && level.src_stride == 1) {
    vector = b.CreateAlignedLoad(vector_type, b.CreateGEP(in.type(), src, s), llvm::Align(1));
  } else {
    vector = llvm::PoisonValue::get(vector_type);
    for (int64_t lane = 0; lane < level.count; ++lane) {
      Value* position = b.CreateNSWAdd(s, b.getInt64(lane * level.src_stride));
      Value* value = op.kind == ElementOp::Kind::kCopy && in.direct()
                         ? b.CreateAlignedLoad(in.type(), b.CreateGEP(in.type(), src, position), llvm::Align(1))
                         : b.CreateZExtOrTrunc(EmitElementOp(b, module, op, in.Load(src, position), position), out.type());
      vector = b.CreateInsertElement(vector, value, static_cast<uint64_t>(lane));
    }
  }
  llvm::StoreInst* store = b.CreateAlignedStore(vector, b.CreateGEP(out.type(), dst, d), llvm::Align(kStreamVectorBytes));
  llvm::LLVMContext& ctx = b.getContext();
  store->setMetadata(llvm::LLVMContext::MD_nontemporal,
                     llvm::MDNode::get(ctx, llvm::ConstantAsMetadata::get(b.getInt32(1))));
}

// Levels 0 and 1 of a transposing copy (TransposesInBlocks) as 8 x 8 tiles: eight source rows
// (level 0's steps, each contiguous along level 1) loaded as vectors, transposed in registers by
// three rounds of perfect shuffles (each rotates the tile's 6-bit element index by one bit: after
// three, row and column have swapped), stored as eight contiguous destination rows. Element by
// element, each 2-byte load of such a move is a cache line of its own and the loop does not vectorize.
void EmitTransposedTiles(llvm::IRBuilder<>& b, const MoveSpec& spec, Value* dst, Value* src, Value* d, Value* s) {
  constexpr int kTile = kTransposeTile;
  const NestLevel& rows = spec.nest->levels[0];   // destination stride 1
  const NestLevel& cols = spec.nest->levels[1];   // source stride 1
  llvm::Type* element = b.getIntNTy(StorageBits(spec.op.to));
  auto* vector_type = llvm::FixedVectorType::get(element, kTile);
  std::vector<int> low, high;
  for (int i = 0; i < kTile / 2; ++i) {
    low.insert(low.end(), {i, i + kTile});
    high.insert(high.end(), {i + kTile / 2, i + kTile / 2 + kTile});
  }
  EmitLoop(b, b.getInt64(0), b.getInt64(cols.count / kTile), [&](Value* c) {
    Value* c0 = b.CreateNSWMul(c, b.getInt64(kTile));
    EmitLoop(b, b.getInt64(0), b.getInt64(rows.count / kTile), [&](Value* r) {
      Value* r0 = b.CreateNSWMul(r, b.getInt64(kTile));
      // Tile row i: source row r0 + i (level 0), columns c0 .. c0 + 7 (level 1).
      Value* s0 = b.CreateNSWAdd(s, b.CreateNSWAdd(b.CreateNSWMul(r0, b.getInt64(rows.src_stride)), c0));
      std::vector<Value*> tile(kTile);
      for (int i = 0; i < kTile; ++i) {
        Value* at = b.CreateNSWAdd(s0, b.getInt64(i * rows.src_stride));
        tile[i] = b.CreateAlignedLoad(vector_type, b.CreateGEP(element, src, at), llvm::Align(1));
      }
      for (int round = 0; round < 3; ++round) {
        std::vector<Value*> next(kTile);
        for (int i = 0; i < kTile / 2; ++i) {
          next[2 * i] = b.CreateShuffleVector(tile[i], tile[i + kTile / 2], low);
          next[2 * i + 1] = b.CreateShuffleVector(tile[i], tile[i + kTile / 2], high);
        }
        tile = std::move(next);
      }
      // Transposed row j: destination column c0 + j (level 1), positions r0 .. r0 + 7 (level 0).
      Value* d0 = b.CreateNSWAdd(d, b.CreateNSWAdd(r0, b.CreateNSWMul(c0, b.getInt64(cols.dst_stride))));
      for (int j = 0; j < kTile; ++j) {
        Value* at = b.CreateNSWAdd(d0, b.getInt64(j * cols.dst_stride));
        b.CreateAlignedStore(tile[j], b.CreateGEP(element, dst, at), llvm::Align(1));
      }
    });
  });
}

// A level's count and strides as the kernel's code sees them: constants, or its parameters.
struct LevelValues {
  Value* count;
  Value* dst_stride;
  Value* src_stride;
};

// Levels innermost first; level `k` runs over [start, end) when it is the outermost, and is written
// out when it is in [1, unrolled). A loop level reads its count and strides from `values`.
void EmitNest(llvm::IRBuilder<>& b, llvm::Module& module, const MoveSpec& spec, const std::vector<LevelValues>& values,
              Value* dst, Value* src, int k, Value* d, Value* s, Value* begin, Value* end, int unrolled) {
  if (k < 0) {
    EmitElement(b, module, spec.op, dst, src, d, s);
    return;
  }
  if (k == 1 && TransposesInBlocks(spec)) {
    EmitTransposedTiles(b, spec, dst, src, d, s);
    return;
  }
  if (k == 0 && spec.streaming && spec.nest->levels.size() > 1) {
    EmitStreamedVector(b, module, spec.op, spec.nest->levels[0], dst, src, d, s);
    return;
  }
  const NestLevel& level = spec.nest->levels[k];
  const bool written_out = k > 0 && k < unrolled;
  Value* dst_stride = written_out ? b.getInt64(level.dst_stride) : values[k].dst_stride;
  Value* src_stride = written_out ? b.getInt64(level.src_stride) : values[k].src_stride;
  auto body = [&](Value* i) {
    Value* dk = b.CreateNSWAdd(d, b.CreateNSWMul(i, dst_stride));
    Value* sk = b.CreateNSWAdd(s, b.CreateNSWMul(i, src_stride));
    EmitNest(b, module, spec, values, dst, src, k - 1, dk, sk, begin, end, unrolled);
  };
  if (written_out) {
    for (int64_t i = 0; i < level.count; ++i) body(b.getInt64(i));
    return;
  }
  const bool outermost = k + 1 == static_cast<int>(spec.nest->levels.size());
  EmitLoop(b, outermost ? begin : b.getInt64(0), outermost ? end : values[k].count, body);
}

// The levels whose count and strides are the kernel's parameters (ParameterLevels), and the
// values every level's loop reads: the parameters' loads at the entry, constants elsewhere.
std::vector<LevelValues> NestValues(llvm::IRBuilder<>& b, llvm::Module& module, const MoveSpec& spec) {
  const std::vector<NestLevel>& levels = spec.nest->levels;
  const std::vector<bool> parametric = ParameterLevels(spec);
  // The outermost level's count is not in the code (the caller's [begin, end) is): not a
  // parameter either, so moves differing only there still have equal code, linked once.
  const size_t outermost = levels.size() - 1;
  std::vector<int64_t> parameters;
  for (size_t k = 0; k < levels.size(); ++k) {
    if (!parametric[k]) continue;
    if (k != outermost) parameters.push_back(levels[k].count);
    parameters.insert(parameters.end(), {levels[k].dst_stride, levels[k].src_stride});
  }
  const std::vector<Value*> loaded = LoadParameters(b, module, parameters);
  std::vector<LevelValues> values;
  size_t next = 0;
  for (size_t k = 0; k < levels.size(); ++k) {
    if (parametric[k]) {
      Value* count = k == outermost ? nullptr : loaded[next++];
      values.push_back({count, loaded[next], loaded[next + 1]});
      next += 2;
    } else {
      values.push_back({b.getInt64(levels[k].count), b.getInt64(levels[k].dst_stride), b.getInt64(levels[k].src_stride)});
    }
  }
  return values;
}

void EmitRuns(llvm::IRBuilder<>& b, llvm::Module& module, const MoveSpec& spec, Value* dst, Value* src,
              Value* runs, Value* begin, Value* end) {
  llvm::Type* i64 = b.getInt64Ty();
  EmitLoop(b, begin, end, [&](Value* r) {
    auto field = [&](int f) {
      return b.CreateLoad(i64, b.CreateGEP(i64, runs, b.CreateAdd(b.CreateShl(r, 2), b.getInt64(f))));
    };
    Value* d0 = field(0);
    Value* s0 = field(1);
    Value* length = field(2);
    Value* stride = field(3);
    EmitLoop(b, b.getInt64(0), length, [&](Value* i) {
      EmitElement(b, module, spec.op, dst, src, b.CreateAdd(d0, i), b.CreateAdd(s0, b.CreateMul(i, stride)));
    });
  });
}

}  // namespace

// The kernel pipeline has no unroller, and a loop of two trips around each vector halved the speed
// of a DRAM-bound move: the benchmark's 32 MiB move back (two rows read, one written) took 2.7 ms
// with the loop and 1.3 ms with the same instructions written out. Level 0 stays because the
// pipeline has no SLP vectorizer to rebuild vectors from written-out elements.
int UnrolledLevels(const MoveSpec& spec) {
  const std::vector<NestLevel>& levels = spec.nest->levels;
  int k = 1;
  int64_t bodies = 1;
  auto fits = [&](int64_t more) {
    return more <= kMaxUnrolledBodies && more * levels[0].count <= kMaxUnrolledElements;
  };
  while (k + 1 < static_cast<int>(levels.size()) && fits(bodies * levels[k].count)) {
    bodies *= levels[k].count;
    ++k;
  }
  return k;
}

// Level 0 stays constant: its count and strides decide how it vectorizes (a known trip count, a
// contiguous or strided access). Written-out levels and the transposed tiles' level 1 are
// constants in straight-line code or tile offsets. A loop above them costs a multiply-add per
// iteration whichever way its stride comes, so moves that differ only there share their code.
std::vector<bool> ParameterLevels(const MoveSpec& spec) {
  const int n = static_cast<int>(spec.nest->levels.size());
  const int unrolled = UnrolledLevels(spec);
  const bool tiles = TransposesInBlocks(spec);
  std::vector<bool> parametric(n, false);
  for (int k = std::max(unrolled, 1); k < n; ++k) parametric[k] = !(k == 1 && tiles);
  return parametric;
}

bool TransposesInBlocks(const MoveSpec& spec) {
  if (!spec.nest || spec.streaming || spec.op.kind != ElementOp::Kind::kCopy || spec.op.from != spec.op.to) return false;
  const int bits = StorageBits(spec.op.to);
  const std::vector<NestLevel>& levels = spec.nest->levels;
  // Level 1 is never the outermost: threads split that one, and the tiles walk all of it.
  if ((bits != 8 && bits != 16 && bits != 32) || levels.size() < 3) return false;
  return levels[0].dst_stride == 1 && levels[1].src_stride == 1 && levels[0].src_stride != 1 &&
         levels[0].count % kTransposeTile == 0 && levels[1].count % kTransposeTile == 0;
}

std::string MoveSpec::Key() const {
  return absl::StrCat(nest ? nest->ToString() : "runs", " ", op.Key(), streaming ? " streaming" : "");
}

void BuildMoveFunction(llvm::Module& module, const std::string& name, const MoveSpec& spec) {
  llvm::LLVMContext& ctx = module.getContext();
  llvm::IRBuilder<> b(ctx);
  llvm::Type* ptr = b.getPtrTy();
  llvm::Type* i64 = b.getInt64Ty();
  auto* type = llvm::FunctionType::get(b.getVoidTy(), {ptr, ptr, ptr, i64, i64}, false);
  auto* fn = llvm::Function::Create(type, llvm::Function::ExternalLinkage, name, module);
  fn->addFnAttr(llvm::Attribute::NoUnwind);
  // Destination and source are always distinct buffers; saying so lets loops vectorize.
  for (unsigned a = 0; a < 3; ++a) fn->addParamAttr(a, llvm::Attribute::NoAlias);
  llvm::Value* dst = fn->getArg(0);
  llvm::Value* src = fn->getArg(1);
  llvm::Value* runs = fn->getArg(2);
  llvm::Value* begin = fn->getArg(3);
  llvm::Value* end = fn->getArg(4);
  b.SetInsertPoint(llvm::BasicBlock::Create(ctx, "entry", fn));
  VISA_CHECK(!spec.streaming || (spec.nest && spec.nest->levels.size() > 1 && HasStreamingShape(*spec.nest, spec.op) &&
                                 spec.nest->levels[0].count * StorageBits(spec.op.to) == 8 * kStreamVectorBytes),
             "a streaming move kernel needs a nest cut into whole vectors (StreamingNest)");
  if (spec.nest) {
    const std::vector<LevelValues> values = NestValues(b, module, spec);
    EmitNest(b, module, spec, values, dst, src, static_cast<int>(spec.nest->levels.size()) - 1, b.getInt64(0),
             b.getInt64(0), begin, end, UnrolledLevels(spec));
  } else {
    EmitRuns(b, module, spec, dst, src, runs, begin, end);
  }
  b.CreateRetVoid();
}

std::string MoveFunctionIr(const MoveSpec& spec) {
  llvm::LLVMContext context;
  llvm::Module module("move", context);
  BuildMoveFunction(module, "move", spec);
  std::string text;
  llvm::raw_string_ostream out(text);
  module.print(out, nullptr);
  return text;
}

}  // namespace visa::jit
