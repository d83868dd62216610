// The "Tiling" kernel examples as samples: the tiled GEMM beyond the SRAM (tiled_gemm.h) at the
// manual's size (slow: `visa run` only) and reduced, and the tiled attention over a long sequence.
#pragma once

#include <vector>

#include "samples/sample.h"

namespace visa::samples {

std::vector<Sample> TilingSamples();

}  // namespace visa::samples
