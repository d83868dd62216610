// The Vector Engine's Filter stage (manual, "Filter (vector_filter)": "Applies an execution mask
// based on a branch condition to filter output flits") and the Vrf branch mode's operand rule.
//
// The manual gives Filter a place (after Clip, before Output; Way8; i32 and f32; no ALU; "stash()
// and filter() are unavailable while paired and after _zip") but not what it does to the data.
// Decided here: the filter keeps an element whose execution id its guard admits and drops every
// other one, which leaves 0 bits in its place; the stream keeps its shape (no compaction, so the
// mapping still says where each element is). It is recorded as a guarded unary step that writes
// 0 where the guard does not admit the id, so both backends run it as any guarded op.
#include "absl/strings/str_cat.h"
#include "dsl/status_macros.h"
#include "dsl/vector_engine.h"

namespace visa {

absl::Status VectorChain::Filter(const TagGuard& keep) {
  RETURN_IF_ERROR(NotPaired("vector_filter"));
  if (keep.dead()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "Filter: `vector_filter` keeps the elements whose execution id its guard admits, but ", keep.ToString(),
        " admits no execution id at all: it would drop every element"));
  }
  if (keep.unconditional()) {
    return absl::InvalidArgumentError(
        "Filter: `vector_filter`'s guard admits every execution id, so it would drop nothing; leave the stage out");
  }
  const TagGuard drop{keep.bits, !keep.negate};
  return AddOp("vector_filter", "Filter", VeStage::kFilter, VeFn::kFilterOut, std::nullopt, shape_.dtype, 1,
               ArgsOf(UnaryArgMode::kMode0), {}, shape_.dtype, 0, drop);
}

absl::Status VectorChain::CheckVrfIds(const BranchMode& mode) const {
  if (mode.vrf < 0 || mode.vrf >= static_cast<int>(config_.vrfs.size())) {
    return absl::InvalidArgumentError(
        "Branch: BranchMode::Vrf loads the ExecutionIds from a VRF tensor: pass it, "
        "vector_intra_slice_branch(vrf_ids)");
  }
  const VrfOperandInfo& vrf = config_.vrfs[mode.vrf];
  if (vrf.dtype != DType::kI32) {
    return absl::InvalidArgumentError(absl::StrCat("Branch: BranchMode::Vrf reads ExecutionIds (0-15) from an i32 VRF "
                                                   "tensor, ", vrf.text, " is ", Name(vrf.dtype)));
  }
  return absl::OkStatus();
}

}  // namespace visa
