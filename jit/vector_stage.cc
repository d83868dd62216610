// Vector stages on the JIT: segments of element ops, relayouts, operand images.
#include "jit/vector_stage.h"

#include <cstring>

#include "absl/strings/str_cat.h"
#include "dsl/status_macros.h"
#include "dsl/vector_branch_ids.h"
#include "dsl/vector_tags.h"
#include "jit/element_op.h"
#include "jit/layout_tables.h"
#include "jit/parallel.h"
#include "jit/staging.h"
#include "jit/vector_reduce_stage.h"

namespace visa::jit {
namespace {

// Where an operand image comes from: a VRF operand (by index) or the stash.
struct ImageSource {
  bool stash = false;
  int vrf = -1;
};

struct Segment {
  VectorKernelSpec spec;
  std::vector<ImageSource> images;
  bool empty() const { return spec.ops.empty() && !spec.compare; }
};

// The stage as actions: a segment to run, then the step that ended it (a relayout or a stash
// write; none at the end).
struct Action {
  Segment segment;
  const VeStep* step = nullptr;
};

// InterFirst: the reducer comes first, and the branch's ids are taken on its output.
bool InterFirst(const VectorStage& stage) {
  return !stage.steps.empty() && stage.steps.front().kind == VeStep::Kind::kInterReduce;
}

std::vector<Action> ActionsOf(const VectorStage& stage) {
  std::vector<Action> actions;
  Segment current;
  const bool compare = stage.branch.kind == BranchMode::Kind::kComparison;
  if (compare && !InterFirst(stage)) current.spec.compare = stage.branch.cmp;
  for (const VeStep& step : stage.steps) {
    if (step.kind == VeStep::Kind::kReinterpret) continue;  // bits are bits
    if (step.kind != VeStep::Kind::kOp) {
      actions.push_back(Action{std::move(current), &step});
      current = Segment{};
      if (compare && &step == &stage.steps.front() && InterFirst(stage)) current.spec.compare = stage.branch.cmp;
      continue;
    }
    VectorKernelSpec::Op op;
    const VeFnInfo& info = Info(step.fn);
    op.fn = step.fn;
    op.symbol = info.symbol;
    op.arity = info.arity;
    op.from = step.args.from;
    op.conversion = step.fn == VeFn::kFxpToFp || step.fn == VeFn::kFpToFxp;
    op.param = step.param;
    if (step.guard) op.guard = AdmitMask(*step.guard);
    for (const VeSlot& slot : step.slots) {
      VectorKernelSpec::Slot s;
      s.admits = AdmitMask(slot.guard);
      s.o1 = slot.o1.value_or(0);
      if (slot.o0.kind == VeOperand::Kind::kConstant) {
        s.constant = slot.o0.bits;
      } else {
        s.image = static_cast<int>(current.images.size());
        current.images.push_back(ImageSource{slot.o0.kind == VeOperand::Kind::kStash, slot.o0.vrf});
      }
      op.slots.push_back(s);
    }
    current.spec.ops.push_back(std::move(op));
  }
  actions.push_back(Action{std::move(current), nullptr});
  return actions;
}

ZipKernelSpec ZipSpecOf(const VeStep& step) {
  return ZipKernelSpec{Info(step.fn).symbol, {step.args.from[0], step.args.from[1]}};
}

std::vector<uint8_t> Zeroed(DType dtype, int64_t positions) {
  return std::vector<uint8_t>(static_cast<size_t>(StorageBytes(dtype, positions)), 0);
}

// `src` (laid out by `from`) moved by index into `to` (padding and unheld positions zero).
absl::StatusOr<std::vector<uint8_t>> Moved(KernelCache& kernels, DType dtype, const Mapping& to, const Mapping& from,
                                           const uint8_t* src, int64_t src_positions, bool allow_drop) {
  std::vector<uint8_t> bytes = Zeroed(dtype, to.size());
  RETURN_IF_ERROR(kernels.Move(to, from, CopyOp(dtype), bytes.data(), to.size(), src, src_positions, allow_drop)
                      .status());
  return bytes;
}

// The execution ids the stage's branch mode gives every position of `layout` (Comparison ids are
// computed by the first segment's kernel from the values).
absl::StatusOr<std::vector<uint8_t>> BranchIds(KernelCache& kernels, const VectorStage& stage, const Mapping& layout,
                                               const std::vector<DeviceTensor>& vrfs,
                                               const std::vector<Staged>& vrf_data) {
  switch (stage.branch.kind) {
    case BranchMode::Kind::kAxisToggle: {
      ASSIGN_OR_RETURN(std::shared_ptr<const std::vector<uint8_t>> ids, KeptAxisToggleTags(layout, stage.branch.axis));
      return *ids;
    }
    case BranchMode::Kind::kValidCount: {
      ASSIGN_OR_RETURN(std::shared_ptr<const std::vector<uint8_t>> ids, KeptValidCountIds(stage.in, stage.branch.axis));
      return *ids;
    }
    case BranchMode::Kind::kVrf: {
      const int k = stage.branch.vrf;
      ASSIGN_OR_RETURN(std::vector<uint8_t> bytes, Moved(kernels, DType::kI32, layout, vrfs[k].full_mapping(),
                                                         vrf_data[k].data(), vrf_data[k].positions(), true));
      std::vector<uint32_t> values(static_cast<size_t>(layout.size()));
      std::memcpy(values.data(), bytes.data(), 4 * values.size());
      return VrfIds(values, layout, stage.vrfs[k].text);
    }
    default: return std::vector<uint8_t>(static_cast<size_t>(layout.size()), 0);
  }
}

}  // namespace

namespace {

// A move between two host images kept ready (a loop nest), else planned on each run (a run list).
struct ImageMove {
  Mapping to, from;
  DType dtype = DType::kI32;
  bool allow_drop = false;
  std::optional<ReadyNest> ready;
};

absl::StatusOr<ImageMove> ImageMoveOf(KernelCache& kernels, DType dtype, const Mapping& to, const Mapping& from,
                                      int64_t from_positions, bool allow_drop) {
  ImageMove move{to, from, dtype, allow_drop, std::nullopt};
  ASSIGN_OR_RETURN(move.ready,
                   kernels.ReadyBetweenBuffers(to, from, CopyOp(dtype), to.size(), from_positions, allow_drop));
  return move;
}

// `src` moved by index into a zeroed image of `move.to` (padding and unheld positions zero).
absl::StatusOr<std::vector<uint8_t>> RunImageMove(KernelCache& kernels, const ImageMove& move, const uint8_t* src,
                                                  int64_t src_positions) {
  if (!move.ready) return Moved(kernels, move.dtype, move.to, move.from, src, src_positions, move.allow_drop);
  std::vector<uint8_t> bytes = Zeroed(move.dtype, move.to.size());
  kernels.Count(*move.ready);
  move.ready->Run(bytes.data(), src);
  return bytes;
}

// Everything a vector stage's run derives from its configuration alone: the actions with their
// compiled kernels, the relayouts ready to run, the zip positions and the execution ids the branch
// mode gives (unless they come from a VRF's values). Made on the stage's first run and kept for the
// op's later runs (op_memo.h).
struct StagePlan {
  struct Step {
    VectorFn fn = nullptr;  // the segment's loop, null for an empty segment
    std::vector<std::optional<ImageMove>> images;  // per image (VRF operands: from their staged layout)
    std::optional<ReadyReduce> reduce;
    ZipFn zip = nullptr;
    std::vector<int64_t> zip_from;
    std::optional<ImageMove> data_move, tag_move;  // a relayout
    Mapping to;  // the layout after the step
  };
  std::vector<Action> actions;
  std::vector<Step> steps;  // per action
  std::optional<std::vector<uint8_t>> tags;  // the first ids, unless a VRF's values give them
  std::optional<std::vector<uint8_t>> toggle_after_inter;  // AxisToggle ids after an InterFirst reduce
};

absl::StatusOr<StagePlan> PlanStage(KernelCache& kernels, const VectorStage& stage,
                                    const std::vector<DeviceTensor>& vrfs) {
  StagePlan plan;
  Mapping layout = stage.in.Full();
  if (InterFirst(stage)) {
    plan.tags = std::vector<uint8_t>(static_cast<size_t>(layout.size()), 0);
  } else if (stage.branch.kind != BranchMode::Kind::kVrf) {
    ASSIGN_OR_RETURN(std::vector<uint8_t> tags, BranchIds(kernels, stage, layout, vrfs, {}));
    plan.tags = std::move(tags);
  }
  Mapping stash_layout;
  plan.actions = ActionsOf(stage);
  for (const Action& action : plan.actions) {
    StagePlan::Step step;
    if (!action.segment.empty()) {
      for (const ImageSource& source : action.segment.images) {
        if (source.stash) {
          ASSIGN_OR_RETURN(ImageMove move, ImageMoveOf(kernels, DType::kI32, layout, stash_layout, stash_layout.size(), true));
          step.images.push_back(std::move(move));
        } else {
          step.images.push_back(std::nullopt);  // the staged VRF's size is known at run time
        }
      }
      ASSIGN_OR_RETURN(step.fn, kernels.Vector(action.segment.spec));
    }
    if (action.step != nullptr && action.step->kind != VeStep::Kind::kStash) {
      const Mapping to = action.step->out.Full();
      const VeStep::Kind kind = action.step->kind;
      if (kind == VeStep::Kind::kIntraReduce || kind == VeStep::Kind::kInterReduce) {
        ASSIGN_OR_RETURN(step.reduce, ReadyReduceStep(kernels, *action.step));
        if (kind == VeStep::Kind::kInterReduce && InterFirst(stage) &&
            stage.branch.kind == BranchMode::Kind::kAxisToggle) {
          ASSIGN_OR_RETURN(std::shared_ptr<const std::vector<uint8_t>> tags, KeptAxisToggleTags(to, stage.branch.axis));
          plan.toggle_after_inter = *tags;
        }
      } else if (kind == VeStep::Kind::kZip) {
        ASSIGN_OR_RETURN(std::shared_ptr<const std::vector<int64_t>> from, KeptZipPositions(layout, to, stage.unzip_axis));
        step.zip_from = *from;
        ASSIGN_OR_RETURN(step.zip, kernels.Zip(ZipSpecOf(*action.step)));
      } else {
        ASSIGN_OR_RETURN(step.data_move, ImageMoveOf(kernels, DType::kI32, to, layout, layout.size(), false));
        ASSIGN_OR_RETURN(step.tag_move, ImageMoveOf(kernels, DType::kI8, to, layout, layout.size(), false));
      }
      step.to = to;
      layout = to;
    } else if (action.step != nullptr) {
      stash_layout = layout;
      step.to = layout;
    } else {
      step.to = layout;
    }
    plan.steps.push_back(std::move(step));
  }
  return plan;
}

}  // namespace

absl::StatusOr<HostTensor> RunVectorStage(KernelCache& kernels, HostTensor stream, const VectorStage& stage,
                                          const std::vector<DeviceTensor>& vrfs, uint64_t serial,
                                          uint64_t stage_index) {
  ASSIGN_OR_RETURN(std::shared_ptr<const StagePlan> plan,
                   kernels.memo().Get<StagePlan>(serial, MemoPart(stage_index, 0, 1),
                                                 [&] { return PlanStage(kernels, stage, vrfs); }));
  Mapping layout = stage.in.Full();
  std::vector<uint8_t> data = std::move(stream).TakeBytes();
  VISA_CHECK(static_cast<int64_t>(data.size()) == 4 * layout.size(), "the vector stage reads its input layout");
  std::vector<Staged> vrf_data;
  for (const DeviceTensor& vrf : vrfs) {
    ASSIGN_OR_RETURN(Staged staged, Staged::Read(vrf));
    vrf_data.push_back(std::move(staged));
  }
  std::vector<uint8_t> tags;
  if (plan->tags) {
    tags = *plan->tags;
  } else {
    ASSIGN_OR_RETURN(tags, BranchIds(kernels, stage, layout, vrfs, vrf_data));
  }
  std::vector<uint8_t> stash;
  Mapping stash_layout;
  int64_t positions = layout.size();
  for (size_t a = 0; a < plan->actions.size(); ++a) {
    const Action& action = plan->actions[a];
    const StagePlan::Step& step = plan->steps[a];
    if (step.fn != nullptr) {
      std::vector<std::vector<uint8_t>> images;
      for (size_t k = 0; k < action.segment.images.size(); ++k) {
        const ImageSource& source = action.segment.images[k];
        if (source.stash) {
          ASSIGN_OR_RETURN(std::vector<uint8_t> image, RunImageMove(kernels, *step.images[k], stash.data(),
                                                                    static_cast<int64_t>(stash.size() / 4)));
          images.push_back(std::move(image));
        } else {
          const DeviceTensor& vrf = vrfs[source.vrf];
          ASSIGN_OR_RETURN(std::vector<uint8_t> image,
                           Moved(kernels, DType::kI32, layout, vrf.full_mapping(), vrf_data[source.vrf].data(),
                                 vrf_data[source.vrf].positions(), true));
          images.push_back(std::move(image));
        }
      }
      std::vector<const uint32_t*> bases;
      for (const std::vector<uint8_t>& image : images) bases.push_back(reinterpret_cast<const uint32_t*>(image.data()));
      uint32_t* values = reinterpret_cast<uint32_t*>(data.data());
      VectorFn fn = step.fn;
      Parallel(positions, ThreadsFor(positions, kernels.threads()),
               [&](int64_t begin, int64_t end) { fn(values, tags.data(), bases.data(), begin, end); }, 4096);
    }
    if (action.step == nullptr) continue;
    if (action.step->kind == VeStep::Kind::kStash) {
      stash = data;
      stash_layout = layout;
      continue;
    }
    const Mapping& to = step.to;
    if (step.reduce) {
      std::vector<uint8_t> out;
      RunReadyReduce(kernels, *step.reduce, data, out);
      data = std::move(out);
      tags.assign(static_cast<size_t>(to.size()), 0);  // reduced lanes carry id 0 (as on the interpreter)
      if (plan->toggle_after_inter && action.step->kind == VeStep::Kind::kInterReduce) tags = *plan->toggle_after_inter;
    } else if (step.zip != nullptr) {
      std::vector<uint8_t> merged = Zeroed(DType::kI32, to.size());
      uint32_t* out = reinterpret_cast<uint32_t*>(merged.data());
      const uint32_t* in = reinterpret_cast<const uint32_t*>(data.data());
      const int64_t* from = step.zip_from.data();
      ZipFn fn = step.zip;
      Parallel(to.size(), ThreadsFor(to.size(), kernels.threads()),
               [&](int64_t begin, int64_t end) { fn(out, in, from, begin, end); }, 4096);
      data = std::move(merged);
      tags.assign(static_cast<size_t>(to.size()), 0);  // the merged stream's ids are 0
    } else {
      ASSIGN_OR_RETURN(data, RunImageMove(kernels, *step.data_move, data.data(), positions));
      ASSIGN_OR_RETURN(tags, RunImageMove(kernels, *step.tag_move, tags.data(), positions));
    }
    layout = to;
    positions = to.size();
  }
  return HostTensor::FromBytes(stage.out.dtype, layout, std::move(data));
}

StageSegments SegmentsOf(const VectorStage& stage) {
  StageSegments segments;
  bool stashed = false;  // a stash step since the last spec
  for (Action& action : ActionsOf(stage)) {
    if (!action.segment.empty()) {
      std::vector<int> vrfs;
      for (const ImageSource& source : action.segment.images) vrfs.push_back(source.stash ? -1 : source.vrf);
      segments.specs.push_back(std::move(action.segment.spec));
      segments.image_vrfs.push_back(std::move(vrfs));
      segments.stash_before.push_back(stashed);
      stashed = false;
    }
    if (action.step != nullptr) segments.between.push_back(action.step);
    stashed = stashed || (action.step != nullptr && action.step->kind == VeStep::Kind::kStash);
  }
  return segments;
}

absl::Status CompileVectorStage(KernelCache& kernels, const VectorStage& stage, const std::vector<TensorRef>& vrfs) {
  Mapping layout = stage.in.Full();
  Mapping stash_layout;
  if (stage.branch.kind == BranchMode::Kind::kVrf && vrfs[stage.branch.vrf].handle) {
    RETURN_IF_ERROR(kernels.Compile(layout, vrfs[stage.branch.vrf].handle->full_mapping(), CopyOp(DType::kI32), true));
  }
  for (const Action& action : ActionsOf(stage)) {
    if (!action.segment.empty()) {
      for (const ImageSource& source : action.segment.images) {
        if (source.stash) {
          RETURN_IF_ERROR(kernels.Compile(layout, stash_layout, CopyOp(DType::kI32), true));
        } else if (vrfs[source.vrf].handle) {
          RETURN_IF_ERROR(kernels.Compile(layout, vrfs[source.vrf].handle->full_mapping(), CopyOp(DType::kI32), true));
        }
      }
      RETURN_IF_ERROR(kernels.Vector(action.segment.spec).status());
    }
    if (action.step == nullptr) continue;
    if (action.step->kind == VeStep::Kind::kStash) {
      stash_layout = layout;
      continue;
    }
    const Mapping to = action.step->out.Full();
    if (action.step->kind == VeStep::Kind::kIntraReduce || action.step->kind == VeStep::Kind::kInterReduce) {
      RETURN_IF_ERROR(CompileReduceStep(kernels, *action.step));
      layout = to;
      continue;
    }
    if (action.step->kind == VeStep::Kind::kZip) {
      RETURN_IF_ERROR(kernels.Zip(ZipSpecOf(*action.step)).status());
      layout = to;
      continue;
    }
    RETURN_IF_ERROR(kernels.Compile(to, layout, CopyOp(DType::kI32), false));
    RETURN_IF_ERROR(kernels.Compile(to, layout, CopyOp(DType::kI8), false));
    layout = to;
  }
  return absl::OkStatus();
}

}  // namespace visa::jit
