// Stream shapes: what a Tensor Unit stream looks like between two engines.
//
// A stream tensor is (dtype, Chip, Cluster, Slice, Time, Packet): every slice delivers, at each
// time step, one packet. Position (chip, cluster, slice, time, packet) of the pair of the five
// mappings holds the union of their indices (manual, "Memory and Stream"). Engines check their
// rules on the shape they receive and produce the next shape; the interpreter moves data between
// two shapes by tensor index, so every engine that only rearranges (switch, collect, transpose)
// needs no evaluation code of its own.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "dsl/context_kind.h"
#include "dsl/dtype.h"
#include "dsl/mapping.h"

namespace visa {

// Where a stream is in the pipeline (the manual's `Position`).
// kAligned and kContracted are the manual's AlignedPair and ContractionTensor, the two steps
// inside the Contraction Engine; kContraction is after its accumulator.
enum class StreamPosition {
  kBegin, kFetch, kSwitch, kCollect, kAligned, kContracted, kContraction, kReduce, kCast, kTranspose,
  kCommitCast,  // after the Commit Adapter's commit_cast / commit_cast_relu
};
const char* StreamPositionName(StreamPosition position);  // "Begin", "Fetch", ...

inline constexpr int64_t kFlitBytes = 32;
inline constexpr int kSlicesPerCluster = 256;
inline constexpr int kClustersPerChip = 2;

struct StreamShape {
  DType dtype = DType::kI8;
  Mapping chip, cluster, slice, time, packet;
  // The Contraction Engine's Rows (MAC lanes), between Slice and Time; only aligned and
  // contracted streams (align .. contract) have them.
  std::optional<Mapping> row;

  int64_t packet_bits() const { return packet.size() * Bits(dtype); }
  // Pair(chip, cluster, slice, [row,] time, packet): the stream's positions.
  Mapping Full() const;
  // "i8 [1] [1 # 2] [A / 8 # 256] time [1] packet [A % 8]"
  std::string ToString() const;
};

}  // namespace visa
