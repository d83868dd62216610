// The Commit Engine: truncation (commit_in_size), the write sequencer and commit_size.
#pragma once

#include <bitset>
#include <cstdint>
#include <initializer_list>
#include <string>

#include "absl/status/statusor.h"
#include "dsl/sequencer.h"
#include "dsl/stream.h"

namespace visa {

// The Commit Engine's slice bitmap (manual, "Commit Engine" > Slice Bitmap): one bit per slice of
// a cluster; only enabled slices receive commit data, the others keep what their DM holds.
class SliceBitmap {
 public:
  static SliceBitmap All();
  // Exactly these slices; an index outside [0, 256) makes the bitmap invalid (see status()).
  static SliceBitmap Only(std::initializer_list<int> slices);

  bool enabled(int slice) const { return slice >= 0 && slice < kSlicesPerCluster && bits_.test(slice); }
  int count() const { return static_cast<int>(bits_.count()); }
  bool all() const { return bits_.all(); }
  const std::bitset<kSlicesPerCluster>& bits() const { return bits_; }
  // OK unless Only() was given a slice outside the cluster.
  absl::Status status() const;
  // "slices: 2 of 256 [0, 5]" (ranges as "0-3").
  std::string ToString() const;

  bool operator==(const SliceBitmap& other) const {
    return bits_ == other.bits_ && bad_slice_ == other.bad_slice_;
  }

 private:
  std::bitset<kSlicesPerCluster> bits_;
  int bad_slice_ = -1;  // the first out-of-range slice given to Only(), or -1
};

struct CommitStage {
  Mapping element;             // the DM Element written
  int64_t commit_in_bytes = 0; // bytes of each flit kept by the truncating adapter
  SequencerConfig sequencer;   // per slice, over the Element
  AccessPlan access;           // commit_size, writes per step, cycles
  SliceBitmap slices = SliceBitmap::All();  // described only when some slice is disabled
  std::string Describe() const;
};

// Checks a commit of `in` into DM Element `element` from `context` after `position`.
absl::StatusOr<CommitStage> PlanCommitStage(const StreamShape& in, StreamPosition position,
                                            ContextKind context, const Mapping& element);

}  // namespace visa
