// Move kernels: the LLVM IR of one compiled move, `dst[d] = op(src[s])` over a loop nest of
// constant (count, stride) levels or over a run list, with the outermost loop split into
// [begin, end) so slices of work run on separate threads.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "jit/element_op.h"
#include "jit/move_nest.h"

namespace llvm {
class Module;
}

namespace visa::jit {

// void f(uint8_t* dst, const uint8_t* src, const int64_t* runs, int64_t begin, int64_t end):
// nest kernels ignore `runs` and run outermost iterations [begin, end); run-list kernels run runs
// [begin, end), each four int64 (dst, src, length, src_stride).
using MoveFn = void (*)(uint8_t* dst, const uint8_t* src, const int64_t* runs, int64_t begin, int64_t end);

struct MoveSpec {
  std::optional<MoveNest> nest;  // absent: a run-list kernel
  ElementOp op;                  // op.from is the source's type, op.to the destination's
  // Streaming stores (streaming_move.h): the nest's innermost level is one whole vector
  // (StreamingNest), stored at its true alignment with !nontemporal. The caller checks the base
  // address is vector-aligned and fences (FenceStreamingStores) on each thread after it ran.
  bool streaming = false;
  // The code's identity: what the cache of compiled kernels is keyed by.
  std::string Key() const;
};

// Writing small inner levels out (UnrolledLevels) makes at most this many copies of level 0, and
// copies at most this many of its elements in all.
inline constexpr int64_t kMaxUnrolledBodies = 8;
inline constexpr int64_t kMaxUnrolledElements = 256;

// The side of the square tiles a transposing copy moves at a time.
inline constexpr int kTransposeTile = 8;

// Whether `spec`'s kernel moves its two innermost levels as transposed tiles (a plain copy of
// 1-, 2- or 4-byte elements whose level 0 is contiguous in the destination and level 1 in the
// source, both counts whole tiles, with a level around them): a blocked transpose instead of an
// element-by-element gather.
bool TransposesInBlocks(const MoveSpec& spec);

// How many of `spec`'s innermost levels (counted from level 0) its kernel writes out as
// straight-line code rather than loops: levels 1 .. result-1, whose counts multiply to at most
// kMaxUnrolledBodies and, times level 0's count, to at most kMaxUnrolledElements (a long level 0
// already pays for its loop, and each copy is vectorized again: compile time). Level 0 stays as it
// is (one streamed vector, or the loop of elements the vectorizer turns into vectors) and the
// outermost level stays a loop, since threads split it; 1 means nothing is written out.
int UnrolledLevels(const MoveSpec& spec);

// Which of `spec`'s nest levels (innermost first) are loops above level 0 and the written-out
// levels (and not the transposed tiles' level 1): their counts and strides are the kernel's
// parameters (shared_body.h: LoadParameters), so that a program's moves differing only there
// share one compiled body.
std::vector<bool> ParameterLevels(const MoveSpec& spec);

// Adds the function `name` computing `spec` to `module`.
void BuildMoveFunction(llvm::Module& module, const std::string& name, const MoveSpec& spec);

// The unoptimized LLVM IR of `spec`'s function `move`, as text (for tests and debugging).
std::string MoveFunctionIr(const MoveSpec& spec);

}  // namespace visa::jit
