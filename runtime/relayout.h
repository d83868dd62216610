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
// Positions are computed with integer digit arithmetic from the mappings' normal forms: an
// odometer over the destination's digits and, per source axis, a table from coordinate to position
// contribution (what Mapping::inverse computes, tabulated once per move). Mappings without a digit
// form (linear combinations, skews) fall back to Mapping::map / Mapping::inverse. The table is
// handed out run-length encoded: consecutive destination positions reading source positions a
// fixed stride apart form one run, so contiguous layouts copy whole runs at once and transposes
// gather with a known stride.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "dsl/mapping.h"

namespace visa {

// Destination positions dst + i read source positions src + i * src_stride, for i < length
// (stride 1: a contiguous copy; 0: a broadcast; other: a transposing gather).
struct RelayoutRun {
  int64_t dst = 0;
  int64_t src = 0;
  int64_t length = 0;
  int64_t src_stride = 1;
  bool operator==(const RelayoutRun&) const = default;
};

class RelayoutPlan {
 public:
  // Receives consecutive chunks of the table, as runs in increasing destination order.
  using ChunkFn = absl::FunctionRef<void(absl::Span<const RelayoutRun> runs)>;

  // Both mappings must be valid (their status is returned otherwise).
  static absl::StatusOr<RelayoutPlan> Make(const Mapping& dst, const Mapping& src);

  ~RelayoutPlan();
  RelayoutPlan(RelayoutPlan&&) noexcept;
  RelayoutPlan& operator=(RelayoutPlan&&) noexcept;

  // Builds the table chunk by chunk (each position computed once) and hands every chunk to
  // `apply`. Stops with an error naming the rule at the first destination index the source does
  // not hold; after the last chunk, fails if the source holds an index no destination position
  // holds. `apply` may already have seen earlier chunks when an error is returned, so callers
  // stage their writes.
  absl::Status Run(ChunkFn apply) const;

  // The whole table at once, one entry per live destination position (small tensors, tests):
  // source position src[i] feeds destination position dst[i].
  absl::StatusOr<std::pair<std::vector<int64_t>, std::vector<int64_t>>> Table() const;

  // True when both sides use the digit fast path.
  bool fast() const;

  struct Impl;

 private:
  explicit RelayoutPlan(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// The live positions of `mapping`, increasing (padding positions left out).
absl::StatusOr<std::vector<int64_t>> LivePositions(const Mapping& mapping);

// One past the last live position of `mapping` (0 when none is live): the extent a view reaches.
absl::StatusOr<int64_t> LiveExtent(const Mapping& mapping);

}  // namespace visa
