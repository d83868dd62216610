// The Commit Engine: truncation (commit_in_size), the write sequencer and commit_size.
#pragma once

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "dsl/sequencer.h"
#include "dsl/stream.h"

namespace visa {

struct CommitStage {
  Mapping element;             // the DM Element written
  int64_t commit_in_bytes = 0; // bytes of each flit kept by the truncating adapter
  SequencerConfig sequencer;   // per slice, over the Element
  AccessPlan access;           // commit_size, writes per step, cycles
  std::string Describe() const;
};

// Checks a commit of `in` into DM Element `element` from `context` after `position`.
absl::StatusOr<CommitStage> PlanCommitStage(const StreamShape& in, StreamPosition position,
                                            TuContextKind context, const Mapping& element);

}  // namespace visa
