// ParallelCopy: an SRAM-to-SRAM copy on the sub context through `stos` (manual, Commit Engine >
// "Sub-Context Operations"; the notes' `to_dm_pcopy` / `to_dm_view_pcopy`), and the chip and
// cluster asymmetric slice built on it (manual, Chip/Cluster Reduce > "Asymmetric Slice"; the notes'
// `parallel_copy_chip_slice` / `parallel_copy_cluster_slice`).
//
// A ParallelCopy is a sub-context pipeline fetch -> collect -> commit, recorded as one op named
// "ParallelCopy": the stream moves the destination Element 8 bytes at a time (the sub context
// fetches and commits 8-byte words), each word padded to one 32-byte flit and truncated back to 8
// bytes by the commit. The sub context's rules apply as they stand (dsl/commit_engine.h,
// dsl/sequencer.h): its commits follow fetch only, commit_size is 8 bytes, every commit sequencer
// stride a multiple of 8 bytes, and each 8-byte word must be contiguous in the source.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "dsl/mapping.h"
#include "runtime/address.h"
#include "runtime/tensor.h"
#include "runtime/tensor_unit.h"

namespace visa {

// A copy of `src` into a new DM tensor with the same Chip, Cluster and Slice and Element `element`
// at `address` (a relayout inside each slice; the Element holds the source's indices).
absl::StatusOr<DmTensor> ParallelCopy(TensorUnit& sub, const DmTensor& src, const Mapping& element,
                                      Address address);
// The same into an existing DM tensor or view, whose Chip, Cluster and Slice are the source's;
// only its live positions are written.
absl::Status ParallelCopyInto(TensorUnit& sub, const DmTensor& src, const DmTensor& dst);

// Which spatial level an asymmetric slice runs over.
enum class SliceLevel { kChip, kCluster };

// For each chip (or cluster) c, the slice `slice_indices[c]` of the outermost Element axis `axis`
// of `src` copied into chip (cluster) c of a new DM tensor at `address` whose Element is `rest`:
// `src`'s Element must be `axis, rest` (the axis outermost, whole), and each slice whole 8-byte
// words. Chip (cluster) c of the result holds src[c's index, axis = slice_indices[c], rest]: the
// new tensor keeps `src`'s levels but Element `rest`. One ParallelCopy per chip (cluster), each
// over that unit alone (runtime/chip_view.h).
absl::StatusOr<DmTensor> AsymmetricSlice(TensorUnit& sub, const DmTensor& src, SliceLevel level,
                                         const std::string& axis, const Mapping& rest,
                                         const std::vector<int64_t>& slice_indices, Address address);

// The asymmetric slice's inverse (what an AllGather places): for each chip (or cluster) c, the
// first `slot.size()` Element positions of unit c of `src` copied into slice `slice_indices[c]` of
// the outermost Element axis `axis` of `dst` on that unit. `dst`'s Element must be `axis, slot`,
// `src`'s Element must agree with `slot` on its positions and hold only padding after them (a
// committed value padded past a word keeps its word), each slot whole 8-byte words, and `dst` has
// `src`'s Chip, Cluster and Slice; the other slices of `dst` keep what they hold. One ParallelCopy
// per unit, each over that unit alone (runtime/chip_view.h).
absl::Status AsymmetricPlaceInto(TensorUnit& sub, const DmTensor& src, SliceLevel level, const std::string& axis,
                                 const Mapping& slot, const std::vector<int64_t>& slice_indices,
                                 const DmTensor& dst);

}  // namespace visa
