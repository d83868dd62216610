// Backend: what executes a recorded op. The executor (executor.h) resolves an op's tensors on the
// device and hands the backend the whole op: a Tensor Unit pipeline (begin .. commit / to_trf /
// to_vrf, every stage with its derived configuration) or a DMA move. How a backend evaluates a
// pipeline inside is its own affair: the interpreter stage by stage (pipeline_walk.h), a compiler
// as one unit. Rules are checked when the op is planned, never here; a backend fails only on what
// it cannot run (an Unimplemented error naming it) or on a broken internal invariant.
#pragma once

#include <optional>
#include <vector>

#include "absl/status/status.h"
#include "runtime/program.h"
#include "runtime/tensor.h"

namespace visa {

// A pipeline's tensors as they exist on the device it runs on.
struct PipelineTensors {
  std::vector<DmTensor> inputs;      // one, or two alternating along the interleave axis
  std::optional<TrfTensor> weights;  // what `align` pairs the stream with
  // Where the final stage writes: a new tensor already claimed at the recorded placement, or the
  // target of a commit_view. Only its live positions change (and only on enabled slices).
  DeviceTensor output;
  std::vector<DeviceTensor> vrf_operands = {};  // a vector stage's VRF operands, as PipelineOp::vrf_operands
  std::optional<DeviceTensor> fetch_index = std::nullopt;  // an indirect fetch's index (PipelineOp::fetch_index)
};

// A DMA move's tensors: `dst` is claimed at the recorded placement and receives every element of
// `src` (a tensor or a view) by tensor index.
struct DmaTensors {
  DeviceTensor src;
  DeviceTensor dst;
  std::optional<DeviceTensor> index = std::nullopt;  // a gather's or scatter's index tensor (DmaOp::indirect)
  std::optional<DeviceTensor> base = std::nullopt;   // a scatter's tensor scattered into (DmaOp::base)
};

class Backend {
 public:
  virtual ~Backend() = default;
  virtual const char* name() const = 0;
  // False for a backend that only records (tracing): then the Context moves no data at all, host
  // transfers included.
  virtual bool executes() const { return true; }

  virtual absl::Status Run(const PipelineOp& op, const PipelineTensors& tensors) = 0;
  // The default is the shared transfer path (transfer.h).
  virtual absl::Status Run(const DmaOp& op, const DmaTensors& tensors);
};

}  // namespace visa
