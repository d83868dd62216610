// The Vector Engine's intra-slice block on the interpreter: element by element, in step order,
// each op through its scalar function (dsl/vector_ops.h), operands and the stash laid out by
// index in the stream's current layout, execution ids carried with the data.
#include <bit>

#include "absl/strings/str_cat.h"
#include "dsl/status_macros.h"
#include "dsl/vector_branch_ids.h"
#include "dsl/vector_tags.h"
#include "interp/index_move.h"
#include "interp/stages.h"
#include "interp/unwritten_reads.h"
#include "interp/vector_reduce_stage.h"
#include "runtime/transfer.h"

namespace visa::interp {
namespace {

// An image in the stream's current layout, by index (missing axes broadcast, padding zero).
absl::StatusOr<std::vector<uint32_t>> Relaid(const HostTensor& image, const Mapping& layout) {
  ASSIGN_OR_RETURN(HostTensor moved, MoveByIndex(image, layout, {.allow_drop = true}));
  return moved.ToBits();
}

struct Flow {
  DType dtype;
  Mapping layout;
  std::vector<uint32_t> bits;
  std::vector<uint8_t> tags;

  absl::StatusOr<HostTensor> Image() const { return HostTensor::FromBits(dtype, layout, bits); }
  absl::StatusOr<HostTensor> TagImage() const {
    return HostTensor::FromBits(DType::kI8, layout, std::vector<uint32_t>(tags.begin(), tags.end()));
  }
};

absl::Status Relayout(Flow& flow, const StreamShape& out) {
  const Mapping layout = out.Full();
  ASSIGN_OR_RETURN(HostTensor image, flow.Image());
  ASSIGN_OR_RETURN(HostTensor tag_image, flow.TagImage());
  ASSIGN_OR_RETURN(HostTensor moved, MoveByIndex(image, layout));
  ASSIGN_OR_RETURN(HostTensor moved_tags, MoveByIndex(tag_image, layout));
  flow.bits = moved.ToBits();
  std::vector<uint32_t> tags = moved_tags.ToBits();
  flow.tags.assign(tags.begin(), tags.end());
  flow.layout = layout;
  return absl::OkStatus();
}

absl::Status ApplyOp(Flow& flow, const VeStep& step, const std::vector<HostTensor>& vrf_images,
                     const std::optional<HostTensor>& stash) {
  const VeFnInfo& info = Info(step.fn);
  // Each slot's operand0 per position: a constant, or an image in the current layout.
  std::vector<std::vector<uint32_t>> images(step.slots.size());
  for (size_t k = 0; k < step.slots.size(); ++k) {
    const VeOperand& o = step.slots[k].o0;
    if (o.kind == VeOperand::Kind::kVrf) {
      ASSIGN_OR_RETURN(images[k], Relaid(vrf_images[o.vrf], flow.layout));
    } else if (o.kind == VeOperand::Kind::kStash) {
      VISA_CHECK(stash.has_value(), "a stash read follows its write");
      ASSIGN_OR_RETURN(images[k], Relaid(*stash, flow.layout));
    }
  }
  const bool conversion = step.fn == VeFn::kFxpToFp || step.fn == VeFn::kFpToFxp;
  for (size_t p = 0; p < flow.bits.size(); ++p) {
    const uint8_t tag = flow.tags[p];
    uint32_t v[3] = {flow.bits[p], 0, 0};
    if (step.guard && !step.guard->Admits(tag)) continue;
    if (!step.slots.empty()) {
      size_t k = 0;
      while (k < step.slots.size() && !step.slots[k].guard.Admits(tag)) ++k;
      if (k == step.slots.size()) continue;  // no slot claims the element: it passes unchanged
      const VeSlot& slot = step.slots[k];
      v[1] = slot.o0.kind == VeOperand::Kind::kConstant ? slot.o0.bits : images[k][p];
      v[2] = slot.o1.value_or(0);
    }
    const uint32_t a = v[step.args.from[0]];
    const uint32_t b = conversion ? static_cast<uint32_t>(step.param) : info.arity > 1 ? v[step.args.from[1]] : 0;
    const uint32_t c = info.arity > 2 ? v[step.args.from[2]] : 0;
    flow.bits[p] = info.fn(a, b, c);
  }
  flow.dtype = step.out.dtype;
  return absl::OkStatus();
}

// out[p] = fn(group 0, group 1) at p, by the step's mode; the merged ids are 0.
absl::Status ApplyZip(Flow& flow, const VeStep& step, const std::string& axis) {
  const Mapping out = step.out.Full();
  ASSIGN_OR_RETURN(std::vector<int64_t> from, ZipPositions(flow.layout, out, axis));
  std::vector<uint32_t> bits(static_cast<size_t>(out.size()), 0);
  for (int64_t p = 0; p < out.size(); ++p) {
    if (from[2 * p] < 0) continue;
    const uint32_t v[2] = {flow.bits[from[2 * p]], flow.bits[from[2 * p + 1]]};
    bits[p] = Info(step.fn).fn(v[step.args.from[0]], v[step.args.from[1]], 0);
  }
  flow.bits = std::move(bits);
  flow.tags.assign(flow.bits.size(), 0);
  flow.layout = out;
  flow.dtype = step.out.dtype;
  return absl::OkStatus();
}

absl::StatusOr<std::vector<uint8_t>> BranchTags(const Flow& flow, const VectorStage& stage,
                                                 const std::vector<HostTensor>& vrf_images) {
  const BranchMode& mode = stage.branch;
  std::vector<uint8_t> tags(flow.bits.size(), 0);
  if (mode.kind == BranchMode::Kind::kAxisToggle) return AxisToggleTags(flow.layout, mode.axis);
  if (mode.kind == BranchMode::Kind::kValidCount) return ValidCountIds(stage.in, mode.axis);
  if (mode.kind == BranchMode::Kind::kVrf) {
    ASSIGN_OR_RETURN(std::vector<uint32_t> values, Relaid(vrf_images[mode.vrf], flow.layout));
    return VrfIds(values, flow.layout, stage.vrfs[mode.vrf].text);
  }
  if (mode.kind == BranchMode::Kind::kComparison) {
    for (size_t p = 0; p < tags.size(); ++p) {
      for (int i = 0; i < 4; ++i) tags[p] |= static_cast<uint8_t>(mode.cmp[i].Holds(flow.bits[p]) << i);
    }
  }
  return tags;
}

}  // namespace

absl::StatusOr<HostTensor> VectorStream(const HostTensor& stream, const VectorStage& stage,
                                        const std::vector<DeviceTensor>& vrfs) {
  Flow flow{stage.in.dtype, stage.in.Full(), stream.ToBits(), {}};
  VISA_CHECK(static_cast<int64_t>(flow.bits.size()) == flow.layout.size(), "the vector stage reads its input layout");
  // InterFirst: the branch ids are taken on the reducer's output (below), not on the input.
  const bool inter_first = !stage.steps.empty() && stage.steps.front().kind == VeStep::Kind::kInterReduce;
  std::vector<HostTensor> vrf_images;
  for (size_t i = 0; i < vrfs.size(); ++i) {
    RETURN_IF_ERROR(CheckStreamReads({vrfs[i]}, std::nullopt, vrfs[i].full_mapping(),
                                     absl::StrCat("a Vector Engine operand (vrf#", i, ")")));
    ASSIGN_OR_RETURN(HostTensor image, ReadImage(vrfs[i], vrfs[i].full_mapping()));
    vrf_images.push_back(std::move(image));
  }
  if (inter_first) {
    flow.tags.assign(flow.bits.size(), 0);
  } else {
    ASSIGN_OR_RETURN(flow.tags, BranchTags(flow, stage, vrf_images));
  }
  std::optional<HostTensor> stash;
  for (const VeStep& step : stage.steps) {
    switch (step.kind) {
      case VeStep::Kind::kOp: RETURN_IF_ERROR(ApplyOp(flow, step, vrf_images, stash)); break;
      case VeStep::Kind::kSplit:
      case VeStep::Kind::kTrim:
      case VeStep::Kind::kConcat:
      case VeStep::Kind::kPad: RETURN_IF_ERROR(Relayout(flow, step.out)); break;
      case VeStep::Kind::kStash: {
        ASSIGN_OR_RETURN(HostTensor image, flow.Image());
        stash = std::move(image);
        break;
      }
      case VeStep::Kind::kReinterpret: flow.dtype = step.out.dtype; break;
      case VeStep::Kind::kZip: RETURN_IF_ERROR(ApplyZip(flow, step, stage.unzip_axis)); break;
      case VeStep::Kind::kIntraReduce:
        // A reduced lane's execution id is 0 here (the manual does not say which input's it keeps).
        flow.bits = IntraSliceReduceStream(*step.intra_reduce, flow.bits);
        flow.layout = step.out.Full();
        flow.tags.assign(flow.bits.size(), 0);
        break;
      case VeStep::Kind::kInterReduce:
        // Entering the reducer resets the ids; InterFirst takes the branch's ids on its output.
        flow.bits = InterSliceReduceStream(*step.inter_reduce, flow.bits);
        flow.layout = step.out.Full();
        flow.tags.assign(flow.bits.size(), 0);
        if (inter_first) {
          ASSIGN_OR_RETURN(flow.tags, BranchTags(flow, stage, vrf_images));
        }
        break;
    }
  }
  return flow.Image();
}

}  // namespace visa::interp
