// Two-group mode's per-group ternary and FpDiv calls (manual, "Two-Group Mode": per-group ops in
// Way4 take one operand per group; a ternary group operand is (constant or VRF tensor, f32)).
#include "absl/strings/str_cat.h"
#include "dsl/status_macros.h"
#include "runtime/tensor_unit.h"

namespace visa {

Stream Stream::vector_fp_ternary(FpTernaryOp op, std::optional<std::pair<VeRhs, float>> group0,
                                 std::optional<std::pair<VeRhs, float>> group1) && {
  if (!group0 && !group1) return std::move(*this);  // no group runs it: no ALU, nothing recorded
  return std::move(*this).Vector("vector_fp_ternary", [&](VectorChain& chain) -> absl::Status {
    std::optional<VeOperand> operand0[2];
    std::optional<float> operand1[2];
    const std::optional<std::pair<VeRhs, float>>* groups[2] = {&group0, &group1};
    for (int g = 0; g < 2; ++g) {
      if (!*groups[g]) continue;
      ASSIGN_OR_RETURN(VeBranched slots, Slots(VeBranchOperand((*groups[g])->first)));
      operand0[g] = slots.slots.front().o0;
      operand1[g] = (*groups[g])->second;
    }
    VeBranched slots = chain.Groups(operand0[0], operand0[1], operand1[0], operand1[1]);
    return chain.FpTernary(op, ArgsOf(TernaryArgMode::kMode012), slots);
  });
}

Stream Stream::vector_fp_div(FpDivBinaryOp op, std::optional<VeRhs> group0, std::optional<VeRhs> group1) && {
  if (!group0 && !group1) return std::move(*this);
  return std::move(*this).Vector("vector_fp_div", [&](VectorChain& chain) -> absl::Status {
    ASSIGN_OR_RETURN(VeBranched slots, GroupSlots(group0, group1));
    return chain.FpDiv(op, ArgsOf(BinaryArgMode::kMode01), slots);
  });
}

}  // namespace visa
