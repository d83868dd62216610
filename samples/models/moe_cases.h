// The Mixture of Experts kernel's input cases (issue 31): random routing, routing skewed to one
// expert, tied scores, and the page's worst case for the grid size (every expert's last block
// holds one token). The router's inputs are small integers, so every score is an exact integer in
// f32 and bf16 and the routing does not depend on the order of the sums: the device's token-to-
// expert assignment can be compared with the reference's exactly.
#pragma once

#include <string>
#include <vector>

#include "samples/models/moe_reference.h"

namespace visa::models {

enum class MoeCase { kRandom, kSkewed, kTied, kWorstGrid };
const char* MoeCaseName(MoeCase c);  // "random", "skewed", "tied", "worst_grid"

struct MoeInputs {
  std::vector<double> x;         // [T, D]
  std::vector<double> w_router;  // [D, E]
};

// The case's inputs for `shape`. The cases other than kRandom set x[t] to the unit vector of
// d = t % D, so that scores[t] is row t % D of W_router, designed per case.
MoeInputs MakeMoeInputs(const MoeShape& shape, MoeCase c, uint64_t seed = 7);

}  // namespace visa::models
