// ChipRangePipeline: a Tensor Unit pipeline that is SPMD over the chips, run for a range of chips
// alone. A rank of an mpirun launch (mpi/mpi_backend.h) runs only its own chips' part of such a
// pipeline, so the pipeline's time and the SRAM pages (DM, TRF, VRF) it writes divide by the ranks.
//
// How: one pipeline per chip of the range, the op relabelled to that chip as a pipeline traced on
// one-chip views is (runtime/chip_view.h): every tensor becomes its chip view (`# c + Chip + # n`
// at the Chip level) and every stream shape's Chip level the same (on the JIT, which addresses a
// stream's units as the device's) or the one-value axis `Chip` (on the interpreter, which moves by
// index alone; see OneChipLevel in the .cc for why each). Both backends run the relabelled op unchanged (no loop of
// theirs learns of chip ranges). Each (op, chip) keeps its relabelled op and its views' placements,
// with an identity of its own (a serial from a range recorded ops never reach), so a backend that
// keeps plans by an op's serial and its tensors' placements (the JIT) finds them again at the next
// launch.
//
// Rules (CheckSplitsByChip; Run refuses otherwise): every tensor the pipeline touches (inputs,
// weights, output, VRF operands, fetch index) has the same single axis over every chip of the
// device as its Chip level, every stream shape (begin, each stage's, the Vector Engine's steps and
// reductions, the TRF and VRF operands' descriptions) has that axis as its Chip level, and the axis
// appears nowhere else (an interleave, branch, unzip or reduce axis): each chip then computes on
// its own slices alone and nothing crosses chips.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "runtime/backend.h"
#include "runtime/device.h"
#include "runtime/program.h"

namespace visa::mpi {

// OK when the pipeline runs by chip; otherwise an InvalidArgument naming the rule and the offending
// tensor or mapping.
absl::Status CheckSplitsByChip(const PipelineOp& op, const PipelineTensors& tensors);

class ChipRangePipelines {
 public:
  // The parts on chips [first, first + count) of a pipeline that runs by chip, on `backend`; the
  // other chips' bytes of the output are not written. An error naming the rule when the pipeline
  // does not run by chip or the range leaves the device's chips.
  absl::Status Run(Backend& backend, const PipelineOp& op, const PipelineTensors& tensors, int first, int count);

  // (op, chip) parts kept for the next launch.
  int64_t kept() const { return static_cast<int64_t>(parts_.size()); }
  // Parts run again from what was kept, and parts made (relabelled, views placed).
  int64_t reused() const { return reused_; }
  int64_t made() const { return made_; }

 private:
  // One chip's pipeline: the relabelled op and its tensors' views, made from tensors placed at
  // `sources` (a relaunch binds tensors placed alike to the same placement objects).
  struct Part {
    PipelineOp op;
    std::vector<std::shared_ptr<const Placement>> sources;
    std::vector<DeviceTensor> views;
  };
  absl::Status RunChip(Backend& backend, const PipelineOp& op, const PipelineTensors& tensors, int chip);
  // `view` held by a tensor of a device of its own: a kept view must not hold its tensor's lease,
  // which would keep that tensor alive (a launch refuses to write over a live tensor).
  absl::StatusOr<DeviceTensor> Detached(const DeviceTensor& view);

  absl::flat_hash_map<std::pair<uint64_t, int>, Part> parts_;
  int64_t reused_ = 0, made_ = 0;
  std::unique_ptr<Device> anchor_device_;
  std::optional<HbmTensor> anchor_;
};

}  // namespace visa::mpi
