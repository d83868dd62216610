// Uninitialized reads: marking by live runs of a tensor's Element, finding unwritten elements,
// and the report.
#include "runtime/uninitialized_reads.h"

#include <algorithm>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "dsl/layout.h"
#include "dsl/status_macros.h"

namespace visa {
namespace {

using Runs = std::vector<std::pair<int64_t, int64_t>>;

// Half-open runs [begin, end) of the live positions of `mapping`, increasing and merged.
Runs WalkLiveRuns(const Mapping& mapping) {
  std::vector<std::pair<int64_t, int64_t>> runs;
  // The identity move's run list visits exactly the live positions, run by run.
  const std::optional<int64_t> unheld =
      ForEachRun(mapping, mapping, MatchRule::kByAxis, [&](absl::Span<const MoveRun> chunk) {
        for (const MoveRun& run : chunk) {
          if (!runs.empty() && runs.back().second == run.dst) {
            runs.back().second += run.length;
          } else {
            runs.emplace_back(run.dst, run.dst + run.length);
          }
        }
      });
  VISA_CHECK(!unheld.has_value(), "a mapping does not hold its own indices");
  return runs;
}

// LiveRuns of the Elements this thread marked or checked last: a program run again marks the
// same ops' outputs every run, and a walk of the mapping costs more than the marks.
const Runs& LiveRuns(const Mapping& mapping) {
  constexpr size_t kRemembered = 16;
  thread_local std::vector<std::pair<Mapping, Runs>> recent;
  for (size_t k = 0; k < recent.size(); ++k) {
    if (recent[k].first == mapping) {
      if (k > 0) std::swap(recent[k], recent[k - 1]);  // the frequent ones move forward
      return recent[k > 0 ? k - 1 : 0].second;
    }
  }
  if (recent.size() == kRemembered) recent.pop_back();
  recent.emplace_back(mapping, WalkLiveRuns(mapping));
  return recent.back().second;
}

// Whether `mapping` has no padding position: its live positions are one run over all of it.
bool EveryPositionLive(const Mapping& mapping) {
  const Runs& runs = LiveRuns(mapping);
  return runs.size() == 1 && runs[0].first == 0 && runs[0].second == mapping.size();
}

// Where the Element positions of a handle live in each of its units: window position w is
// Element position offset + w, stored from byte address + (offset + w) * bits / 8.
struct ElementBytes {
  int64_t address = 0;
  int64_t offset = 0;
  int bits = 8;

  int64_t Begin(int64_t w) const { return address + (offset + w) * bits / 8; }
  int64_t End(int64_t w) const { return address + ((offset + w + 1) * bits + 7) / 8; }
  // The first window position whose bytes hold `byte` (4-bit types: the low nibble's).
  int64_t Holding(int64_t byte) const { return (byte - address) * 8 / bits - offset; }
};

ElementBytes BytesOf(const DeviceTensor& tensor) {
  return ElementBytes{tensor.address(), tensor.window_offset(), StorageBits(tensor.dtype())};
}

// The window positions [0, n) a handle reaches inside its tensor's Element.
int64_t WindowEnd(const DeviceTensor& tensor) {
  return std::clamp<int64_t>(tensor.base_element().size() - tensor.window_offset(), 0,
                             tensor.element().size());
}

// Calls fn(w) for each window position in [begin, end) with a byte nothing wrote, increasing.
template <typename Fn>
void ForEachUnwritten(const Device& device, Tier tier, int64_t unit, const ElementBytes& bytes,
                      int64_t begin, int64_t end, Fn&& fn) {
  for (int64_t w = begin; w < end;) {
    const int64_t from = bytes.Begin(w);
    const std::optional<int64_t> hole = device.FirstUnwritten(tier, unit, from, bytes.End(end - 1) - from);
    if (!hole) return;
    const int64_t e = std::max(w, bytes.Holding(*hole));
    fn(e);
    w = e + 1;
  }
}

std::string TierWord(Tier tier) { return std::string(TierName(tier)); }

// "{A=0, B=3}": every axis of `mapping` (Index::ToString leaves zero coordinates out).
std::string FullIndex(const Mapping& mapping, const Index& index) {
  std::vector<std::string> parts;
  for (const std::string& axis : mapping.axis_names()) parts.push_back(absl::StrCat(axis, "=", index[axis]));
  return absl::StrCat("{", absl::StrJoin(parts, ", "), "}");
}

}  // namespace

absl::StatusOr<UninitializedReads> ParseUninitializedReads(absl::string_view text) {
  const std::string lower = absl::AsciiStrToLower(text);
  if (lower == "off") return UninitializedReads::kOff;
  if (lower == "warn") return UninitializedReads::kWarn;
  if (lower == "error") return UninitializedReads::kError;
  return absl::InvalidArgumentError(absl::StrCat(
      "uninitialized reads: `", text, "` is not a mode; use error (the default: a read of memory "
      "nothing wrote fails), warn (report it and go on) or off (no tracking)"));
}

absl::string_view UninitializedReadsName(UninitializedReads mode) {
  switch (mode) {
    case UninitializedReads::kOff: return "off";
    case UninitializedReads::kWarn: return "warn";
    case UninitializedReads::kError: return "error";
  }
  return "?";
}

void MarkWritten(const DeviceTensor& tensor, const SliceBitmap& slices) {
  Device& device = tensor.device();
  if (!device.tracks_writes()) return;
  // A whole tensor on every slice marks exactly its placement's live positions: once per placement.
  const bool whole = !tensor.is_view() && slices.all();
  if (whole && device.wholly_marked().Contains(tensor.shared_placement())) return;
  const Placement& placement = tensor.placement();
  const ElementBytes bytes = BytesOf(tensor);
  const int64_t end = WindowEnd(tensor);
  const bool by_slice = !slices.all() && (placement.tier == Tier::kDm || placement.tier == Tier::kSpm);
  const Runs& runs = LiveRuns(tensor.element());
  for (const int64_t unit : placement.units) {
    if (by_slice && !slices.enabled(static_cast<int>(unit % kSlicesPerCluster))) continue;
    for (const auto& [first, last] : runs) {
      const int64_t stop = std::min(last, end);
      if (first >= stop) continue;
      device.MarkWritten(placement.tier, unit, bytes.Begin(first), bytes.End(stop - 1) - bytes.Begin(first));
    }
  }
  if (whole) device.wholly_marked().Insert(tensor.shared_placement());
}

void MarkPipelineWritten(const PipelineOp& op, const DeviceTensor& output) {
  const auto* commit = op.stages.empty() ? nullptr : std::get_if<CommitStage>(&op.stages.back());
  MarkWritten(output, commit != nullptr ? commit->slices : SliceBitmap::All());
}

UnwrittenElements FindUnwritten(const DeviceTensor& tensor, bool with_mask) {
  UnwrittenElements out;
  const Device& device = tensor.device();
  if (!device.tracks_writes()) return out;
  // A tensor whose placement was wholly marked once holds no unwritten element (marks are never
  // undone): what a program run again reads, found without walking its units. So does a view of
  // it when every position of the base Element is live (its window's bytes are all marked).
  if (tensor.device().wholly_marked().Contains(tensor.shared_placement()) &&
      (!tensor.is_view() || EveryPositionLive(tensor.base_element()))) {
    return out;
  }
  const Placement& placement = tensor.placement();
  const ElementBytes bytes = BytesOf(tensor);
  const int64_t window = tensor.element().size();
  const int64_t end = WindowEnd(tensor);
  const std::vector<std::pair<int64_t, int64_t>> runs = LiveRuns(tensor.element());
  for (size_t k = 0; k < placement.units.size(); ++k) {
    const int64_t first_position = placement.live_prefixes[k] * window;
    for (const auto& [first, last] : runs) {
      const int64_t stop = std::min(last, end);
      if (first >= stop) continue;
      ForEachUnwritten(device, placement.tier, placement.units[k], bytes, first, stop, [&](int64_t w) {
        const int64_t position = first_position + w;
        if (out.count++ == 0) {
          out.first = position;
          if (with_mask) out.mask.assign(static_cast<size_t>(placement.prefix_size * window), 0);
        }
        if (with_mask) out.mask[position] = 1;
      });
    }
  }
  return out;
}

absl::Status CheckAllWritten(const DeviceTensor& tensor, absl::string_view op) {
  const UnwrittenElements unwritten = FindUnwritten(tensor, /*with_mask=*/false);
  if (unwritten.count == 0) return absl::OkStatus();
  return ReportUnwrittenRead(tensor, op, *unwritten.first, unwritten.count);
}

absl::Status ReportUnwrittenRead(const DeviceTensor& tensor, absl::string_view op, int64_t position,
                                 int64_t unwritten) {
  Device& device = tensor.device();
  const Placement& placement = tensor.placement();
  const int64_t window = tensor.element().size();
  const int64_t prefix = position / window, w = position % window;
  const auto live = std::lower_bound(placement.live_prefixes.begin(), placement.live_prefixes.end(), prefix);
  VISA_CHECK(live != placement.live_prefixes.end() && *live == prefix, "an unwritten element on a padding unit");
  const int64_t unit = placement.units[live - placement.live_prefixes.begin()];
  const ElementBytes bytes = BytesOf(tensor);
  const Mapping full = tensor.full_mapping();
  const Cell cell = full.map(position);
  const std::string message = absl::StrFormat(
      "Uninitialized Read: %s reads %s bytes [0x%x, 0x%x) on %s that nothing wrote: element %d (index "
      "%s) of %s (%d of its live elements are unwritten). The device would return whatever "
      "the memory held; write the tensor first (a host transfer, a DMA move or a commit), or make "
      "positions that hold no data padding (`#`)",
      op, TierWord(placement.tier), bytes.Begin(w), bytes.End(w), UnitName(SpaceOf(placement.tier), unit),
      tensor.window_offset() + w, cell.live() ? FullIndex(full, cell.index) : std::string("padding"),
      tensor.ToString(), unwritten);
  if (device.uninitialized_reads() == UninitializedReads::kWarn) {
    device.Warn(message);
    return absl::OkStatus();
  }
  return absl::FailedPreconditionError(absl::StrCat(
      message, ". DeviceOptions::uninitialized_reads = kWarn (`visa run --uninitialized warn`) reports "
               "this without failing"));
}

}  // namespace visa
