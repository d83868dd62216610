// KeptChips: whose HBM this process keeps. A single process keeps every chip's; a rank of an
// mpirun launch (mpi/mpi_backend.h) keeps only the chips it owns, so the writes a replicated op or
// a host write makes to other ranks' chips' HBM are dropped and their pages never committed: HBM
// (the weights, the activations staged between ops) is what memory per rank divides. SRAM is kept
// whole: compiled kernels write it in place (Device::UnitData), past Device::Write. So do they
// HBM, but only in a process that keeps every chip's (a rank stages HBM through Device::Write).
#pragma once

namespace visa {

// This process is rank `rank` of `ranks`: of a C-chip device it keeps chips
// [rank * C / ranks, (rank + 1) * C / ranks) (mpi::ShareOf).
void KeepOwnChipsOf(int rank, int ranks);
// Whether a write to chip `chip`'s HBM of a `chips`-chip device is kept.
bool KeepsHbmOf(int chip, int chips);
// Whether this process keeps every chip's HBM for good (it is not one rank of several, whatever
// KeepEveryChip scope is open): only then may compiled kernels write HBM in place (jit/in_place.h).
bool KeepsHbmOfEveryChip();

// While one lives, every chip's HBM is kept: the bytes another rank sent for this rank's copy.
class KeepEveryChip {
 public:
  KeepEveryChip();
  ~KeepEveryChip();
  KeepEveryChip(const KeepEveryChip&) = delete;
  KeepEveryChip& operator=(const KeepEveryChip&) = delete;
};

}  // namespace visa
