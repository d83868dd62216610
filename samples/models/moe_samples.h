// The Mixture of Experts kernel (moe_layer.h) as samples, one per input case (moe_cases.h), each
// checked against the host reference (moe_reference.h): the routing exactly, the weights within
// a bound.
#pragma once

#include <vector>

#include "samples/sample.h"

namespace visa::samples {

std::vector<Sample> MoeSamples();

}  // namespace visa::samples
