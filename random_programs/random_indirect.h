// Random indirect fetches for the random-program generator (random_programs/random_program.h): an
// embedding-style gather fetched straight into the Tensor Unit by the Fetch Sequencer's
// IndirectLoop (Stream::fetch_indirect, or fetch_indirect_masked with left and right padding),
// then collect and commit. What is drawn: the table's type and the adapter's conversion (i8, i16
// -> i32, bf16 -> f32 or none), the rows' layout in DM (contiguous, strided around W, padded),
// the table and index on one slice or broadcast over four, |W|, |V|, |K|, the packet, the index
// values (repeats, first and last rows), and the masking (pad value, right pad, left pad).
// Every choice comes from the seed, so a seed always draws the same program.
#pragma once

#include <cstdint>
#include <vector>

#include "random_programs/program_coverage.h"
#include "random_programs/random_program.h"

namespace visa::samples {

// Whether seed `seed` draws an indirect fetch (about one draw in twelve) when no feature is
// required; decided from its own stream of the seed, so other seeds keep their programs.
bool DrawsIndirect(uint64_t seed);

// The indirect program seed `seed` draws, with the kinds it calls for (category "indirect": fetch,
// masked; and the stages, conversions and DMA moves around it).
RandomProgram DrawRandomIndirect(uint64_t seed);

// Every kind DrawRandomIndirect can call for.
std::vector<CoverageKey> IndirectDrawnKinds();

}  // namespace visa::samples
