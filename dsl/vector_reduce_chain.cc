// The reductions as steps of a vector chain: where vector_intra_slice_reduce and
// vector_inter_slice_reduce may stand (manual, "Ordering", "Entry and Transition", the Inter-Slice
// Block's "You can reach this block in two ways"), and the configuration each records.
#include "absl/strings/str_cat.h"
#include "dsl/status_macros.h"
#include "dsl/vector_engine.h"

namespace visa {
namespace {

// The planner's message, with the call it answers (the rule is already named by the planner).
absl::Status AtCall(const absl::Status& status, const std::string& call) {
  if (status.ok()) return status;
  return absl::Status(status.code(), absl::StrCat(status.message(), " (at `", call, "`)"));
}

bool MayEnterInterSlice(VeStage stage) {
  switch (stage) {
    case VeStage::kBranch:
    case VeStage::kLogic:
    case VeStage::kFxp:
    case VeStage::kFxpToFp:
    case VeStage::kWiden:
    case VeStage::kFpToFxp:
    case VeStage::kClip: return true;
    default: return false;
  }
}

}  // namespace

absl::Status VectorChain::AfterInterSlice(const char* call, VeStage target) const {
  if (!inter_done_ || order_ != Order::kIntraFirst) return absl::OkStatus();
  if (target == VeStage::kFilter || target == VeStage::kOutput) return absl::OkStatus();
  return absl::FailedPreconditionError(absl::StrCat(
      "Vector Engine ordering: IntraFirst runs the Intra-Slice Block, then the Inter-Slice Block; after "
      "vector_inter_slice_reduce only vector_filter or vector_final may follow, not `", call, "` (the ",
      VeStageName(target), " stage); reduce first (vector_init().vector_inter_slice_reduce(...)) for post-processing"));
}

std::pair<StreamShape, Narrowing> VectorChain::NarrowedFrom() const {
  for (size_t i = config_.steps.size(); i-- > 0;) {
    const VeStep& step = config_.steps[i];
    if (step.kind != VeStep::Kind::kSplit && step.kind != VeStep::Kind::kTrim) continue;
    const StreamShape way8 = i > 0 ? config_.steps[i - 1].out : config_.in;
    return {way8, step.kind == VeStep::Kind::kSplit ? Narrowing::kSplit : Narrowing::kTrim};
  }
  VISA_CHECK(false, "a Way4 stream was narrowed by a recorded step");
  return {config_.in, Narrowing::kTrim};
}

absl::Status VectorChain::IntraSliceReduce(const std::string& axis, const Mapping& out_time,
                                           const Mapping& out_packet, VeReduceOp op, ReducePadding padding) {
  const char* call = "vector_intra_slice_reduce";
  RETURN_IF_ERROR(NotPaired(call));
  RETURN_IF_ERROR(Enter(call, VeStage::kIntraSliceReduce));
  const std::string at = absl::StrCat(call, "::<", axis, ", [", out_time.ToString(), "], [", out_packet.ToString(),
                                      "]>(", VeReduceOpName(op), ")");
  const auto [way8, narrowing] = NarrowedFrom();
  absl::StatusOr<IntraSliceReduceStage> plan =
      PlanIntraSliceReduce(way8, narrowing, shape_, axis, out_time, out_packet, op, padding);
  if (!plan.ok()) return AtCall(plan.status(), at);
  RETURN_IF_ERROR(Claim(call, VeReduceOpName(op), VeAlu::kReduceAccTree));
  VeStep step;
  step.kind = VeStep::Kind::kIntraReduce;
  step.stage = VeStage::kIntraSliceReduce;
  step.call = call;
  step.alu = VeAlu::kReduceAccTree;
  step.out = plan->out;
  step.intra_reduce = std::make_shared<const IntraSliceReduceStage>(*std::move(plan));
  shape_ = step.out;
  config_.steps.push_back(std::move(step));
  return absl::OkStatus();
}

absl::Status VectorChain::InterSliceReduce(const Mapping& out_slice, const Mapping& out_time, VeReduceOp op) {
  const char* call = "vector_inter_slice_reduce";
  const std::string at = absl::StrCat(call, "::<[", out_slice.ToString(), "], [", out_time.ToString(), "]>(",
                                      VeReduceOpName(op), ")");
  if (inter_done_) {
    return absl::FailedPreconditionError(absl::StrCat(
        "Vector Engine ordering: the Inter-Slice Block runs once per pass, and this pass already reduced across "
        "slices (at `", at, "`)"));
  }
  if (paired_ || zipped_) {
    return absl::FailedPreconditionError(absl::StrCat(
        "Two-Group Mode: the Inter-Slice Block is not reachable from two-group mode (at `", at, "`)"));
  }
  if (entered_) {
    if (!MayEnterInterSlice(stage_) || way_ != VeWay::kWay8) {
      return absl::FailedPreconditionError(absl::StrCat(
          "Inter-Slice Block: in the IntraFirst path, vector_inter_slice_reduce() is available only from the Way8 "
          "stages Branch, Logic, Fxp, FxpToFp, Widen, FpToFxp and Clip, not after the ", VeStageName(stage_),
          " stage", way_ == VeWay::kWay4 ? " (the stream is in Way4: widen first)" : "", " (at `", at, "`)"));
    }
  }
  absl::StatusOr<InterSliceReduceStage> plan = PlanInterSliceReduce(shape_, out_slice, out_time, op);
  if (!plan.ok()) return AtCall(plan.status(), at);
  order_ = entered_ ? Order::kIntraFirst : Order::kInterFirst;
  inter_done_ = true;
  // Entering the reducer resets the ALU set and the execution ids, and drops the stash.
  used_.reset();
  stash_ = StashState::kFresh;
  VeStep step;
  step.kind = VeStep::Kind::kInterReduce;
  step.stage = stage_;
  step.call = call;
  step.out = plan->out;
  step.inter_reduce = std::make_shared<const InterSliceReduceStage>(*std::move(plan));
  shape_ = step.out;
  config_.steps.push_back(std::move(step));
  return absl::OkStatus();
}

}  // namespace visa
