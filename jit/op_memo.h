// OpMemo: what the JIT derives from a recorded op's configuration alone (a vector stage's kernels,
// execution-id tables, zip positions, padding runs), kept by the op's serial (program.h:
// AssignSerial) and a part number, so that running the op again looks it up instead of building
// layouts, keys and tables again: on a warm relaunch those were almost all of a small Vector
// Engine op's time (a 16-op program of 8-lane adds: 47 us per op, of which the add took nothing).
//
// A serial names one recorded op for the life of the process and a recorded op never changes, so
// an entry is never stale. Ops of eager runs are recorded once each: the memo forgets everything
// when it grows past a bound, and a lookup then derives the value again. Values are shared, so a
// caller holding one keeps it through such a reset. An op without a serial (built by hand) is
// never memoized.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"

namespace visa::jit {

class OpMemo {
 public:
  // The value op `serial` keeps as part `part` (of type T), made by `make` on the first lookup.
  template <typename T>
  absl::StatusOr<std::shared_ptr<const T>> Get(uint64_t serial, uint64_t part,
                                               const std::function<absl::StatusOr<T>()>& make) {
    if (serial != 0) {
      auto it = values_.find(Key{serial, part});
      if (it != values_.end()) return std::static_pointer_cast<const T>(it->second);
    }
    absl::StatusOr<T> made = make();
    if (!made.ok()) return made.status();
    auto value = std::make_shared<const T>(*std::move(made));
    if (serial != 0) {
      if (values_.size() >= kMaxEntries) values_.clear();
      values_.emplace(Key{serial, part}, value);
    }
    return value;
  }
  size_t size() const { return values_.size(); }

 private:
  static constexpr size_t kMaxEntries = 1 << 14;
  struct Key {
    uint64_t serial;
    uint64_t part;
    bool operator==(const Key&) const = default;
    template <typename H>
    friend H AbslHashValue(H h, const Key& k) {
      return H::combine(std::move(h), k.serial, k.part);
    }
  };
  absl::flat_hash_map<Key, std::shared_ptr<const void>> values_;
};

// A part number from a stage's index in its op, a step's index in the stage and what is kept.
constexpr uint64_t MemoPart(uint64_t stage, uint64_t step, uint64_t what) { return (stage << 40) | (step << 8) | what; }

}  // namespace visa::jit
