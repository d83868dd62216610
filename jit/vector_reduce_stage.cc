// Reduction steps of a vector stage on the JIT: the step's compiled reduction, parallel over blocks.
#include "jit/vector_reduce_stage.h"

#include <algorithm>
#include <memory>
#include <mutex>

#include "absl/container/flat_hash_map.h"

#include "dsl/status_macros.h"
#include "interp/vector_reduce.h"
#include "interp/vector_reduce_stage.h"
#include "jit/parallel.h"

namespace visa::jit {
namespace {

IntraReduceKernelSpec IntraSpecOf(const IntraSliceReduceStage& stage) {
  IntraReduceKernelSpec spec;
  spec.op = stage.op;
  spec.f32 = stage.in.dtype == DType::kF32;
  spec.packet_reduced = stage.packet_reduced;
  spec.valid_counts = stage.vcg.has_value();
  spec.slices = stage.in.slice.size();
  spec.out_steps = stage.out.time.size();
  spec.out_time_of = stage.out_time_of;
  return spec;
}

InterReduceKernelSpec InterSpecOf(const InterSliceReduceStage& stage) {
  InterReduceKernelSpec spec;
  spec.op = stage.op;
  spec.f32 = stage.in.dtype == DType::kF32;
  spec.in_positions = stage.in.slice.size() * stage.in.time.size();
  spec.sources = stage.sources;
  return spec;
}

// The Way4 valid counts of the first `rows` slice positions, row by row (the VCG's, as the
// interpreter takes them).
std::vector<int32_t> ValidCountTable(const IntraSliceReduceStage& stage, int64_t rows) {
  std::vector<int32_t> table;
  if (!stage.vcg) return table;
  table.reserve(static_cast<size_t>(rows * stage.in.time.size()));
  for (int64_t slice = 0; slice < rows; ++slice) {
    for (int count : interp::IntraSliceValidCounts(stage, slice)) table.push_back(count);
  }
  return table;
}

// The table of a stage, computed on its first run: walking the VCG's counters for every slice costs
// far more than the reduce itself (a 256-slice softmax row reduce: 50 us against 1 us). Entries are
// keyed by the stage object and hold it weakly, so a stage freed and another allocated at its
// address is never served the old table. A run over its live slices alone asks for their rows
// only: an eager run records new stages every time, and a whole table of a stage on one slice of
// 256 was 255 rows no one reads (4 MiB of fresh pages for moe_layer's index sums).
std::shared_ptr<const std::vector<int32_t>> ValidCountsOf(const std::shared_ptr<const IntraSliceReduceStage>& stage,
                                                          int64_t rows) {
  struct Entry {
    std::weak_ptr<const IntraSliceReduceStage> stage;
    int64_t rows = 0;
    std::shared_ptr<const std::vector<int32_t>> table;
  };
  static std::mutex mutex;
  static absl::flat_hash_map<const IntraSliceReduceStage*, Entry> tables;
  {
    std::lock_guard<std::mutex> lock(mutex);
    auto it = tables.find(stage.get());
    if (it != tables.end() && it->second.stage.lock() == stage && it->second.rows >= rows) return it->second.table;
  }
  auto table = std::make_shared<const std::vector<int32_t>>(ValidCountTable(*stage, rows));
  std::lock_guard<std::mutex> lock(mutex);
  if (tables.size() >= 256) absl::erase_if(tables, [](const auto& entry) { return entry.second.stage.expired(); });
  tables[stage.get()] = Entry{stage, rows, table};
  return table;
}

int ThreadsForBlocks(int64_t elements, int64_t blocks, int threads) {
  return static_cast<int>(std::max<int64_t>(1, std::min<int64_t>(ThreadsFor(elements, threads), blocks)));
}

}  // namespace

absl::StatusOr<ReadyReduce> ReadyReduceStep(KernelCache& kernels, const VeStep& step, int64_t live_blocks) {
  VISA_CHECK(step.kind == VeStep::Kind::kIntraReduce || step.kind == VeStep::Kind::kInterReduce,
             "a reduce step is a reduction");
  ReadyReduce ready;
  ready.out_elements = step.out.Full().size();
  if (step.kind == VeStep::Kind::kIntraReduce) {
    const IntraSliceReduceStage& stage = *step.intra_reduce;
    ready.in_elements = stage.in.Full().size();
    ASSIGN_OR_RETURN(ready.intra, kernels.IntraReduce(IntraSpecOf(stage)));
    ready.blocks = interp::IntraSliceBlocks(stage);
    ready.slices = stage.in.slice.size();
    ready.valid_rows = live_blocks < 0 ? ready.slices : std::min(ready.slices, live_blocks);
    ready.valid = ValidCountsOf(step.intra_reduce, ready.valid_rows);
    ready.out_steps = stage.out.time.size();
  } else {
    const InterSliceReduceStage& stage = *step.inter_reduce;
    ready.in_elements = stage.in.Full().size();
    ASSIGN_OR_RETURN(ready.inter, kernels.InterReduce(InterSpecOf(stage)));
    ready.blocks = interp::InterSliceBlocks(stage);
  }
  ready.threads = ThreadsForBlocks(ready.in_elements, ready.blocks, kernels.threads());
  return ready;
}

void RunReadyReduce(KernelCache& kernels, const ReadyReduce& ready, const std::vector<uint8_t>& data,
                    std::vector<uint8_t>& out, int64_t blocks) {
  VISA_CHECK(static_cast<int64_t>(data.size()) == 4 * ready.in_elements, "a reduction reads its input layout");
  out.resize(static_cast<size_t>(4 * ready.out_elements));
  RunReadyReduce(kernels, ready, data.data(), out.data(), blocks);
}

void RunReadyReduce(KernelCache& kernels, const ReadyReduce& ready, const uint8_t* data, uint8_t* out,
                    int64_t blocks) {
  const int64_t run = blocks < 0 ? ready.blocks : std::min(blocks, ready.blocks);
  VISA_CHECK(ready.intra == nullptr || std::min(run, ready.slices) <= ready.valid_rows,
             "a reduction's valid counts cover the blocks it runs");
  const int threads = static_cast<int>(std::max<int64_t>(1, std::min<int64_t>(ready.threads, run)));
  const auto* in = reinterpret_cast<const uint32_t*>(data);
  auto* lanes = reinterpret_cast<uint32_t*>(out);
  if (ready.intra != nullptr) {
    Parallel(run, threads, [&](int64_t begin, int64_t end) {
      // Beyond eight output steps the kernel tracks contributions here (fewer stay in values).
      uint8_t small[64];
      std::vector<uint8_t> large(ready.out_steps > 64 ? static_cast<size_t>(ready.out_steps) : 0);
      ready.intra(in, lanes, ready.valid->data(), large.empty() ? small : large.data(), begin, end);
    }, 1);
  } else {
    Parallel(run, threads, [&](int64_t begin, int64_t end) { ready.inter(in, lanes, begin, end); }, 1);
  }
  ++kernels.stats().compiled_reductions;
}

absl::StatusOr<std::vector<uint8_t>> RunReduceStep(KernelCache& kernels, const VeStep& step,
                                                   const std::vector<uint8_t>& data) {
  ASSIGN_OR_RETURN(ReadyReduce ready, ReadyReduceStep(kernels, step));
  std::vector<uint8_t> out;
  RunReadyReduce(kernels, ready, data, out);
  return out;
}

absl::Status CompileReduceStep(KernelCache& kernels, const VeStep& step) {
  if (step.kind == VeStep::Kind::kIntraReduce) return kernels.IntraReduce(IntraSpecOf(*step.intra_reduce)).status();
  VISA_CHECK(step.kind == VeStep::Kind::kInterReduce, "a reduce step is a reduction");
  return kernels.InterReduce(InterSpecOf(*step.inter_reduce)).status();
}

}  // namespace visa::jit
