// AxisToggle execution ids by position.
#include "dsl/vector_tags.h"

#include "absl/strings/str_cat.h"
#include "dsl/index.h"

namespace visa {

absl::StatusOr<std::vector<uint8_t>> AxisToggleTags(const Mapping& layout, const std::string& axis) {
  std::vector<uint8_t> tags(static_cast<size_t>(layout.size()), 0);
  for (int64_t p = 0; p < layout.size(); ++p) {
    const Cell cell = layout.map(p);
    if (cell.live()) tags[p] = static_cast<uint8_t>((cell.index[axis] % 2) << 3);
  }
  return tags;
}

absl::StatusOr<std::vector<int64_t>> ZipPositions(const Mapping& paired, const Mapping& out, const std::string& axis) {
  std::vector<int64_t> positions(static_cast<size_t>(2 * out.size()), -1);
  for (int64_t p = 0; p < out.size(); ++p) {
    const Cell cell = out.map(p);
    if (!cell.live()) continue;
    for (int g = 0; g < 2; ++g) {
      Index index = cell.index;
      index.Set(axis, g);
      std::optional<int64_t> q = paired.inverse(index);
      if (!q) {
        return absl::InvalidArgumentError(absl::StrCat("Two-Group Mode: no position of the paired stream [",
                                                       paired.ToString(), "] holds ", index.ToString()));
      }
      positions[2 * p + g] = *q;
    }
  }
  return positions;
}

}  // namespace visa
