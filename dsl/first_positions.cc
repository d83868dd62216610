// FirstPositions: one sweep of a mapping's positions instead of a search per inverted index.
#include "dsl/first_positions.h"

#include <atomic>

#include "absl/hash/hash.h"
#include "dsl/normal_form.h"

namespace visa {
namespace {

std::atomic<int64_t> swept{0};

}  // namespace

int64_t FirstPositions::positions_swept() { return swept.load(std::memory_order_relaxed); }

size_t FirstPositions::IndexHash::operator()(const Index& index) const {
  size_t h = 0;
  for (const auto& [axis, value] : index.coords()) h = absl::HashOf(h, axis, value);
  return h;
}

std::optional<int64_t> FirstPositions::operator()(const Index& index) {
  if (mode_ == Mode::kUnknown || mode_ == Mode::kNormalForm) {
    // The normal form answers digit by digit; it may refuse some indices (overlapping digits of
    // the axes they name) and not others.
    absl::StatusOr<std::optional<int64_t>> fast = mapping_.normal_form().inverse(index);
    if (fast.ok()) {
      // Mapping::inverse's range check comes first; out of range is held nowhere either way.
      if (mode_ == Mode::kUnknown) mode_ = Mode::kNormalForm;
      return mapping_.inverse(index);
    }
    mode_ = mapping_.size() <= kMaxTablePositions ? Mode::kTable : Mode::kSearch;
    if (mode_ == Mode::kTable) Build();
  }
  if (mode_ == Mode::kSearch) return mapping_.inverse(index);
  auto it = first_.find(index);
  if (it == first_.end()) return std::nullopt;
  return it->second;
}

void FirstPositions::Build() {
  swept.fetch_add(mapping_.size(), std::memory_order_relaxed);
  // Increasing positions, first holder kept: the smallest position, as Mapping::inverse's search.
  for (int64_t p = 0; p < mapping_.size(); ++p) {
    for (Cell& cell : mapping_.maps(p)) {
      if (cell.live()) first_.try_emplace(std::move(cell.index), p);
    }
  }
}

}  // namespace visa
