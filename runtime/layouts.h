// Named level mappings for creating and moving tensors. Every level is a named field, so a call
// reads `{.chip = ..., .cluster = ..., .slice = ..., .element = ...}` and two mappings cannot be
// swapped silently the way four positional `Mapping` arguments can.
//
//   DmTensor dm = *hbm.to_dm(ctx.tdma, 0x1000, {.cluster = s.m("1 # 2"),
//                                               .slice = s.m("A / 8 # 256"),
//                                               .element = s.m("A % 8")});
//
// `chip` may be left out: a move keeps the source's Chip mapping, a new tensor (Create, a host
// move) has one chip (`1`). `cluster` and `slice` left out are `1`. `element` must be given.
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
  Mapping cluster;
  Mapping slice;
  std::optional<Mapping> element;
};

struct TrfLayout {
  std::optional<Mapping> chip;
  Mapping cluster;
  Mapping slice;
  Mapping row;
  std::optional<Mapping> element;
};

struct VrfLayout {
  std::optional<Mapping> chip;
  Mapping cluster;
  Mapping slice;
  std::optional<Mapping> element;
};

// The levels, outermost first, with `chip` standing in for a Chip left out (a move passes its
// source's). `op` names the call in the error for a missing Element.
absl::StatusOr<std::vector<Mapping>> LevelsOf(const HbmLayout& layout, const Mapping& chip, absl::string_view op);
absl::StatusOr<std::vector<Mapping>> LevelsOf(const DmLayout& layout, const Mapping& chip, absl::string_view op);
absl::StatusOr<std::vector<Mapping>> LevelsOf(const TrfLayout& layout, const Mapping& chip, absl::string_view op);
absl::StatusOr<std::vector<Mapping>> LevelsOf(const VrfLayout& layout, const Mapping& chip, absl::string_view op);

}  // namespace visa
