// Index matching: which source index a destination index reads in a tensor move, under the
// manual's two rules. Every move is the identity on the mathematical tensor (manual, "Tensor
// Functions"); the rules differ in how finely a destination index is compared with what the
// source holds. Axes the source does not name broadcast under both rules.
#pragma once

#include <cstdint>
#include <optional>

#include "absl/status/status.h"
#include "dsl/index.h"
#include "dsl/mapping.h"

namespace visa {

enum class MatchRule {
  kByAxis,   // DMA moves: MatchByAxis
  kByDigit,  // engine moves (fetch, switch, collect, commit, ...): MatchByDigit
};

// The DMA rule (manual, "DMA Engine" and "Tensor Functions": `to_dm()` / `to_hbm()` copy the
// mathematical tensor): the destination index restricted to the axes `src` names. A coordinate of
// a named axis must be held exactly (a destination element with no source element is an error);
// axes the source does not name broadcast.
Index MatchByAxis(const Index& index, const Mapping& src);

// The engine rule (manual, "Sequencer": a stream term "not in Buf" reads with stride 0; notes,
// engine-semantics.md 1.3: matching "by axis identity at digit granularity"): the destination
// index restricted to the axes `src` names, then each coordinate projected onto the source's
// digits of its axis: digit values the source holds are kept, digits it lacks broadcast (so
// `J / 8 % 4` reads a source holding only `J / 32` with stride 0). The top digit wraps at its live
// values; an axis named without digits (`B = 1`) reads coordinate 0. nullopt when a digit value
// falls in a digit's padding. Sources with composite factors are matched by axis.
std::optional<Index> MatchByDigit(const Index& index, const Mapping& src);

// The rule `rule` applied to `index` (nullopt: no source index is read).
std::optional<Index> Match(const Index& index, const Mapping& src, MatchRule rule);

// The interpreter's two user errors of a move `dst <- src` (the JIT reports the same text).
absl::Status UnheldError(const Mapping& dst, int64_t position, const Index& index, const Mapping& src);
absl::Status DroppedError(const Mapping& src, int64_t position, const Index& index, const Mapping& dst);

}  // namespace visa
