// Vector stages on the JIT: segments of element ops, relayouts, operand images.
#include "jit/vector_stage.h"

#include <cstring>

#include "absl/strings/str_cat.h"
#include "dsl/status_macros.h"
#include "dsl/vector_branch_ids.h"
#include "dsl/vector_tags.h"
#include "jit/element_op.h"
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
    case BranchMode::Kind::kAxisToggle: return AxisToggleTags(layout, stage.branch.axis);
    case BranchMode::Kind::kValidCount: return ValidCountIds(stage.in, stage.branch.axis);
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

absl::StatusOr<HostTensor> RunVectorStage(KernelCache& kernels, HostTensor stream, const VectorStage& stage,
                                          const std::vector<DeviceTensor>& vrfs) {
  Mapping layout = stage.in.Full();
  std::vector<uint8_t> data = std::move(stream).TakeBytes();
  VISA_CHECK(static_cast<int64_t>(data.size()) == 4 * layout.size(), "the vector stage reads its input layout");
  std::vector<Staged> vrf_data;
  for (const DeviceTensor& vrf : vrfs) {
    ASSIGN_OR_RETURN(Staged staged, Staged::Read(vrf));
    vrf_data.push_back(std::move(staged));
  }
  std::vector<uint8_t> tags(static_cast<size_t>(layout.size()), 0);
  if (!InterFirst(stage)) {
    ASSIGN_OR_RETURN(tags, BranchIds(kernels, stage, layout, vrfs, vrf_data));
  }
  std::vector<uint8_t> stash;
  Mapping stash_layout;
  for (const Action& action : ActionsOf(stage)) {
    if (!action.segment.empty()) {
      std::vector<std::vector<uint8_t>> images;
      for (const ImageSource& source : action.segment.images) {
        if (source.stash) {
          ASSIGN_OR_RETURN(std::vector<uint8_t> image, Moved(kernels, DType::kI32, layout, stash_layout, stash.data(),
                                                             stash_layout.size(), true));
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
      ASSIGN_OR_RETURN(VectorFn fn, kernels.Vector(action.segment.spec));
      uint32_t* values = reinterpret_cast<uint32_t*>(data.data());
      Parallel(layout.size(), ThreadsFor(layout.size(), kernels.threads()),
               [&](int64_t begin, int64_t end) { fn(values, tags.data(), bases.data(), begin, end); }, 4096);
    }
    if (action.step == nullptr) continue;
    if (action.step->kind == VeStep::Kind::kStash) {
      stash = data;
      stash_layout = layout;
      continue;
    }
    const Mapping to = action.step->out.Full();
    if (action.step->kind == VeStep::Kind::kIntraReduce || action.step->kind == VeStep::Kind::kInterReduce) {
      ASSIGN_OR_RETURN(data, RunReduceStep(kernels, *action.step, data));
      tags.assign(static_cast<size_t>(to.size()), 0);  // reduced lanes carry id 0 (as on the interpreter)
      layout = to;
      if (action.step->kind == VeStep::Kind::kInterReduce && InterFirst(stage) &&
          stage.branch.kind == BranchMode::Kind::kAxisToggle) {
        ASSIGN_OR_RETURN(tags, AxisToggleTags(layout, stage.branch.axis));
      }
      continue;
    }
    if (action.step->kind == VeStep::Kind::kZip) {
      ASSIGN_OR_RETURN(std::vector<int64_t> from, ZipPositions(layout, to, stage.unzip_axis));
      ASSIGN_OR_RETURN(ZipFn fn, kernels.Zip(ZipSpecOf(*action.step)));
      std::vector<uint8_t> merged = Zeroed(DType::kI32, to.size());
      uint32_t* out = reinterpret_cast<uint32_t*>(merged.data());
      const uint32_t* in = reinterpret_cast<const uint32_t*>(data.data());
      Parallel(to.size(), ThreadsFor(to.size(), kernels.threads()),
               [&](int64_t begin, int64_t end) { fn(out, in, from.data(), begin, end); }, 4096);
      data = std::move(merged);
      tags.assign(static_cast<size_t>(to.size()), 0);  // the merged stream's ids are 0
      layout = to;
      continue;
    }
    ASSIGN_OR_RETURN(data, Moved(kernels, DType::kI32, to, layout, data.data(), layout.size(), false));
    ASSIGN_OR_RETURN(tags, Moved(kernels, DType::kI8, to, layout, tags.data(), layout.size(), false));
    layout = to;
  }
  return HostTensor::FromBytes(stage.out.dtype, layout, std::move(data));
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
