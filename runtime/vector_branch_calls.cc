// Builder calls for the Vector Engine's Vrf branch mode and its Filter stage (rules in
// dsl/vector_branch_ids.h and dsl/vector_filter.cc).
#include "absl/strings/str_cat.h"
#include "dsl/status_macros.h"
#include "runtime/tensor_unit.h"

namespace visa {

Stream Stream::vector_intra_slice_branch(const VrfTensor& execution_ids) && {
  return std::move(*this).Vector("vector_intra_slice_branch", [&](VectorChain& chain) -> absl::Status {
    ASSIGN_OR_RETURN(int index, AddVrfOperand(execution_ids));
    return chain.Branch(BranchMode::Vrf(index));
  });
}

Stream Stream::vector_filter(const TagGuard& keep) && {
  return std::move(*this).Vector("vector_filter", [&](VectorChain& chain) { return chain.Filter(keep); });
}

}  // namespace visa
