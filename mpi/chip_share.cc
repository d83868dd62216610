// The contiguous share of chips each rank owns, and the hash ranks compare (no MPI needed).
#include <cstdint>

#include "mpi/mpi_session.h"

namespace visa::mpi {

ChipShare ShareOf(int rank, int ranks, int chips) {
  const int first = static_cast<int>(int64_t{rank} * chips / ranks);
  const int end = static_cast<int>(int64_t{rank + 1} * chips / ranks);
  return {first, end - first};
}

int OwnerOf(int chip, int ranks, int chips) {
  for (int rank = 0; rank < ranks; ++rank) {
    if (ShareOf(rank, ranks, chips).Owns(chip)) return rank;
  }
  return -1;
}

uint64_t FoldHash(uint64_t hash, absl::Span<const uint8_t> bytes) {  // FNV-1a
  for (uint8_t c : bytes) {
    hash ^= c;
    hash *= 1099511628211ull;
  }
  return hash;
}

void ExchangeStats::Fold(int slot, absl::Span<const uint8_t> bytes) {
  if (!kept[slot]) chip_digests[slot] = 0xcbf29ce484222325ull;
  kept[slot] = true;
  chip_digests[slot] = FoldHash(chip_digests[slot], bytes);
}

uint64_t TextHash(absl::string_view text) {
  return FoldHash(0xcbf29ce484222325ull,
                  absl::Span<const uint8_t>(reinterpret_cast<const uint8_t*>(text.data()), text.size()));
}

}  // namespace visa::mpi
