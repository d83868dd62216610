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
  if (sub.kind() != TuContextKind::kSub) {
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
  for (const Factor& f : NormalForm::Of(element).factors()) {
    if (f.kind != Factor::Kind::kDigit || f.axis != name) continue;
    ASSIGN_OR_RETURN(Axes axes, Axes::Parse(absl::StrCat(name, " = ", f.axis_size)));
    return axes[name];
  }
  return absl::InvalidArgumentError(absl::StrCat("the Element `", element.ToString(), "` has no axis ", name));
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
  const int64_t units = chips ? src.device().chips() : kClustersPerChip;
  if (static_cast<int64_t>(slice_indices.size()) != units) {
    return error(absl::StrCat("one slice index per ", unit_name, " (", units, "), got ", slice_indices.size()));
  }
  for (int64_t index : slice_indices) {
    if (index < 0 || index >= selected->size()) {
      return error(absl::StrCat("slice index ", index, " is outside ", axis, " = ", selected->size()));
    }
  }
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

}  // namespace visa
