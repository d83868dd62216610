// CommittedPages: which pages of an anonymous private mapping the host has committed (written),
// as opposed to never touched or only read (mapped to the shared zero page).
#pragma once

#include <cstdint>

namespace visa {

// Bytes of the committed pages of [begin, begin + size) (whole pages: the range is widened to
// page boundaries). From /proc/self/pagemap (a page present and mapped by this process alone);
// where that cannot be read, from mincore, which also counts pages only read.
int64_t CommittedBytes(const uint8_t* begin, int64_t size);
// Whether any page of [begin, begin + size) is mapped at all (written, only read, or swapped
// out): where none is, every byte reads zero and a write of zeros may be skipped. Conservative on
// purpose: a page written before a fork() is shared, not "committed" by the count above, until
// the child is gone, but it holds data.
bool AnyMapped(const uint8_t* begin, int64_t size);

}  // namespace visa
