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

uint64_t TextHash(absl::string_view text) {  // FNV-1a
  uint64_t hash = 1469598103934665603ull;
  for (unsigned char c : text) {
    hash ^= c;
    hash *= 1099511628211ull;
  }
  return hash;
}

}  // namespace visa::mpi
