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
#include "dsl/fetch_engine.h"
#include "dsl/register_file_load.h"
#include "dsl/stream.h"
#include "dsl/switch_engine.h"
#include "dsl/transpose_engine.h"

namespace visa {

// A tensor as an op refers to it: printed form plus what a backend needs to find its bytes.
struct TensorRef {
  std::string text;  // DeviceTensor::ToString()
  int64_t id = 0;
};

struct DmaOp {
  std::string context;  // "tdma" or "pdma"
  TensorRef src, dst;
};

struct BeginStage {
  StreamShape shape;
  std::optional<Mapping> interleave;
};

using Stage = std::variant<BeginStage, FetchStage, SwitchStage, CollectStage, CastStage, TransposeStage,
                           CommitStage, RegisterLoadStage>;

struct PipelineOp {
  TuContextKind context = TuContextKind::kMain;
  std::vector<TensorRef> inputs;
  std::vector<Stage> stages;
  TensorRef output;
};

struct Op {
  std::variant<DmaOp, PipelineOp> body;
};

struct Program {
  std::vector<Op> ops;

  // One line per DMA, an indented block per pipeline with every derived configuration.
  std::string ToText() const;
  // FNV-1a of the text form: stable across runs and builds (the JIT cache key).
  uint64_t Hash() const;
};

std::string DescribeStage(const Stage& stage);

}  // namespace visa
