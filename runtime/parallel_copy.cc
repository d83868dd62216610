// ParallelCopy (stos on the sub context) and the asymmetric slice built on it.
#include "runtime/parallel_copy.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "dsl/axes.h"
#include "dsl/equivalence.h"
#include "dsl/normal_form.h"
#include "dsl/status_macros.h"
#include "runtime/chip_view.h"
#include "runtime/device.h"

namespace visa {
namespace {

constexpr int64_t kWordBits = 64;  // the sub context fetches and commits 8-byte words

absl::Status CopyError(const DmTensor& src, const Mapping& element, absl::string_view why) {
  return absl::InvalidArgumentError(absl::StrCat("ParallelCopy of ", src.ToString(), " into Element `",
                                                 element.ToString(), "`: ", why));
}

// The rules a ParallelCopy checks before it plans its stream (the engines check the rest).
absl::Status CheckCopy(const TensorUnit& sub, const DmTensor& src, const Mapping& element) {
  RETURN_IF_ERROR(element.status());
  if (sub.kind() != ContextKind::kSub) {
    return CopyError(src, element, "ParallelCopy runs on the sub context (stos, Store to SRAM); call it with ctx.sub");
  }
  if (src.tier() != Tier::kDm) return CopyError(src, element, "ParallelCopy copies DM to DM");
  if (IsStaging(src.dtype())) {
    return CopyError(src, element, absl::StrCat(Name(src.dtype()), " is a staging type that memory never holds"));
  }
  const int64_t bits = element.size() * StorageBits(src.dtype());
  if (bits % kWordBits != 0) {
    return CopyError(src, element, absl::StrCat(
        "stos writes whole 8-byte words (Sub-Context Operations: commit_size is 8 bytes for the sub "
        "context), but the Element is ", bits / 8.0, " bytes; pad it to a multiple of 8 bytes"));
  }
  return absl::OkStatus();
}

// fetch -> collect -> (commit): the destination Element `element` one 8-byte word per time step,
// each word padded to a 32-byte flit.
Stream CopyStream(TensorUnit& sub, const DmTensor& src, const Mapping& element, std::string operation) {
  const int bits = StorageBits(src.dtype());
  const int64_t per_word = kWordBits / bits;
  const Mapping words = element / per_word;
  const Mapping word = element % per_word;
  return sub.begin(src)
      .fetch(src.dtype(), words, word)
      .collect(words, word.pad(kFlitBytes * 8 / bits))
      .named(std::move(operation));
}

absl::Status Prefixed(const absl::Status& status, const DmTensor& src, const Mapping& element) {
  if (status.ok()) return status;
  return absl::Status(status.code(), absl::StrCat("ParallelCopy of ", src.ToString(), " into Element `",
                                                  element.ToString(), "`: ", status.message()));
}

absl::Status CopyInto(TensorUnit& sub, const DmTensor& src, const DmTensor& dst, std::string operation) {
  RETURN_IF_ERROR(CheckCopy(sub, src, dst.element()));
  return Prefixed(CopyStream(sub, src, dst.element(), std::move(operation)).commit_view(dst), src, dst.element());
}

// The axis `name` as the Element `element` declares it.
absl::StatusOr<Mapping> AxisOf(const Mapping& element, const std::string& name) {
  // Named, not a temporary: a range-for over factors() of a temporary reads a destroyed vector.
  const NormalForm form = NormalForm::Of(element);
  for (const Factor& f : form.factors()) {
    if (f.kind != Factor::Kind::kDigit || f.axis != name) continue;
    ASSIGN_OR_RETURN(Axes axes, Axes::Parse(absl::StrCat(name, " = ", f.axis_size)));
    return axes[name];
  }
  return absl::InvalidArgumentError(absl::StrCat("the Element `", element.ToString(), "` has no axis ", name));
}

int64_t UnitCount(const DeviceTensor& tensor, SliceLevel level) {
  return level == SliceLevel::kChip ? tensor.device().chips() : kClustersPerChip;
}

// One index per unit, each a value of the axis.
absl::Status CheckSliceIndices(const std::vector<int64_t>& slice_indices, int64_t units, const char* unit_name,
                               const std::string& axis, int64_t axis_size) {
  if (static_cast<int64_t>(slice_indices.size()) != units) {
    return absl::InvalidArgumentError(
        absl::StrCat("one slice index per ", unit_name, " (", units, "), got ", slice_indices.size()));
  }
  for (int64_t index : slice_indices) {
    if (index < 0 || index >= axis_size) {
      return absl::InvalidArgumentError(
          absl::StrCat("slice index ", index, " is outside ", axis, " = ", axis_size));
    }
  }
  return absl::OkStatus();
}

// The slot a placement copies is the start of the source's Element: same cells on the slot's
// positions, padding after them (nothing live is left behind).
absl::Status CheckSlotHoldsSource(const Mapping& element, const Mapping& slot) {
  if (slot.size() > element.size()) {
    return absl::InvalidArgumentError(absl::StrCat("the slot `", slot.ToString(), "` is larger than the source's Element `",
                                                   element.ToString(), "`"));
  }
  for (int64_t p = 0; p < element.size(); ++p) {
    const Cell have = element.map(p);
    const bool agrees = p < slot.size() ? (have.live() == slot.map(p).live() &&
                                           (!have.live() || have.index == slot.map(p).index))
                                        : !have.live();
    if (!agrees) {
      return absl::InvalidArgumentError(absl::StrCat(
          "the source's Element `", element.ToString(), "` holds ", have.ToString(), " at position ", p,
          ", where the slot `", slot.ToString(), "` holds ", p < slot.size() ? slot.map(p).ToString() : "nothing",
          "; the slot must be the Element's first positions and everything live"));
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<DmTensor> ParallelCopy(TensorUnit& sub, const DmTensor& src, const Mapping& element,
                                      Address address) {
  RETURN_IF_ERROR(CheckCopy(sub, src, element));
  absl::StatusOr<DmTensor> out = CopyStream(sub, src, element, "ParallelCopy").commit(element, address);
  RETURN_IF_ERROR(Prefixed(out.status(), src, element));
  return out;
}

absl::Status ParallelCopyInto(TensorUnit& sub, const DmTensor& src, const DmTensor& dst) {
  return CopyInto(sub, src, dst, "ParallelCopy");
}

absl::StatusOr<DmTensor> AsymmetricSlice(TensorUnit& sub, const DmTensor& src, SliceLevel level,
                                         const std::string& axis, const Mapping& rest,
                                         const std::vector<int64_t>& slice_indices, Address address) {
  RETURN_IF_ERROR(rest.status());
  const bool chips = level == SliceLevel::kChip;
  const char* unit_name = chips ? "chip" : "cluster";
  auto error = [&](absl::string_view why) {
    return absl::InvalidArgumentError(absl::StrCat("Asymmetric Slice (", unit_name, ") of `", axis, "` in ",
                                                   src.ToString(), ": ", why));
  };
  absl::StatusOr<Mapping> selected = AxisOf(src.element(), axis);
  if (!selected.ok()) return error(selected.status().message());
  ASSIGN_OR_RETURN(bool outermost, Equivalent(src.element(), Pair({*selected, rest})));
  if (!outermost) {
    return error(absl::StrCat("the slice axis must be the outermost Element axis, whole: the Element `",
                              src.element().ToString(), "` is not `", axis, ", ", rest.ToString(), "`"));
  }
  const int64_t units = UnitCount(src, level);
  absl::Status indices_ok = CheckSliceIndices(slice_indices, units, unit_name, axis, selected->size());
  if (!indices_ok.ok()) return error(indices_ok.message());
  const int64_t slice_bits = rest.size() * StorageBits(src.dtype());
  if (slice_bits % kWordBits != 0) {
    return error(absl::StrCat("each slice of ", axis, " (`", rest.ToString(), "`) is ", slice_bits / 8.0,
                              " bytes; ParallelCopy moves whole 8-byte words, so pad the slice to a multiple of 8"));
  }
  std::vector<Mapping> levels = src.levels();
  levels.back() = rest;
  ASSIGN_OR_RETURN(Placement placement, Place(src.device(), src.dtype(), Tier::kDm, levels, address));
  DmTensor out(DeviceTensor::Claim(src.device(), std::move(placement)));
  for (int64_t unit = 0; unit < units; ++unit) {
    const int64_t offset = slice_indices[unit] * slice_bits / 8;
    auto view = [&](const DeviceTensor& t, int64_t bytes) {
      return chips ? ChipView(t, unit, rest, bytes) : ClusterView(t, unit, rest, bytes);
    };
    absl::StatusOr<DeviceTensor> from = view(src, offset);
    if (!from.ok()) return error(from.status().message());
    absl::StatusOr<DeviceTensor> to = view(out, 0);
    if (!to.ok()) return error(to.status().message());
    RETURN_IF_ERROR(CopyInto(sub, DmTensor(*from), DmTensor(*to),
                             absl::StrCat("AsymmetricSlice ", unit_name, " ", unit, ": ", axis, " = ",
                                          slice_indices[unit], " (ParallelCopy)")));
  }
  return out;
}

absl::Status AsymmetricPlaceInto(TensorUnit& sub, const DmTensor& src, SliceLevel level, const std::string& axis,
                                 const Mapping& slot, const std::vector<int64_t>& slice_indices,
                                 const DmTensor& dst) {
  RETURN_IF_ERROR(slot.status());
  const bool chips = level == SliceLevel::kChip;
  const char* unit_name = chips ? "chip" : "cluster";
  auto error = [&](absl::string_view why) {
    return absl::InvalidArgumentError(absl::StrCat("Asymmetric Place (", unit_name, ") into `", axis, "` of ",
                                                   dst.ToString(), " from ", src.ToString(), ": ", why));
  };
  if (dst.is_view() || src.is_view()) return error("place a whole tensor into a whole tensor, not a view");
  if (src.dtype() != dst.dtype()) {
    return error(absl::StrCat("the tensors hold ", Name(src.dtype()), " and ", Name(dst.dtype())));
  }
  const std::vector<Mapping> from_levels = src.levels(), to_levels = dst.levels();
  for (size_t l = 0; l + 1 < from_levels.size(); ++l) {
    if (!(from_levels[l] == to_levels[l])) {
      return error(absl::StrCat("level ", l, " is `", from_levels[l].ToString(), "` in the source and `",
                                to_levels[l].ToString(), "` in the destination; only the Element may differ"));
    }
  }
  absl::StatusOr<Mapping> selected = AxisOf(dst.element(), axis);
  if (!selected.ok()) return error(selected.status().message());
  ASSIGN_OR_RETURN(bool outermost, Equivalent(dst.element(), Pair({*selected, slot})));
  if (!outermost) {
    return error(absl::StrCat("the destination Element must be `", axis, ", ", slot.ToString(),
                              "` (the slot axis outermost, whole), not `", dst.element().ToString(), "`"));
  }
  absl::Status fits = CheckSlotHoldsSource(src.element(), slot);
  if (!fits.ok()) return error(fits.message());
  absl::Status indices_ok = CheckSliceIndices(slice_indices, UnitCount(src, level), unit_name, axis, selected->size());
  if (!indices_ok.ok()) return error(indices_ok.message());
  const int64_t slot_bits = slot.size() * StorageBits(src.dtype());
  if (slot_bits % kWordBits != 0) {
    return error(absl::StrCat("each slot (`", slot.ToString(), "`) is ", slot_bits / 8.0,
                              " bytes; ParallelCopy moves whole 8-byte words, so pad the slot to a multiple of 8"));
  }
  for (int64_t unit = 0; unit < static_cast<int64_t>(slice_indices.size()); ++unit) {
    auto view = [&](const DeviceTensor& t, int64_t bytes) {
      return chips ? ChipView(t, unit, slot, bytes) : ClusterView(t, unit, slot, bytes);
    };
    absl::StatusOr<DeviceTensor> from = view(src, 0);
    if (!from.ok()) return error(from.status().message());
    absl::StatusOr<DeviceTensor> to = view(dst, slice_indices[unit] * slot_bits / 8);
    if (!to.ok()) return error(to.status().message());
    RETURN_IF_ERROR(CopyInto(sub, DmTensor(*from), DmTensor(*to),
                             absl::StrCat("AsymmetricPlace ", unit_name, " ", unit, ": ", axis, " = ",
                                          slice_indices[unit], " (ParallelCopy)")));
  }
  return absl::OkStatus();
}

}  // namespace visa
