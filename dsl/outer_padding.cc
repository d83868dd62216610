// PeelOuterPadding: the padding of a mapping's outermost level, descending the majors of pairs.
#include "dsl/outer_padding.h"

#include "absl/status/statusor.h"

namespace visa {

std::optional<PeeledPadding> PeelOuterPadding(const Mapping& m) {
  if (m.kind() == Mapping::Kind::kPair) {
    const std::optional<PeeledPadding> major = PeelOuterPadding(m.major());
    if (!major) return std::nullopt;
    absl::StatusOr<Mapping> pair = Mapping::MakePair(major->mapping, m.minor());
    if (!pair.ok()) return std::nullopt;
    return PeeledPadding{*pair, major->offset * m.minor().size()};
  }
  Mapping outer = m;
  int64_t left = 0;
  bool peeled = false;
  while ((outer.kind() == Mapping::Kind::kPadding || outer.kind() == Mapping::Kind::kLeftPad) &&
         outer.pad_kind() == PadKind::kTop) {
    if (outer.kind() == Mapping::Kind::kLeftPad) left += outer.argument();
    outer = Mapping(outer.inner());
    peeled = true;
  }
  if (!peeled) return std::nullopt;
  return PeeledPadding{outer, left};
}

}  // namespace visa
