// Relayout tables: the layout algebra's run list under the DMA rule, and the coverage check.
#include "runtime/relayout.h"

#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "dsl/index.h"
#include "dsl/status_macros.h"

namespace visa {
namespace {

std::string AxisList(const Mapping& m) {
  const std::vector<std::string> names = m.axis_names();
  return names.empty() ? std::string("no axes") : absl::StrCat("axes ", absl::StrJoin(names, ", "));
}

absl::Status UnheldTensorError(const Mapping& dst, const Mapping& src, int64_t p) {
  return absl::InvalidArgumentError(absl::StrCat(
      "Tensor Function: destination position ", p, " of `", dst.ToString(), "` holds tensor index ",
      dst.map(p).index.ToString(), ", which the source `", src.ToString(), "` (", AxisList(src),
      ") does not hold; a move is the identity on the mathematical tensor (manual, \"Tensor "
      "Functions\"), so every destination element must come from the source"));
}

absl::Status DroppedTensorError(const Mapping& src, const Mapping& dst, const Index& index, int64_t q) {
  return absl::InvalidArgumentError(absl::StrCat(
      "Tensor Function: the source `", src.ToString(), "` holds tensor index ", index.ToString(),
      " (position ", q, ") that no position of the destination `", dst.ToString(),
      "` holds; the move would drop it, so it would not be the identity on the mathematical "
      "tensor (manual, \"Tensor Functions\")"));
}

// Coverage when a source position holds several indices (linear combinations): positions no
// longer stand for indices, so compare the index sets themselves (such mappings are small).
absl::Status CheckCoversManyToOne(const Mapping& src, const Mapping& dst) {
  std::set<Index> held;
  // Every index a destination position holds counts (a combination position holds several).
  for (int64_t p = 0; p < dst.size(); ++p) {
    if (!dst.map(p).live()) continue;  // padding everywhere: skip the full evaluation
    for (const Cell& cell : dst.maps(p)) {
      if (cell.live()) held.insert(MatchByAxis(cell.index, src));
    }
  }
  for (int64_t q = 0; q < src.size(); ++q) {
    if (!src.map(q).live()) continue;
    for (const Cell& cell : src.maps(q)) {
      if (cell.live() && !held.contains(cell.index)) return DroppedTensorError(src, dst, cell.index, q);
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<RelayoutPlan> RelayoutPlan::Make(const Mapping& dst, const Mapping& src) {
  RETURN_IF_ERROR(dst.status());
  RETURN_IF_ERROR(src.status());
  return RelayoutPlan(dst, src);
}

bool RelayoutPlan::fast() const { return Layout::Of(dst_).affine() && Layout::Of(src_).invertible(); }

absl::Status RelayoutPlan::Run(ChunkFn apply) const {
  std::vector<uint64_t> seen(static_cast<size_t>((src_.size() + 63) / 64), 0);
  auto mark = [&seen](int64_t q) { seen[q >> 6] |= uint64_t{1} << (q & 63); };
  const std::optional<int64_t> unheld =
      ForEachRun(dst_, src_, MatchRule::kByAxis, [&](absl::Span<const RelayoutRun> runs) {
        for (const RelayoutRun& run : runs) {
          for (int64_t i = 0; i < run.length; ++i) mark(run.src + i * run.src_stride);
        }
        apply(runs);
      });
  if (unheld) return UnheldTensorError(dst_, src_, *unheld);
  if (!src_.is_one_to_one()) return CheckCoversManyToOne(src_, dst_);
  const std::optional<int64_t> dropped =
      FirstDropped(src_, [&seen](int64_t q) { return ((seen[q >> 6] >> (q & 63)) & 1) != 0; });
  if (dropped) return DroppedTensorError(src_, dst_, src_.map(*dropped).index, *dropped);
  return absl::OkStatus();
}

absl::StatusOr<std::pair<std::vector<int64_t>, std::vector<int64_t>>> RelayoutPlan::Table() const {
  std::pair<std::vector<int64_t>, std::vector<int64_t>> table;
  RETURN_IF_ERROR(Run([&](absl::Span<const RelayoutRun> runs) {
    for (const RelayoutRun& run : runs) {
      for (int64_t i = 0; i < run.length; ++i) {
        table.first.push_back(run.dst + i);
        table.second.push_back(run.src + i * run.src_stride);
      }
    }
  }));
  return table;
}

absl::StatusOr<std::vector<int64_t>> LivePositions(const Mapping& mapping) {
  RETURN_IF_ERROR(mapping.status());
  std::vector<int64_t> positions;
  const Layout layout = Layout::Of(mapping);
  if (layout.affine()) {
    ForEachLive(layout, [&](int64_t p, const std::vector<int64_t>&) {
      positions.push_back(p);
      return true;
    });
    return positions;
  }
  for (int64_t p = 0; p < mapping.size(); ++p) {
    if (mapping.map(p).live()) positions.push_back(p);
  }
  return positions;
}

absl::StatusOr<int64_t> LiveExtent(const Mapping& mapping) {
  RETURN_IF_ERROR(mapping.status());
  const Layout layout = Layout::Of(mapping);
  if (layout.affine()) {
    int64_t last = 0;
    for (const LayoutMode& m : layout.modes()) last += (m.live - 1) * m.weight;
    return last + 1;
  }
  for (int64_t p = mapping.size(); p-- > 0;) {
    if (mapping.map(p).live()) return p + 1;
  }
  return 0;
}

}  // namespace visa
