// Chip shuffle (manual, Chip/Cluster Reduce > "Shuffle"; the notes' hbm_chip_shuffle /
// dm_chip_shuffle): a permutation of chips, `out[target] = in[pattern[target]]`, by DMA through
// HBM. Each target chip's part is one HBM -> HBM move from the source chip's HBM (across chips on
// the inter-chip DMA: tdma between chips of one device, or pdma over PCIe), between one-chip views
// of the two tensors (runtime/chip_view.h); a DM tensor is staged to its chips' HBM, shuffled
// there and brought back (the manual's HBM-to-HBM pattern). Every move is recorded with the
// operation's name, which `visa explain` prints.
//
// Rules: one source chip per chip of the device, each chip exactly once (a permutation); the
// output has the input's dtype and levels (matching shapes); the Chip level is one axis of every
// chip (chip c holds its value c).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "runtime/address.h"
#include "runtime/dma.h"
#include "runtime/tensor.h"

namespace visa {

// "ChipShuffle(1, 2, 3, 0)".
std::string ChipShuffleName(const std::vector<int64_t>& pattern);

// A new HBM tensor at `address` with `src`'s levels whose chip t holds chip pattern[t] of `src`.
absl::StatusOr<HbmTensor> ChipShuffle(Dma& dma, const HbmTensor& src, const std::vector<int64_t>& pattern,
                                      Address address);
// The same into an existing HBM tensor of the same dtype and levels.
absl::Status ChipShuffleInto(Dma& dma, const HbmTensor& src, const std::vector<int64_t>& pattern,
                             const HbmTensor& dst);
// A DM tensor shuffled through HBM (scratch HBM tensors the device picks, released afterwards)
// into a new DM tensor at `address` with `src`'s levels.
absl::StatusOr<DmTensor> ChipShuffle(Dma& tdma, const DmTensor& src, const std::vector<int64_t>& pattern,
                                     Address address);

}  // namespace visa
