// FirstPositions: Mapping::inverse for many indices of one mapping. Where the normal form cannot
// invert (composite factors, overlapping digits, left paddings without a twin), Mapping::inverse
// searches position by position, so a move that inverts every destination index costs
// destination x source cell evaluations; this answers from a table built in one sweep instead.
#pragma once

#include <cstdint>
#include <optional>

#include "absl/container/flat_hash_map.h"
#include "dsl/index.h"
#include "dsl/mapping.h"

namespace visa {

class FirstPositions {
 public:
  explicit FirstPositions(const Mapping& mapping) : mapping_(mapping) {}

  // mapping.inverse(index): the smallest live position holding `index`, or nullopt.
  std::optional<int64_t> operator()(const Index& index);

  // Tables above this many positions are not built (their indices' inverses stay searches).
  static constexpr int64_t kMaxTablePositions = int64_t{1} << 22;

  // Positions swept into tables by this process so far: the per-position work a move between
  // layouts the normal form cannot invert costs (tests check that chip views cost none).
  static int64_t positions_swept();

 private:
  struct IndexHash {
    size_t operator()(const Index& index) const;
  };
  void Build();

  Mapping mapping_;
  enum class Mode { kUnknown, kNormalForm, kTable, kSearch } mode_ = Mode::kUnknown;
  absl::flat_hash_map<Index, int64_t, IndexHash> first_;
};

}  // namespace visa
