// MoveNest: a tensor move (destination <- source, both laid out by mappings) as a loop nest of
// (count, destination stride, source stride) levels over element positions.
//
// A move is the identity on the tensor: every live destination position receives the source
// element holding the same index (restricted to the source's axes). When both mappings have digit
// forms and each destination digit lands on whole source digits, the source position is an affine
// function of the destination digits, so the move is a nest of strided loops: the same shape as
// the hardware's sequencer configurations (size : stride entries), which is what the JIT compiles.
// Destination padding is never visited. A move with no such form is a list of runs (relayout.h),
// which the JIT compiles as a run-driven loop instead.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "dsl/layout.h"
#include "dsl/mapping.h"

namespace visa::jit {

// One loop level (count, destination stride, source stride): the layout algebra's MoveLevel.
using NestLevel = MoveLevel;

struct MoveNest {
  std::vector<NestLevel> levels;  // innermost first; never empty

  int64_t elements() const;        // destination positions written
  int64_t max_dst() const;         // largest destination position written
  int64_t max_src() const;         // largest source position read
  // "[4 : 1 <- 1, 8 : 32 <- 4]" innermost first.
  std::string ToString() const;
  bool operator==(const MoveNest&) const = default;
};

// The nest of `dst <- src` (dsl/layout.h: Compose of the destination projected onto the source by
// digit), or nullopt when the move has no affine form (a mapping without a digit form, a
// destination digit that straddles source digits, or an index the source does not hold).
std::optional<MoveNest> DeriveMoveNest(const Mapping& dst, const Mapping& src);

// Merges adjacent levels that read as one loop and splits a short outermost level so that the
// outermost loop has enough iterations to spread over `threads` threads (Coalesce, SplitOuter).
MoveNest Simplify(MoveNest nest, int threads);

}  // namespace visa::jit
