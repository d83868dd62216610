// Left padding in sequenced streams: stand-in axes and the base address they move.
#include "dsl/left_padding.h"

#include <algorithm>
#include <optional>

#include "absl/functional/function_ref.h"
#include "absl/strings/str_cat.h"
#include "dsl/normal_form.h"
#include "dsl/status_macros.h"

namespace visa {
namespace {

absl::Status LeftPaddingError(absl::string_view message) {
  return absl::InvalidArgumentError(absl::StrCat("Left padding: ", message));
}

// A node's replacement, or nullopt to keep rebuilding below it.
using Replacement = absl::FunctionRef<std::optional<absl::StatusOr<Mapping>>(const Mapping&)>;

absl::StatusOr<Mapping> Rebuild(const Mapping& m, Replacement replace) {
  if (std::optional<absl::StatusOr<Mapping>> r = replace(m)) return *std::move(r);
  switch (m.kind()) {
    case Mapping::Kind::kSymbol:
    case Mapping::Kind::kBroadcast:
      return m;
    case Mapping::Kind::kPair: {
      ASSIGN_OR_RETURN(Mapping major, Rebuild(m.major(), replace));
      ASSIGN_OR_RETURN(Mapping minor, Rebuild(m.minor(), replace));
      return Mapping::MakePair(major, minor);
    }
    case Mapping::Kind::kLinear: {
      std::vector<Mapping::LinearTerm> terms;
      for (const Mapping::LinearTerm& t : m.linear_terms()) {
        ASSIGN_OR_RETURN(Mapping term, Rebuild(t.mapping, replace));
        terms.push_back({term, t.coefficient});
      }
      return Mapping::MakeLinear(std::move(terms));
    }
    default:
      break;
  }
  ASSIGN_OR_RETURN(Mapping inner, Rebuild(m.inner(), replace));
  switch (m.kind()) {
    case Mapping::Kind::kPadding: return Mapping::MakePadding(inner, m.size(), m.pad_kind());
    case Mapping::Kind::kResize: return Mapping::MakeResize(inner, m.argument());
    case Mapping::Kind::kStride: return Mapping::MakeStride(inner, m.argument());
    case Mapping::Kind::kModulo: return Mapping::MakeModulo(inner, m.argument());
    case Mapping::Kind::kLeftPad: return Mapping::MakeLeftPad(inner, m.argument(), m.pad_kind());
    default: break;
  }
  return absl::InternalError("unreachable mapping kind");
}

void CollectLeftPads(const Mapping& m, std::vector<Mapping>& out) {
  switch (m.kind()) {
    case Mapping::Kind::kSymbol:
    case Mapping::Kind::kBroadcast:
      return;
    case Mapping::Kind::kPair:
      CollectLeftPads(m.major(), out);
      CollectLeftPads(m.minor(), out);
      return;
    case Mapping::Kind::kLinear:
      for (const Mapping::LinearTerm& t : m.linear_terms()) CollectLeftPads(t.mapping, out);
      return;
    case Mapping::Kind::kLeftPad:
      out.push_back(m);
      [[fallthrough]];
    default:
      CollectLeftPads(m.inner(), out);
  }
}

const ShiftedAxis* FindShift(const std::vector<ShiftedAxis>& axes, const std::string& name) {
  for (const ShiftedAxis& s : axes) {
    if (s.axis == name) return &s;
  }
  return nullptr;
}

// A name no mapping of the stream uses: A', then A'', ...
std::string StandInName(const std::string& axis, const std::vector<std::string>& taken) {
  std::string name = absl::StrCat(axis, "'");
  while (std::find(taken.begin(), taken.end(), name) != taken.end()) absl::StrAppend(&name, "'");
  return name;
}

// The buffer positions between consecutive values of `axis`'s one digit (nullopt: not held).
// (`buffer` is the rewritten one: the stand-in A' has at least two values, so a digit holding it
// keeps its axis even where A alone has one value.)
absl::StatusOr<std::optional<int64_t>> DigitWeight(const Mapping& buffer, const Mapping& shown,
                                                  const ShiftedAxis& shift) {
  std::optional<int64_t> weight;
  int digits = 0;
  int64_t inner = 1;
  for (const Factor& f : buffer.normal_form().factors()) {
    if (f.kind == Factor::Kind::kComposite) {
      const std::vector<std::string> names = f.composite->axis_names();
      if (std::find(names.begin(), names.end(), shift.stand_in) != names.end()) {
        return LeftPaddingError(absl::StrCat("the buffer `", shown.ToString(), "` holds ", shift.axis,
                                             " in `", f.composite->ToString(),
                                             "`, which has no digit a base address can shift"));
      }
    }
    if (f.kind == Factor::Kind::kDigit && f.axis == shift.stand_in) {
      ++digits;
      if (f.coef == 1) weight = inner;
    }
    inner = f.kind == Factor::Kind::kBlockPad ? f.block : inner * f.count;
  }
  if (digits > 1) {
    return LeftPaddingError(absl::StrCat(
        "the stream left-pads ", shift.axis, " by ", shift.left, ", but the buffer `", shown.ToString(),
        "` holds ", shift.axis, " in ", digits, " digits; moving the base address shifts one digit only, "
        "and the shift would carry between them (keep ", shift.axis, " in one buffer digit)"));
  }
  if (digits == 1 && !weight) {
    return LeftPaddingError(absl::StrCat("the buffer `", shown.ToString(), "` holds ", shift.axis,
                                         " in a digit that does not step by one coordinate; the base ",
                                         "address can only move by whole steps of ", shift.axis));
  }
  return weight;
}

}  // namespace

bool HasLeftPadding(const Mapping& m) {
  if (!m.ok()) return false;
  std::vector<Mapping> pads;
  CollectLeftPads(m, pads);
  return !pads.empty();
}

absl::StatusOr<ShiftedStream> ShiftLeftPadding(const Mapping& buffer, const Mapping& time,
                                               const Mapping& packet) {
  std::vector<Mapping> pads;
  CollectLeftPads(time, pads);
  CollectLeftPads(packet, pads);
  std::vector<std::string> taken;
  for (const Mapping* m : {&buffer, &time, &packet}) {
    for (const Axis& a : m->symbols()) taken.push_back(a.name);
  }
  ShiftedStream out;
  std::vector<Axis> stand_ins;
  for (const Mapping& pad : pads) {
    const Mapping& inner = pad.inner();
    if (inner.kind() != Mapping::Kind::kSymbol || inner.axis().skew) {
      return LeftPaddingError(absl::StrCat(
          "`", pad.ToString(), "` left-pads `", inner.ToString(), "`; a sequenced stream can left-pad an ",
          "axis only (the base address moves by whole steps of one axis), e.g. `# 2 + B + # 4`"));
    }
    const std::string& name = inner.axis().name;
    if (const ShiftedAxis* seen = FindShift(out.axes, name)) {
      if (seen->left != pad.argument()) {
        return LeftPaddingError(absl::StrCat("the stream left-pads ", name, " by ", seen->left, " and by ",
                                             pad.argument(), "; one base address holds one shift per axis"));
      }
      continue;
    }
    ShiftedAxis shift{name, StandInName(name, taken), pad.argument()};
    taken.push_back(shift.stand_in);
    stand_ins.push_back(Axis{shift.stand_in, inner.axis().size + shift.left, std::nullopt});
    out.axes.push_back(shift);
  }
  auto stand_in_of = [&](const std::string& axis) -> const Axis* {
    for (size_t i = 0; i < out.axes.size(); ++i) {
      if (out.axes[i].axis == axis) return &stand_ins[i];
    }
    return nullptr;
  };
  // The stream: each `# n + A` is the stand-in A' (same size, n + |A|).
  auto stream_replace = [&](const Mapping& m) -> std::optional<absl::StatusOr<Mapping>> {
    if (m.kind() != Mapping::Kind::kLeftPad) return std::nullopt;
    return Mapping::Symbol(*stand_in_of(m.inner().axis().name));
  };
  // The buffer: A becomes A' at the same positions. The shifted stream reads A' values up to
  // n + |A| - 1, which the buffer's digit must have room for (its padding past A's end).
  auto buffer_replace = [&](const Mapping& m) -> std::optional<absl::StatusOr<Mapping>> {
    if (m.kind() == Mapping::Kind::kLeftPad && m.inner().kind() == Mapping::Kind::kSymbol) {
      if (const Axis* stand_in = stand_in_of(m.inner().axis().name)) return Mapping::Symbol(*stand_in);
    }
    const Mapping* symbol = &m;
    if (m.kind() == Mapping::Kind::kPadding) symbol = &m.inner();
    if (symbol->kind() != Mapping::Kind::kSymbol) return std::nullopt;
    const Axis* stand_in = stand_in_of(symbol->axis().name);
    if (stand_in == nullptr) return std::nullopt;
    if (m.kind() != Mapping::Kind::kPadding || m.size() < stand_in->size) {
      const int64_t left = stand_in->size - symbol->size();
      return LeftPaddingError(absl::StrCat(
          "the buffer `", buffer.ToString(), "` has no room past ", symbol->axis().name,
          "'s end for the ", left, " positions a left pad of ", left, " shifts it by; pad it in the buffer "
          "(`", symbol->axis().name, " # ", stand_in->size, "` or more)"));
    }
    absl::StatusOr<Mapping> renamed = Mapping::Symbol(*stand_in);
    if (!renamed.ok()) return renamed;
    return Mapping::MakePadding(*renamed, m.size(), m.pad_kind());
  };
  // A buffer that left-pads the axis as the stream does holds A' as it is: no shift.
  std::vector<Mapping> buffer_pads;
  CollectLeftPads(buffer, buffer_pads);
  std::vector<ShiftedAxis> unpadded;  // the axes whose shift moves the base address
  for (const ShiftedAxis& shift : out.axes) {
    bool same_pad = false;
    for (const Mapping& pad : buffer_pads) {
      if (pad.inner().kind() != Mapping::Kind::kSymbol || pad.inner().axis().name != shift.axis) continue;
      if (pad.argument() != shift.left) {
        return LeftPaddingError(absl::StrCat("the buffer `", buffer.ToString(), "` left-pads ", shift.axis, " by ",
                                             pad.argument(), " and the stream by ", shift.left,
                                             "; they must agree (or the buffer hold ", shift.axis, " unpadded)"));
      }
      same_pad = true;
    }
    if (!same_pad) unpadded.push_back(shift);
  }
  ASSIGN_OR_RETURN(out.time, Rebuild(time, stream_replace));
  ASSIGN_OR_RETURN(out.packet, Rebuild(packet, stream_replace));
  ASSIGN_OR_RETURN(out.buffer, Rebuild(buffer, buffer_replace));
  for (const ShiftedAxis& shift : unpadded) {
    ASSIGN_OR_RETURN(std::optional<int64_t> weight, DigitWeight(out.buffer, buffer, shift));
    if (weight) out.base_offset -= shift.left * *weight;
  }
  // The base address shifts every read of the axis: none may read it unshifted too.
  for (const Mapping* m : {&out.time, &out.packet}) {
    for (const Axis& a : m->symbols()) {
      if (FindShift(out.axes, a.name) != nullptr) {
        return LeftPaddingError(absl::StrCat(
            "Time `", time.ToString(), "`, Packet `", packet.ToString(), "` read ", a.name,
            " both left-padded and as it is; the base address moves every read of ", a.name,
            " (left-pad each of its terms alike)"));
      }
    }
  }
  return out;
}

}  // namespace visa
