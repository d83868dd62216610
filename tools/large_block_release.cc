// ReleaseLargeBlocksOnFree: one mallopt call.
#include "tools/large_block_release.h"

#include <malloc.h>

namespace visa::cli {

bool ReleaseLargeBlocksOnFree() { return mallopt(M_MMAP_THRESHOLD, static_cast<int>(kLargeBlockBytes)) == 1; }

}  // namespace visa::cli
