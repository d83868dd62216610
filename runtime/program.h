// Program: the IR a traced kernel becomes — an ordered list of DMA moves and Tensor Unit pipelines,
// each with its resolved mappings and the hardware configuration derived for it.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "dsl/cast_engine.h"
#include "dsl/collect_engine.h"
#include "dsl/commit_engine.h"
#include "dsl/contraction_engine.h"
#include "dsl/dma_descriptor.h"
#include "dsl/fetch_engine.h"
#include "dsl/indirect_access.h"
#include "dsl/memset_fill.h"
#include "dsl/register_file_load.h"
#include "dsl/stream.h"
#include "dsl/switch_engine.h"
#include "dsl/transpose_engine.h"
#include "dsl/vector_engine.h"
#include "runtime/tensor.h"

namespace visa {

// A tensor as an op refers to it: printed form plus what a backend needs to find its bytes.
struct TensorRef {
  std::string text;  // DeviceTensor::ToString()
  int64_t id = 0;
  // The handle as traced: its placement, and for a view its window (what a replay rebinds).
  // Absent for host images, which live outside kernels.
  std::optional<DeviceTensor> handle;
};

// What a DMA op does (manual, "DMA Engine"): each kind holds only the fields it needs, so a
// gather without an index or a memset with descriptors cannot be written.
struct DmaMove {  // src to dst between memories, a relayout in general
  // The read / write sequencer pairs it runs from (runtime/move_descriptors.h), or why none
  // expresses it.
  std::optional<DmaDescriptors> descriptors = std::nullopt;
  std::string no_descriptors = {};
};
struct DmaGather {  // rows index[k] of `src` (the table) to rows k of `dst` (dsl/indirect_access.h)
  IndirectLoop loop;
  TensorRef index;
};
struct DmaScatter {  // rows k of `src` to rows index[k] of `dst`, whose other rows `base` gives
  IndirectLoop loop;
  TensorRef index;
  TensorRef base;
};
struct DmaMemset {  // `dst` (also `src`, read by nothing) gets the value (dsl/memset_fill.h)
  MemsetFill fill;
};
using DmaWork = std::variant<DmaMove, DmaGather, DmaScatter, DmaMemset>;

struct DmaOp {
  ContextKind context = ContextKind::kTdma;  // tdma or pdma; sub for a memset
  TensorRef src, dst;
  DmaWork work = DmaMove{};
  std::string operation = {};  // the named operation this move is part of ("ChipShuffle ..."), or empty
  uint64_t serial = 0;  // the op's identity once recorded (AssignSerial)

  // One kind's fields, or null when the op is of another kind.
  const DmaDescriptors* descriptors() const;  // a move's, when it has them
  const IndirectLoop* indirect() const;       // a gather's or a scatter's
  const TensorRef* index() const;             // a gather's or a scatter's
  const TensorRef* base() const;              // a scatter's
  const MemsetFill* fill() const;             // a memset's
};

struct BeginStage {
  StreamShape shape;
  std::optional<Mapping> interleave;
};

using Stage = std::variant<BeginStage, FetchStage, SwitchStage, CollectStage, CastStage, TransposeStage,
                           CommitStage, RegisterLoadStage, AlignStage, ContractStage, AccumulateStage,
                           VectorStage>;

struct PipelineOp {
  ContextKind context = ContextKind::kMain;
  std::vector<TensorRef> inputs;
  std::optional<TensorRef> weights;  // the TRF tensor an `align` pairs the stream with
  std::vector<TensorRef> vrf_operands;  // the VRF tensors a vector stage's operands read (VeOperand::vrf)
  std::optional<TensorRef> fetch_index;  // an indirect fetch's index tensor (FetchStage::indirect)
  std::vector<Stage> stages;
  TensorRef output;
  std::string operation;  // the named operation the pipeline implements ("ParallelCopy", ...), or empty
  uint64_t serial = 0;  // the op's identity once recorded (AssignSerial)
};

struct Op {
  std::variant<DmaOp, PipelineOp> body;
};

// Gives a recorded op its identity in this process (DmaOp / PipelineOp `serial`; 0 for an op built
// by hand or not recorded yet). A recorded op never changes, and a copy of a Program keeps its
// ops' serials, so a backend may keep what it derived from an op by this number and reuse it each
// time the op runs again (jit/ready_moves.h). The number is not part of the program's text.
void AssignSerial(Op& op);

struct Program {
  std::vector<Op> ops;
  std::vector<TensorRef> inputs;   // the kernel's inputs, in order (set by Trace)
  std::vector<TensorRef> outputs;  // the kernel's outputs, in order

  // One line per DMA, an indented block per pipeline with every derived configuration.
  std::string ToText() const;
  // FNV-1a of the text form: stable across runs and builds (the JIT cache key).
  uint64_t Hash() const;
};

std::string DescribeStage(const Stage& stage);
// One op's block of Program::ToText ("op 3: pipeline main" and its stages).
std::string OpText(const Op& op, size_t index);

}  // namespace visa
