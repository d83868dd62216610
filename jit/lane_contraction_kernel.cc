// Lane contraction kernels in IR: packing in place, 16-lane products and trees, scattering.
#include "jit/lane_contraction_kernel.h"

#include <algorithm>
#include <array>

#include "absl/strings/str_format.h"
#include "dsl/status_macros.h"
#include "jit/accumulator_math.h"
#include "jit/byte_quads.h"
#include "jit/ir_loops.h"
#include "jit/lane_prefetch.h"
#include "jit/lane_transpose.h"
#include "jit/stable_hash.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/InlineAsm.h"
#include "llvm/IR/MDBuilder.h"
#include "llvm/IR/IntrinsicsX86.h"
#include "llvm/IR/Module.h"
#include "llvm/TargetParser/Host.h"

namespace visa::jit {
namespace {

using llvm::Value;

constexpr int64_t kAlign = 64;
// Rows whose trees share each operand load: four Rows' partial trees (at most five subtrees each
// for a 32-wide packet) fit the 32 vector registers with the operand and products.
constexpr size_t kRowsPerOperandLoad = 4;
// Rows whose integer pair sums share each operand load: two chains each, 16 accumulators.
constexpr size_t kRowsPerPairLoad = 8;

// llvm.prefetch locality: 3 is prefetcht0. Measured on the GEMM i8 op (AMD Zen): the kernel's CPU
// time 1.45 ms with it, 1.85 ms with prefetcht1, 1.95 ms with prefetcht2, 2.8 ms without.
constexpr int kPrefetchLocality = 3;
// Prefetches of each kind (operand, weights) per step at most (the GEMM i8 op needs 4 of each).
constexpr int64_t kMaxPrefetchesPerStep = 16;
// Steps back within which a step's operand or weight block counts as recently used (still in L1)
// when the steps are ordered for interleaved packing.
constexpr int64_t kReuseWindow = 8;
// Steps x accumulator blocks above which the steps keep the spec's order (the greedy order looks
// at every block's next step for every step; the GEMM's is 256 x 8).
constexpr int64_t kMaxOrderWork = int64_t{1} << 22;

int64_t RoundUp(int64_t n) { return (n + kAlign - 1) / kAlign * kAlign; }

// Whether the host CPU (the JIT's target) has an LLVM feature, e.g. "avx512vnni".
bool HostHas(const char* feature) {
  static const llvm::StringMap<bool> features = llvm::sys::getHostCPUFeatures();
  auto it = features.find(feature);
  return it != features.end() && it->second;
}

// Integer sums are exact in any order, so an integer sum kernel may multiply-add pairs of packet
// positions in one instruction (pmaddwd: 16-bit pairs into 32-bit lanes; VNNI's vpdpwssd also
// accumulates) instead of the tree: every contracted integer type (i4, i5, i8, i9) fits 16 bits.
bool UsesIntegerPairs(const LaneContractionSpec& s) {
  return !IsFloat(s.acc_type) && s.op == ReduceOp::kAdd && s.group % 2 == 0 && HostHas("avx512bw");
}

// How packed operands hold their values: 32-bit values, 16-bit pairs, or byte quads.
enum class Packing { kValues, kPairs, kQuads };

Packing PackingOf(const LaneContractionSpec& s) {
  if (UsesByteQuads(s.x_type, s.w_type, s.acc_type, s.op, s.group, HostHas("avx512vnni") && HostHas("avx512bw"))) {
    return Packing::kQuads;
  }
  return UsesIntegerPairs(s) ? Packing::kPairs : Packing::kValues;
}

// Packet positions per 32-bit unit of a packed operand.
int64_t PositionsPerUnit(Packing packing) {
  switch (packing) {
    case Packing::kValues: return 1;
    case Packing::kPairs: return 2;
    case Packing::kQuads: return 4;
  }
  return 1;
}

// 32-bit units per row of the operand's transpose tile: the packet's values, 16-bit pairs or byte
// quads, rounded up to whole 16-unit tiles.
int64_t TileStride(const LaneContractionSpec& s) {
  const int64_t units = s.packet / PositionsPerUnit(PackingOf(s));
  return (units + kLanes - 1) / kLanes * kLanes;
}

// Positions of a tree group a step's trees are written out for at a time (StepShapeOf): a chunk
// of 8 is 4 Rows x 8 products and their sums per loop iteration.
constexpr int64_t kStepChunkLeaves = 8;

// Whether every live tree group's positions are live alike, and each group in chunks of `period`.
bool LiveAlike(const LaneContractionSpec& s, int64_t period) {
  int64_t first = -1;
  for (int64_t g = 0; g < s.groups(); ++g) {
    if (s.target[g] < 0) continue;
    if (first < 0) first = g;
    for (int64_t p = 0; p < s.group; ++p) {
      if (s.live_packet[g * s.group + p] != s.live_packet[first * s.group + p % period]) return false;
    }
  }
  return true;
}

// Whether each live group's positions are live alike in chunks of `period`.
bool ChunksAlike(const LaneContractionSpec& s, int64_t period) {
  for (int64_t g = 0; g < s.groups(); ++g) {
    if (s.target[g] < 0) continue;
    for (int64_t p = 0; p < s.group; ++p) {
      if (s.live_packet[g * s.group + p] != s.live_packet[g * s.group + p % period]) return false;
    }
  }
  return true;
}

// Scratch layout: packed weights, packed operand, lane accumulators, first-contribution flags, the
// operand's transpose tile, (byte quads) the sign fix per weight block, Row and tree group, and
// the chunk sums of a block of Rows' trees (StepShapeOf).
struct Scratch {
  int64_t w = 0, x = 0, acc = 0, seen = 0, tile = 0, sign_fix = 0, chunk = 0, end = 0;
  explicit Scratch(const LaneContractionSpec& s) {
    x = RoundUp(4 * s.w_blocks() * s.rows * s.packet);
    acc = x + RoundUp(4 * s.x_blocks() * s.packet * kLanes);
    seen = acc + RoundUp(4 * s.acc_blocks() * s.rows * s.groups() * kLanes);
    tile = seen + RoundUp(s.acc_blocks());
    sign_fix = tile + 4 * kLanes * TileStride(s);
    chunk = sign_fix + (PackingOf(s) == Packing::kQuads ? RoundUp(4 * s.w_blocks() * s.rows * s.groups()) : 0);
    const StepShape shape = StepShapeOf(s);
    const int64_t chunks = shape.chunk_leaves > 0 ? s.group / shape.chunk_leaves : 1;
    end = chunk + (chunks > 1 ? 4 * kLanes * static_cast<int64_t>(kRowsPerOperandLoad) * chunks : 0);
  }
};

// `offsets[p] == p * step` for every p: the table is a stride.
std::optional<int64_t> StrideOf(const std::vector<int64_t>& offsets) {
  const int64_t step = offsets.size() > 1 ? offsets[1] - offsets[0] : 0;
  for (size_t p = 0; p < offsets.size(); ++p) {
    if (offsets[p] != static_cast<int64_t>(p) * step) return std::nullopt;
  }
  return step;
}


// An element offset along the packet: `p * stride` when the table is one, else the table.
Value* PacketOffset(llvm::IRBuilder<>& b, llvm::Module& m, const std::vector<int64_t>& table, Value* p) {
  if (std::optional<int64_t> stride = StrideOf(table)) return b.CreateMul(p, b.getInt64(*stride));
  return EmitTableLoad(b, m, table, p, 64);
}

// The contraction's widening of an operand element already in the stream type.
Value* Widen(llvm::IRBuilder<>& b, llvm::Module& m, DType from, DType acc, Value* raw) {
  absl::StatusOr<ElementOp> widen = ConversionOp(ConversionStage::kContraction, from, acc);
  VISA_CHECK(widen.ok(), "the planner only pairs widenable operand types");
  return EmitElementOp(b, m, *widen, raw, b.getInt64(0));
}

}  // namespace

llvm::Function* DeclareLaneContractionFunction(llvm::Module& module, const std::string& name) {
  llvm::LLVMContext& context = module.getContext();
  llvm::Type* ptr = llvm::PointerType::getUnqual(context);
  llvm::Type* i64 = llvm::Type::getInt64Ty(context);
  auto* type = llvm::FunctionType::get(llvm::Type::getVoidTy(context), {ptr, ptr, ptr, ptr, ptr, i64, i64}, false);
  llvm::Function* fn = llvm::Function::Create(type, llvm::Function::ExternalLinkage, name, module);
  fn->addFnAttr(llvm::Attribute::NoUnwind);
  for (unsigned a = 0; a < 5; ++a) fn->addParamAttr(a, llvm::Attribute::NoAlias);
  return fn;
}

namespace {

class Builder {
 public:
  Builder(llvm::Module& module, const LaneContractionSpec& spec)
      : m_(module), s_(spec), b_(module.getContext()), layout_(spec), packing_(PackingOf(spec)),
        pairs_(packing_ == Packing::kPairs), quads_(packing_ == Packing::kQuads),
        vnni_(pairs_ && HostHas("avx512vnni")), interleaved_(packing_ == Packing::kValues), shape_(StepShapeOf(spec)) {
    Schedule();
  }

  void Build(const std::string& name) {
    fn_ = DeclareLaneContractionFunction(m_, name);
    b_.SetInsertPoint(llvm::BasicBlock::Create(m_.getContext(), "entry", fn_));
    Value* scratch = fn_->getArg(4);
    wp_ = scratch;
    xp_ = b_.CreateGEP(b_.getInt8Ty(), scratch, b_.getInt64(layout_.x));
    accp_ = b_.CreateGEP(b_.getInt8Ty(), scratch, b_.getInt64(layout_.acc));
    seen_ = b_.CreateGEP(b_.getInt8Ty(), scratch, b_.getInt64(layout_.seen));
    tile_ = b_.CreateGEP(b_.getInt8Ty(), scratch, b_.getInt64(layout_.tile));
    sign_fix_ = b_.CreateGEP(b_.getInt8Ty(), scratch, b_.getInt64(layout_.sign_fix));
    chunk_ = b_.CreateGEP(b_.getInt8Ty(), scratch, b_.getInt64(layout_.chunk));
    EmitLoop(b_, fn_->getArg(5), fn_->getArg(6), [&](Value* o) {
      Value* live = b_.CreateICmpNE(Table(s_.live_outer, o, 8), b_.getInt8(0));
      EmitIf(b_, live, [&] { Slice(o); });
    });
    b_.CreateRetVoid();
  }

 private:
  Value* Table(const std::vector<int64_t>& values, Value* index, int bits) {
    return EmitTableLoad(b_, m_, values, index, bits);
  }
  Value* Table(const std::vector<uint8_t>& values, Value* index, int bits) {
    return Table(std::vector<int64_t>(values.begin(), values.end()), index, bits);
  }
  Value* I64(int64_t v) { return b_.getInt64(v); }

  void Slice(Value* o) {
    o_ = o;
    dm_ = b_.CreateLoad(b_.getPtrTy(), b_.CreateGEP(b_.getPtrTy(), fn_->getArg(0), o));
    if (!interleaved_) {
      PackWeights(o);
      PackOperand(dm_);
    }
    b_.CreateMemSet(seen_, b_.getInt8(0), I64(s_.acc_blocks()), llvm::MaybeAlign(1));
    NextSlice(o);
    EmitLoop(b_, I64(0), I64(static_cast<int64_t>(step_x_.size())), [&](Value* step) {
      PackBefore(step);
      Step(step);
      PrefetchNextSlice(step);
    }, /*unroll=*/false);
    Scatter(o);
  }

  // The lane accumulators of accumulator block `ab`, Row r, tree group g.
  Value* LaneSlot(Value* ab, Value* r, Value* g) {
    return b_.CreateGEP(b_.getInt32Ty(), accp_, b_.CreateMul(AccCell(ab, r, g), I64(kLanes)));
  }

  // The slice after `o` when it is live (its data is prefetched during o's steps): next_ its
  // position, next_live_ whether there is one.
  void NextSlice(Value* o) {
    const int64_t outer = static_cast<int64_t>(s_.live_outer.size());
    Value* after = b_.CreateAdd(o, I64(1));
    Value* in_range = b_.CreateICmpSLT(after, I64(outer));
    next_ = b_.CreateSelect(in_range, after, o);
    next_live_ = b_.CreateAnd(in_range, b_.CreateICmpNE(Table(s_.live_outer, next_, 8), b_.getInt8(0)));
  }

  // A share of the next slice's operand and weight lines, spread evenly over the steps (which
  // only compute), so packing the next slice finds them in the cache.
  void PrefetchNextSlice(Value* step) {
    const std::vector<int64_t> x_lines = OperandLines(s_), w_lines = WeightLines(s_);
    std::vector<int64_t> rows;
    for (int64_t r = 0; r < s_.rows; ++r) {
      if (s_.live_row[r]) rows.push_back(r);
    }
    const int64_t steps = std::max<int64_t>(1, static_cast<int64_t>(s_.step_x.size()));
    const int64_t x_count = static_cast<int64_t>(x_lines.size());
    const int64_t w_count = std::min(kMaxPrefetchLines, static_cast<int64_t>(w_lines.size() * rows.size()));
    if (x_count == 0 && w_count == 0) return;
    EmitIf(b_, next_live_, [&] {
      if (x_count > 0) {
        Value* base = b_.CreateLoad(b_.getPtrTy(), b_.CreateGEP(b_.getPtrTy(), fn_->getArg(0), next_));
        llvm::GlobalVariable* table = ConstantTable(x_lines);
        const int64_t per_step = PrefetchesPerStep(x_count, steps);
        for (int64_t j = 0; j < per_step; ++j) {
          Value* i = Clamp(b_.CreateAdd(b_.CreateMul(step, I64(per_step)), I64(j)), x_count);
          Prefetch(b_.CreateGEP(b_.getInt8Ty(), base, TableAt(table, i)));
        }
      }
      if (w_count > 0) {
        llvm::GlobalVariable* table = ConstantTable(w_lines);
        const int64_t per_row = static_cast<int64_t>(w_lines.size());
        const int64_t per_step = PrefetchesPerStep(w_count, steps);
        for (int64_t j = 0; j < per_step; ++j) {
          Value* i = Clamp(b_.CreateAdd(b_.CreateMul(step, I64(per_step)), I64(j)), w_count);
          Value* row = Table(rows, b_.CreateUDiv(i, I64(per_row)), 64);
          Value* base = b_.CreateLoad(b_.getPtrTy(), b_.CreateGEP(b_.getPtrTy(), fn_->getArg(1),
                                                                  b_.CreateAdd(b_.CreateMul(next_, I64(s_.rows)), row)));
          Prefetch(b_.CreateGEP(b_.getInt8Ty(), base, TableAt(table, b_.CreateURem(i, I64(per_row)))));
        }
      }
    });
  }

  // Lines per step to cover `count` in `steps`, at most kMaxPrefetchesPerStep: each is an
  // instruction of the step's code, and a kernel of few steps would otherwise unroll thousands.
  static int64_t PrefetchesPerStep(int64_t count, int64_t steps) {
    return std::min(kMaxPrefetchesPerStep, (count + steps - 1) / steps);
  }

  Value* Clamp(Value* i, int64_t count) {
    return b_.CreateSelect(b_.CreateICmpULT(i, I64(count)), i, I64(count - 1));
  }

  // A constant i64 table in the module, read at runtime indices by TableAt.
  llvm::GlobalVariable* ConstantTable(const std::vector<int64_t>& values) {
    auto* array = llvm::ArrayType::get(b_.getInt64Ty(), values.size());
    std::vector<llvm::Constant*> entries;
    for (int64_t v : values) entries.push_back(b_.getInt64(static_cast<uint64_t>(v)));
    return new llvm::GlobalVariable(m_, array, true, llvm::GlobalValue::PrivateLinkage,
                                    llvm::ConstantArray::get(array, entries), "lines");
  }
  Value* TableAt(llvm::GlobalVariable* table, Value* i) {
    return b_.CreateLoad(b_.getInt64Ty(), b_.CreateInBoundsGEP(table->getValueType(), table, {I64(0), i}));
  }

  // A read prefetch (kPrefetchLocality).
  void Prefetch(Value* address) {
    b_.CreateIntrinsic(llvm::Intrinsic::prefetch, {b_.getPtrTy()},
                       {address, b_.getInt32(0), b_.getInt32(kPrefetchLocality), b_.getInt32(1)});
  }

  // Wp[(kw * rows + r) * packet + p] = widen(w row r at w_offset[kw] + w_packet[p]).
  void PackWeights(Value* o) {
    EmitLoop(b_, I64(0), I64(s_.w_blocks()), [&](Value* kw) { PackWeightBlock(o, kw, kw); }, /*unroll=*/false);
  }

  // Weight block kw of every live Row, into packed block `slot`: 32-bit values Row by Row in a loop
  // (each Row's packing is the same code: written out per Row it was that code 8 times over).
  void PackWeightBlock(Value* o, Value* kw, Value* slot) {
    std::vector<int64_t> rows;
    for (int64_t r = 0; r < s_.rows; ++r) {
      if (s_.live_row[r]) rows.push_back(r);
    }
    if (packing_ == Packing::kValues && rows.size() > 1) {
      EmitLoop(b_, I64(0), I64(static_cast<int64_t>(rows.size())), [&](Value* index) {
        PackWeightRow(o, kw, slot, TableOrIndex(rows, index));
      }, /*unroll=*/false);
      return;
    }
    for (int64_t r : rows) {
      PackWeightRow(o, kw, slot, I64(r));
      if (quads_) StoreSignFix(slot, r);
    }
  }

  // Weight block kw of Row r, into packed block `slot`.
  void PackWeightRow(Value* o, Value* kw, Value* slot, Value* r) {
    const int bits = StorageBits(s_.w_type);
    Value* row = b_.CreateLoad(b_.getPtrTy(), b_.CreateGEP(b_.getPtrTy(), fn_->getArg(1),
                                                           b_.CreateAdd(b_.CreateMul(o, I64(s_.rows)), r)));
    Value* first = Table(s_.w_offset, kw, 64);
    Value* out = b_.CreateGEP(b_.getInt32Ty(), wp_,
                              b_.CreateMul(b_.CreateAdd(b_.CreateMul(slot, I64(s_.rows)), r), I64(s_.packet)));
    if (FastBf16(s_.w_type, s_.w_packet)) {
      WidenBf16Row(b_.CreateGEP(b_.getInt16Ty(), row, first), out, nullptr);
      return;
    }
    EmitLoop(b_, I64(0), I64(s_.packet), [&](Value* p) {
      Value* raw = DeviceLoad(EmitLoadRaw(b_, row, b_.CreateAdd(first, PacketOffset(b_, m_, s_.w_packet, p)), bits));
      Value* wide = Widen(b_, m_, s_.w_type, s_.acc_type, raw);
      if (packing_ == Packing::kValues) {
        ScratchStore(b_.CreateStore(wide, b_.CreateGEP(b_.getInt32Ty(), out, p)));
        return;
      }
      // Pairs (quads): 16-bit (8-bit) [kw][r][p], padding positions 0 (they add nothing to a sum).
      Value* narrow_out = b_.CreateGEP(PackedType(), wp_, WeightRowStart(slot, r));
      ScratchStore(b_.CreateStore(LivePacketOrZero(p, b_.CreateTrunc(wide, PackedType())),
                                  b_.CreateGEP(PackedType(), narrow_out, p)));
    });
  }

  // Xp[(bx * packet + p) * 16 + d] = widen(fetch(DM at x_lane[bx * 16 + d] + x_packet[p])), 0 for
  // an empty lane (pairs: 16-bit [bx][p / 2][d][p % 2]). In two passes so that both vectorize:
  // each lane's packet is widened into a row of a 16-row tile (contiguous along the packet), then
  // the tile is transposed 16 x 16 in registers into [packet unit][lane]; stored 16 lanes apart
  // directly, every element was a scatter.
  void PackOperand(Value* dm) {
    EmitLoop(b_, I64(0), I64(s_.x_blocks()), [&](Value* block) { PackOperandBlock(dm, block, block); },
             /*unroll=*/false);
  }

  // Operand block `block` into packed block `slot`.
  void PackOperandBlock(Value* dm, Value* block, Value* slot) {
    if (s_.bf16_pairs) {
      PackBf16PairBlock(dm, block, slot);
      return;
    }
    const int64_t units = OperandUnits();
    const int64_t tile_stride = TileStride();
    EmitLoop(b_, I64(0), I64(kLanes), [&](Value* d) {
      WidenLane(dm, b_.CreateAdd(b_.CreateMul(block, I64(kLanes)), d),
                b_.CreateGEP(b_.getInt32Ty(), tile_, b_.CreateMul(d, I64(tile_stride))));
    }, /*unroll=*/false);
    Value* out = b_.CreateGEP(b_.getInt32Ty(), xp_, b_.CreateMul(slot, I64(units * kLanes)));
    EmitLoop(b_, I64(0), I64(units / kLanes), [&](Value* tile) {
      TransposeTile(b_.CreateMul(tile, I64(kLanes)), kLanes, out);
    }, /*unroll=*/false);
    if (units % kLanes != 0) TransposeTile(I64(units / kLanes * kLanes), units % kLanes, out);
  }

  // With bf16_pairs: operand block `block` into packed block `slot` as [pair q][16 lanes] of raw
  // 32-bit bf16 pairs (positions 2q, 2q + 1), straight from DM: each lane's packet chunk of 16
  // pairs is a row of a 16 x 16 tile, transposed in registers. No widening: vdpbf16ps reads bf16.
  void PackBf16PairBlock(Value* dm, Value* block, Value* slot) {
    auto* units = llvm::FixedVectorType::get(b_.getInt32Ty(), kLanes);
    Value* out = b_.CreateGEP(b_.getInt32Ty(), xp_, b_.CreateMul(slot, I64(s_.packet * kLanes)));
    std::vector<Value*> lane_base, lane_empty;
    for (int64_t d = 0; d < kLanes; ++d) {
      Value* offset = Table(s_.x_lane, b_.CreateAdd(b_.CreateMul(block, I64(kLanes)), I64(d)), 64);
      lane_empty.push_back(b_.CreateICmpSLT(offset, I64(0)));
      lane_base.push_back(b_.CreateGEP(b_.getInt16Ty(), dm, b_.CreateSelect(lane_empty.back(), I64(0), offset)));
    }
    // Packet positions [first, first + 32).
    auto chunk = [&](Value* first) {
      std::vector<Value*> rows;
      for (int64_t d = 0; d < kLanes; ++d) {
        llvm::LoadInst* raw =
            b_.CreateAlignedLoad(units, b_.CreateGEP(b_.getInt16Ty(), lane_base[d], first), llvm::Align(2));
        MarkLoads(raw, 1);
        rows.push_back(b_.CreateSelect(lane_empty[d], llvm::Constant::getNullValue(units), raw));
      }
      EmitTranspose16(b_, rows);
      Value* pair = b_.CreateUDiv(first, I64(2));
      for (int64_t q = 0; q < kLanes; ++q) {
        Value* at = b_.CreateGEP(b_.getInt32Ty(), out, b_.CreateMul(b_.CreateAdd(pair, I64(q)), I64(kLanes)));
        ScratchStore(b_.CreateAlignedStore(rows[q], at, llvm::Align(kAlign)));
      }
    };
    const int64_t chunks = s_.packet / (2 * kLanes);
    if (chunks == 1) {
      chunk(I64(0));
    } else {
      EmitLoop(b_, I64(0), I64(chunks), [&](Value* c) { chunk(b_.CreateMul(c, I64(2 * kLanes))); }, /*unroll=*/false);
    }
  }

  // 32-bit units per lane of a packed operand block: a value, a 16-bit pair or a byte quad each.
  int64_t OperandUnits() const { return s_.packet / PositionsPerUnit(packing_); }

  // The element type of packed pairs or quads.
  llvm::Type* PackedType() { return quads_ ? b_.getInt8Ty() : b_.getInt16Ty(); }

  // Element index of weight block kw's Row r in the packed weights.
  Value* WeightRowStart(Value* kw, int64_t r) { return WeightRowStart(kw, I64(r)); }
  Value* WeightRowStart(Value* kw, Value* r) {
    return b_.CreateMul(b_.CreateAdd(b_.CreateMul(kw, I64(s_.rows)), r), I64(s_.packet));
  }

  // The sign fix of byte quads. vpdpbusd multiplies unsigned by signed bytes, so the operand is
  // packed as x + 128 (its sign bit flipped) and x * w = (x + 128) * w - 128 * w: per weight block,
  // Row and tree group, -128 times the sum of the group's weights (exact in i32, which wraps the
  // same way the accumulation does) starts the group's sum.
  void StoreSignFix(Value* kw, int64_t r) {
    Value* row = b_.CreateGEP(b_.getInt8Ty(), wp_, WeightRowStart(kw, r));
    for (int64_t g = 0; g < s_.groups(); ++g) {
      if (s_.target[g] < 0) continue;
      Value* sum = EmitSignedByteSum(b_, b_.CreateGEP(b_.getInt8Ty(), row, I64(g * s_.group)), s_.group);
      Value* fix = b_.CreateMul(sum, b_.getInt32(static_cast<uint32_t>(-128)));
      ScratchStore(b_.CreateStore(fix, b_.CreateGEP(b_.getInt32Ty(), sign_fix_, SignFixCell(kw, r, g))));
    }
  }
  Value* SignFixCell(Value* kw, int64_t r, int64_t g) {
    return b_.CreateAdd(b_.CreateMul(b_.CreateAdd(b_.CreateMul(kw, I64(s_.rows)), I64(r)), I64(s_.groups())), I64(g));
  }
  int64_t TileStride() const { return visa::jit::TileStride(s_); }

  // Lane `lane`'s packet, fetched and widened, into `row` (32-bit values, or 16-bit pair halves).
  void WidenLane(Value* dm, Value* lane, Value* row) {
    const int bits = StorageBits(s_.dm_type);
    const int stream_bits = StorageBits(s_.x_type);
    Value* offset = Table(s_.x_lane, lane, 64);
    Value* empty = b_.CreateICmpSLT(offset, I64(0));
    Value* first = b_.CreateSelect(empty, I64(0), offset);
    if (s_.dm_type == s_.x_type && s_.fetch.kind == ElementOp::Kind::kCopy && FastBf16(s_.x_type, s_.x_packet)) {
      WidenBf16Row(b_.CreateGEP(b_.getInt16Ty(), dm, first), row, empty);
      return;
    }
    EmitLoop(b_, I64(0), I64(s_.packet), [&](Value* p) {
      Value* pos = b_.CreateAdd(first, PacketOffset(b_, m_, s_.x_packet, p));
      Value* stream = EmitElementOp(b_, m_, s_.fetch, DeviceLoad(EmitLoadRaw(b_, dm, pos, bits)), pos);
      // As the stream stores it: the storage bits of the stream type (i5 / i9 come sign-extended).
      if (stream_bits < 32) {
        stream = b_.CreateAnd(stream, b_.getInt32(static_cast<uint32_t>((uint64_t{1} << stream_bits) - 1)));
      }
      Value* value = b_.CreateSelect(empty, b_.getInt32(0), Widen(b_, m_, s_.x_type, s_.acc_type, stream));
      if (packing_ == Packing::kValues) {
        ScratchStore(b_.CreateStore(value, b_.CreateGEP(b_.getInt32Ty(), row, p)));
        return;
      }
      if (quads_) {
        // x + 128 as an unsigned byte; a padded position meets a zero weight.
        Value* biased = b_.CreateXor(b_.CreateTrunc(value, b_.getInt8Ty()), b_.getInt8(0x80));
        ScratchStore(b_.CreateStore(biased, b_.CreateGEP(b_.getInt8Ty(), row, p)));
        return;
      }
      ScratchStore(b_.CreateStore(LivePacketOrZero(p, b_.CreateTrunc(value, b_.getInt16Ty())),
                                  b_.CreateGEP(b_.getInt16Ty(), row, p)));
    });
  }

  // Whether a bf16 operand's packet widens by WidenBf16Row: f32 values, packets of whole 16-element
  // chunks read contiguously, and AVX512DQ's vfpclassps for the rare-value test.
  bool FastBf16(DType type, const std::vector<int64_t>& packet_offsets) const {
    return type == DType::kBF16 && s_.acc_type == DType::kF32 && packing_ == Packing::kValues &&
           s_.packet % kLanes == 0 && StrideOf(packet_offsets) == std::optional<int64_t>(1) && HostHas("avx512dq");
  }

  // out[p] = widen(src[p]) for the packet's bf16 elements (all 0 when `empty` holds), 16 at a
  // time: a bf16 pattern shifted up 16 bits is its f32 value except for subnormals and NaNs,
  // which the contraction's widening flushes and makes canonical. One vfpclassps per 16 finds
  // those; only a packet holding one widens again element by element (the same op as
  // everywhere). The generic loop vectorizes to ten instructions per 16 elements; this is four.
  void WidenBf16Row(Value* src, Value* out, Value* empty) {
    auto* halves = llvm::FixedVectorType::get(b_.getInt16Ty(), kLanes);
    auto* units = llvm::FixedVectorType::get(b_.getInt32Ty(), kLanes);
    auto* floats = llvm::FixedVectorType::get(b_.getFloatTy(), kLanes);
    Value* any = b_.getFalse();
    for (int64_t c = 0; c < s_.packet / kLanes; ++c) {
      auto* raw = b_.CreateAlignedLoad(halves, b_.CreateGEP(b_.getInt16Ty(), src, I64(c * kLanes)), llvm::Align(2));
      MarkLoads(raw, 1);
      Value* wide = b_.CreateShl(b_.CreateZExt(raw, units), b_.CreateVectorSplat(kLanes, b_.getInt32(16)));
      if (empty != nullptr) wide = b_.CreateSelect(empty, llvm::Constant::getNullValue(units), wide);
      ScratchStore(b_.CreateAlignedStore(wide, b_.CreateGEP(b_.getInt32Ty(), out, I64(c * kLanes)), llvm::Align(4)));
      // vfpclassps categories: 0x01 quiet NaN, 0x20 subnormal, 0x80 signaling NaN.
      Value* rare = b_.CreateIntrinsic(llvm::Intrinsic::x86_avx512_fpclass_ps_512, {},
                                       {b_.CreateBitCast(wide, floats), b_.getInt32(0xA1)});
      any = b_.CreateOr(any, b_.CreateICmpNE(b_.CreateBitCast(rare, b_.getInt16Ty()), b_.getInt16(0)));
    }
    EmitIf(b_, any, [&] {
      EmitLoop(b_, I64(0), I64(s_.packet), [&](Value* p) {
        Value* h = b_.CreateZExt(DeviceLoad(b_.CreateLoad(b_.getInt16Ty(), b_.CreateGEP(b_.getInt16Ty(), src, p))),
                                 b_.getInt32Ty());
        Value* value = Widen(b_, m_, DType::kBF16, s_.acc_type, h);
        ScratchStore(b_.CreateStore(value, b_.CreateGEP(b_.getInt32Ty(), out, p)));
      }, /*unroll=*/false);
    });
  }

  // Tile columns [first, first + count) transposed into out[(first + c) * 16 + d].
  void TransposeTile(Value* first, int64_t count, Value* out) {
    llvm::Type* units = llvm::FixedVectorType::get(b_.getInt32Ty(), kLanes);
    std::vector<Value*> rows;
    for (int64_t d = 0; d < kLanes; ++d) {
      Value* at = b_.CreateGEP(b_.getInt32Ty(), tile_, b_.CreateAdd(I64(d * TileStride()), first));
      rows.push_back(b_.CreateAlignedLoad(units, at, llvm::Align(kAlign)));
    }
    EmitTranspose16(b_, rows);
    for (int64_t c = 0; c < count; ++c) {
      Value* at = b_.CreateGEP(b_.getInt32Ty(), out, b_.CreateMul(b_.CreateAdd(first, I64(c)), I64(kLanes)));
      b_.CreateAlignedStore(rows[c], at, llvm::Align(kAlign));
    }
  }

  // One step: every live Row's trees over the step's 16 lanes, combined into their slots.
  void Step(Value* step) {
    AccumulatorMath math{b_, IsFloat(s_.acc_type), s_.op, kLanes};
    Value* bx = Table(step_x_, step, 64);
    Value* kw = Table(step_w_, step, 64);
    Value* ab = Table(step_acc_, step, 64);
    Value* seen_ptr = b_.CreateGEP(b_.getInt8Ty(), seen_, ab);
    Value* first = b_.CreateICmpEQ(b_.CreateLoad(b_.getInt8Ty(), seen_ptr), b_.getInt8(0));
    b_.CreateStore(b_.getInt8(1), seen_ptr);
    if (pairs_ || quads_) {
      PairStep(math, bx, kw, ab, first);
      return;
    }
    StepSums(math, step, [&](Value* r, Value* g, Value* sum) {
      Value* slot = LaneSlot(ab, r, g);
      Value* old = b_.CreateAlignedLoad(math.IntType(), slot, llvm::Align(kAlign));
      b_.CreateAlignedStore(b_.CreateSelect(first, sum, math.Combine(old, sum)), slot, llvm::Align(kAlign));
    });
  }

  // Every live Row's trees over step `step`'s 16 lanes, handed to `take(row, group, sum)` as soon
  // as a block of Rows has them. Blocks of Rows alike, tree groups alike and chunks of a group
  // alike run as loops rather than each written out (StepShapeOf): the same arithmetic in the
  // same order, a fraction of the code to generate.
  void StepSums(AccumulatorMath& math, Value* step, const std::function<void(Value*, Value*, Value*)>& take) {
    Value* bx = Table(x_slot_, step, 64);
    Value* kw = Table(w_slot_, step, 64);
    Value* x_block = b_.CreateGEP(b_.getInt32Ty(), xp_, b_.CreateMul(bx, I64(s_.packet * kLanes)));
    std::vector<int64_t> rows;
    for (int64_t r = 0; r < s_.rows; ++r) {
      if (s_.live_row[r]) rows.push_back(r);
    }
    const int64_t block = static_cast<int64_t>(kRowsPerOperandLoad);
    const int64_t looped = shape_.row_block_loop ? static_cast<int64_t>(rows.size()) / block : 0;
    if (looped > 0) {
      EmitLoop(b_, I64(0), I64(looped), [&](Value* index) {
        std::vector<Value*> block_rows;
        for (int64_t i = 0; i < block; ++i) block_rows.push_back(TableOrIndex(rows, b_.CreateAdd(b_.CreateMul(index, I64(block)), I64(i))));
        RowBlockSums(math, step, kw, x_block, block_rows, take);
      }, /*unroll=*/false);
    }
    for (size_t first_row = static_cast<size_t>(looped * block); first_row < rows.size(); first_row += kRowsPerOperandLoad) {
      std::vector<Value*> block_rows;
      for (size_t i = first_row; i < std::min(rows.size(), first_row + kRowsPerOperandLoad); ++i) block_rows.push_back(I64(rows[i]));
      RowBlockSums(math, step, kw, x_block, block_rows, take);
    }
  }

  // values[index], as arithmetic when values[i] == i.
  Value* TableOrIndex(const std::vector<int64_t>& values, Value* index) {
    for (size_t i = 0; i < values.size(); ++i) {
      if (values[i] != static_cast<int64_t>(i)) return Table(values, index, 64);
    }
    return index;
  }

  // One block of Rows' trees over every live tree group.
  void RowBlockSums(AccumulatorMath& math, Value* step, Value* kw, Value* x_block, const std::vector<Value*>& rows,
                    const std::function<void(Value*, Value*, Value*)>& take) {
    // Each block of Rows reloads the operand (from L1): kept live across blocks it would spill.
    x_block = Opaque(x_block);
    std::vector<Value*> w_rows;
    for (Value* r : rows) {
      if (s_.bf16_pairs) {
        w_rows.push_back(WeightsInPlace(Table(step_w_, step, 64), r));
        continue;
      }
      w_rows.push_back(b_.CreateGEP(b_.getInt32Ty(), wp_,
                                    b_.CreateMul(b_.CreateAdd(b_.CreateMul(kw, I64(s_.rows)), r), I64(s_.packet))));
    }
    std::vector<int64_t> groups;
    for (int64_t g = 0; g < s_.groups(); ++g) {
      if (s_.target[g] >= 0) groups.push_back(g);
    }
    if (shape_.group_loop && groups.size() > 1) {
      EmitLoop(b_, I64(0), I64(static_cast<int64_t>(groups.size())), [&](Value* index) {
        GroupSums(math, x_block, w_rows, rows, TableOrIndex(groups, index), groups.front() * s_.group, take);
      }, /*unroll=*/false);
      return;
    }
    for (int64_t g : groups) GroupSums(math, x_block, w_rows, rows, I64(g), g * s_.group, take);
  }

  // The Rows' trees over tree group g (whose live positions are those from `live_base`): written
  // out, or as a loop over chunks of the group whose sums the group's tree then combines (an
  // aligned power-of-two chunk is a subtree of the manual's tree, so the bits are the same).
  void GroupSums(AccumulatorMath& math, Value* x_block, const std::vector<Value*>& w_rows,
                 const std::vector<Value*>& rows, Value* g, int64_t live_base,
                 const std::function<void(Value*, Value*, Value*)>& take) {
    Value* start = b_.CreateMul(g, I64(s_.group));
    const int64_t width = shape_.chunk_leaves > 0 ? shape_.chunk_leaves : s_.group;
    const int64_t chunks = s_.group / width;
    if (chunks == 1) {
      const std::vector<Value*> sums = Trees(math, XAt(x_block, start), WAt(w_rows, start), live_base, width);
      for (size_t i = 0; i < rows.size(); ++i) take(rows[i], g, sums[i]);
      return;
    }
    auto* lanes = math.IntType();
    auto sum_at = [&](size_t i, Value* c) {
      return b_.CreateGEP(b_.getInt32Ty(), chunk_, b_.CreateMul(b_.CreateAdd(I64(static_cast<int64_t>(i) * chunks), c), I64(kLanes)));
    };
    EmitLoop(b_, I64(0), I64(chunks), [&](Value* c) {
      Value* first = b_.CreateAdd(start, b_.CreateMul(c, I64(width)));
      const std::vector<Value*> sums = Trees(math, XAt(x_block, first), WAt(w_rows, first), live_base, width);
      for (size_t i = 0; i < rows.size(); ++i) b_.CreateAlignedStore(sums[i], sum_at(i, c), llvm::Align(kAlign));
    }, /*unroll=*/false);
    for (size_t i = 0; i < rows.size(); ++i) {
      std::vector<Value*> parts;
      for (int64_t c = 0; c < chunks; ++c) parts.push_back(b_.CreateAlignedLoad(lanes, sum_at(i, I64(c)), llvm::Align(kAlign)));
      take(rows[i], g, CombinePairwise(math, parts));
    }
  }

  // The pairwise tree over `parts` (a power of two of them), level by level.
  static Value* CombinePairwise(AccumulatorMath& math, std::vector<Value*> parts) {
    while (parts.size() > 1) {
      std::vector<Value*> next;
      for (size_t i = 0; i + 1 < parts.size(); i += 2) next.push_back(math.Combine(parts[i], parts[i + 1]));
      parts = std::move(next);
    }
    return parts.front();
  }

  // The packed operand and weights from packet position `first` on.
  Value* XAt(Value* x_block, Value* first) {
    if (s_.bf16_pairs) return b_.CreateGEP(b_.getInt32Ty(), x_block, b_.CreateMul(b_.CreateUDiv(first, I64(2)), I64(kLanes)));
    return b_.CreateGEP(b_.getInt32Ty(), x_block, b_.CreateMul(first, I64(kLanes)));
  }
  std::vector<Value*> WAt(const std::vector<Value*>& w_rows, Value* first) {
    std::vector<Value*> at;
    for (Value* w_row : w_rows) at.push_back(b_.CreateGEP(s_.bf16_pairs ? b_.getInt16Ty() : b_.getInt32Ty(), w_row, first));
    return at;
  }

  // Row r's bf16 weights of weight block kw in the slice's TRF row (bf16_pairs).
  Value* WeightsInPlace(Value* kw, Value* r) {
    Value* row = b_.CreateLoad(b_.getPtrTy(), b_.CreateGEP(b_.getPtrTy(), fn_->getArg(1),
                                                           b_.CreateAdd(b_.CreateMul(o_, I64(s_.rows)), r)));
    return b_.CreateGEP(b_.getInt16Ty(), row, Table(s_.w_offset, kw, 64));
  }

  // Positions p and p + 1 of the 16 lanes as the tree's first level, x0 * w0 + x1 * w1 rounded
  // once: vdpbf16ps adds x1 * w1, then x0 * w0, to its accumulator, each product exact here
  // (PairSumsAreExact), so starting from -0 (the identity that keeps a sum of two -0 products
  // -0) it rounds the exact sum once, with no subnormal for its flush-to-zero to touch.
  Value* PairLeafBf16(AccumulatorMath& math, Value* x, Value* w_row, int64_t p) {
    auto* pairs = llvm::FixedVectorType::get(b_.getBFloatTy(), 2 * kLanes);
    Value* w_pair = b_.CreateAlignedLoad(b_.getInt32Ty(), b_.CreateGEP(b_.getInt16Ty(), w_row, I64(p)), llvm::Align(2));
    MarkLoads(w_pair, 1);
    Value* w = b_.CreateVectorSplat(kLanes, w_pair);
    Value* minus_zero = llvm::ConstantVector::getSplat(llvm::ElementCount::getFixed(kLanes),
                                                       llvm::ConstantFP::getNegativeZero(b_.getFloatTy()));
    Value* sum = b_.CreateIntrinsic(llvm::Intrinsic::x86_avx512bf16_dpbf16ps_512, {},
                                    {minus_zero, b_.CreateBitCast(x, pairs), b_.CreateBitCast(w, pairs)});
    return math.I(sum);
  }

  // The pairwise trees over packet positions [lo, hi) of several Rows at once, leaf by leaf: each
  // operand load feeds every Row's product, and each Row's tree is kept as a binary counter (a
  // stack of finished subtrees, merged as soon as two of a level exist), which is the manual's
  // tree level by level (adjacent pairs, then pairs of pairs) with at most log2(width) partial
  // sums per Row live. The dataflow is exactly Tree's; only the emission order differs.
  // Positions are relative to x_block and w_rows; position p is live when live_packet[live_base + p] is.
  std::vector<Value*> Trees(AccumulatorMath& math, Value* x_block, const std::vector<Value*>& w_rows, int64_t live_base,
                            int64_t width) {
    const int64_t lo = 0, hi = width;
    VISA_CHECK(width >= 1 && (width & (width - 1)) == 0, "a tree group is a power of two wide");
    struct Subtree {
      int64_t level;
      Value* sum;
    };
    std::vector<std::vector<Subtree>> stacks(w_rows.size());
    const int64_t leaf = (s_.fma_first_level || s_.bf16_pairs) && width >= 2 ? 2 : 1;
    for (int64_t p = lo; p < hi; p += leaf) {
      // The leaf's operand loads wait for the previous leaf's sums: the scheduler would otherwise
      // hoist every load of the tree to its top and spill them (a compile-time order only).
      if (p > lo) {
        std::vector<Value*> latest;
        for (const std::vector<Subtree>& stack : stacks) latest.push_back(stack.back().sum);
        x_block = OpaqueAfter(x_block, latest);
      }
      // With bf16_pairs x0 is the 16 lanes' pairs (p, p + 1).
      Value* x0 = s_.bf16_pairs ? b_.CreateAlignedLoad(math.IntType(),
                                                       b_.CreateGEP(b_.getInt32Ty(), x_block, I64(p / 2 * kLanes)),
                                                       llvm::Align(kAlign))
                                : LoadX(math, x_block, p, live_base + p);
      Value* x1 = leaf == 2 && !s_.bf16_pairs ? LoadX(math, x_block, p + 1, live_base + p + 1) : nullptr;
      for (size_t i = 0; i < w_rows.size(); ++i) {
        Value* sum = s_.bf16_pairs ? PairLeafBf16(math, x0, w_rows[i], p)
                     : leaf == 2   ? PairLeaf(math, x0, x1, w_rows[i], p, live_base + p)
                                   : SingleLeaf(math, x0, w_rows[i], p, live_base + p);
        int64_t level = leaf == 2 ? 1 : 0;
        while (!stacks[i].empty() && stacks[i].back().level == level) {
          sum = math.Combine(stacks[i].back().sum, sum);
          stacks[i].pop_back();
          ++level;
        }
        stacks[i].push_back({level, sum});
      }
    }
    std::vector<Value*> sums;
    for (const std::vector<Subtree>& stack : stacks) {
      VISA_CHECK(stack.size() == 1, "a power-of-two tree ends in one subtree");
      sums.push_back(stack.back().sum);
    }
    return sums;
  }

  // Position p's product, or the identity at a padded position.
  Value* SingleLeaf(AccumulatorMath& math, Value* x, Value* w_row, int64_t p, int64_t live) {
    return s_.live_packet[live] ? math.Multiply(x, Weight(w_row, p)) : math.Identity();
  }

  // Positions p and p + 1 combined: one fused multiply-add when both are live (their products are
  // exact), else as Tree combines them.
  Value* PairLeaf(AccumulatorMath& math, Value* x0, Value* x1, Value* w_row, int64_t p, int64_t live) {
    if (s_.live_packet[live] && s_.live_packet[live + 1]) {
      return math.MultiplyAdd(x0, Weight(w_row, p), math.Multiply(x1, Weight(w_row, p + 1)));
    }
    return math.Combine(SingleLeaf(math, x0, w_row, p, live), SingleLeaf(math, x1, w_row, p + 1, live + 1));
  }

  // The pairwise tree over packet positions [lo, hi) of one Row, emitted depth first: the two
  // halves, then their combination. For a power-of-two width that is the manual's tree level by
  // level (adjacent pairs, then pairs of pairs), and only one partial sum per level is live at a
  // time, so the 16-lane operand and products stay in registers.
  Value* Tree(AccumulatorMath& math, Value* x_block, Value* w_row, int64_t lo, int64_t hi) {
    VISA_CHECK(hi - lo >= 1 && ((hi - lo) & (hi - lo - 1)) == 0, "a tree group is a power of two wide");
    const bool fuse_pair = s_.fma_first_level && hi - lo == 2 && s_.live_packet[lo] && s_.live_packet[lo + 1];
    if (fuse_pair) {
      return math.MultiplyAdd(LoadX(math, x_block, lo, lo), Weight(w_row, lo),
                              math.Multiply(LoadX(math, x_block, lo + 1, lo + 1), Weight(w_row, lo + 1)));
    }
    if (hi - lo == 1) {
      return s_.live_packet[lo] ? math.Multiply(LoadX(math, x_block, lo, lo), Weight(w_row, lo)) : math.Identity();
    }
    const int64_t mid = lo + (hi - lo) / 2;
    Value* left = Tree(math, x_block, w_row, lo, mid);
    return math.Combine(left, Tree(math, x_block, w_row, mid, hi));
  }

  // Device memory (DM, TRF) and the scratch buffers never overlap. Said in alias scopes, the
  // packing loops vectorize without a runtime overlap check, which (comparing loop-invariant
  // bounds) sent the GEMM's weight packing down its scalar path.
  Value* DeviceLoad(Value* raw) {
    MarkLoads(raw, 3);
    return raw;
  }
  void MarkLoads(Value* v, int depth) {
    auto* inst = llvm::dyn_cast<llvm::Instruction>(v);
    if (inst == nullptr || depth == 0) return;
    if (llvm::isa<llvm::LoadInst>(inst)) {
      inst->setMetadata(llvm::LLVMContext::MD_alias_scope, llvm::MDNode::get(m_.getContext(), {DeviceScope()}));
      inst->setMetadata(llvm::LLVMContext::MD_noalias, llvm::MDNode::get(m_.getContext(), {ScratchScope()}));
      return;
    }
    for (Value* operand : inst->operands()) MarkLoads(operand, depth - 1);
  }
  void ScratchStore(llvm::StoreInst* store) {
    store->setMetadata(llvm::LLVMContext::MD_alias_scope, llvm::MDNode::get(m_.getContext(), {ScratchScope()}));
    store->setMetadata(llvm::LLVMContext::MD_noalias, llvm::MDNode::get(m_.getContext(), {DeviceScope()}));
  }
  llvm::MDNode* DeviceScope() {
    if (device_scope_ == nullptr) device_scope_ = llvm::MDBuilder(m_.getContext()).createAnonymousAliasScope(Domain(), "device");
    return device_scope_;
  }
  llvm::MDNode* ScratchScope() {
    if (scratch_scope_ == nullptr) {
      scratch_scope_ = llvm::MDBuilder(m_.getContext()).createAnonymousAliasScope(Domain(), "scratch");
    }
    return scratch_scope_;
  }
  llvm::MDNode* Domain() {
    if (domain_ == nullptr) domain_ = llvm::MDBuilder(m_.getContext()).createAnonymousAliasScopeDomain("lanes");
    return domain_;
  }

  // `pointer`, through an empty asm statement the optimizer cannot see into: loads through the
  // result are not merged with loads through `pointer` made before it.
  Value* Opaque(Value* pointer) {
    auto* type = llvm::FunctionType::get(pointer->getType(), {pointer->getType()}, false);
    return b_.CreateCall(llvm::InlineAsm::get(type, "", "=r,0", /*hasSideEffects=*/true), {pointer});
  }

  // `pointer` as Opaque, and also not known before every one of `values` is computed. Each value
  // is an asm operand in a vector register ("v"); without AVX-512 a register holds 256 bits, so a
  // 16-lane value goes as its two halves and each statement takes a few operands, chained through
  // `pointer` (one statement with every 512-bit value is a register allocation failure there).
  Value* OpaqueAfter(Value* pointer, const std::vector<Value*>& values) {
    static const bool wide_registers = HostHas("avx512f");
    std::vector<Value*> operands;
    for (Value* v : values) AppendRegisterParts(v, wide_registers ? 512 : 256, operands);
    const size_t per_statement = wide_registers ? std::max<size_t>(operands.size(), 1) : 4;
    size_t next = 0;
    do {
      const size_t end = std::min(operands.size(), next + per_statement);
      pointer = OpaqueAfterOperands(pointer, {operands.begin() + next, operands.begin() + end});
      next = end;
    } while (next < operands.size());
    return pointer;
  }

  Value* OpaqueAfterOperands(Value* pointer, const std::vector<Value*>& operands) {
    std::vector<llvm::Type*> types{pointer->getType()};
    std::vector<Value*> args{pointer};
    std::string constraints = "=r,0";
    for (Value* v : operands) {
      types.push_back(v->getType());
      args.push_back(v);
      constraints += ",v";
    }
    auto* type = llvm::FunctionType::get(pointer->getType(), types, false);
    return b_.CreateCall(llvm::InlineAsm::get(type, "", constraints, /*hasSideEffects=*/false), args);
  }

  // `v` as vectors of at most `register_bits` each (its halves, recursively).
  void AppendRegisterParts(Value* v, int64_t register_bits, std::vector<Value*>& parts) {
    auto* vector = llvm::dyn_cast<llvm::FixedVectorType>(v->getType());
    if (vector == nullptr || vector->getPrimitiveSizeInBits().getFixedValue() <= static_cast<uint64_t>(register_bits) ||
        vector->getNumElements() % 2 != 0) {
      parts.push_back(v);
      return;
    }
    const int half = static_cast<int>(vector->getNumElements() / 2);
    std::vector<int> low(half), high(half);
    for (int i = 0; i < half; ++i) {
      low[i] = i;
      high[i] = half + i;
    }
    AppendRegisterParts(b_.CreateShuffleVector(v, low), register_bits, parts);
    AppendRegisterParts(b_.CreateShuffleVector(v, high), register_bits, parts);
  }

  Value* LoadX(AccumulatorMath& math, Value* x_block, int64_t p, int64_t live) {
    if (!s_.live_packet[live]) return nullptr;
    return b_.CreateAlignedLoad(math.IntType(), b_.CreateGEP(b_.getInt32Ty(), x_block, I64(p * kLanes)),
                                llvm::Align(kAlign));
  }

  Value* Weight(Value* w_row, int64_t p) {
    return b_.CreateVectorSplat(kLanes, b_.CreateLoad(b_.getInt32Ty(), b_.CreateGEP(b_.getInt32Ty(), w_row, I64(p))));
  }

  // A step of an integer sum by pairs (quads): per live Row and group, the 16 lanes' sums of x * w
  // over the group's packet positions, two (four) at a time, combined into their slots.
  void PairStep(AccumulatorMath& math, Value* bx, Value* kw, Value* ab, Value* first) {
    llvm::Type* lanes = math.IntType();
    const int64_t unit = PositionsPerUnit(packing_);
    Value* x_block = b_.CreateGEP(PackedType(), xp_, b_.CreateMul(bx, I64(s_.packet * kLanes)));
    std::vector<int64_t> rows;
    for (int64_t r = 0; r < s_.rows; ++r) {
      if (s_.live_row[r]) rows.push_back(r);
    }
    for (size_t first_row = 0; first_row < rows.size(); first_row += kRowsPerPairLoad) {
      const std::vector<int64_t> block(rows.begin() + first_row,
                                       rows.begin() + std::min(rows.size(), first_row + kRowsPerPairLoad));
      std::vector<Value*> w_rows;
      for (int64_t r : block) w_rows.push_back(b_.CreateGEP(PackedType(), wp_, WeightRowStart(kw, r)));
      for (int64_t g = 0; g < s_.groups(); ++g) {
        if (s_.target[g] < 0) continue;
        // Two chains per Row (even and odd units): a multiply-add waits for the one before it in
        // its chain, and the Rows' chains together keep both vector units busy. Integer sums are
        // exact in any order. Quads start a chain at their sign fix.
        std::vector<std::array<Value*, 2>> chains(block.size(), {math.Identity(), math.Identity()});
        if (quads_) {
          for (size_t i = 0; i < block.size(); ++i) {
            Value* fix = b_.CreateLoad(b_.getInt32Ty(), b_.CreateGEP(b_.getInt32Ty(), sign_fix_, SignFixCell(kw, block[i], g)));
            chains[i][0] = b_.CreateVectorSplat(kLanes, fix);
          }
        }
        int64_t loaded = 0;
        for (int64_t p = g * s_.group; p < (g + 1) * s_.group; p += unit) {
          if (!AnyLive(p, unit)) continue;
          // The pair's operand load waits for the chains so far: the scheduler would otherwise
          // hoist all of the step's operand loads and spill them (a compile-time order only).
          if (loaded++ > 0) {
            std::vector<Value*> latest;
            for (const auto& chain : chains) latest.insert(latest.end(), chain.begin(), chain.end());
            x_block = OpaqueAfter(x_block, latest);
          }
          Value* x = b_.CreateAlignedLoad(lanes, b_.CreateGEP(PackedType(), x_block, I64(p * kLanes)),
                                          llvm::Align(kAlign));
          for (size_t i = 0; i < block.size(); ++i) {
            Value* w_unit =
                b_.CreateAlignedLoad(b_.getInt32Ty(), b_.CreateGEP(PackedType(), w_rows[i], I64(p)), llvm::Align(4));
            Value*& chain = chains[i][(p / unit) % 2];
            chain = quads_ ? EmitQuadMultiplyAdd(b_, chain, x, b_.CreateVectorSplat(kLanes, w_unit))
                           : MultiplyAddPairs(chain, x, b_.CreateVectorSplat(kLanes, w_unit));
          }
        }
        for (size_t i = 0; i < block.size(); ++i) {
          Value* sum = b_.CreateAdd(chains[i][0], chains[i][1]);
          Value* slot = b_.CreateGEP(b_.getInt32Ty(), accp_, b_.CreateMul(AccCell(ab, block[i], g), I64(kLanes)));
          Value* old = b_.CreateAlignedLoad(lanes, slot, llvm::Align(kAlign));
          b_.CreateAlignedStore(b_.CreateSelect(first, sum, math.Combine(old, sum)), slot, llvm::Align(kAlign));
        }
      }
      x_block = Opaque(x_block);
    }
  }

  // Whether any of packet positions [p, p + count) is live.
  bool AnyLive(int64_t p, int64_t count) const {
    for (int64_t q = p; q < p + count; ++q) {
      if (s_.live_packet[q]) return true;
    }
    return false;
  }

  // sum + x.lo * w.lo + x.hi * w.hi per 32-bit lane of 16-bit pairs.
  Value* MultiplyAddPairs(Value* sum, Value* x, Value* w) {
    if (vnni_) return b_.CreateIntrinsic(llvm::Intrinsic::x86_avx512_vpdpwssd_512, {}, {sum, x, w});
    auto* halves = llvm::FixedVectorType::get(b_.getInt16Ty(), 2 * kLanes);
    Value* products = b_.CreateIntrinsic(llvm::Intrinsic::x86_avx512_pmaddw_d_512, {},
                                         {b_.CreateBitCast(x, halves), b_.CreateBitCast(w, halves)});
    return b_.CreateAdd(sum, products);
  }

  // `value` at a live packet position `p`, else 0.
  Value* LivePacketOrZero(Value* p, Value* value) {
    Value* live = b_.CreateICmpNE(Table(s_.live_packet, p, 8), b_.getInt8(0));
    return b_.CreateSelect(live, value, llvm::Constant::getNullValue(value->getType()));
  }

  Value* AccCell(Value* ab, int64_t r, int64_t g) { return AccCell(ab, I64(r), I64(g)); }
  Value* AccCell(Value* ab, Value* r, Value* g) {
    return b_.CreateAdd(b_.CreateMul(b_.CreateAdd(b_.CreateMul(ab, I64(s_.rows)), r), I64(s_.groups())), g);
  }

  // Lane accumulators into acc[((o * rows + r) * out_times + retained) * out_packet + target] (o
  // left out with slice_accumulators).
  void Scatter(Value* o) {
    Value* acc = fn_->getArg(2);
    Value* written = fn_->getArg(3);
    EmitLoop(b_, I64(0), I64(s_.acc_blocks()), [&](Value* ab) {
      Value* seen = b_.CreateICmpNE(b_.CreateLoad(b_.getInt8Ty(), b_.CreateGEP(b_.getInt8Ty(), seen_, ab)), b_.getInt8(0));
      EmitIf(b_, seen, [&] {
        EmitLoop(b_, I64(0), I64(kLanes), [&](Value* d) {
          Value* retained = Table(s_.acc_lane, b_.CreateAdd(b_.CreateMul(ab, I64(kLanes)), d), 64);
          EmitIf(b_, b_.CreateICmpSGE(retained, I64(0)), [&] {
            for (int64_t r = 0; r < s_.rows; ++r) {
              if (!s_.live_row[r]) continue;
              Value* slice_row = s_.slice_accumulators ? I64(r) : b_.CreateAdd(b_.CreateMul(o, I64(s_.rows)), I64(r));
              Value* row_base = b_.CreateMul(
                  b_.CreateAdd(b_.CreateMul(slice_row, I64(s_.out_times)), retained),
                  I64(s_.out_packet));
              for (int64_t g = 0; g < s_.groups(); ++g) {
                if (s_.target[g] < 0) continue;
                Value* lane = b_.CreateAdd(b_.CreateMul(AccCell(ab, r, g), I64(kLanes)), d);
                Value* v = b_.CreateLoad(b_.getInt32Ty(), b_.CreateGEP(b_.getInt32Ty(), accp_, lane));
                Value* slot = b_.CreateAdd(row_base, I64(s_.target[g]));
                b_.CreateStore(v, b_.CreateGEP(b_.getInt32Ty(), acc, slot));
                b_.CreateStore(b_.getInt8(1), b_.CreateGEP(b_.getInt8Ty(), written, slot));
              }
            }
          });
        }, /*unroll=*/false);
      });
    }, /*unroll=*/false);
  }

  // With interleaved packing, the operand and weight blocks a step is the first to use, packed
  // right before it: the packed block is still in L1 when the step reads it, and the packing's
  // stores and loads overlap the steps' arithmetic instead of running as a pass of their own
  // through L2 (the GEMM's packed operands are 256 KiB a slice).
  void PackBefore(Value* step) {
    if (!interleaved_) return;
    Value* x = Table(pack_x_at_, step, 64);
    EmitIf(b_, b_.CreateICmpSGE(x, I64(0)), [&] { PackOperandBlock(dm_, x, Table(x_slot_, step, 64)); });
    if (s_.bf16_pairs) return;  // the steps read the weights in place
    Value* w = Table(pack_w_at_, step, 64);
    EmitIf(b_, b_.CreateICmpSGE(w, I64(0)), [&] { PackWeightBlock(o_, w, Table(w_slot_, step, 64)); });
  }

  // The steps in the order the kernel runs them, and where their packed blocks live. Without
  // interleaved packing: the spec's order, every block in its own place. With it: each step is
  // picked among the next steps of every accumulator block (so every slot still receives its
  // steps in time order) as the one whose operand and weight blocks were used most recently,
  // and a block is packed at its first use into a slot freed by a block past its last use. For
  // the GEMM that runs the four accumulator blocks sharing an operand block one after another:
  // a handful of packed blocks are live at a time (L1) instead of the slice's 256 KiB (L2).
  void Schedule() {
    const int64_t n = static_cast<int64_t>(s_.step_x.size());
    std::vector<int64_t> order;
    if (interleaved_ && n * s_.acc_blocks() <= kMaxOrderWork) {
      order = InterleavedOrder();
    } else {
      for (int64_t i = 0; i < n; ++i) order.push_back(i);
    }
    for (int64_t i : order) {
      step_x_.push_back(s_.step_x[i]);
      step_w_.push_back(s_.step_w[i]);
      step_acc_.push_back(s_.step_acc[i]);
    }
    if (!interleaved_) {
      x_slot_ = step_x_;
      w_slot_ = step_w_;
      return;
    }
    AssignSlots(step_x_, s_.x_blocks(), x_slot_, pack_x_at_);
    AssignSlots(step_w_, s_.w_blocks(), w_slot_, pack_w_at_);
  }

  // The greedy order: a step scores one per block (operand, weights) used in the last
  // kReuseWindow steps, and one more when its operand block is the last step's; ties go to the
  // earliest step in the spec's order.
  std::vector<int64_t> InterleavedOrder() const {
    const int64_t n = static_cast<int64_t>(s_.step_x.size());
    std::vector<std::vector<int64_t>> queues(s_.acc_blocks());
    for (int64_t i = 0; i < n; ++i) queues[s_.step_acc[i]].push_back(i);
    std::vector<size_t> head(queues.size(), 0);
    std::vector<int64_t> x_used(s_.x_blocks(), -kReuseWindow - 1), w_used(s_.w_blocks(), -kReuseWindow - 1);
    std::vector<int64_t> order;
    for (int64_t t = 0; t < n; ++t) {
      int64_t best = -1, best_score = -1;
      for (size_t a = 0; a < queues.size(); ++a) {
        if (head[a] == queues[a].size()) continue;
        const int64_t i = queues[a][head[a]];
        const int64_t score = (t - x_used[s_.step_x[i]] <= kReuseWindow) + (t - w_used[s_.step_w[i]] <= kReuseWindow) +
                              (x_used[s_.step_x[i]] == t - 1);
        if (score > best_score || (score == best_score && i < best)) {
          best = i;
          best_score = score;
        }
      }
      VISA_CHECK(best >= 0, "every step is in an accumulator block's queue");
      ++head[s_.step_acc[best]];
      order.push_back(best);
      x_used[s_.step_x[best]] = t;
      w_used[s_.step_w[best]] = t;
    }
    return order;
  }

  // Per step: the slot of the block it reads (`slot`) and the block to pack into it first (`pack`,
  // -1 when the block is packed already). A slot is free again after its block's last use.
  static void AssignSlots(const std::vector<int64_t>& blocks, int64_t count, std::vector<int64_t>& slot,
                          std::vector<int64_t>& pack) {
    std::vector<int64_t> last(count, -1), slot_of(count, -1);
    for (size_t t = 0; t < blocks.size(); ++t) last[blocks[t]] = static_cast<int64_t>(t);
    std::vector<int64_t> free_slots;
    int64_t slots = 0;
    for (size_t t = 0; t < blocks.size(); ++t) {
      const int64_t block = blocks[t];
      pack.push_back(-1);
      if (slot_of[block] < 0) {
        if (free_slots.empty()) {
          slot_of[block] = slots++;
        } else {
          slot_of[block] = free_slots.back();
          free_slots.pop_back();
        }
        pack.back() = block;
      }
      slot.push_back(slot_of[block]);
      if (last[block] == static_cast<int64_t>(t)) free_slots.push_back(slot_of[block]);
    }
    VISA_CHECK(slots <= count, "a block's slot lies in its packed area");
  }

  llvm::Module& m_;
  const LaneContractionSpec& s_;
  llvm::IRBuilder<> b_;
  Scratch layout_;
  Packing packing_;
  bool pairs_;  // integer pairs (UsesIntegerPairs): packed operands are 16-bit, in pair order
  bool quads_;  // byte quads (UsesByteQuads): packed operands are 8-bit, the operand's sign flipped
  bool vnni_;
  bool interleaved_;  // blocks packed right before their first step (PackBefore)
  StepShape shape_;   // which parts of a step run as loops
  std::vector<int64_t> step_x_, step_w_, step_acc_;
  std::vector<int64_t> x_slot_, w_slot_, pack_x_at_, pack_w_at_;
  Value* o_ = nullptr;
  Value* dm_ = nullptr;
  llvm::Function* fn_ = nullptr;
  Value* wp_ = nullptr;
  Value* xp_ = nullptr;
  Value* accp_ = nullptr;
  Value* seen_ = nullptr;
  Value* tile_ = nullptr;
  Value* sign_fix_ = nullptr;
  Value* chunk_ = nullptr;  // chunk sums of a block of Rows (GroupSums)
  Value* next_ = nullptr;
  Value* next_live_ = nullptr;
  llvm::MDNode* domain_ = nullptr;
  llvm::MDNode* device_scope_ = nullptr;
  llvm::MDNode* scratch_scope_ = nullptr;
};

}  // namespace

int64_t LaneContractionSpec::ScratchBytes() const { return Scratch(*this).end; }

std::string LaneContractionSpec::Key() const {
  return absl::StrFormat(
      "lanes %s>%s %s*%s>%s %s%s%s%s r%d p%d g%d ot%d op%d %016x %016x %016x %016x %016x %016x %016x %016x %016x "
      "%016x %016x %016x",
      std::string(Name(dm_type)), fetch.Key(), std::string(Name(x_type)), std::string(Name(w_type)),
      std::string(Name(acc_type)), ReduceOpName(op), fma_first_level ? " fma" : "",
      slice_accumulators ? " slice" : "", bf16_pairs ? " bf16pairs" : "", rows, packet, group, out_times, out_packet,
      StableHash(live_outer), StableHash(live_row), StableHash(live_packet), StableHash(target),
      StableHash(w_offset), StableHash(w_packet), StableHash(x_lane), StableHash(x_packet),
      StableHash(acc_lane), StableHash(step_x), StableHash(step_w), StableHash(step_acc));
}

bool PacksValues(const LaneContractionSpec& spec) { return PackingOf(spec) == Packing::kValues; }

StepShape StepShapeOf(const LaneContractionSpec& s) {
  StepShape shape;
  if (!PacksValues(s)) return shape;  // pair and quad steps are chains, written out
  const int64_t live_rows = std::count_if(s.live_row.begin(), s.live_row.end(), [](uint8_t l) { return l != 0; });
  shape.row_block_loop = live_rows >= 2 * static_cast<int64_t>(kRowsPerOperandLoad);
  const int64_t live_groups = std::count_if(s.target.begin(), s.target.end(), [](int64_t t) { return t >= 0; });
  shape.group_loop = live_groups > 1 && LiveAlike(s, s.group);
  if (s.group > kStepChunkLeaves && ChunksAlike(s, kStepChunkLeaves)) shape.chunk_leaves = kStepChunkLeaves;
  return shape;
}

bool UsesBf16Pairs(const LaneContractionSpec& s) {
  const bool contiguous = StrideOf(s.x_packet) == std::optional<int64_t>(1) &&
                          StrideOf(s.w_packet) == std::optional<int64_t>(1);
  const bool all_live = std::all_of(s.live_packet.begin(), s.live_packet.end(), [](uint8_t l) { return l != 0; });
  return s.dm_type == DType::kBF16 && s.x_type == DType::kBF16 && s.w_type == DType::kBF16 &&
         s.acc_type == DType::kF32 && s.op == ReduceOp::kAdd && s.fetch.kind == ElementOp::Kind::kCopy &&
         s.group % 2 == 0 && s.packet % (2 * kLanes) == 0 && contiguous && all_live && HostHas("avx512bf16");
}

void BuildLaneContractionFunction(llvm::Module& module, const std::string& name, const LaneContractionSpec& spec) {
  VISA_CHECK(!spec.bf16_pairs || UsesBf16Pairs(spec), "bf16 pairs only where UsesBf16Pairs allows them");
  Builder(module, spec).Build(name);
}

}  // namespace visa::jit
