// Stream shapes: printing and the full position mapping.
#include "dsl/stream.h"

#include "absl/strings/str_cat.h"

namespace visa {

const char* StreamPositionName(StreamPosition position) {
  switch (position) {
    case StreamPosition::kBegin: return "Begin";
    case StreamPosition::kFetch: return "Fetch";
    case StreamPosition::kSwitch: return "Switch";
    case StreamPosition::kCollect: return "Collect";
    case StreamPosition::kAligned: return "AlignedPair";
    case StreamPosition::kContracted: return "ContractionTensor";
    case StreamPosition::kContraction: return "Contraction";
    case StreamPosition::kReduce: return "Reduce";
    case StreamPosition::kCast: return "Cast";
    case StreamPosition::kTranspose: return "Transpose";
    case StreamPosition::kCommitCast: return "CommitCast";
  }
  return "?";
}

Mapping StreamShape::Full() const {
  if (row) return Pair({chip, cluster, slice, *row, time, packet});
  return Pair({chip, cluster, slice, time, packet});
}

std::string StreamShape::ToString() const {
  return absl::StrCat(std::string(Name(dtype)), " chip [", chip.ToString(), "] cluster [", cluster.ToString(),
                      "] slice [", slice.ToString(), "]", row ? absl::StrCat(" row [", row->ToString(), "]") : "",
                      " time [", time.ToString(), "] packet [",
                      packet.ToString(), "]");
}

}  // namespace visa
