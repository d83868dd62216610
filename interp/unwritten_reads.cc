// Engine reads of unwritten elements: a mask of the unwritten live source positions moved like
// the data, so the check sees exactly the positions the interpreter's move reads.
#include "interp/unwritten_reads.h"

#include <vector>

#include "dsl/index_matching.h"
#include "dsl/status_macros.h"
#include "interp/index_move.h"
#include "runtime/device.h"
#include "runtime/host_tensor.h"
#include "runtime/uninitialized_reads.h"

namespace visa::interp {

absl::Status CheckStreamReads(absl::Span<const DeviceTensor> sources, const std::optional<Mapping>& interleave,
                              const Mapping& stream, absl::string_view op) {
  if (sources.empty() || !sources[0].device().tracks_writes()) return absl::OkStatus();
  // Cheap first: most reads are of fully written tensors.
  std::vector<UnwrittenElements> unwritten;
  int64_t total = 0;
  for (const DeviceTensor& source : sources) {
    unwritten.push_back(FindUnwritten(source, /*with_mask=*/true));
    total += unwritten.back().count;
  }
  if (total == 0) return absl::OkStatus();
  // Some live element is unwritten: does the move read it? Move a mask (1: unwritten) the way the
  // data moves; padding the stream adds reads as 0.
  const Mapping image_mapping = interleave ? Pair({*interleave, sources[0].full_mapping()}) : sources[0].full_mapping();
  RETURN_IF_ERROR(image_mapping.status());
  const int64_t per_source = sources[0].full_mapping().size();
  std::vector<uint8_t> bytes;
  bytes.reserve(static_cast<size_t>(per_source * static_cast<int64_t>(sources.size())));
  for (const UnwrittenElements& u : unwritten) {
    if (u.mask.empty()) {
      bytes.insert(bytes.end(), static_cast<size_t>(per_source), 0);
    } else {
      bytes.insert(bytes.end(), u.mask.begin(), u.mask.end());
    }
  }
  ASSIGN_OR_RETURN(HostTensor mask, HostTensor::FromBytes(DType::kI8, image_mapping, std::move(bytes)));
  ASSIGN_OR_RETURN(HostTensor moved, MoveByIndex(mask, stream, {.allow_drop = true}));
  const std::vector<uint8_t>& read = moved.bytes();
  for (int64_t p = 0; p < static_cast<int64_t>(read.size()); ++p) {
    if (read[p] == 0) continue;
    // The source position the move read for p, as the reference move finds it.
    const Cell cell = stream.map(p);
    VISA_CHECK(cell.live(), "a padding stream position read a source element");
    const std::optional<Index> wanted = MatchByDigit(cell.index, image_mapping);
    const std::optional<int64_t> q = wanted ? image_mapping.inverse(*wanted) : std::nullopt;
    VISA_CHECK(q.has_value(), "a stream position the move filled holds no source index");
    const size_t source = static_cast<size_t>(*q / per_source);
    return ReportUnwrittenRead(sources[source], op, *q % per_source, unwritten[source].count);
  }
  return absl::OkStatus();
}

}  // namespace visa::interp
