// FusedContraction: the fusion conditions, the lane digit search, and the block tables.
#include "jit/fused_contraction.h"

#include <algorithm>
#include <map>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "dsl/equivalence.h"
#include "jit/exact_products.h"
#include "dsl/status_macros.h"
#include "jit/contraction_plan.h"
#include "jit/mapping_facts.h"
#include "runtime/device.h"

namespace visa::jit {
namespace {

using Plan = std::variant<FusedContraction, std::string>;

// Whether two streams hold every slice's elements in the same order at the same slices.
absl::StatusOr<bool> SameElementOrder(const StreamShape& a, const StreamShape& b) {
  for (auto [x, y] : {std::pair{&a.chip, &b.chip}, {&a.cluster, &b.cluster}, {&a.slice, &b.slice}}) {
    ASSIGN_OR_RETURN(bool same, Equivalent(*x, *y));
    if (!same) return false;
  }
  return Equivalent(Pair({a.time, a.packet}), Pair({b.time, b.packet}));
}

// A time digit: time position t reads digit value (t / stride) % size.
struct Digit {
  int64_t stride = 1, size = 1;
  int64_t Value(int64_t t) const { return t / stride % size; }
  // Lanes filled per block of kLanes, on average (the digit's efficiency as lanes).
  double LanesPerBlock() const {
    const int64_t blocks = (size + kLanes - 1) / kLanes;
    return static_cast<double>(size) / static_cast<double>(blocks);
  }
};

// Digits along which the weights are broadcast (the same TRF offset for every value), best first.
std::vector<Digit> LaneCandidates(const std::vector<int64_t>& w_time) {
  const int64_t times = static_cast<int64_t>(w_time.size());
  std::vector<Digit> found;
  for (int64_t stride = 1; stride < times; ++stride) {
    if (times % stride != 0) continue;
    for (int64_t size = 2; size <= times / stride; ++size) {
      if ((times / stride) % size != 0) continue;
      const Digit digit{stride, size};
      bool broadcast = true;
      for (int64_t t = 0; t < times && broadcast; ++t) {
        broadcast = w_time[t] == w_time[t - digit.Value(t) * stride];
      }
      if (broadcast) found.push_back(digit);
    }
  }
  std::stable_sort(found.begin(), found.end(), [](const Digit& a, const Digit& b) {
    if (a.LanesPerBlock() != b.LanesPerBlock()) return a.LanesPerBlock() > b.LanesPerBlock();
    return a.size > b.size;
  });
  return found;
}

// Numbers distinct keys in first-seen order.
template <typename Key>
int64_t Intern(std::map<Key, int64_t>& index, const Key& key, std::vector<Key>* order) {
  auto [it, inserted] = index.emplace(key, static_cast<int64_t>(index.size()));
  if (inserted && order != nullptr) order->push_back(key);
  return it->second;
}

// The steps, operand, weight and accumulator blocks of `digit` as lanes; false when two lanes
// would accumulate into the same slot separately (the digit is not retained).
bool BuildBlocks(const Digit& digit, const std::vector<int64_t>& x_time, const std::vector<int64_t>& w_time,
                 const std::vector<int64_t>& retained, LaneContractionSpec& spec) {
  using Lanes = std::vector<int64_t>;
  std::map<Lanes, int64_t> x_index, acc_index;
  std::map<int64_t, int64_t> w_index;
  std::vector<Lanes> x_blocks, acc_blocks;
  std::vector<int64_t> w_blocks;
  spec.step_x.clear();
  spec.step_w.clear();
  spec.step_acc.clear();
  for (int64_t t = 0; t < static_cast<int64_t>(w_time.size()); ++t) {
    const int64_t v = digit.Value(t);
    if (v % kLanes != 0) continue;
    Lanes x(kLanes, -1), acc(kLanes, -1);
    bool any = false;
    for (int64_t d = 0; d < kLanes && v + d < digit.size; ++d) {
      x[d] = x_time[t + d * digit.stride];
      acc[d] = retained[t + d * digit.stride];
      any = any || acc[d] >= 0;
    }
    if (!any) continue;  // a padded time step contributes nothing
    spec.step_x.push_back(Intern(x_index, x, &x_blocks));
    spec.step_w.push_back(Intern(w_index, w_time[t], &w_blocks));
    spec.step_acc.push_back(Intern(acc_index, acc, &acc_blocks));
  }
  // Every slot in exactly one lane of one block.
  std::map<int64_t, int64_t> owner;
  for (size_t b = 0; b < acc_blocks.size(); ++b) {
    for (int64_t d = 0; d < kLanes; ++d) {
      const int64_t slot = acc_blocks[b][d];
      if (slot < 0) continue;
      if (!owner.emplace(slot, static_cast<int64_t>(b) * kLanes + d).second) return false;
    }
  }
  spec.w_offset = w_blocks;
  spec.x_lane.clear();
  for (const Lanes& x : x_blocks) spec.x_lane.insert(spec.x_lane.end(), x.begin(), x.end());
  spec.acc_lane.clear();
  for (const Lanes& a : acc_blocks) spec.acc_lane.insert(spec.acc_lane.end(), a.begin(), a.end());
  return true;
}

// The operand's DM offsets split as x_time[t] + x_packet[p] (the fetch sequencer's walk, read in
// the computation mapping's order); nullopt when the walk does not split at the packet.
std::optional<std::pair<std::vector<int64_t>, std::vector<int64_t>>> SplitOffsets(const SequencerConfig& sequencer,
                                                                                  int64_t times, int64_t packet) {
  const std::vector<int64_t> offsets = sequencer.Offsets();
  if (static_cast<int64_t>(offsets.size()) != times * packet) return std::nullopt;
  std::vector<int64_t> x_time(times), x_packet(packet);
  for (int64_t p = 0; p < packet; ++p) x_packet[p] = offsets[p] - offsets[0];
  for (int64_t t = 0; t < times; ++t) {
    x_time[t] = offsets[t * packet];
    for (int64_t p = 0; p < packet; ++p) {
      if (offsets[t * packet + p] != x_time[t] + x_packet[p]) return std::nullopt;
    }
  }
  return std::make_pair(std::move(x_time), std::move(x_packet));
}


// The stage-shape conditions; the index of align, or the reason.
std::variant<size_t, std::string> FindAlign(const PipelineOp& op) {
  const auto& begin = std::get<BeginStage>(op.stages[0]);
  if (begin.interleave) return std::string("an interleaved fetch selects a tensor per time step");
  if (op.inputs.size() != 1 || !op.weights || !op.weights->handle) return std::string("no weights tensor");
  for (size_t i = 2; i < op.stages.size(); ++i) {
    const Stage& stage = op.stages[i];
    if (std::holds_alternative<AlignStage>(stage)) return i;
    if (std::holds_alternative<SwitchStage>(stage)) {
      return std::string("a switch exchanges data across slices through the ring before the contraction");
    }
    if (std::holds_alternative<TransposeStage>(stage)) {
      return std::string("a transpose reorders the stream through its buffer before the contraction");
    }
    if (!std::holds_alternative<CollectStage>(stage)) return std::string("a stage before align is not a collect");
  }
  return std::string("no contraction");
}

}  // namespace

namespace {

// Elements from a base pointer to one past the furthest a kernel reads: the largest block offset
// (-1: an empty lane) plus the largest offset within the packet.
int64_t Extent(const std::vector<int64_t>& blocks, const std::vector<int64_t>& packet) {
  int64_t block = -1, within = 0;
  for (int64_t b : blocks) block = std::max(block, b);
  for (int64_t p : packet) within = std::max(within, p);
  return block < 0 ? 0 : block + within + 1;
}

}  // namespace

std::string PipelineKey(const PipelineOp& op) {
  std::string key;
  for (const Stage& stage : op.stages) absl::StrAppend(&key, DescribeStage(stage), "\n");
  for (const Stage& stage : op.stages) {
    if (const auto* fetch = std::get_if<FetchStage>(&stage)) {
      absl::StrAppend(&key, MappingKey(fetch->out.Full()), "\n");
      // The stage's description gives a table's size only; the plan's kernel holds its entries.
      if (!fetch->adapter.table.empty()) absl::StrAppend(&key, "table ", absl::StrJoin(fetch->adapter.table, ","), "\n");
    }
    if (const auto* align = std::get_if<AlignStage>(&stage)) absl::StrAppend(&key, MappingKey(align->out.Full()), "\n");
  }
  if (op.weights && op.weights->handle) absl::StrAppend(&key, MappingKey(op.weights->handle->full_mapping()));
  for (const TensorRef& input : op.inputs) {
    if (input.handle) absl::StrAppend(&key, " ", MappingKey(input.handle->full_mapping()));
  }
  return key;
}

absl::StatusOr<Plan> PlanFusedContraction(const PipelineOp& op) {
  std::variant<size_t, std::string> found = FindAlign(op);
  if (auto* reason = std::get_if<std::string>(&found)) return Plan(*reason);
  const size_t a = std::get<size_t>(found);
  const auto& fetch = std::get<FetchStage>(op.stages[1]);
  const auto& align = std::get<AlignStage>(op.stages[a]);
  const auto& contract = std::get<ContractStage>(op.stages[a + 1]);
  const auto& accumulate = std::get<AccumulateStage>(op.stages[a + 2]);
  if (!align.out.row) return Plan(std::string("the computation mapping has no Row"));
  ASSIGN_OR_RETURN(bool same_order, SameElementOrder(fetch.out, align.out));
  if (!same_order) return Plan(std::string("align broadcasts or reorders the stream over time"));
  if (HasPadding(Pair({fetch.out.time, fetch.out.packet}))) return Plan(std::string("the fetched stream has padding"));
  const DeviceTensor& weights = *op.weights->handle;
  ASSIGN_OR_RETURN(ContractionSpec base, PlanContraction(fetch.out.dtype, weights.dtype(), align, contract, accumulate));
  if (!AddressThroughTrfSequencer(align, TrfTensor(weights), base)) {
    return Plan(std::string("the TRF Sequencer's entries do not cover Time"));
  }
  auto split = SplitOffsets(fetch.sequencer, base.times, base.packet);
  if (!split) return Plan(std::string("the fetch sequencer's walk does not split at the packet"));

  FusedContraction plan;
  LaneContractionSpec& spec = plan.spec;
  const DeviceTensor& input = *op.inputs[0].handle;
  spec.dm_type = input.dtype();
  ASSIGN_OR_RETURN(spec.fetch, FetchAdapterOp(fetch, /*interleaved=*/false, /*per_tensor=*/-1));
  spec.x_type = fetch.out.dtype;
  spec.w_type = weights.dtype();
  spec.acc_type = base.acc_type;
  spec.op = base.op;
  spec.rows = base.rows;
  spec.packet = base.packet;
  spec.group = base.group;
  spec.out_times = base.out_times;
  spec.out_packet = base.out_packet;
  spec.live_outer = base.live_outer;
  spec.live_row = base.live_row;
  spec.live_packet = base.live_packet;
  spec.target = base.target;
  spec.w_packet = base.w_packet;
  spec.x_packet = split->second;
  spec.slice_accumulators = true;  // RunFused hands each slice its own accumulators
  bool built = false;
  for (const Digit& digit : LaneCandidates(base.w_time)) {
    if (BuildBlocks(digit, split->first, base.w_time, base.retained, spec)) {
      plan.lanes = absl::StrCat("time digit of stride ", digit.stride, " and size ", digit.size);
      built = true;
      break;
    }
  }
  // No digit broadcasts the weights (a GEMV, a decode projection: every time step reads its own
  // weights): each time step is a block of one lane, a degenerate digit of size 1, which always
  // builds. The packet kernel runs those where it takes the types, else the lane kernel in one lane.
  const bool single_lane = !built;
  if (single_lane) {
    VISA_CHECK(BuildBlocks(Digit{static_cast<int64_t>(base.w_time.size()), 1}, split->first, base.w_time,
                           base.retained, spec),
               "blocks of one lane never share a slot");
    plan.lanes = "single lane (no time digit broadcasts the weights)";
  }
  plan.outer = base.outer;
  plan.accumulate_stage = a + 2;
  const StreamShape& comp = align.out;
  plan.acc_layout = Pair({Pair({comp.chip, comp.cluster, comp.slice}), *comp.row, accumulate.retained_time,
                          contract.out.packet});
  plan.out_layout = accumulate.out.Full();
  const StreamShape& out = accumulate.out;
  if (MappingKey(Pair({out.chip, out.cluster, out.slice})) == MappingKey(Pair({comp.chip, comp.cluster, comp.slice}))) {
    plan.slice_layouts.emplace(Pair({out.time, out.packet}),
                               Pair({*comp.row, accumulate.retained_time, contract.out.packet}));
  }
  plan.acc_type = contract.out.dtype;
  plan.x_extent = Extent(spec.x_lane, spec.x_packet);
  plan.w_extent = Extent(spec.w_offset, spec.w_packet);
  if (single_lane) {
    plan.packet_spec = PacketContractionOf(spec);
    if (plan.packet_spec) plan.lanes = "packet (no time digit broadcasts the weights)";
  }
  if (spec.op == ReduceOp::kAdd && spec.acc_type == DType::kF32 && spec.group >= 2 &&
      spec.fetch.kind == ElementOp::Kind::kCopy && HasExactProducts(spec.x_type) && HasExactProducts(spec.w_type)) {
    plan.fma_spec = spec;
    plan.fma_spec->fma_first_level = true;
  }
  if (UsesBf16Pairs(spec)) {
    plan.pairs_spec = spec;
    plan.pairs_spec->bf16_pairs = true;
  }
  return Plan(std::move(plan));
}

bool ProductsAreExact(const FusedContraction& plan, const std::vector<const uint8_t*>& x_base,
                      const std::vector<const uint8_t*>& w_base) {
  ExponentRange x, w;
  for (const uint8_t* base : x_base) {
    if (base != nullptr) ScanExponents(plan.spec.x_type, base, plan.x_extent, x);
  }
  for (const uint8_t* base : w_base) {
    if (base != nullptr) ScanExponents(plan.spec.w_type, base, plan.w_extent, w);
  }
  return ProductsAreExact(x, w);
}

bool SliceAllowsBf16Pairs(const FusedContraction& plan, const std::vector<const uint8_t*>& x_base,
                          const std::vector<const uint8_t*>& w_base, int64_t o) {
  ExponentRange x, w;
  if (x_base[o] != nullptr) ScanExponents(DType::kBF16, x_base[o], plan.x_extent, x);
  for (int64_t r = 0; r < plan.spec.rows; ++r) {
    const uint8_t* row = w_base[o * plan.spec.rows + r];
    if (row != nullptr) ScanExponents(DType::kBF16, row, plan.w_extent, w);
  }
  return PairSumsAreExact(x, w);
}

absl::Status PointersOf(const FusedContraction& plan, const DmTensor& input, const TrfTensor& weights,
                        std::vector<const uint8_t*>& x_base, std::vector<const uint8_t*>& w_base) {
  const LaneContractionSpec& spec = plan.spec;
  const Placement& xp = input.placement();
  const Placement& wp = weights.placement();
  if (xp.prefix_size != plan.outer || wp.prefix_size != plan.outer * spec.rows) {
    return absl::FailedPreconditionError("the tensors' slices are not the stream's");
  }
  const int x_bits = StorageBits(input.dtype());
  if (x_bits == 4 && input.window_offset() % 2 != 0) {
    return absl::FailedPreconditionError("a 4-bit view starts inside a byte");
  }
  // A window of the TRF (a tile, an offset) is read from its own rows: not this path. A relabelling
  // of the whole tensor (a chip view, mpi/chip_range_pipeline.h's per-chip parts under mpirun) holds
  // the tensor's own bytes at its own placement's units, which is what the rows are read from.
  if (weights.is_view() && (weights.window_offset() != 0 || !(weights.element() == weights.base_element()))) {
    return absl::FailedPreconditionError("a TRF view");
  }
  x_base.assign(static_cast<size_t>(plan.outer), nullptr);
  w_base.assign(static_cast<size_t>(plan.outer * spec.rows), nullptr);
  std::vector<int64_t> x_unit(plan.outer, -1), w_unit(plan.outer * spec.rows, -1);
  for (size_t k = 0; k < xp.live_prefixes.size(); ++k) x_unit[xp.live_prefixes[k]] = xp.units[k];
  for (size_t k = 0; k < wp.live_prefixes.size(); ++k) w_unit[wp.live_prefixes[k]] = wp.units[k];
  const Device& device = input.device();
  for (int64_t o = 0; o < plan.outer; ++o) {
    if (!spec.live_outer[o]) continue;
    uint8_t* unit = x_unit[o] < 0 ? nullptr : device.UnitData(xp.tier, x_unit[o]);
    if (unit == nullptr) return absl::FailedPreconditionError("a live slice of the stream holds no data");
    x_base[o] = unit + xp.address + input.window_offset() * x_bits / 8;
    for (int64_t r = 0; r < spec.rows; ++r) {
      if (!spec.live_row[r]) continue;
      const int64_t prefix = o * spec.rows + r;
      uint8_t* row = w_unit[prefix] < 0 ? nullptr : weights.device().UnitData(wp.tier, w_unit[prefix]);
      if (row == nullptr) return absl::FailedPreconditionError("a live Row holds no weights");
      w_base[prefix] = row + wp.address;
    }
  }
  return absl::OkStatus();
}

}  // namespace visa::jit
