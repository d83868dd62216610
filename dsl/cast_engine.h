// The Cast Engine: the precision-lowering stage's rules and the stream it produces.
//
// The engine narrows each element of a one-flit packet (i32 -> i4 / i8 / i16, f32 -> f8e5m2 /
// f8e4m3 / f16 / bf16) and pads the result back to one 32-byte flit; Time and the spatial levels
// pass through unchanged (manual, "Cast Engine"). This module only validates a cast and derives the
// output shape and a cycle estimate: the interpreter converts the values (runtime/scalar_convert.h)
// and moves them between the two shapes by tensor index.
#pragma once

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "dsl/dtype.h"
#include "dsl/mapping.h"
#include "dsl/stream.h"

namespace visa {

// Which engine narrows: the Cast Engine, or the Commit Adapter's commit_cast (with or without
// its ReLU, dsl/commit_cast.h), which keeps the packet mapping instead of padding it to a flit.
enum class CastKind { kEngine, kCommit, kCommitRelu };

struct CastStage {
  CastKind kind = CastKind::kEngine;
  DType from = DType::kI32;
  DType to = DType::kI8;
  StreamShape out;     // the input shape with dtype `to` and the padded packet
  int64_t cycles = 0;  // one flit per cycle: the engine is a pass-through stage
  // "Cast i32 -> i8: packet [A] (8 x 4 B) -> [A # 32] (32 x 1 B), time [B] unchanged, 4 cycles"
  std::string Describe() const;
};

// Checks `cast::<to, out_packet>()` on the stream `in` (the output of Collect, Contraction or the
// Vector Engine) and derives the output stream. Errors (InvalidArgument) name the broken rule:
// the supported type pairs, "input packet must be exactly 32 bytes", "output packet must be
// exactly 32 bytes", and the packet transformation (the output packet is the input packet padded
// to one flit of `to`, compared by meaning).
absl::StatusOr<CastStage> PlanCast(const StreamShape& in, DType to, const Mapping& out_packet);

}  // namespace visa
