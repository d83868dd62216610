// Packet contraction kernels in IR: per step, the packet's products as one vector and the
// pairwise tree by shuffles; the sums combined into their slots in time order.
#include "jit/packet_contraction_kernel.h"

#include <algorithm>
#include <set>

#include "absl/strings/str_format.h"
#include "dsl/status_macros.h"
#include "jit/accumulator_math.h"
#include "jit/ir_loops.h"
#include "jit/stable_hash.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/Module.h"

namespace visa::jit {
namespace {

using llvm::Value;

bool PowerOfTwo(int64_t n) { return n >= 1 && (n & (n - 1)) == 0; }

// The widest packet written as one vector: 64 f32 products are four AVX-512 registers.
constexpr int64_t kMaxPacket = 64;

class Builder {
 public:
  Builder(llvm::Module& module, const PacketContractionSpec& spec) : m_(module), s_(spec), b_(module.getContext()) {}

  void Build(const std::string& name) {
    fn_ = DeclareLaneContractionFunction(m_, name);
    b_.SetInsertPoint(llvm::BasicBlock::Create(m_.getContext(), "entry", fn_));
    EmitLoop(b_, fn_->getArg(5), fn_->getArg(6), [&](Value* o) {
      Value* live = b_.CreateICmpNE(Table(std::vector<int64_t>(s_.live_outer.begin(), s_.live_outer.end()), o, 8),
                                    b_.getInt8(0));
      EmitIf(b_, live, [&] { Slice(o); });
    }, /*unroll=*/false);
    b_.CreateRetVoid();
  }

 private:
  Value* Table(const std::vector<int64_t>& values, Value* index, int bits) {
    return EmitTableLoad(b_, m_, values, index, bits);
  }
  Value* I64(int64_t v) { return b_.getInt64(v); }

  void Slice(Value* o) {
    Value* x = b_.CreateLoad(b_.getPtrTy(), b_.CreateGEP(b_.getPtrTy(), fn_->getArg(0), o));
    std::vector<std::pair<int64_t, Value*>> rows;
    for (int64_t r = 0; r < s_.rows; ++r) {
      if (!s_.live_row[r]) continue;
      Value* at = b_.CreateGEP(b_.getPtrTy(), fn_->getArg(1), b_.CreateAdd(b_.CreateMul(o, I64(s_.rows)), I64(r)));
      rows.emplace_back(r, b_.CreateLoad(b_.getPtrTy(), at));
    }
    // Whether each step is the first to reach its retained position (its sums are stored as is).
    std::vector<int64_t> first;
    std::set<int64_t> seen;
    for (int64_t t : s_.step_acc) first.push_back(seen.insert(t).second ? 1 : 0);
    const int64_t steps = static_cast<int64_t>(s_.step_x.size());
    EmitLoop(b_, I64(0), I64(steps), [&](Value* step) {
      Value* xv = LoadWidened(x, s_.x_type, Table(s_.step_x, step, 64));
      Value* w_at = Table(s_.step_w, step, 64);
      Value* retained = Table(s_.step_acc, step, 64);
      Value* is_first = b_.CreateICmpNE(Table(first, step, 8), b_.getInt8(0));
      for (const auto& [r, row] : rows) {
        Value* sums = GroupSums(xv, LoadWidened(row, s_.w_type, w_at));
        Combine(r, retained, is_first, sums);
      }
    }, /*unroll=*/false);
  }

  // The packet at element `at` of `base`, widened to the accumulator type's 32-bit patterns.
  // bf16 -> f32 is Bf16ToF32Bits on every element (element_op.cc's kBf16ToF32): NaN ->
  // 0x7fc00000, a subnormal -> its signed zero, otherwise the bits shifted up 16.
  Value* LoadWidened(Value* base, DType type, Value* at) {
    VISA_CHECK(type == DType::kBF16, "the packet kernel takes bf16 operands");
    const auto n = static_cast<unsigned>(s_.packet);
    auto* halves = llvm::FixedVectorType::get(b_.getInt16Ty(), n);
    auto* units = llvm::FixedVectorType::get(b_.getInt32Ty(), n);
    Value* raw = b_.CreateZExt(
        b_.CreateAlignedLoad(halves, b_.CreateGEP(b_.getInt16Ty(), base, at), llvm::Align(2)), units);
    auto splat = [&](uint32_t v) { return b_.CreateVectorSplat(n, b_.getInt32(v)); };
    Value* nan = b_.CreateICmpUGT(b_.CreateAnd(raw, splat(0x7fff)), splat(0x7f80));
    Value* sub = b_.CreateICmpEQ(b_.CreateAnd(raw, splat(0x7f80)), splat(0));
    Value* out = b_.CreateShl(raw, splat(16));
    out = b_.CreateSelect(sub, b_.CreateShl(b_.CreateAnd(raw, splat(0x8000)), splat(16)), out);
    return b_.CreateSelect(nan, splat(0x7fc00000u), out);
  }

  // The products of the packet, reduced by the tree of each group: element g of the result is
  // tree group g's sum. Level k pairs adjacent elements of level k - 1 (even + odd), the manual's
  // tree; groups are aligned runs of `group` positions, so no pair crosses one.
  Value* GroupSums(Value* x, Value* w) {
    AccumulatorMath leaves{b_, IsFloat(s_.acc_type), s_.op, s_.packet};
    Value* level = leaves.Multiply(x, w);
    for (int64_t width = s_.packet; width > s_.groups(); width /= 2) {
      std::vector<int> even, odd;
      for (int64_t i = 0; i < width / 2; ++i) {
        even.push_back(static_cast<int>(2 * i));
        odd.push_back(static_cast<int>(2 * i + 1));
      }
      AccumulatorMath math{b_, IsFloat(s_.acc_type), s_.op, width / 2};
      // The last level of one group is on scalars (AccumulatorMath's lanes 1).
      Value* a = width == 2 ? b_.CreateExtractElement(level, uint64_t{0}) : b_.CreateShuffleVector(level, even);
      Value* c = width == 2 ? b_.CreateExtractElement(level, uint64_t{1}) : b_.CreateShuffleVector(level, odd);
      level = Combine(math, a, c);
    }
    return level;
  }

  // math.Combine(a, c), with a NaN `a` as the result when both are NaN: the interpreter's
  // `a + c` returns its first operand's NaN (x86's rule), and fadd, being commutative, may have
  // its operands swapped by code generation (a NaN of either sign: the widening's canonical one
  // and inf x 0's default one can meet in a tree).
  Value* Combine(AccumulatorMath& math, Value* a, Value* c) {
    Value* combined = math.Combine(a, c);
    if (!math.is_float || math.op != ReduceOp::kAdd) return combined;
    Value* a_nan = b_.CreateFCmpUNO(math.F(a), math.F(a));
    return b_.CreateSelect(a_nan, a, combined);
  }

  // Each live group's sum into acc[(r * out_times + retained) * out_packet + target]: stored as is
  // on the position's first step, else combined with what is there; its written flag set.
  void Combine(int64_t r, Value* retained, Value* is_first, Value* sums) {
    AccumulatorMath math{b_, IsFloat(s_.acc_type), s_.op, 1};
    Value* row_base = b_.CreateMul(b_.CreateAdd(I64(r * s_.out_times), retained), I64(s_.out_packet));
    for (int64_t g = 0; g < s_.groups(); ++g) {
      if (s_.target[g] < 0) continue;
      Value* sum = sums->getType()->isVectorTy() ? b_.CreateExtractElement(sums, static_cast<uint64_t>(g)) : sums;
      Value* slot = b_.CreateAdd(row_base, I64(s_.target[g]));
      Value* at = b_.CreateGEP(b_.getInt32Ty(), fn_->getArg(2), slot);
      Value* old = b_.CreateLoad(b_.getInt32Ty(), at);
      b_.CreateStore(b_.CreateSelect(is_first, sum, Combine(math, old, sum)), at);
      b_.CreateStore(b_.getInt8(1), b_.CreateGEP(b_.getInt8Ty(), fn_->getArg(3), slot));
    }
  }

  llvm::Module& m_;
  const PacketContractionSpec& s_;
  llvm::IRBuilder<> b_;
  llvm::Function* fn_ = nullptr;
};

}  // namespace

std::optional<PacketContractionSpec> PacketContractionOf(const LaneContractionSpec& lanes) {
  const auto contiguous = [](const std::vector<int64_t>& offsets) {
    for (size_t p = 0; p < offsets.size(); ++p) {
      if (offsets[p] != static_cast<int64_t>(p)) return false;
    }
    return true;
  };
  const bool all_live = std::all_of(lanes.live_packet.begin(), lanes.live_packet.end(), [](uint8_t l) { return l != 0; });
  if (lanes.dm_type != DType::kBF16 || lanes.x_type != DType::kBF16 || lanes.w_type != DType::kBF16 ||
      lanes.acc_type != DType::kF32 || lanes.fetch.kind != ElementOp::Kind::kCopy || !all_live ||
      !contiguous(lanes.x_packet) || !contiguous(lanes.w_packet) || !PowerOfTwo(lanes.packet) ||
      lanes.packet < 2 || lanes.packet > kMaxPacket || !PowerOfTwo(lanes.group) || lanes.packet % lanes.group != 0 ||
      !lanes.slice_accumulators || lanes.fma_first_level || lanes.bf16_pairs) {
    return std::nullopt;
  }
  PacketContractionSpec spec;
  for (int64_t b = 0; b < lanes.x_blocks(); ++b) {
    for (int64_t d = 1; d < kLanes; ++d) {
      if (lanes.x_lane[b * kLanes + d] >= 0) return std::nullopt;  // a block of several lanes
    }
  }
  for (int64_t b = 0; b < lanes.acc_blocks(); ++b) {
    for (int64_t d = 1; d < kLanes; ++d) {
      if (lanes.acc_lane[b * kLanes + d] >= 0) return std::nullopt;
    }
  }
  spec.x_type = lanes.x_type;
  spec.w_type = lanes.w_type;
  spec.acc_type = lanes.acc_type;
  spec.op = lanes.op;
  spec.rows = lanes.rows;
  spec.packet = lanes.packet;
  spec.group = lanes.group;
  spec.out_times = lanes.out_times;
  spec.out_packet = lanes.out_packet;
  spec.live_outer = lanes.live_outer;
  spec.live_row = lanes.live_row;
  spec.target = lanes.target;
  for (size_t i = 0; i < lanes.step_x.size(); ++i) {
    spec.step_x.push_back(lanes.x_lane[lanes.step_x[i] * kLanes]);
    spec.step_w.push_back(lanes.w_offset[lanes.step_w[i]]);
    spec.step_acc.push_back(lanes.acc_lane[lanes.step_acc[i] * kLanes]);
  }
  return spec;
}

std::string PacketContractionSpec::Key() const {
  return absl::StrFormat("packet %s*%s>%s %s r%d p%d g%d ot%d op%d %016x %016x %016x %016x %016x %016x",
                         std::string(Name(x_type)), std::string(Name(w_type)), std::string(Name(acc_type)),
                         ReduceOpName(op), rows, packet, group, out_times, out_packet, StableHash(live_outer),
                         StableHash(live_row), StableHash(target), StableHash(step_x), StableHash(step_w),
                         StableHash(step_acc));
}

void BuildPacketContractionFunction(llvm::Module& module, const std::string& name, const PacketContractionSpec& spec) {
  Builder(module, spec).Build(name);
}

}  // namespace visa::jit
