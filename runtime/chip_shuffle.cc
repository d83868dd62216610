// Chip shuffle: per-target HBM -> HBM moves between one-chip views, a DM tensor staged through HBM.
#include "runtime/chip_shuffle.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "dsl/status_macros.h"
#include "runtime/chip_view.h"
#include "runtime/device.h"

namespace visa {
namespace {

absl::Status ShuffleError(const std::vector<int64_t>& pattern, const DeviceTensor& src, absl::string_view why) {
  return absl::InvalidArgumentError(absl::StrCat("Chip Shuffle: ", ChipShuffleName(pattern), " of ",
                                                 src.ToString(), ": ", why));
}

// One source chip per chip of the device, each exactly once.
absl::Status CheckPermutation(const std::vector<int64_t>& pattern, const DeviceTensor& src) {
  const int64_t chips = src.device().chips();
  if (static_cast<int64_t>(pattern.size()) != chips) {
    return ShuffleError(pattern, src, absl::StrCat("the pattern names one source chip per chip of the device (",
                                                   chips, "), got ", pattern.size()));
  }
  std::vector<int> seen(chips, 0);
  for (int64_t chip : pattern) {
    if (chip < 0 || chip >= chips) {
      return ShuffleError(pattern, src, absl::StrCat("chip ", chip, " is outside the device's chips [0, ", chips, ")"));
    }
    ++seen[chip];
  }
  for (int64_t chip = 0; chip < chips; ++chip) {
    if (seen[chip] != 1) {
      return ShuffleError(pattern, src, absl::StrCat("the pattern must be a permutation of the chips, but chip ",
                                                     chip, " appears ", seen[chip], " times"));
    }
  }
  return absl::OkStatus();
}

absl::Status CheckShapes(const std::vector<int64_t>& pattern, const HbmTensor& src, const HbmTensor& dst) {
  if (src.dtype() != dst.dtype() || !(Pair(src.levels()) == Pair(dst.levels()))) {
    return ShuffleError(pattern, src, absl::StrCat("the output must match the input's shape (dtype and levels), but ",
                                                   dst.ToString(), " does not"));
  }
  return absl::OkStatus();
}

// A level without its outer padding: `S # 256` holds what `S` holds.
Mapping Unpadded(const Mapping& level) {
  return level.kind() == Mapping::Kind::kPadding ? level.inner() : level;
}

// The HBM Element a DM tensor is staged in on each chip: its Cluster, Slice and Element levels
// together (without their padding), so that data on every slice and cluster of a chip stays on
// that chip.
Mapping StagingElement(const DmTensor& src) {
  return Pair({Unpadded(src.cluster()), Unpadded(src.slice()), src.element()});
}

}  // namespace

std::string ChipShuffleName(const std::vector<int64_t>& pattern) {
  return absl::StrCat("ChipShuffle(", absl::StrJoin(pattern, ", "), ")");
}

absl::Status ChipShuffleInto(Dma& dma, const HbmTensor& src, const std::vector<int64_t>& pattern,
                             const HbmTensor& dst) {
  RETURN_IF_ERROR(CheckPermutation(pattern, src));
  RETURN_IF_ERROR(CheckShapes(pattern, src, dst));
  if (src.is_view() || dst.is_view()) {
    return ShuffleError(pattern, src, "shuffles whole tensors, not views");
  }
  for (int64_t target = 0; target < static_cast<int64_t>(pattern.size()); ++target) {
    absl::StatusOr<DeviceTensor> from = ChipView(src, pattern[target]);
    if (!from.ok()) return ShuffleError(pattern, src, from.status().message());
    ASSIGN_OR_RETURN(DeviceTensor to, ChipView(dst, target));
    ScopedDmaOperation name(dma, absl::StrCat(ChipShuffleName(pattern), ": chip ", pattern[target], " -> chip ", target));
    RETURN_IF_ERROR(MoveInto(dma, *from, to));
  }
  return absl::OkStatus();
}

absl::StatusOr<HbmTensor> ChipShuffle(Dma& dma, const HbmTensor& src, const std::vector<int64_t>& pattern,
                                      Address address) {
  RETURN_IF_ERROR(CheckPermutation(pattern, src));
  ASSIGN_OR_RETURN(HbmTensor out, HbmTensor::Create(src.device(), src.dtype(), src.chip(), src.element(), address));
  absl::Status done = ChipShuffleInto(dma, src, pattern, out);
  if (!done.ok()) {
    out.Release();
    return done;
  }
  return out;
}

absl::StatusOr<DmTensor> ChipShuffle(Dma& tdma, const DmTensor& src, const std::vector<int64_t>& pattern,
                                     Address address) {
  RETURN_IF_ERROR(CheckPermutation(pattern, src));
  if (src.is_view()) return ShuffleError(pattern, src, "shuffles whole tensors, not views");
  const std::string name = ChipShuffleName(pattern);
  absl::StatusOr<HbmTensor> staged;
  {
    ScopedDmaOperation named(tdma, absl::StrCat(name, ": DM -> HBM"));
    staged = src.to_hbm(tdma, Address::Any(), src.chip(), StagingElement(src));
  }
  RETURN_IF_ERROR(staged.status());
  absl::StatusOr<HbmTensor> shuffled = ChipShuffle(tdma, *staged, pattern, Address::Any());
  staged->Release();
  RETURN_IF_ERROR(shuffled.status());
  absl::StatusOr<DmTensor> out;
  {
    ScopedDmaOperation named(tdma, absl::StrCat(name, ": HBM -> DM"));
    out = shuffled->to_dm(tdma, address, src.chip(), src.cluster(), src.slice(), src.element());
  }
  shuffled->Release();
  return out;
}

}  // namespace visa
