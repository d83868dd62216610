// OpDescription: what one recorded op needs from the scheduler's point of view — the resource it
// occupies, its cycle estimate from the manual's formulas (term by term) and the device bytes it
// reads and writes (manual, "Scheduling": resource conflicts and RAW / WAR / WAW hazards).
//
// Cycle model. The Tensor Unit's engines stream concurrently, so a pipeline takes as long as its
// slowest stage plus the fill latencies of the stages that delay the stream (see
// CombineCycleTerms). A DMA costs its ~500-cycle start-up plus its bytes over the slowest side's
// bandwidth. A stage the manual gives no formula for is listed with no cycles and the reason; the
// estimate then covers only the stages that have one. Formulas that are not one stage's plan
// (DMA requests, HBM channels, the Reducer, and the Vector Engine's throughput and ALU latency,
// which a Vector Engine stage's term takes from) live in runtime/cycle_model.h.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "runtime/memory_range.h"
#include "runtime/program.h"

namespace visa {

// The scheduler's three resources (manual, "Scheduling" > Hardware Resources).
enum class Resource { kMain, kSub, kDma };
const char* ResourceName(Resource resource);  // "main", "sub", "dma"
// The track a context's ops take: its own for main and sub, the one DMA engine's for tdma and pdma.
Resource ResourceOf(ContextKind context);

struct CycleTerm {
  enum class Kind {
    kStream,   // cycles the stage needs to pass the whole stream; stages overlap (max)
    kLatency,  // a delay added once: pipeline fill, DMA start-up (sum)
  };
  std::string stage;               // "fetch", "switch", "contract", "dma startup", ...
  Kind kind = Kind::kStream;
  std::optional<int64_t> cycles;   // nullopt: the manual gives no formula for this stage
  std::string formula;             // the formula with its numbers, or why there is none
  std::string ToString() const;
};

// max(stream terms) + sum(latency terms), over the terms that have cycles; nullopt when none has.
std::optional<int64_t> CombineCycleTerms(const std::vector<CycleTerm>& terms);

struct OpDescription {
  Resource resource = Resource::kMain;
  std::optional<int64_t> cycles;
  std::vector<CycleTerm> terms;
  std::vector<MemoryRange> reads, writes;
  std::string what;  // what the op is when neither a move nor a pipeline ("memset")
  // "main pipeline: 69 cycles" and one line per term, read and write.
  std::string ToString() const;
};

OpDescription Describe(const Op& op);
OpDescription Describe(const DmaOp& op);
OpDescription Describe(const PipelineOp& op);

}  // namespace visa
