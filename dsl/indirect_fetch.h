// The Fetch Sequencer's IndirectLoop (manual, "Sequencer" > "Indirect Access"): a fetch whose
// outermost loop takes its offsets from an index tensor in DM when the pipeline runs, e.g. an
// embedding lookup fetched straight into the Tensor Unit. The stream names the index tensor's axis
// K where the DM Element names the table's rows W; step k of the loop reads row W = index[k].
//
// The manual gives the entry `(limit, [offset0, offset1, ...])` and nothing more; the rules are
// decided here (README, "Indirect access"), each failing with "Indirect Access: ...":
// - the IndirectLoop is the Fetch Sequencer's outermost entry: Time's first term is the whole
//   axis K, and no other term of Time or Packet holds K or W;
// - W is one entry of the sequencer over the DM Element (W whole, in the Element, not split);
// - |K| is at most the sequencer's 65,536 iterations;
// - one table (not begin_interleaved); the index tensor's rules are the call's
//   (runtime/indirect_fetch_calls.cc).
// An index outside 0..|W| - 1 fails the op when it runs (IndirectRows), on both backends.
#pragma once

#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "dsl/axes.h"
#include "dsl/dtype.h"
#include "dsl/indirect_access.h"
#include "dsl/mapping.h"
#include "dsl/stream.h"

namespace visa {

struct FetchStage;  // dsl/fetch_engine.h, which holds an IndirectFetch

struct IndirectFetch {
  // W, |W|, K, |K| (the loop's limit), the row stride in DM Element positions, and the Fetch
  // Sequencer's configuration with the IndirectLoop entry, "[K -> (8, [index[K] x 32]), V -> 32 : 1] : 32".
  IndirectLoop loop;
  std::string index;  // the index tensor, as printed
  // "IndirectLoop (limit 8, [offset0, ...] = index[K] x 32 elements) gathers rows of W = 16 into K"
  std::string Describe() const;
  bool operator==(const IndirectFetch&) const = default;
};

// Plans `fetch` on `begin` with the IndirectLoop over `table_axis` numbered by `key` (the index
// tensor's axis): the sequencer is derived for Time with W in K's place, then W's entry becomes
// the IndirectLoop (|K| iterations at index[k] x W's stride); `stage.out` is the stream with K.
// `pad_value`: the adapter masks the stream's padding (left and right) with it, as fetch_masked.
absl::StatusOr<FetchStage> PlanIndirectFetchStage(const StreamShape& begin, ContextKind context, DType out_dtype,
                                                  const std::string& table_axis, const Axis& key,
                                                  const Mapping& time, const Mapping& packet,
                                                  std::optional<double> pad_value = std::nullopt);

}  // namespace visa
