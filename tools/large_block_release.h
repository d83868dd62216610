// Large heap blocks given back to the system when they are freed, for the whole process.
//
// glibc serves a block of at least M_MMAP_THRESHOLD bytes (128 KiB at first) with its own
// mapping, unmapped again when it is freed; but freeing such a block raises the threshold to its
// size (up to 32 MiB), so every later block below it comes from the heap, where freed memory
// stays resident unless it happens to sit at the heap's top. A `visa run` plans and checks with
// multi-megabyte temporaries (the contraction epilogue's slot maps, the staged host images) while
// the device's memory is resident: once the threshold has moved, their memory stays too, and adds
// to the run's peak (the GEMM's first run: 105.3 -> 104.3 MB, its warm run 93.9 -> 92.3 MB).
#pragma once

#include <cstddef>

namespace visa::cli {

// The threshold the `visa` commands fix: glibc's own starting value.
inline constexpr size_t kLargeBlockBytes = size_t{128} * 1024;

// Fixes the threshold at kLargeBlockBytes (setting it turns glibc's adjustment off). Returns
// false where the allocator refuses (a sanitizer's, which has no such setting).
bool ReleaseLargeBlocksOnFree();

}  // namespace visa::cli
