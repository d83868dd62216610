// PlacementSet: placements remembered by identity (the shared object a tensor handle points at,
// not its value), so that asking "this very placement, again?" costs one hash lookup. A program
// run again gives its outputs the placements its trace recorded (DeviceTensor::ReserveLike), so
// what was derived from a placement on the first run holds on every later one.
//
// Identity survives reuse of memory: each entry keeps a weak reference, and a placement freed and
// another allocated at its address is a different placement (the old entry has expired).
#pragma once

#include <cstddef>
#include <memory>

#include "absl/container/flat_hash_map.h"


namespace visa {

struct Placement;

class PlacementSet {
 public:
  bool Contains(const std::shared_ptr<const Placement>& placement) const;
  void Insert(const std::shared_ptr<const Placement>& placement);
  size_t size() const { return entries_.size(); }

 private:
  // Drops the entries whose placements no handle holds any more.
  void ForgetExpired();

  absl::flat_hash_map<const Placement*, std::weak_ptr<const Placement>> entries_;
  size_t sweep_at_ = 64;  // entries before the next ForgetExpired
};

}  // namespace visa
