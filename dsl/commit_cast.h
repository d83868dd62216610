// The Commit Adapter's cast: `commit_cast` and `commit_cast_relu`, f32 -> bf16 on the way into DM.
//
// The notes (engine-semantics 2.3, 3.9; mapping-algebra 4.4 and case 66) describe it: element-wise
// f32 -> bf16 with the hardware rule the Cast Engine uses (round to nearest even, f32 subnormals
// flush to a zero of their sign, NaN becomes 0x7fc0), the Packet mapping unchanged (8 f32 = 32 B
// become 8 bf16 = 16 B), on the main context only. The ReLU form first sends every f32 whose sign
// bit is set and that is not NaN (negatives, -0.0, negative subnormals) to +0. The packet the
// commit writes must be a whole number of 16-byte units measured in f32 (`config_commit_cast`);
// that is checked by the commit that follows (dsl/commit_engine.cc), which knows the trimmed size.
// The stage is recorded as a CastStage of kind kCommit / kCommitRelu, so both backends run it
// where they run casts.
#pragma once

#include <cstdint>

#include "absl/status/statusor.h"
#include "dsl/cast_engine.h"
#include "dsl/stream.h"

namespace visa {

// The unit the commit_in_size (in f32 bytes) must be a multiple of: 8 * (32 / 16).
inline constexpr int64_t kCommitCastUnitBytes = 16;

// Checks `commit_cast::<to>()` (or `commit_cast_relu`) on `in` at `position` of a `context`
// pipeline and derives the stage. Errors name the rule: f32 -> bf16 only, main context only, the
// input packet one flit.
absl::StatusOr<CastStage> PlanCommitCast(const StreamShape& in, ContextKind context, DType to, bool relu);

// The ReLU of commit_cast_relu on an f32 pattern: +0 for a set sign bit unless NaN.
uint32_t CommitCastRelu(uint32_t f32_bits);

// The conversion of one element by `stage` (a Cast Engine or a commit cast), bit for bit.
absl::StatusOr<uint32_t> ConvertByCastStage(const CastStage& stage, uint32_t bits);

// The commit_cast rule on the packet a commit writes: `commit_in_f32_bytes` (the trimmed input,
// in f32) must be a multiple of 16 B; the error names the legal sizes.
absl::Status CheckCommitCastPacket(int64_t commit_in_f32_bytes);

}  // namespace visa
