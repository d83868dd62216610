// Vector Engine samples of the branch modes and the Filter stage: ValidCount ids giving a padded
// axis's padding its own op, a Vrf of ids choosing an op per column, and a ReLU-like filter;
// VectorSamples() lists them with the other Vector Engine samples.
#pragma once

#include <vector>

#include "samples/sample.h"

namespace visa::samples {

std::vector<Sample> VectorBranchSamples();

}  // namespace visa::samples
