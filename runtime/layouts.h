// Named level mappings for creating and moving tensors. Every level is a named field, so a call
// reads `{.chip = ..., .cluster = ..., .slice = ..., .element = ...}` and two mappings cannot be
// swapped silently the way four positional `Mapping` arguments can.
//
//   DmTensor dm = *hbm.to_dm(ctx.tdma, 0x1000, {.cluster = s.m("1 # 2"),
//                                               .slice = s.m("A / 8 # 256"),
//                                               .element = s.m("A % 8")});
//
// Levels left out: a move keeps its source's (a DM source's Cluster and Slice; an HBM source has
// none, so those are placed as for a new tensor); a new tensor (Create, a host move) lives on
// chip 0, cluster 0 and slice 0: `1 # NUM_CHIPS`, `1 # 2`, `1 # 256`. `element` (and a TRF
// tensor's `row`) must be given.
#pragma once

#include <optional>
#include "absl/strings/string_view.h"
#include <vector>

#include "absl/status/statusor.h"
#include "dsl/mapping.h"

namespace visa {

struct HbmLayout {
  std::optional<Mapping> chip;
  std::optional<Mapping> element;
};

// A DM or SPM tensor's levels.
struct DmLayout {
  std::optional<Mapping> chip;
  std::optional<Mapping> cluster;
  std::optional<Mapping> slice;
  std::optional<Mapping> element;
};

struct TrfLayout {
  std::optional<Mapping> chip;
  std::optional<Mapping> cluster;
  std::optional<Mapping> slice;
  std::optional<Mapping> row;
  std::optional<Mapping> element;
};

struct VrfLayout {
  std::optional<Mapping> chip;
  std::optional<Mapping> cluster;
  std::optional<Mapping> slice;
  std::optional<Mapping> element;
};

// The levels, outermost first. `fallback` stands in for the levels left out, outermost first up to
// the Element (exclusive): the source's for a move, NewTensorLevels for a new tensor. `op` names
// the call in the error for a missing Element or Row.
absl::StatusOr<std::vector<Mapping>> LevelsOf(const HbmLayout& layout, const std::vector<Mapping>& fallback,
                                              absl::string_view op);
absl::StatusOr<std::vector<Mapping>> LevelsOf(const DmLayout& layout, const std::vector<Mapping>& fallback,
                                              absl::string_view op);
absl::StatusOr<std::vector<Mapping>> LevelsOf(const TrfLayout& layout, const std::vector<Mapping>& fallback,
                                              absl::string_view op);
absl::StatusOr<std::vector<Mapping>> LevelsOf(const VrfLayout& layout, const std::vector<Mapping>& fallback,
                                              absl::string_view op);

// Chip 0, cluster 0, slice 0 of a device of `chips` chips: `1 # chips` (`1` for one chip),
// `1 # 2`, `1 # 256`.
std::vector<Mapping> NewTensorLevels(int chips);

}  // namespace visa
