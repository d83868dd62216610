// Index-driven relayout of host tensor images (the interpreter's data movement).
#include "interp/index_move.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "dsl/status_macros.h"

namespace visa::interp {

Index Restrict(const Index& index, const std::vector<std::string>& names) {
  Index out;
  for (const auto& [axis, value] : index.coords()) {
    if (std::binary_search(names.begin(), names.end(), axis)) out.Set(axis, value);
  }
  return out;
}

absl::StatusOr<HostTensor> MoveByIndex(const HostTensor& src, const Mapping& dst, MovePolicy policy) {
  RETURN_IF_ERROR(dst.status());
  ASSIGN_OR_RETURN(HostTensor out, HostTensor::Zeros(src.dtype(), dst));
  const std::vector<std::string> src_axes = src.mapping().axis_names();
  std::vector<bool> read(policy.allow_drop ? 0 : src.size(), false);
  for (int64_t p = 0; p < dst.size(); ++p) {
    Cell cell = dst.map(p);
    if (!cell.live()) {
      if (policy.pad_bits != 0) RETURN_IF_ERROR(out.SetBits(p, policy.pad_bits));
      continue;
    }
    Index wanted = Restrict(cell.index, src_axes);
    std::optional<int64_t> q = src.mapping().inverse(wanted);
    if (!q) {
      return absl::InvalidArgumentError(absl::StrCat(
          "move: position ", p, " of `", dst.ToString(), "` holds ", cell.index.ToString(),
          ", which the source `", src.mapping().ToString(), "` does not hold"));
    }
    ASSIGN_OR_RETURN(uint32_t bits, src.GetBits(*q));
    RETURN_IF_ERROR(out.SetBits(p, bits));
    if (!read.empty()) read[*q] = true;
  }
  for (int64_t q = 0; q < static_cast<int64_t>(read.size()); ++q) {
    if (read[q]) continue;
    Cell cell = src.mapping().map(q);
    // Broadcast digits repeat an index; only the first position holding it is ever read.
    if (cell.live() && !read[*src.mapping().inverse(cell.index)]) {
      return absl::InvalidArgumentError(absl::StrCat(
          "move: the source `", src.mapping().ToString(), "` holds ", cell.index.ToString(),
          " (position ", q, "), which `", dst.ToString(), "` does not hold; the move would drop data"));
    }
  }
  return out;
}

}  // namespace visa::interp
