// PlacementSet: a map from placement address to a weak reference that proves the address still
// names the placement inserted.
#include "runtime/placement_set.h"

#include <algorithm>

#include "runtime/tensor.h"

namespace visa {

bool PlacementSet::Contains(const std::shared_ptr<const Placement>& placement) const {
  if (placement == nullptr) return false;
  auto it = entries_.find(placement.get());
  // Unexpired, the weak reference's placement is alive, so it is the one at this address.
  return it != entries_.end() && !it->second.expired();
}

void PlacementSet::Insert(const std::shared_ptr<const Placement>& placement) {
  if (placement == nullptr) return;
  entries_.insert_or_assign(placement.get(), std::weak_ptr<const Placement>(placement));
  if (entries_.size() >= sweep_at_) {
    ForgetExpired();
    sweep_at_ = std::max<size_t>(64, 2 * entries_.size());
  }
}

void PlacementSet::ForgetExpired() {
  absl::erase_if(entries_, [](const auto& entry) { return entry.second.expired(); });
}

}  // namespace visa
