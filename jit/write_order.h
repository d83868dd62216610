// WriteOrder: a copy nest rearranged for the memory system: its levels walked in destination
// order, and its broadcast levels (source stride 0: one source element to many destination
// positions, e.g. a DMA to every slice of a row) taken out, so that the compiled copy writes the
// first copy once and plain copies of the destination's own bytes make the rest.
//
// Why: a DMA's descriptor nest lists its levels as the descriptors loop, which for the GEMM's
// broadcast put one 2 KiB row in each of 256 slices before the next row: every row a TLB miss and
// a fresh page, and every broadcast copy an element-by-element (or transposing) walk of the
// source again. Walked in destination order each slice's Element is one sequential run, and the
// broadcast copies are copies of bytes just written (still in the cache), which run at memcpy
// speed whatever the first copy's shape.
//
// The rearrangement keeps the set of (destination, source) pairs, so it is valid when the nest
// writes every destination position at most once (checked: DistinctWrites), whatever the order.
#pragma once

#include <cstdint>
#include <vector>

#include "jit/move_nest.h"

namespace visa::jit {

// One broadcast copy step: `nest` copies the destination's own positions (source positions are
// destination positions) from the destination's base to the base moved by `dst_offset` positions.
struct BroadcastCopy {
  MoveNest nest;
  int64_t dst_offset = 0;
};

struct WritePlan {
  MoveNest first;                     // the move without its broadcast levels
  std::vector<BroadcastCopy> copies;  // then these, in order
};

// Whether every destination position the nest visits is distinct (and every stride is
// non-negative): sorted by destination stride, each level's stride passes the reach of the levels
// below it.
bool DistinctWrites(const MoveNest& nest);

// The nest's levels sorted by destination stride (innermost smallest; ties keep their order),
// merged where they read as one loop. Requires DistinctWrites.
MoveNest InWriteOrder(const MoveNest& nest);

// The plan of a copy nest; no copies when it has no broadcast level or its writes are not
// DistinctWrites (then `first` is the nest as given).
WritePlan PlanWrites(const MoveNest& nest);

}  // namespace visa::jit
