// Relayout: the position table of a tensor move (which source position feeds each destination one).
//
// Every DMA, and every engine that only moves data, is the identity on the mathematical tensor
// (manual, "Tensor Functions"); only the layout changes. The move is destination-driven (notes,
// section 1.3): each live destination position holds a tensor index; it receives the source
// element at the smallest source position holding that index, restricted to the axes the source
// names (destination axes the source lacks are broadcast). Destination padding is not written.
// Two user errors: a destination index the source does not hold, and a source index the
// destination does not hold (the move would drop data, so it would not be the identity).
//
// This is the DMA rule of dsl/index_matching.h (MatchByAxis), and the table is the layout
// algebra's run list (dsl/layout.h: ForEachRun): consecutive destination positions reading source
// positions a fixed stride apart form one run, so contiguous layouts copy whole runs at once and
// transposes gather with a known stride.
//
// A plan's runs are computed and checked once per (destination, source) pair and kept in a small
// process-wide cache: weights of one shape load layer after layer, and a per-position walk of a
// 16M-element tensor costs far more than the copy it plans.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "dsl/layout.h"
#include "dsl/mapping.h"

namespace visa {

// Destination positions dst + i read source positions src + i * src_stride, for i < length
// (stride 1: a contiguous copy; 0: a broadcast; other: a transposing gather).
using RelayoutRun = MoveRun;

// The whole checked table of one move as runs in increasing destination order.
struct RelayoutRuns {
  std::vector<RelayoutRun> runs;
  int64_t elements = 0;       // live destination positions written
  bool contiguous = true;     // every run has source stride 1
};

class RelayoutPlan {
 public:
  // Receives consecutive chunks of the table, as runs in increasing destination order.
  using ChunkFn = absl::FunctionRef<void(absl::Span<const RelayoutRun> runs)>;

  // Both mappings must be valid (their status is returned otherwise).
  static absl::StatusOr<RelayoutPlan> Make(const Mapping& dst, const Mapping& src);

  // Builds the table chunk by chunk (each position computed once) and hands every chunk to
  // `apply`. Stops with an error naming the rule at the first destination index the source does
  // not hold; after the last chunk, fails if the source holds an index no destination position
  // holds. `apply` may already have seen earlier chunks when an error is returned, so callers
  // stage their writes.
  absl::Status Run(ChunkFn apply) const;

  // The checked runs, computed once per pair of mappings and shared; nullptr (with OK) when the
  // table has too many runs to keep (then use Run, which streams it).
  absl::StatusOr<std::shared_ptr<const RelayoutRuns>> Runs() const;

  // The whole table at once, one entry per live destination position (small tensors, tests):
  // source position src[i] feeds destination position dst[i].
  absl::StatusOr<std::pair<std::vector<int64_t>, std::vector<int64_t>>> Table() const;

  // True when both sides have digit layouts (the destination affine, the source invertible).
  bool fast() const;

 private:
  RelayoutPlan(Mapping dst, Mapping src) : dst_(std::move(dst)), src_(std::move(src)) {}
  Mapping dst_, src_;
};

// The live positions of `mapping`, increasing (padding positions left out).
absl::StatusOr<std::vector<int64_t>> LivePositions(const Mapping& mapping);

// One past the last live position of `mapping` (0 when none is live): the extent a view reaches.
absl::StatusOr<int64_t> LiveExtent(const Mapping& mapping);

}  // namespace visa
