// Large heap blocks kept for reuse in a rank of several (the opposite of `visa run`'s
// tools/large_block_release.h, for the process's life).
//
// A rank runs each pipeline as per-chip parts (mpi/chip_range_pipeline.h), and on the JIT a part
// on a chip view takes the staged walk, whose zeroed stream images span every chip's units (tens
// of MB per part for the tiny Llama layer; jit/live_units.h trims only a live prefix). Served by
// their own mappings, every image was mapped, faulted in page by page and unmapped again at
// every op: the page faults cost twice the zeroing itself (perf of rank 1 of 2 on
// `mpi_llama_bench 1 16 jit`: 66 % of its time under memset, most of it in the kernel). From the
// heap, a freed image's pages serve the next one.
#pragma once

namespace visa::mpi {

// Blocks up to 32 MiB (glibc's largest mmap threshold) come from the heap, and up to 512 MiB freed
// at its top stays there. Returns false where the allocator refuses (a sanitizer's).
bool ReuseLargeBlocks();

}  // namespace visa::mpi
