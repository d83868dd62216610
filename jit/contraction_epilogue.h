// ContractionEpilogue: a fused contraction's accumulators written straight into device memory,
// through the stages after accumulate (an optional cast, then commit), slice by slice.
//
// Stage by stage, the accumulator image [outer][row][retained time][contracted packet] is moved
// into the Reducer's output stream, cast into a new stream, and committed through the Commit
// Sequencer's entries (three full-size images, two of them zero-filled first). Each of those is a
// move by index, so their composition is a move too: accumulator slot -> stream position -> cast
// stream position -> device position. Planned once, by walking the three loop nests on the host,
// the composition is one loop nest per slice (the same for every slice, from the slice's output
// unit), compiled as one move with the cast's conversion. The lane kernel leaves one slice's
// accumulators in a small per-thread buffer and the epilogue writes them out right after it, in the
// same parallel loop: no image, no fill, no serial pass.
//
// The bits are the stage-by-stage path's: every committed position receives the cast (the same
// ElementOp) of the accumulator slot whose index it holds. Where that does not describe the
// pipeline, the plan says why and the op runs its stages as before:
//  - stages other than one optional cast between accumulate and commit (vector stages, transposes,
//    to_trf / to_vrf);
//  - a commit not walked from its Sequencer entries in place (commit_view, disabled slices);
//  - a committed position whose value no accumulator holds (the stream's padding, a slot the
//    kernel never writes): it would need its zero bits written too;
//  - slices whose committed positions do not follow one per-slice loop nest;
//  - a 4-bit output (two positions share a byte).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "jit/element_op.h"
#include "jit/fused_contraction.h"
#include "jit/move_nest.h"
#include "runtime/program.h"

namespace llvm {
class Module;
}

namespace visa::jit {

struct ContractionEpilogue {
  // One slice: destination = output positions from the slice's first committed one, source =
  // the slice's accumulator slots ([row][retained time][contracted packet]) from `first_slot`;
  // coalesced, never split.
  MoveNest nest;
  ElementOp op;                     // the cast's conversion, or a copy of the accumulator type
  std::vector<int64_t> unit_start;  // per outer slice: its first committed output position, -1: none
  int64_t first_slot = 0;           // the slot the slice's first committed position reads
  int64_t slots = 0;                // accumulator slots per slice
  int64_t max_dst = 0;             // the largest output position written (from the tensor's first)
};

// The epilogue of `plan` (the fused front of `op`), or why the stages after accumulate run as
// before. `commit`: the commit's write nest over the output in place (output positions <- final
// stream positions), nullopt when the commit does not walk it; `unit_positions`: output positions
// from one unit to the next; `output`: the output tensor's type.
std::variant<ContractionEpilogue, std::string> PlanContractionEpilogue(const FusedContraction& plan,
                                                                      const PipelineOp& op,
                                                                      const std::optional<MoveNest>& commit,
                                                                      int64_t unit_positions, DType output);

// The accumulator slots of one slice ([row][retained time][contracted packet]) the lane kernel of
// `spec` writes in every live slice; the others keep what the caller put there.
std::vector<uint8_t> SlotsWritten(const LaneContractionSpec& spec);

// void f(uint8_t* dst, const uint8_t* src): one slice's epilogue, dst at the slice's first
// committed position (ContractionEpilogue::unit_start), src at its accumulator `first_slot`.
using EpilogueFn = void (*)(uint8_t* dst, const uint8_t* src);

// Adds the function `name` running `epilogue` for one slice to `module`. The loops are ordered for
// the vectorizer, not as the nest lists them (each position is written once, so any order writes
// the same bytes): innermost the level that reads the accumulators contiguously, inside it the
// short levels that fill the destination between its steps unrolled, so that its stores form one
// interleaved group (the GEMM's 8 x 128 transpose becomes shuffles and whole-vector stores).
void BuildEpilogueFunction(llvm::Module& module, const std::string& name, const ContractionEpilogue& epilogue);
// The code's identity (the kernel cache's key).
std::string EpilogueKey(const ContractionEpilogue& epilogue);

// Calls fn(dst, src) for every pair of `nest`, innermost level fastest.
template <typename Fn>
void ForEachPair(const MoveNest& nest, Fn&& fn) {
  const size_t depth = nest.levels.size();
  std::vector<int64_t> counter(depth, 0);
  int64_t dst = 0, src = 0;
  for (int64_t n = nest.elements(); n > 0; --n) {
    fn(dst, src);
    for (size_t l = 0; l < depth; ++l) {
      const NestLevel& level = nest.levels[l];
      if (++counter[l] < level.count) {
        dst += level.dst_stride;
        src += level.src_stride;
        break;
      }
      counter[l] = 0;
      dst -= (level.count - 1) * level.dst_stride;
      src -= (level.count - 1) * level.src_stride;
    }
  }
}

// The loop nest (innermost first) that enumerates exactly `pairs` (destination, source) in their
// order as offsets from the first pair, or nullopt when no nest does; found level by level: each
// level the longest repetition of the block below it at a constant step, checked by enumerating
// the result.
std::optional<MoveNest> NestOfPairs(const std::vector<std::pair<int64_t, int64_t>>& pairs);

}  // namespace visa::jit
