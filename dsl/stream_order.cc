// The pipeline's transition table.
#include "dsl/stream_order.h"

#include <algorithm>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace visa {
namespace {

using C = StreamCall;
constexpr C kAfterBegin[] = {C::kFetch, C::kFetchWithZeroPoint, C::kFetchWithZeroPoints, C::kFetchWithTable,
                             C::kFetchMasked};
constexpr C kAfterFetch[] = {C::kSwitch, C::kCollect};
constexpr C kAfterSwitch[] = {C::kCollect};
constexpr C kAfterCollect[] = {C::kAlign, C::kCast, C::kTranspose, C::kCommitCast, C::kCommitCastRelu, C::kCommit,
                               C::kToTrf, C::kToVrf};
constexpr C kAfterAligned[] = {C::kContract};
constexpr C kAfterContracted[] = {C::kAccumulate};
constexpr C kAfterContraction[] = {C::kCast, C::kTranspose, C::kCommitCast, C::kCommitCastRelu, C::kCommit};
constexpr C kAfterCast[] = {C::kTranspose, C::kCommit};
constexpr C kAfterTranspose[] = {C::kCommitCast, C::kCommitCastRelu, C::kCommit};
// The Commit Adapter's cast feeds the commit.
constexpr C kAfterCommitCast[] = {C::kCommit};
// vector_final(): "the result can continue to the Cast Engine, Transpose Engine, or Commit Engine".
constexpr C kAfterVector[] = {C::kCast, C::kTranspose, C::kCommitCast, C::kCommitCastRelu, C::kCommit};

}  // namespace

const char* StreamCallName(StreamCall call) {
  switch (call) {
    case C::kFetch: return "fetch";
    case C::kFetchWithZeroPoint: return "fetch_with_zero_point";
    case C::kFetchWithZeroPoints: return "fetch_with_zero_points";
    case C::kFetchWithTable: return "fetch_with_table";
    case C::kFetchMasked: return "fetch_masked";
    case C::kSwitch: return "switch";
    case C::kCollect: return "collect";
    case C::kAlign: return "align";
    case C::kContract: return "contract";
    case C::kAccumulate: return "accumulate";
    case C::kCast: return "cast";
    case C::kTranspose: return "transpose";
    case C::kCommit: return "commit";
    case C::kToTrf: return "to_trf";
    case C::kToVrf: return "to_vrf";
    case C::kCommitCast: return "commit_cast";
    case C::kCommitCastRelu: return "commit_cast_relu";
  }
  return "?";
}

absl::Span<const StreamCall> AllowedAfter(StreamPosition position) {
  switch (position) {
    case StreamPosition::kBegin: return kAfterBegin;
    case StreamPosition::kFetch: return kAfterFetch;
    case StreamPosition::kSwitch: return kAfterSwitch;
    case StreamPosition::kCollect: return kAfterCollect;
    case StreamPosition::kAligned: return kAfterAligned;
    case StreamPosition::kContracted: return kAfterContracted;
    case StreamPosition::kContraction: return kAfterContraction;
    case StreamPosition::kCast: return kAfterCast;
    case StreamPosition::kTranspose: return kAfterTranspose;
    case StreamPosition::kReduce: return kAfterVector;  // the Vector Engine's output (vector_final)
    case StreamPosition::kCommitCast: return kAfterCommitCast;
  }
  return {};
}

std::optional<StreamPosition> PositionAfter(StreamCall call) {
  switch (call) {
    case C::kFetch:
    case C::kFetchWithZeroPoint:
    case C::kFetchWithZeroPoints:
    case C::kFetchWithTable:
    case C::kFetchMasked: return StreamPosition::kFetch;
    case C::kSwitch: return StreamPosition::kSwitch;
    case C::kCollect: return StreamPosition::kCollect;
    case C::kAlign: return StreamPosition::kAligned;
    case C::kContract: return StreamPosition::kContracted;
    case C::kAccumulate: return StreamPosition::kContraction;
    case C::kCast: return StreamPosition::kCast;
    case C::kTranspose: return StreamPosition::kTranspose;
    case C::kCommitCast:
    case C::kCommitCastRelu: return StreamPosition::kCommitCast;
    case C::kCommit:
    case C::kToTrf:
    case C::kToVrf: return std::nullopt;
  }
  return std::nullopt;
}

absl::Status CheckStreamOrder(StreamPosition position, StreamCall call, ContextKind context) {
  absl::Span<const StreamCall> allowed = AllowedAfter(position);
  if (std::find(allowed.begin(), allowed.end(), call) != allowed.end()) return absl::OkStatus();
  std::vector<const char*> names;
  for (StreamCall c : allowed) names.push_back(StreamCallName(c));
  return absl::FailedPreconditionError(absl::StrCat("`", StreamCallName(call), "` is not allowed after ",
                                                    StreamPositionName(position), " (", ContextName(context),
                                                    " context); allowed here: ", absl::StrJoin(names, ", ")));
}

}  // namespace visa
