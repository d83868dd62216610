// AxisToggle execution ids by position.
#include "dsl/vector_tags.h"

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

}  // namespace visa
