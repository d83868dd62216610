// The order of a Tensor Unit pipeline as a typed transition table: which engine call may follow
// each stream position and which position it leads to (manual, "Tensor Unit Stream" and each
// engine's page: Fetch -> [Switch] -> Collect -> [Contraction | Cast | Transpose] -> Commit).
#pragma once

#include <optional>

#include "absl/status/status.h"
#include "absl/types/span.h"
#include "dsl/stream.h"

namespace visa {

enum class StreamCall {
  kFetch, kFetchWithZeroPoint, kFetchWithZeroPoints, kFetchWithTable, kFetchMasked,
  kSwitch, kCollect, kAlign, kContract, kAccumulate, kCast, kTranspose,
  kCommit, kToTrf, kToVrf,
  kCommitCast, kCommitCastRelu,
};
const char* StreamCallName(StreamCall call);  // the C++ method's name: "fetch_masked", "commit", ...

// The calls the manual allows at `position`, in the order an error message lists them.
absl::Span<const StreamCall> AllowedAfter(StreamPosition position);

// Where the stream is after `call`; the final calls (commit, to_trf, to_vrf) end the pipeline and
// return nullopt.
std::optional<StreamPosition> PositionAfter(StreamCall call);

// OK when `call` may follow `position`; otherwise the error names the call, the position, the
// context and what is allowed there.
absl::Status CheckStreamOrder(StreamPosition position, StreamCall call, ContextKind context);

}  // namespace visa
