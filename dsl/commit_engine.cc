// Commit Engine rules: one-flit input, truncation widths, non-broadcast in-bounds writes.
#include "dsl/commit_engine.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "dsl/commit_cast.h"
#include "dsl/engine_errors.h"
#include "dsl/status_macros.h"

namespace visa {

SliceBitmap SliceBitmap::All() {
  SliceBitmap bitmap;
  bitmap.bits_.set();
  return bitmap;
}

SliceBitmap SliceBitmap::Only(std::initializer_list<int> slices) {
  SliceBitmap bitmap;
  for (int slice : slices) {
    if (slice < 0 || slice >= kSlicesPerCluster) {
      if (bitmap.bad_slice_ < 0) bitmap.bad_slice_ = slice;
      continue;
    }
    bitmap.bits_.set(slice);
  }
  return bitmap;
}

absl::Status SliceBitmap::status() const {
  if (bad_slice_ < 0) return absl::OkStatus();
  return EngineError("Commit", absl::StrCat("Slice Bitmap: slice ", bad_slice_,
                                            " is outside the bitmap's 256 slices [0, 256)"));
}

std::string SliceBitmap::ToString() const {
  std::string ranges;
  for (int i = 0; i < kSlicesPerCluster;) {
    if (!bits_.test(i)) {
      ++i;
      continue;
    }
    int j = i;
    while (j + 1 < kSlicesPerCluster && bits_.test(j + 1)) ++j;
    absl::StrAppend(&ranges, ranges.empty() ? "" : ", ", i);
    if (j > i) absl::StrAppend(&ranges, "-", j);
    i = j + 1;
  }
  return absl::StrCat("slices: ", count(), " of ", kSlicesPerCluster, " [", ranges, "]");
}

std::string CommitStage::Describe() const {
  return absl::StrCat("commit element [", element.ToString(), "]\n    sequencer ",
                      sequencer.ToLabeledString(), "\n    commit_in_size ", commit_in_bytes,
                      " B, contiguous ", access.contiguous_bytes, " B, commit_size ",
                      access.access_bytes, " B, writes_per_step ", access.accesses_per_packet,
                      ", cycles ", access.cycles,
                      slices.all() ? "" : absl::StrCat("\n    ", slices.ToString()));
}

absl::StatusOr<CommitStage> PlanCommitStage(const StreamShape& in, StreamPosition position,
                                            ContextKind context, const Mapping& element) {
  RETURN_IF_ERROR(element.status());
  if (context == ContextKind::kSub && position != StreamPosition::kCollect) {
    return EngineError("Commit", "Sub-context commits can only follow fetch (fetch, [switch,] collect, "
                       "commit); this stream is after ", StreamPositionName(position));
  }
  // After commit_cast the Commit Engine's input is the adapter's: one flit of f32.
  const bool after_commit_cast = position == StreamPosition::kCommitCast;
  int64_t packet_bits = in.packet.size() * (after_commit_cast ? 32 : WireBits(in.dtype));
  if (packet_bits != kFlitBytes * 8) {
    return EngineError("Commit", "The input packet size must be 32 bytes, got ", packet_bits / 8.0,
                       " bytes (packet `", in.packet.ToString(), "`; collect it first)");
  }
  absl::StatusOr<SequencerConfig> sequencer =
      DeriveSequencer(element, in.time, in.packet, SequencerMode::kCommit, 64 / WireBits(in.dtype));
  if (!sequencer.ok()) {
    return EngineError("Commit", "cannot write Time `", in.time.ToString(), "`, Packet `",
                       in.packet.ToString(), "` into the DM Element `", element.ToString(), "`: ",
                       sequencer.status().message());
  }
  for (const SequencerEntry& e : sequencer->entries) {
    if (e.stride == 0) {
      return EngineError("Commit", "write sequencer entries need a non-zero stride (no broadcast "
                         "during commit), but `", e.label, " -> ", e.size, " : 0` writes `",
                         e.label, "` to one address; the Element `", element.ToString(),
                         "` must hold every stream axis");
    }
  }
  int64_t reach = 0;
  for (const SequencerEntry& e : sequencer->entries) reach += (e.size - 1) * e.stride;
  if (reach >= element.size()) {
    return EngineError("Commit", "the write sequencer ", sequencer->ToString(), " reaches position ",
                       reach, " but the Element `", element.ToString(), "` has ", element.size(),
                       " positions; writes must never exceed the tensor boundary (pad the Element)");
  }
  CommitStage stage;
  stage.element = element;
  stage.commit_in_bytes = sequencer->packet_size * WireBits(in.dtype) / 8;
  stage.sequencer = *std::move(sequencer);
  if (after_commit_cast) RETURN_IF_ERROR(CheckCommitCastPacket(stage.sequencer.packet_size * 4));
  absl::StatusOr<AccessPlan> access = PlanCommit(stage.sequencer, ElementBits{WireBits(in.dtype)}, context);
  if (!access.ok()) return EngineError("Commit", access.status().message());
  stage.access = *access;
  return stage;
}

}  // namespace visa
