// Masked row reductions: rows read with a left and a right pad (`# n + R + # m`) and reduced by
// the Intra-Slice Reduce; VectorReduceSamples() lists them with the other reduction samples.
#pragma once

#include <vector>

#include "samples/sample.h"

namespace visa::samples {

std::vector<Sample> MaskedReduceSamples();

}  // namespace visa::samples
