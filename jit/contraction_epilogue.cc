// ContractionEpilogue: composing the accumulate, cast and commit moves into one per-slice nest.
#include "jit/contraction_epilogue.h"

#include <algorithm>
#include <limits>
#include <tuple>

#include "absl/strings/str_cat.h"
#include "dsl/status_macros.h"
#include "jit/ir_loops.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/Module.h"

namespace visa::jit {
namespace {

using Plan = std::variant<ContractionEpilogue, std::string>;
using Pairs = std::vector<std::pair<int64_t, int64_t>>;

// What one committed position reads, through the moves before the commit: an accumulator slot
// (slice * slots + slot), or -1 where the stream holds no slot's value (padding: zero bits).
// 32-bit slots (the planner refuses more slots): the maps span whole streams, padding included
// (the GEMM's cast stream has 1M positions), and planning happens while the device's memory is
// resident, so their size adds to a run's peak memory (8 MiB for that stream at 64 bits).
using SlotMap = std::vector<int32_t>;
SlotMap SlotOfPosition(const MoveNest& nest, int64_t positions, const SlotMap& slot_of_src) {
  SlotMap slot(static_cast<size_t>(positions), -1);
  ForEachPair(nest, [&](int64_t dst, int64_t src) {
    slot[dst] = slot_of_src.empty() ? static_cast<int32_t>(src) : slot_of_src[src];
  });
  return slot;
}

bool InRange(const MoveNest& nest, int64_t dst_positions, int64_t src_positions) {
  for (const NestLevel& level : nest.levels) {
    if (level.count < 1 || level.dst_stride < 0 || level.src_stride < 0) return false;
  }
  return nest.max_dst() < dst_positions && nest.max_src() < src_positions;
}

// The stages between accumulate and the commit this epilogue covers: at most one cast.
std::variant<const CastStage*, std::string> CastBeforeCommit(const FusedContraction& plan, const PipelineOp& op) {
  const size_t first = plan.accumulate_stage + 1;
  const size_t last = op.stages.size() - 1;
  if (first > last || !std::holds_alternative<CommitStage>(op.stages[last])) {
    return std::string("the pipeline does not end with a commit");
  }
  if (first == last) return static_cast<const CastStage*>(nullptr);
  if (first + 1 == last) {
    if (const auto* cast = std::get_if<CastStage>(&op.stages[first])) return cast;
  }
  return std::string("stages other than one cast between accumulate and commit");
}

// The most positions the unrolled levels inside the vectorized loop may hold: one interleaved
// group of stores per source row (LLVM groups at most 16 members on x86 with AVX-512).
constexpr int64_t kMaxUnrolled = 16;

// The epilogue's loops for the vectorizer: `vector` (innermost loop), `unrolled` (straight-line
// inside it), `outer` (loops around it, outermost first).
struct LoopOrder {
  NestLevel vector;
  std::vector<NestLevel> unrolled, outer;
};

LoopOrder OrderForVectors(const MoveNest& nest) {
  std::vector<NestLevel> levels = nest.levels;
  // The vectorized loop: contiguous accumulator loads where a level reads them, else contiguous
  // stores, else the longest level.
  auto pick = std::max_element(levels.begin(), levels.end(), [](const NestLevel& a, const NestLevel& b) {
    auto rank = [](const NestLevel& l) { return std::tuple(l.src_stride == 1, l.dst_stride == 1, l.count); };
    return rank(a) < rank(b);
  });
  LoopOrder order{*pick, {}, {}};
  levels.erase(pick);
  // Levels that write between two of its destinations, while their positions fit one group.
  int64_t unrolled = 1;
  for (const NestLevel& level : levels) {
    const bool between = level.dst_stride * level.count <= order.vector.dst_stride;
    if (between && unrolled * level.count <= kMaxUnrolled) {
      order.unrolled.push_back(level);
      unrolled *= level.count;
    } else {
      order.outer.insert(order.outer.begin(), level);
    }
  }
  return order;
}

// dst[d] = op(src[s]) by storage width (never 4-bit: the planner refuses those outputs).
void EmitWrite(llvm::IRBuilder<>& b, llvm::Module& m, const ElementOp& op, llvm::Value* dst, llvm::Value* src,
               llvm::Value* d, llvm::Value* s) {
  llvm::Value* value = EmitElementOp(b, m, op, EmitLoadRaw(b, src, s, StorageBits(op.from)), s);
  llvm::Type* type = b.getIntNTy(StorageBits(op.to));
  if (StorageBits(op.to) < 32) value = b.CreateTrunc(value, type);
  b.CreateAlignedStore(value, b.CreateGEP(type, dst, d), llvm::Align(1));
}

// Every combination of the unrolled levels' indices at (d, s), as straight-line code.
void EmitUnrolled(llvm::IRBuilder<>& b, llvm::Module& m, const ElementOp& op, const std::vector<NestLevel>& levels,
                  size_t k, llvm::Value* dst, llvm::Value* src, llvm::Value* d, llvm::Value* s) {
  if (k == levels.size()) {
    EmitWrite(b, m, op, dst, src, d, s);
    return;
  }
  for (int64_t i = 0; i < levels[k].count; ++i) {
    EmitUnrolled(b, m, op, levels, k + 1, dst, src, b.CreateNSWAdd(d, b.getInt64(i * levels[k].dst_stride)),
                 b.CreateNSWAdd(s, b.getInt64(i * levels[k].src_stride)));
  }
}

void EmitLoops(llvm::IRBuilder<>& b, llvm::Module& m, const ElementOp& op, const LoopOrder& order, size_t k,
               llvm::Value* dst, llvm::Value* src, llvm::Value* d, llvm::Value* s) {
  const bool innermost = k == order.outer.size();
  const NestLevel& level = innermost ? order.vector : order.outer[k];
  EmitLoop(b, b.getInt64(0), b.getInt64(level.count), [&](llvm::Value* i) {
    llvm::Value* dk = b.CreateNSWAdd(d, b.CreateNSWMul(i, b.getInt64(level.dst_stride)));
    llvm::Value* sk = b.CreateNSWAdd(s, b.CreateNSWMul(i, b.getInt64(level.src_stride)));
    if (innermost) {
      EmitUnrolled(b, m, op, order.unrolled, 0, dst, src, dk, sk);
    } else {
      EmitLoops(b, m, op, order, k + 1, dst, src, dk, sk);
    }
  });
}

}  // namespace

std::string EpilogueKey(const ContractionEpilogue& epilogue) {
  return absl::StrCat("epilogue ", epilogue.nest.ToString(), " ", epilogue.op.Key());
}

void BuildEpilogueFunction(llvm::Module& module, const std::string& name, const ContractionEpilogue& epilogue) {
  llvm::LLVMContext& ctx = module.getContext();
  llvm::IRBuilder<> b(ctx);
  llvm::Type* ptr = b.getPtrTy();
  auto* type = llvm::FunctionType::get(b.getVoidTy(), {ptr, ptr}, false);
  auto* fn = llvm::Function::Create(type, llvm::Function::ExternalLinkage, name, module);
  fn->addFnAttr(llvm::Attribute::NoUnwind);
  // Device memory and the per-thread accumulators never overlap.
  for (unsigned a = 0; a < 2; ++a) fn->addParamAttr(a, llvm::Attribute::NoAlias);
  b.SetInsertPoint(llvm::BasicBlock::Create(ctx, "entry", fn));
  EmitLoops(b, module, epilogue.op, OrderForVectors(epilogue.nest), 0, fn->getArg(0), fn->getArg(1), b.getInt64(0),
            b.getInt64(0));
  b.CreateRetVoid();
}

std::vector<uint8_t> SlotsWritten(const LaneContractionSpec& spec) {
  std::vector<uint8_t> written(static_cast<size_t>(spec.rows * spec.out_times * spec.out_packet), 0);
  std::vector<uint8_t> stepped(static_cast<size_t>(spec.acc_blocks()), 0);
  for (int64_t block : spec.step_acc) stepped[block] = 1;
  for (int64_t block = 0; block < spec.acc_blocks(); ++block) {
    if (!stepped[block]) continue;  // the kernel scatters only the blocks some step reached
    for (int64_t d = 0; d < kLanes; ++d) {
      const int64_t retained = spec.acc_lane[block * kLanes + d];
      if (retained < 0) continue;
      for (int64_t r = 0; r < spec.rows; ++r) {
        if (!spec.live_row[r]) continue;
        for (int64_t g = 0; g < spec.groups(); ++g) {
          if (spec.target[g] >= 0) written[(r * spec.out_times + retained) * spec.out_packet + spec.target[g]] = 1;
        }
      }
    }
  }
  return written;
}

std::optional<MoveNest> NestOfPairs(const Pairs& pairs) {
  const int64_t n = static_cast<int64_t>(pairs.size());
  if (n == 0) return std::nullopt;
  MoveNest nest;
  int64_t block = 1;  // pairs one repetition of the levels found so far enumerates
  while (block < n) {
    const int64_t dst_step = pairs[block].first - pairs[0].first;
    const int64_t src_step = pairs[block].second - pairs[0].second;
    int64_t count = 1;
    for (bool repeats = true; repeats && (count + 1) * block <= n;) {
      for (int64_t i = 0; i < block && repeats; ++i) {
        const auto& [dst, src] = pairs[count * block + i];
        repeats = dst == pairs[i].first + count * dst_step && src == pairs[i].second + count * src_step;
      }
      if (repeats) ++count;
    }
    if (count == 1) return std::nullopt;
    nest.levels.push_back({count, dst_step, src_step});
    block *= count;
  }
  if (nest.levels.empty()) nest.levels.push_back({1, 0, 0});
  nest.levels = Simplify(std::move(nest), 1).levels;
  // The greedy search may take a level too long where a shorter one was meant: check.
  if (nest.elements() != n) return std::nullopt;
  int64_t i = 0;
  bool same = true;
  ForEachPair(nest, [&](int64_t dst, int64_t src) {
    same = same && pairs[i].first == pairs[0].first + dst && pairs[i].second == pairs[0].second + src;
    ++i;
  });
  if (!same) return std::nullopt;
  return nest;
}

Plan PlanContractionEpilogue(const FusedContraction& plan, const PipelineOp& op, const std::optional<MoveNest>& commit,
                             int64_t unit_positions, DType output) {
  std::variant<const CastStage*, std::string> found = CastBeforeCommit(plan, op);
  if (auto* reason = std::get_if<std::string>(&found)) return *reason;
  const CastStage* cast = std::get<const CastStage*>(found);
  if (!commit) return std::string("the commit is not walked from its Sequencer entries in place");
  const DType stream_type = cast != nullptr ? cast->to : plan.acc_type;
  if (stream_type != output) return std::string("the committed stream's type is not the output's");
  if (StorageBits(output) == 4) return std::string("a 4-bit output (two positions share a byte)");
  ContractionEpilogue epilogue;
  if (cast != nullptr) {
    absl::StatusOr<ElementOp> cast_op = CastOp(*cast);
    if (!cast_op.ok()) return std::string(cast_op.status().message());
    epilogue.op = *cast_op;
  } else {
    epilogue.op = CopyOp(plan.acc_type);
  }
  // The stage-by-stage moves, each as the JIT runs it: accumulators -> the Reducer's stream
  // (-> the cast's stream) -> committed positions.
  const int64_t slots = plan.acc_layout.size();
  std::optional<MoveNest> accumulated = DeriveMoveNest(plan.out_layout, plan.acc_layout);
  if (!accumulated || !InRange(*accumulated, plan.out_layout.size(), slots)) {
    return std::string("the accumulators' move into the Reducer's stream has no loop nest");
  }
  if (plan.out_layout.size() > std::numeric_limits<int32_t>::max() || slots > std::numeric_limits<int32_t>::max()) {
    return std::string("a stream too large to plan");
  }
  SlotMap slot = SlotOfPosition(*accumulated, plan.out_layout.size(), {});
  int64_t stream_size = plan.out_layout.size();
  if (cast != nullptr) {
    const Mapping cast_layout = cast->out.Full();
    std::optional<MoveNest> cast_nest = DeriveMoveNest(cast_layout, plan.out_layout);
    if (!cast_nest || !InRange(*cast_nest, cast_layout.size(), plan.out_layout.size())) {
      return std::string("the cast's move has no loop nest");
    }
    slot = SlotOfPosition(*cast_nest, cast_layout.size(), slot);
    stream_size = cast_layout.size();
  }
  for (const NestLevel& level : commit->levels) {
    if (level.dst_stride < 0 || level.src_stride < 0) return std::string("a commit nest with a negative stride");
  }
  if (commit->max_src() >= stream_size) return std::string("the commit reads past the stream");

  const LaneContractionSpec& spec = plan.spec;
  epilogue.slots = spec.rows * spec.out_times * spec.out_packet;
  VISA_CHECK(epilogue.slots * plan.outer == slots, "the accumulator image is [outer][row][retained time][packet]");
  const std::vector<uint8_t> written = SlotsWritten(spec);
  epilogue.unit_start.assign(static_cast<size_t>(plan.outer), -1);
  // The committed positions, slice after slice; the first slice's are the pattern every other
  // slice must repeat from its own unit.
  Pairs pattern;
  int64_t first = -1, current = -1;
  size_t at = 0;  // the next pattern entry the current slice must match
  std::string why_not;
  ForEachPair(*commit, [&](int64_t dst, int64_t src) {
    if (!why_not.empty()) return;
    const int64_t s = slot[src];
    const int64_t slice = s < 0 ? -1 : s / epilogue.slots, local = s < 0 ? -1 : s % epilogue.slots;
    if (s < 0 || !spec.live_outer[slice] || !written[local]) {
      why_not = "the commit writes stream positions no accumulator holds (padding)";
      return;
    }
    const int64_t start = dst / unit_positions * unit_positions;
    if (slice != current) {
      if (current != first && at != pattern.size()) why_not = "slices commit different numbers of positions";
      if (epilogue.unit_start[slice] >= 0) why_not = "a slice's committed positions are not contiguous in commit order";
      if (first < 0) first = slice;
      current = slice;
      epilogue.unit_start[slice] = start;
      at = 0;
    }
    if (start != epilogue.unit_start[slice]) why_not = "a slice commits into more than one unit";
    const std::pair<int64_t, int64_t> entry{dst - start, local};
    if (slice == first) {
      pattern.push_back(entry);
    } else if (at >= pattern.size() || pattern[at++] != entry) {
      why_not = "slices commit different patterns";
    }
  });
  if (why_not.empty() && current != first && at != pattern.size()) why_not = "slices commit different numbers of positions";
  if (!why_not.empty()) return why_not;
  std::optional<MoveNest> nest = NestOfPairs(pattern);
  if (!nest) return std::string("a slice's committed positions are not one loop nest");
  epilogue.nest = *std::move(nest);
  epilogue.first_slot = pattern[0].second;
  for (int64_t& start : epilogue.unit_start) {
    if (start < 0) continue;
    start += pattern[0].first;
    epilogue.max_dst = std::max(epilogue.max_dst, start + epilogue.nest.max_dst());
  }
  if (epilogue.first_slot + epilogue.nest.max_src() >= epilogue.slots) return std::string("a nest past the slots");
  return epilogue;
}

}  // namespace visa::jit
