// Equivalence of mappings by meaning: same size and the same cell at every position.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "dsl/mapping.h"
#include "dsl/work_budget.h"

namespace visa {

struct Difference {
  bool sizes_differ = false;
  int64_t position = 0;  // the first position whose cells differ (when sizes are equal)
  std::string lhs, rhs;  // the sizes, or what each mapping holds there
  std::string ToString() const;  // "sizes 8 and 16", "position 3: {A=3} vs pad"
};

// nullopt when equivalent, else the first difference. Canonical forms decide when both mappings
// have one; otherwise positions are compared one by one, which is exact but linear in the size:
// the comparison spends `budget` (one step per position and what evaluating it costs) and stops
// with a ResourceExhausted error naming the limit when it runs out.
absl::StatusOr<std::optional<Difference>> FirstDifference(const Mapping& a, const Mapping& b,
                                                          WorkBudget& budget);
// As above with the default budget (WorkBudget::kDefaultSteps).
absl::StatusOr<std::optional<Difference>> FirstDifference(const Mapping& a, const Mapping& b);

// True exactly when the mappings are equivalent (under the default budget); an invalid operand is
// an error.
absl::StatusOr<bool> Equivalent(const Mapping& a, const Mapping& b);

}  // namespace visa
