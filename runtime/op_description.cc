// Describe: resource, cycle terms and memory ranges of DMA moves and Tensor Unit pipelines.
#include "runtime/op_description.h"

#include <algorithm>
#include <set>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "runtime/cycle_model.h"
#include "runtime/dma_requests.h"

namespace visa {
namespace {

using Kind = CycleTerm::Kind;

int64_t CeilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

CycleTerm Term(std::string stage, Kind kind, std::optional<int64_t> cycles, std::string formula) {
  return CycleTerm{std::move(stage), kind, cycles, std::move(formula)};
}

// ---- DMA (manual, "DMA Engine" > Performance, Memory Bandwidth Limits, Detailed Examples) -----

// "Each DMA command incurs approximately 500 cycles of startup latency" ("DMA Engine" > Startup
// Latency).
constexpr int64_t kDmaStartupCycles = 500;
// "A single DMA Engine can theoretically move up to 256 bytes per clock cycle" (Memory Bandwidth
// Limits). One op is modelled as one engine, as in the manual's single-engine examples; spreading
// a move over the engines of several DMNs is left to the full cycle model.
constexpr int64_t kDmaEngineBytesPerCycle = 256;
// Key bandwidth constraints (Memory Bandwidth Limits): DM 256 B/cycle per cluster with DMN
// interleaving, SPM 128 B/cycle per cluster, HBM 0.75 TB/s read and 0.75 TB/s write per chip
// (750 B/cycle at the 1 GHz the DMA examples count in), PCIe 30 B/cycle for inter-chip transfers.
constexpr int64_t kDmBytesPerCycle = 256;
constexpr int64_t kSpmBytesPerCycle = 128;
constexpr int64_t kHbmBytesPerCycle = 750;
constexpr int64_t kPcieBytesPerCycle = 30;

// The rate one side of a move sustains: its memory's bandwidth, capped by the engine's.
int64_t SideBytesPerCycle(Tier tier) {
  const int64_t memory = tier == Tier::kHbm   ? kHbmBytesPerCycle
                         : tier == Tier::kSpm ? kSpmBytesPerCycle
                                              : kDmBytesPerCycle;
  return std::min(memory, kDmaEngineBytesPerCycle);
}

// The groups of `per_group` units a range touches (units are chips in HBM, slices elsewhere).
std::set<int64_t> GroupsOf(const MemoryRange& range, int64_t per_group) {
  std::set<int64_t> groups;
  for (const Interval& i : range.units) {
    for (int64_t u = i.begin; u < i.end; ++u) groups.insert(u / per_group);
  }
  return groups;
}

// Chips (HBM) or clusters (DM, SPM) a range touches: the granularity at which the manual's
// examples share one memory port between the reads and the writes of a move.
std::set<int64_t> PortsOf(const MemoryRange& range) {
  return GroupsOf(range, range.tier == Tier::kHbm ? 1 : kSlicesPerCluster);
}

std::set<int64_t> ChipsOf(const MemoryRange& range) {
  return GroupsOf(range, range.tier == Tier::kHbm ? 1 : kSlicesPerChip);
}

bool Meet(const std::set<int64_t>& a, const std::set<int64_t>& b) {
  return std::any_of(a.begin(), a.end(), [&](int64_t x) { return b.contains(x); });
}

// One side's cycles: its bytes over its bandwidth, or, when the move's packets are known, the
// requests they make if more ("the number of DMA requests determines execution time"; small
// packets and misaligned HBM access cost requests, runtime/dma_requests.h).
CycleTerm SideTerm(const char* side, Tier tier, int64_t bytes, std::optional<int64_t> request_cost = std::nullopt,
                   const std::string& why = "") {
  const int64_t rate = SideBytesPerCycle(tier);
  const int64_t by_bytes = CeilDiv(bytes, rate);
  if (request_cost && *request_cost > by_bytes) {
    return Term(absl::StrCat("dma ", side), Kind::kStream, *request_cost,
                absl::StrFormat("%d requests of <= 256 B, one per cycle (%s; %d B / %d B/cycle would be %d)",
                                *request_cost, why, bytes, rate, by_bytes));
  }
  return Term(absl::StrCat("dma ", side), Kind::kStream, by_bytes,
              absl::StrFormat("%d B / %d B/cycle (%s)", bytes, rate, TierName(tier)));
}

CycleTerm ReadTerm(Tier tier, int64_t bytes, const std::optional<DmaRequests>& r) {
  if (!r) return SideTerm("read", tier, bytes);
  return SideTerm("read", tier, bytes, r->read_cost,
                  absl::StrFormat("%s, %d packets, %d HBM reads across a 256-byte boundary x %d", TierName(tier),
                                  r->packets, r->split_hbm_reads, cycles::kHbmUnalignedReadFactor));
}

CycleTerm WriteTerm(Tier tier, int64_t bytes, const std::optional<DmaRequests>& r) {
  if (!r) return SideTerm("write", tier, bytes);
  return SideTerm("write", tier, bytes, r->write_cost,
                  absl::StrFormat("%s, %d packets, %d partial HBM writes read-modify-write x %d", TierName(tier),
                                  r->packets, r->partial_hbm_writes, cycles::kHbmPartialWriteFactor));
}

// The transfer terms of a move of `bytes` stream bytes between the two sides (either may be the
// host, which has no device range).
std::vector<CycleTerm> TransferTerms(const std::optional<MemoryRange>& src,
                                     const std::optional<MemoryRange>& dst, int64_t bytes,
                                     const std::optional<DmaRequests>& requests) {
  constexpr char kNoHostRate[] =
      "host memory over PCIe: the manual gives no host-link bandwidth (its 30 B/cycle is for "
      "inter-chip transfers)";
  if (!src || !dst) {
    std::vector<CycleTerm> terms;
    if (!src) terms.push_back(Term("dma read", Kind::kStream, std::nullopt, kNoHostRate));
    if (src) terms.push_back(SideTerm("read", src->tier, bytes));
    if (dst) terms.push_back(SideTerm("write", dst->tier, bytes));
    if (!dst) terms.push_back(Term("dma write", Kind::kStream, std::nullopt, kNoHostRate));
    return terms;
  }
  // Inter-chip transfers go over PCIe at 30 B/cycle "for both reads and writes" ("DMA Engine" >
  // Inter-Chip Transfers).
  const std::set<int64_t> src_chips = ChipsOf(*src);
  const std::set<int64_t> dst_chips = ChipsOf(*dst);
  if (!std::includes(src_chips.begin(), src_chips.end(), dst_chips.begin(), dst_chips.end())) {
    return {Term("dma pcie", Kind::kStream, CeilDiv(bytes, kPcieBytesPerCycle),
                 absl::StrFormat("%d B / %d B/cycle (inter-chip PCIe)", bytes, kPcieBytesPerCycle))};
  }
  // Reads and writes on the same memory take turns: HBM to HBM on one chip costs "64 read
  // requests + 64 write requests" (Example 1), DM to DM in one cluster "reads and writes must
  // proceed sequentially" (Example 3). Otherwise they overlap: "max(65536, 65536) + 500"
  // (Example 2).
  if (src->tier == dst->tier && Meet(PortsOf(*src), PortsOf(*dst))) {
    const CycleTerm read = ReadTerm(src->tier, bytes, requests);
    const CycleTerm write = WriteTerm(dst->tier, bytes, requests);
    return {Term("dma read + write", Kind::kStream, *read.cycles + *write.cycles,
                 absl::StrCat(read.formula, " + ", write.formula, ", sequential on one memory"))};
  }
  return {ReadTerm(src->tier, bytes, requests), WriteTerm(dst->tier, bytes, requests)};
}

// ---- Pipelines --------------------------------------------------------------------------------

// The terms of each stage, from the Performance / Cycle Estimation sections of its engine. `in`
// is the stream the stage receives.
struct StageTerms {
  const StreamShape& in;
  std::vector<CycleTerm>& out;

  void operator()(const BeginStage&) const {}

  // Fetch Engine > Batching: #cycles = Time::SIZE x ceil(Packet::SIZE / fetch_size).
  void operator()(const FetchStage& s) const {
    const AccessPlan& a = s.access;
    out.push_back(Term("fetch", Kind::kStream, a.cycles,
                       absl::StrFormat("Time::SIZE x ceil(packet %d B / fetch_size %d B) = %d x %d",
                                       a.packet_bytes, a.access_bytes, s.sequencer.time_size(),
                                       a.accesses_per_packet)));
  }

  // Switch Engine > Cycle Estimation: ring_size x input_time x cycles_per_packet (32-byte flits).
  void operator()(const SwitchStage& s) const {
    const int64_t flits = CeilDiv(CeilDiv(in.packet.size() * WireBits(in.dtype), 8), kFlitBytes);
    out.push_back(Term("switch", Kind::kStream, s.cycles,
                       absl::StrFormat("ring_size x input_time x flits_per_packet = %d x %d x %d",
                                       s.ring_size, in.time.size(), flits)));
  }

  void operator()(const CollectStage&) const {
    out.push_back(Term("collect", Kind::kStream, std::nullopt,
                       "no cycle formula in the manual (Collect Engine)"));
  }

  void operator()(const AlignStage&) const {
    out.push_back(Term("align", Kind::kLatency, std::nullopt,
                       "Stream Adapter / TRF Sequencer overhead: no formula in the manual "
                       "(Contraction Engine > Performance)"));
  }

  // Reducer > Performance: "Tree depth determines spatial reduction latency: i4 depth 7 (128
  // elements in 7 cycles), i8/f8 depth 6, bf16 depth 5"; shallower trees complete faster.
  void operator()(const ContractStage& s) const {
    out.push_back(Term("contract", Kind::kLatency, s.depth,
                       absl::StrFormat("spatial tree depth %d (of %d) cycles", s.depth, s.max_depth)));
  }

  // Reducer > Performance: "Each accumulation cycle processes one packet"; the Reducer consumes
  // one 64-byte MAC packet every cycle (TRF Sequencer), so the contracted Time sets the pace.
  void operator()(const AccumulateStage& s) const {
    out.push_back(Term("accumulate", Kind::kStream, s.in.time.size(),
                       absl::StrFormat("one packet per cycle: Time::SIZE = %d", s.in.time.size())));
  }

  void operator()(const CastStage& s) const {
    if (s.kind != CastKind::kEngine) {
      out.push_back(Term("commit_cast", Kind::kStream, std::nullopt,
                         "Commit Adapter stage, \"nearly zero cost\" like truncating; no cycle formula in the "
                         "manual (Commit Engine > Adapter Stage Costs)"));
      return;
    }
    out.push_back(Term("cast", Kind::kStream, std::nullopt,
                       "pass-through, \"never the pipeline bottleneck\"; no cycle formula in the "
                       "manual (Cast Engine)"));
  }

  // Transpose Engine > Cycle Calculation.
  void operator()(const TransposeStage& s) const {
    const int64_t input = s.in_rows * s.packets_per_col;
    const int64_t output = s.out_rows;
    const std::string formula =
        s.double_buffered
            ? absl::StrFormat("double buffering (in_cols %d <= 16): input %d + (n %d - 1) x max(%d, %d) "
                              "+ output %d",
                              s.in_cols, input, s.iterations, input, output, output)
            : absl::StrFormat("single buffering (in_cols %d > 16): n %d x (input %d + output %d)",
                              s.in_cols, s.iterations, input, output);
    out.push_back(Term("transpose", Kind::kStream, s.cycles, formula));
  }

  // Commit Engine: writes of commit_size bytes, ceil(commit_in / commit_size) per time step
  // ("Full-flit commit: 3 cycles vs 15", Kernel Examples > Fetch and Commit Engine).
  void operator()(const CommitStage& s) const {
    const AccessPlan& a = s.access;
    out.push_back(Term("commit", Kind::kStream, a.cycles,
                       absl::StrFormat("Time::SIZE x ceil(commit_in %d B / commit_size %d B) = %d x %d",
                                       a.packet_bytes, a.access_bytes, s.sequencer.time_size(),
                                       CeilDiv(a.packet_bytes, a.access_bytes))));
  }

  // Vector Engine > Performance: Logic, Fxp and Clip take 8 elements (one flit) per cycle, the
  // Float Cluster 4, so a pass with a Way4 region moves half a flit per cycle; "each ALU
  // introduces one cycle of latency".
  void operator()(const VectorStage& s) const {
    const int64_t flits = s.in.time.size() * CeilDiv(s.in.packet.size() * 32, kFlitBytes * 8);
    const int64_t per_flit = s.has_way4() ? 2 : 1;
    out.push_back(Term("vector", Kind::kStream, flits * per_flit,
                       absl::StrFormat("Time::SIZE x flits x %d (%s) = %d x %d", per_flit,
                                       s.has_way4() ? "Way4 region" : "Way8", s.in.time.size(),
                                       CeilDiv(s.in.packet.size() * 32, kFlitBytes * 8))));
    out.push_back(Term("vector", Kind::kLatency, s.alus_used(),
                       absl::StrFormat("one cycle per ALU: %d ALUs", s.alus_used())));
  }

  void operator()(const RegisterLoadStage& s) const {
    out.push_back(Term(s.to_trf ? "to_trf" : "to_vrf", Kind::kStream, std::nullopt,
                       "no cycle formula in the manual for register-file loads"));
  }
};

// The stream a stage hands on (rearranging stages and the engines that change the shape).
StreamShape OutputOf(const Stage& stage, const StreamShape& in) {
  struct Out {
    const StreamShape& in;
    StreamShape operator()(const BeginStage& s) const { return s.shape; }
    StreamShape operator()(const FetchStage& s) const { return s.out; }
    StreamShape operator()(const SwitchStage& s) const { return s.out; }
    StreamShape operator()(const CollectStage& s) const { return s.out; }
    StreamShape operator()(const AlignStage& s) const { return s.out; }
    StreamShape operator()(const ContractStage& s) const { return s.out; }
    StreamShape operator()(const AccumulateStage& s) const { return s.out; }
    StreamShape operator()(const CastStage& s) const { return s.out; }
    StreamShape operator()(const TransposeStage& s) const { return s.out; }
    StreamShape operator()(const CommitStage&) const { return in; }
    StreamShape operator()(const RegisterLoadStage&) const { return in; }
    StreamShape operator()(const VectorStage& s) const { return s.out; }
  };
  return std::visit(Out{in}, stage);
}

// The output's range restricted to the slices a commit's Slice Bitmap enables ("Commit Engine" >
// Slice Bitmap: the others keep what their DM holds).
MemoryRange EnabledSlices(MemoryRange range, const SliceBitmap& slices) {
  std::vector<Interval> kept;
  for (const Interval& i : range.units) {
    for (int64_t u = i.begin; u < i.end; ++u) {
      if (slices.enabled(static_cast<int>(u % kSlicesPerCluster))) kept.push_back({u, u + 1});
    }
  }
  range.units = Coalesce(std::move(kept));
  return range;
}

void AddRange(std::vector<MemoryRange>& ranges, const TensorRef& ref) {
  if (std::optional<MemoryRange> range = RangeOf(ref)) ranges.push_back(std::move(*range));
}

}  // namespace

const char* ResourceName(Resource resource) {
  switch (resource) {
    case Resource::kMain:
      return "main";
    case Resource::kSub:
      return "sub";
    case Resource::kDma:
      return "dma";
  }
  return "?";
}

Resource ResourceOf(ContextKind context) {
  switch (context) {
    case ContextKind::kMain:
      return Resource::kMain;
    case ContextKind::kSub:
      return Resource::kSub;
    case ContextKind::kTdma:
    case ContextKind::kPdma:
      return Resource::kDma;
  }
  return Resource::kDma;
}

std::string CycleTerm::ToString() const {
  return absl::StrFormat("%-16s %-7s %8s  %s", stage, kind == Kind::kStream ? "stream" : "latency",
                         cycles ? absl::StrCat(*cycles) : "-", formula);
}

// How the terms combine. The Tensor Unit is "a pipeline of eight specialized engines" through
// which data flows every cycle ("Computing Tensors"); its stages overlap, so the slowest one bounds
// the op: the Transpose Engine's "input and output happen simultaneously, so the slower one
// determines the cycle count", fetch and commit are held together by "back-pressure" ("Memory
// Performance" > Bank Starvation), the Cast Engine is "never the pipeline bottleneck", and split
// reduce overlaps fetch with the Vector Engine ("Kernel Examples" > Split Reduce > Cycle
// Analysis). Latencies add: the Contraction Engine's "total latency is the sum of these stages"
// (Contraction Engine > Performance), and a DMA's start-up precedes its transfer ("500 cycles
// (initial latency) + 256 x 256 cycles (data transfer)", DMA Engine > DMA Sequencer Internals).
std::optional<int64_t> CombineCycleTerms(const std::vector<CycleTerm>& terms) {
  std::optional<int64_t> slowest, latency;
  for (const CycleTerm& t : terms) {
    if (!t.cycles) continue;
    if (t.kind == Kind::kStream) {
      slowest = std::max(slowest.value_or(0), *t.cycles);
    } else {
      latency = latency.value_or(0) + *t.cycles;
    }
  }
  if (!slowest && !latency) return std::nullopt;
  return slowest.value_or(0) + latency.value_or(0);
}

std::string OpDescription::ToString() const {
  const std::string noun = !what.empty() ? what : resource == Resource::kDma ? "move" : "pipeline";
  std::string text = absl::StrCat(ResourceName(resource), " ", noun,
                                  ": ", cycles ? absl::StrCat(*cycles, " cycles") : "no cycle estimate",
                                  "\n");
  for (const CycleTerm& t : terms) absl::StrAppend(&text, "  ", t.ToString(), "\n");
  for (const MemoryRange& r : reads) absl::StrAppend(&text, "  reads  ", r.ToString(), "\n");
  for (const MemoryRange& r : writes) absl::StrAppend(&text, "  writes ", r.ToString(), "\n");
  return text;
}

OpDescription Describe(const DmaOp& op) {
  OpDescription d;
  if (const MemsetFill* fill = op.fill()) {
    // Generate Mode: the sub context's ITOS commands, one 32-bit word each, reading nothing.
    // The manual gives no ITOS throughput; the estimate takes the Commit Engine's, one DM write
    // per cycle in every slice at once (its formula Time::SIZE x ceil(commit_in / commit_size)
    // with one 32-bit word per write), and says so.
    d.resource = ResourceOf(op.context);
    d.what = "memset";
    if (std::optional<MemoryRange> dst = RangeOf(op.dst)) d.writes.push_back(*dst);
    d.terms.push_back(Term("memset", Kind::kStream, fill->words_per_slice,
                           absl::StrFormat("%d ITOS writes of 32 bits per slice, one per cycle, slices in parallel "
                                           "(derived: the manual gives no ITOS throughput, so the Commit Engine's "
                                           "one write per cycle, Time::SIZE x ceil(commit_in / commit_size); Commit "
                                           "Engine > Sub-Context Operations)",
                                           fill->words_per_slice)));
    d.cycles = CombineCycleTerms(d.terms);
    return d;
  }
  d.resource = ResourceOf(op.context);
  std::optional<MemoryRange> src = RangeOf(op.src);
  std::optional<MemoryRange> dst = RangeOf(op.dst);
  if (src) d.reads.push_back(*src);
  if (dst) d.writes.push_back(*dst);
  // The stream carries every destination byte once (the move is destination-driven); a move to the
  // host carries the source's bytes.
  const int64_t bytes = dst ? dst->total_bytes() : src ? src->total_bytes() : 0;
  d.terms.push_back(Term("dma startup", Kind::kLatency, kDmaStartupCycles,
                         "~500 cycles per DMA command (DMA Engine > Startup Latency)"));
  for (CycleTerm& t : TransferTerms(src, dst, bytes, CountDmaRequests(op))) d.terms.push_back(std::move(t));
  d.cycles = CombineCycleTerms(d.terms);
  return d;
}

OpDescription Describe(const PipelineOp& op) {
  OpDescription d;
  d.resource = ResourceOf(op.context);
  for (const TensorRef& in : op.inputs) AddRange(d.reads, in);
  if (op.weights) AddRange(d.reads, *op.weights);
  for (const TensorRef& vrf : op.vrf_operands) AddRange(d.reads, vrf);
  // An indirect fetch reads its index, and (the rows unknown until it runs) the whole table.
  if (op.fetch_index) AddRange(d.reads, *op.fetch_index);
  AddRange(d.writes, op.output);
  StreamShape shape;
  for (const Stage& stage : op.stages) {
    std::visit(StageTerms{shape, d.terms}, stage);
    if (const auto* commit = std::get_if<CommitStage>(&stage); commit && !commit->slices.all()) {
      for (MemoryRange& w : d.writes) w = EnabledSlices(std::move(w), commit->slices);
    }
    shape = OutputOf(stage, shape);
  }
  d.cycles = CombineCycleTerms(d.terms);
  return d;
}

OpDescription Describe(const Op& op) {
  return std::visit([](const auto& body) { return Describe(body); }, op.body);
}

}  // namespace visa
