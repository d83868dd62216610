// ReuseLargeBlocks: two mallopt calls.
#include "mpi/large_block_reuse.h"

#include <malloc.h>

namespace visa::mpi {

bool ReuseLargeBlocks() {
  const bool mmap = mallopt(M_MMAP_MAX, 0) == 1;
  const bool trim = mallopt(M_TRIM_THRESHOLD, 512 << 20) == 1;
  return mmap && trim;
}

}  // namespace visa::mpi
