// The Fetch Engine: its rules, the sequencer it derives, and the adapter's settings.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "dsl/dtype.h"
#include "dsl/indirect_fetch.h"
#include "dsl/mapping.h"
#include "dsl/sequencer.h"
#include "dsl/stream.h"

namespace visa {

// The Fetch Adapter's element-wise stages (manual, "Fetch Adapter").
struct FetchAdapter {
  std::vector<int32_t> zero_points;   // one, or one per interleaved tensor
  std::vector<uint32_t> table;        // table lookup: output bits indexed by input bits
  std::optional<double> pad_value;    // masking: the value padded packet positions read as
};

// The Fetch Adapter's masking configuration (manual, "Masking Configuration"): when the stream
// reads past the end of its innermost axis, the padded elements are forced to the pad value.
// Case 1: the axis's outer part is the innermost time entry; case 2: it sits further out; case 3:
// the padding spans more than the last packet, so every index gets its own valid count (<= 8).
// A left pad (`# n + A + # m`) masks the first n elements of index 0 (`lpad`); the valid counts
// count from the start of the left-padded axis, pad included.
struct MaskConfig {
  int case_number = 0;         // 0: no masking needed
  int last_dim = 0;            // sequencer entry of the padded axis's outer part (or the packet)
  int64_t lpad = 0;            // left_pad: elements masked at the front when last_dim's index is 0
  std::vector<int64_t> rightmost_valid;  // valid elements per index of last_dim (case 3: all)
  std::string Describe() const;
};

struct FetchStage {
  DType in_dtype = DType::kI8;
  StreamShape out;
  FetchAdapter adapter;
  MaskConfig mask;
  SequencerConfig sequencer;  // per slice, over the DM Element
  AccessPlan access;          // fetch_size, fetches per packet (batching), cycles
  // An IndirectLoop as the sequencer's outermost entry (dsl/indirect_fetch.h): `sequencer`'s first
  // entry then walks K (|K| : W's stride) and the offsets come from the index tensor at run time.
  std::optional<IndirectFetch> indirect;
  std::string Describe() const;
};

// Checks `fetch` on `begin` (time [1] or the interleave axis, packet = the DM Element) for the
// context and derives the sequencer and access plan. `interleave` is the `I` axis of a
// `begin_interleaved` (nullptr otherwise).
absl::StatusOr<FetchStage> PlanFetchStage(const StreamShape& begin, const Mapping* interleave,
                                          ContextKind context, DType out_dtype,
                                          const Mapping& time, const Mapping& packet,
                                          FetchAdapter adapter);

}  // namespace visa
