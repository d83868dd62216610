// Outer padding peeled off a mapping: a chip view's Chip level `# c + Chip + # n`
// (runtime/chip_view.h) is a left pad the normal form has no canonical form for, so its layout is
// neither affine nor invertible, though without the pad it is. The positions of `[# a + E # n,
// rest]` are those of `[E, rest]` shifted by `a * rest.size()`, the rest dead, and both hold the
// same indices: run lists (dsl/layout.h: ForEachRun) and digit matching (dsl/index_matching.h)
// work on the peeled form.
#pragma once

#include <cstdint>
#include <optional>

#include "dsl/mapping.h"

namespace visa {

struct PeeledPadding {
  Mapping mapping;     // the mapping without its outer padding
  int64_t offset = 0;  // where its position 0 lies in the padded mapping
};

// The outermost level's plain (`kTop`) padding peeled, also when that level sits inside nested
// pairs, `[[# a + E # n, units], rest]` (the JIT groups a stream's chip, cluster and slice as its
// units: a pipeline's part on one chip, mpi/chip_range_pipeline.h); nullopt when there is none.
std::optional<PeeledPadding> PeelOuterPadding(const Mapping& m);

}  // namespace visa
