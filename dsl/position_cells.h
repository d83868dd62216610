// PositionCells: every cell one position of a mapping holds (what Mapping::maps reports), under a
// work budget.
//
// A linear combination `$(e1: n1, ..., ed: nd)` holds at position p every combination of cells
// e_k(s_k) with sum(s_k * n_k) == p. The number of such choices grows like a product of the term
// sizes, but the cells they finalize to are few; so the evaluation works on cell codes
// (dsl/cell_code.h), which merge combinations the final rules cannot tell apart as they are built,
// and walks the terms one level at a time, keeping per level only the remainders that can still
// reach p and the distinct codes each of them holds.
#pragma once

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "dsl/index.h"
#include "dsl/mapping.h"
#include "dsl/work_budget.h"

namespace visa {

// The finalized cells position `i` of `m` holds, sorted and distinct; {out of bounds} outside
// [0, size). An error (ResourceExhausted, naming the limit) when `budget` runs out.
absl::StatusOr<std::vector<Cell>> PositionCells(const Mapping& m, int64_t i, WorkBudget& budget);

// A bounded excerpt of a mapping's text for error messages.
std::string MappingExcerpt(const Mapping& m);

}  // namespace visa
