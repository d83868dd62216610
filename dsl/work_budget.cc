// WorkBudget: the error a mapping operation reports when it runs out of steps.
#include "dsl/work_budget.h"

#include "absl/strings/str_cat.h"

namespace visa {

absl::Status WorkBudget::Exhausted(absl::string_view operation) const {
  return absl::ResourceExhaustedError(absl::StrCat(
      "work limit: ", operation, " needs more than ", limit_,
      " steps (the mapping work limit); raise it with `--max-work N` on the command line or "
      "WorkBudget(N) in the C++ API if the mapping really is that large"));
}

absl::Status WorkBudget::OutOfRoom(absl::string_view operation) const {
  return absl::ResourceExhaustedError(absl::StrCat(
      "work limit: ", operation, " holds more than ", max_held(),
      " values at once (a sixteenth of the mapping work limit ", limit_,
      "); raise it with `--max-work N` on the command line or WorkBudget(N) in the C++ API if the "
      "mapping really is that large"));
}

}  // namespace visa
