// Switch Engine: the topology rules, ring size and cycle estimate of a switch call, and config text.
//
// Regular topologies are checked as frames: the input Slice and Time are cut by position into the
// manual's named parts (slice2, slice1, slice0, time...), the topology says which part goes where
// in the output, and the output mappings must be equivalent to that arrangement, with fresh
// broadcast tiles allowed in the slots the manual marks as tiles. CustomBroadcast has no frame: it
// is checked digit by digit (moved axes innermost in Time and in their InSlice order) and by a sweep
// over the 256 output slices that finds each one's source slices, which also yields the ring size.
#include "dsl/switch_engine.h"

#include <algorithm>
#include <bit>
#include <initializer_list>
#include <map>
#include <optional>
#include <set>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "dsl/dtype.h"
#include "dsl/equivalence.h"
#include "dsl/index.h"
#include "dsl/normal_form.h"
#include "dsl/status_macros.h"

namespace visa {
namespace {

using Kind = SwitchConfig::Kind;

bool IsPowerOfTwo(int64_t v) { return v > 0 && (v & (v - 1)) == 0; }

// The manual's parameter names of each topology, in its positional order.
std::vector<const char*> ParamNames(Kind kind) {
  switch (kind) {
    case Kind::kForward: return {};
    case Kind::kBroadcast01:
    case Kind::kInterTranspose: return {"slice1", "slice0", "time0"};
    case Kind::kBroadcast1:
    case Kind::kTranspose:
    case Kind::kTransposedBroadcast1: return {"slice1", "slice0"};
    case Kind::kCustomBroadcast: return {"ring_size"};
  }
  return {};
}

int64_t* ParamSlot(SwitchConfig& config, absl::string_view name) {
  if (name == "slice1") return &config.slice1;
  if (name == "slice0") return &config.slice0;
  if (name == "time0") return &config.time0;
  if (name == "ring_size") return &config.ring_size;
  return nullptr;
}

int64_t ParamValue(const SwitchConfig& config, absl::string_view name) {
  if (name == "slice1") return config.slice1;
  if (name == "slice0") return config.slice0;
  if (name == "time0") return config.time0;
  return config.ring_size;
}

// The manual's subsection that states a topology's rules.
const char* Section(Kind kind) {
  switch (kind) {
    case Kind::kForward: return "Forwarding";
    case Kind::kBroadcast01: return "Broadcast01";
    case Kind::kBroadcast1: return "Broadcast1";
    case Kind::kTranspose: return "Transpose";
    case Kind::kInterTranspose: return "InterTranspose";
    case Kind::kTransposedBroadcast1: return "Regular Topology Constraints";
    case Kind::kCustomBroadcast: return "Custom Topology Constraints";
  }
  return "Constraints";
}

// Every user error of this module: the topology, what is wrong, and the rule with its section.
absl::Status Violation(const SwitchConfig& config, absl::string_view what, absl::string_view rule,
                       absl::string_view section = "") {
  return absl::InvalidArgumentError(
      absl::StrCat("Switch ", config.ToString(), ": ", what, " (rule: ", rule, "; manual \"Switch Engine\" > ",
                   section.empty() ? Section(config.kind) : section, ")"));
}

// A mapping as its canonical text: what users compare against, independent of how it was written.
std::string Canon(const Mapping& m) { return m.normal_form().ToString(); }

std::string DigitText(const Factor& f) { return NormalForm({f}).ToString(); }

// ---------------------------------------------------------------------------------------------
// Which parts of an index a set of mappings carries, judged per digit (a tile may use another digit
// of an axis the input carries only in part).

class DigitSet {
 public:
  void Add(const Mapping& m) {
    for (const Factor& f : m.normal_form().factors()) {
      if (f.kind == Factor::Kind::kComposite) {
        // A linear combination or skew cannot be cut into digits: treat its axes as fully carried.
        for (const std::string& name : f.composite->axis_names()) whole_.insert(name);
      } else if (f.kind == Factor::Kind::kDigit && !f.axis.empty()) {
        digits_[f.axis].push_back({f.coef, f.count});
      }
    }
  }

  // The part of `index` these digits hold: per coordinate, the sum of its digits that fall here.
  Index Project(const Index& index) const {
    Index out;
    for (const auto& [axis, value] : index.coords()) {
      int64_t part = 0;
      if (whole_.count(axis)) {
        part = value;
      } else if (auto it = digits_.find(axis); it != digits_.end()) {
        for (const auto& [coef, count] : it->second) part += (value / coef) % count * coef;
      }
      if (part != 0) out.Set(axis, part);
    }
    return out;
  }

  bool Touches(const Index& index) const { return !Project(index).empty(); }

 private:
  std::map<std::string, std::vector<std::pair<int64_t, int64_t>>> digits_;
  std::set<std::string> whole_;
};

DigitSet InputDigits(std::initializer_list<const Mapping*> parts) {
  DigitSet set;
  for (const Mapping* m : parts) set.Add(*m);
  return set;
}

// No axis digit may appear twice among `parts` (two tiles of one new axis X, or a moved digit that
// OutSlice still holds): the union of their indices would count that digit twice.
absl::Status CheckDigitsOnce(const SwitchConfig& config,
                             const std::vector<std::pair<std::string, Mapping>>& parts) {
  struct Held {
    std::string axis;
    int64_t lo, hi;
    std::string text, where;
  };
  std::vector<Held> held;
  for (const auto& [where, m] : parts) {
    for (const Factor& f : m.normal_form().factors()) {
      if (f.kind != Factor::Kind::kDigit || f.axis.empty()) continue;
      Held h{f.axis, f.coef, f.coef * f.count, DigitText(f), where};
      for (const Held& other : held) {
        if (other.axis == h.axis && std::max(other.lo, h.lo) < std::min(other.hi, h.hi)) {
          return Violation(config,
                           absl::StrCat("`", h.text, "` in ", h.where, " and `", other.text, "` in ", other.where,
                                        " hold the same digits of axis ", h.axis,
                                        "; each digit can be placed once"),
                           "each axis digit used once");
        }
      }
      held.push_back(std::move(h));
    }
  }
  return absl::OkStatus();
}

// ---------------------------------------------------------------------------------------------
// Rules common to every topology.

absl::Status CheckValid(const SwitchConfig& config, absl::string_view what, const Mapping& m) {
  if (m.ok()) return absl::OkStatus();
  return absl::InvalidArgumentError(
      absl::StrCat("Switch ", config.ToString(), ": ", what, " is not a valid mapping: ", m.status().message()));
}

absl::Status CheckParameters(const SwitchConfig& config) {
  for (const char* name : ParamNames(config.kind)) {
    int64_t value = ParamValue(config, name);
    if (value <= 0) {
      return Violation(config, absl::StrCat(name, " must be greater than 0, got ", value),
                       "all dimensions must be greater than 0");
    }
  }
  if (config.kind == Kind::kCustomBroadcast) {
    if (!IsPowerOfTwo(config.ring_size)) {
      return Violation(config, absl::StrCat("ring_size must be a power of 2, got ", config.ring_size),
                       "ring size is a power of 2");
    }
    if (config.ring_size > kSlicesPerCluster) {
      return Violation(config,
                       absl::StrCat("ring_size must be at most ", kSlicesPerCluster, " (one cluster's ring), got ",
                                    config.ring_size),
                       "ring size is a power of 2");
    }
    return absl::OkStatus();
  }
  for (const char* name : {"slice1", "slice0"}) {
    if (config.kind == Kind::kForward) break;
    int64_t value = ParamValue(config, name);
    if (!IsPowerOfTwo(value)) {
      return Violation(config, absl::StrCat("Switch ", name, " must be a power of 2, got ", value),
                       "slice sub-dimensions are powers of 2");
    }
  }
  return absl::OkStatus();
}

absl::Status CheckFullCluster(const SwitchConfig& config, absl::string_view which, const Mapping& slice) {
  if (slice.size() == kSlicesPerCluster) return absl::OkStatus();
  return Violation(config,
                   absl::StrCat(which, " must span the full cluster (", kSlicesPerCluster, " slices), got `",
                                slice.ToString(), "` of size ", slice.size(),
                                "; partial cluster operations are not supported"),
                   "full cluster operation, InSlice::SIZE = OutSlice::SIZE = 256", "Regular Topology Constraints");
}

// The packet passes through the ring in 8-byte units (the Fetch Engine's read granularity).
absl::Status CheckPacket(const SwitchConfig& config, const StreamShape& in) {
  int64_t bits = in.packet.size() * WireBits(in.dtype);
  if (bits % 64 == 0) return absl::OkStatus();
  return Violation(config,
                   absl::StrCat("the packet `", in.packet.ToString(), "` is ", in.packet.size(), " x ",
                                std::string(Name(in.dtype)), " = ", bits, " bits, not a multiple of 8 bytes"),
                   "packet size must be 8-byte aligned", "Interface");
}

absl::Status CheckDivisibility(const SwitchConfig& config, const StreamShape& in) {
  if (config.kind == Kind::kForward) return absl::OkStatus();
  int64_t slices = in.slice.size();
  if (config.slice1 > slices || config.slice0 > slices || slices % config.slice1 != 0 ||
      (slices / config.slice1) % config.slice0 != 0) {
    return Violation(config,
                     absl::StrCat("InSlice::SIZE must be divisible by (slice1 * slice0), got InSlice::SIZE ",
                                  slices, " (slice1 ", config.slice1, ", slice0 ", config.slice0, ")"),
                     "slice2 = InSlice::SIZE / (slice1 * slice0) is whole");
  }
  int64_t time = in.time.size();
  bool ok = true;
  std::string split;
  if (config.kind == Kind::kBroadcast01) {
    ok = time % config.time0 == 0;
    split = absl::StrCat(config.time0, " = time0");
  } else if (config.kind == Kind::kInterTranspose) {
    // time1 must have slice1's size so that the output Slice stays 256.
    ok = time % config.slice1 == 0 && (time / config.slice1) % config.time0 == 0;
    int64_t product = 0;
    split = __builtin_mul_overflow(config.slice1, config.time0, &product)
                ? absl::StrCat("slice1 ", config.slice1, " * time0 ", config.time0)
                : absl::StrCat(product, " = slice1 * time0");
  }
  if (!ok) {
    return Violation(config,
                     absl::StrCat("InTime::SIZE must be divisible by the config's time split, got InTime::SIZE ",
                                  time, " (split ", split, ") for InTime `", in.time.ToString(), "`"),
                     "InTime divisible by the time split");
  }
  return absl::OkStatus();
}

// ---------------------------------------------------------------------------------------------
// Regular topologies as frames.

struct Slot {
  std::string name;               // "slice2", "time0", "tile(slice1)"
  int64_t size = 1;
  std::optional<Mapping> source;  // the input part placed here; nullopt for a fresh broadcast tile
};

struct Frames {
  std::vector<Slot> slice, time;
};

// `m` cut by position into consecutive parts of the given sizes, outermost first: part k holds the
// positions whose k-th mixed-radix digit varies and all others are zero.
absl::StatusOr<std::vector<Mapping>> SplitPositions(const Mapping& m, const std::vector<int64_t>& sizes) {
  int64_t inner = m.size();
  std::vector<Mapping> parts;
  for (int64_t size : sizes) {
    inner /= size;
    ASSIGN_OR_RETURN(Mapping strided, Mapping::MakeStride(m, inner));
    ASSIGN_OR_RETURN(Mapping part, Mapping::MakeModulo(strided, size));
    parts.push_back(std::move(part));
  }
  return parts;
}

Slot Part(std::string name, const Mapping& m) { return Slot{std::move(name), m.size(), m}; }
Slot Tile(std::string of, int64_t size) { return Slot{absl::StrCat("tile(", of, ")"), size, std::nullopt}; }

// The manual's layout tables: input parts and where the topology puts them. Parameters and
// divisibility are already checked.
absl::StatusOr<Frames> RegularFrames(const StreamShape& in, const SwitchConfig& c) {
  if (c.kind == Kind::kForward) return Frames{{Part("InSlice", in.slice)}, {Part("InTime", in.time)}};
  int64_t s1 = c.slice1, s0 = c.slice0;
  ASSIGN_OR_RETURN(std::vector<Mapping> s, SplitPositions(in.slice, {in.slice.size() / (s1 * s0), s1, s0}));
  Slot slice2 = Part("slice2", s[0]), slice1 = Part("slice1", s[1]), slice0 = Part("slice0", s[2]);
  Slot time = Part("InTime", in.time);
  switch (c.kind) {
    case Kind::kBroadcast01: {
      ASSIGN_OR_RETURN(std::vector<Mapping> t, SplitPositions(in.time, {in.time.size() / c.time0, c.time0}));
      return Frames{{slice2, Tile("slice1", s1), Tile("slice0", s0)},
                    {Part("time1", t[0]), slice1, Part("time0", t[1]), slice0}};
    }
    case Kind::kBroadcast1:
      return Frames{{slice2, Tile("slice1", s1), slice0}, {time, slice1}};
    case Kind::kTranspose:
      return Frames{{slice2, slice0, slice1}, {time}};
    case Kind::kInterTranspose: {
      ASSIGN_OR_RETURN(std::vector<Mapping> t,
                       SplitPositions(in.time, {in.time.size() / (s1 * c.time0), s1, c.time0}));
      return Frames{{slice2, Part("time1", t[1]), slice0}, {Part("time2", t[0]), Part("time0", t[2]), slice1}};
    }
    case Kind::kTransposedBroadcast1:
      return Frames{{slice2, Tile("slice0", s0), slice1}, {time, slice0}};
    default:
      return absl::InternalError("CustomBroadcast has no frame");
  }
}

// The frame with every tile shown as a bare broadcast of its size.
Mapping FrameMapping(const std::vector<Slot>& slots) {
  std::vector<Mapping> parts;
  for (const Slot& slot : slots) parts.push_back(slot.source ? *slot.source : *Mapping::Broadcast(slot.size));
  return Pair(parts);
}

std::string FrameNames(const std::vector<Slot>& slots) {
  std::vector<std::string> names;
  for (const Slot& slot : slots) names.push_back(slot.name);
  return absl::StrCat("[", absl::StrJoin(names, ", "), "]");
}

// `actual` must hold the frame's parts in order; the tile slots' actual contents are returned for
// the freshness check.
absl::Status MatchFrame(const SwitchConfig& config, absl::string_view which, const std::vector<Slot>& slots,
                        const Mapping& actual, std::vector<std::pair<std::string, Mapping>>& tiles) {
  std::vector<int64_t> sizes;
  int64_t total = 1;
  bool has_tile = false;
  for (const Slot& slot : slots) {
    sizes.push_back(slot.size);
    total *= slot.size;
    has_tile |= !slot.source.has_value();
  }
  Mapping expected = FrameMapping(slots);
  std::string rule = absl::StrCat("topology pattern, ", SwitchKindName(config.kind), " gives ", which, " = ",
                                  FrameNames(slots));
  auto mismatch = [&](absl::string_view detail) {
    return Violation(config,
                     absl::StrCat(which, " must be `", Canon(expected), "`",
                                  has_tile ? " (a bare number stands for any fresh broadcast tile of that size)" : "",
                                  ", got `", actual.ToString(), "`", detail),
                     rule);
  };
  if (actual.size() != total) return mismatch(absl::StrCat(" (size ", actual.size(), ", expected ", total, ")"));
  ASSIGN_OR_RETURN(std::vector<Mapping> segments, SplitPositions(actual, sizes));
  std::vector<Mapping> candidate;
  for (size_t k = 0; k < slots.size(); ++k) candidate.push_back(slots[k].source ? *slots[k].source : segments[k]);
  ASSIGN_OR_RETURN(bool same, Equivalent(Pair(candidate), actual));
  if (!same) {
    // Name the first part that differs, so the user sees which axis went to the wrong place.
    for (size_t k = 0; k < slots.size(); ++k) {
      if (!slots[k].source) continue;
      ASSIGN_OR_RETURN(bool part_same, Equivalent(segments[k], *slots[k].source));
      if (!part_same) {
        return mismatch(absl::StrCat("; its ", slots[k].name, " part is `", Canon(segments[k]), "`, expected `",
                                     Canon(*slots[k].source), "`"));
      }
    }
    return mismatch("");
  }
  for (size_t k = 0; k < slots.size(); ++k) {
    if (!slots[k].source) tiles.push_back({absl::StrCat(which, " ", slots[k].name), segments[k]});
  }
  return absl::OkStatus();
}

// A tile is a broadcast: it may hold a new axis, a digit of an axis the input does not carry, a
// bare broadcast or Top padding, never something the input already holds, and never a `#{0}` or
// `#{!}` hole (the ring writes every position of the tile).
absl::Status CheckTiles(const SwitchConfig& config, const StreamShape& in,
                        const std::vector<std::pair<std::string, Mapping>>& tiles) {
  DigitSet input = InputDigits({&in.chip, &in.cluster, &in.slice, &in.time, &in.packet});
  for (const auto& [where, tile] : tiles) {
    for (int64_t i = 0; i < tile.size(); ++i) {
      Cell cell = tile.map(i);
      if (cell.kind == Cell::Kind::kPad && cell.pad != PadKind::kTop) {
        return Violation(config,
                         absl::StrCat("the broadcast tile `", Canon(tile), "` at ", where, " holds `",
                                      PadKindOperator(cell.pad),
                                      "` padding, which a broadcast would overwrite; use a new axis, a bare "
                                      "broadcast or `1 # n`"),
                         "a tile may only land on Top padding");
      }
      if (cell.live() && input.Touches(cell.index)) {
        return Violation(config,
                         absl::StrCat(where, " must be a fresh broadcast tile of size ", tile.size(), ", got `",
                                      Canon(tile), "`, which the input already carries (its position ", i,
                                      " holds ", input.Project(cell.index).ToString(), ")"),
                         "broadcast tile is new");
      }
    }
  }
  return CheckDigitsOnce(config, tiles);
}

absl::StatusOr<int64_t> PlanRegular(const StreamShape& in, const SwitchConfig& config, const Mapping& out_slice,
                                    const Mapping& out_time) {
  RETURN_IF_ERROR(CheckDivisibility(config, in));
  ASSIGN_OR_RETURN(Frames frames, RegularFrames(in, config));
  std::vector<std::pair<std::string, Mapping>> tiles;
  RETURN_IF_ERROR(MatchFrame(config, "OutSlice", frames.slice, out_slice, tiles));
  RETURN_IF_ERROR(MatchFrame(config, "OutTime", frames.time, out_time, tiles));
  RETURN_IF_ERROR(CheckTiles(config, in, tiles));
  // The manual: ring_size is slice1 * slice0 (the slices that exchange data); 1 when forwarding.
  return config.kind == Kind::kForward ? 1 : config.slice1 * config.slice0;
}

// ---------------------------------------------------------------------------------------------
// CustomBroadcast.

// One digit of InSlice with its position stride (slices between consecutive digit values).
struct SliceDigit {
  std::string axis;
  int64_t coef, count, pos_stride;
};

absl::StatusOr<std::vector<SliceDigit>> SliceDigits(const SwitchConfig& config, const Mapping& slice) {
  std::vector<SliceDigit> digits;
  int64_t pos_stride = 1;
  for (const Factor& f : slice.normal_form().factors()) {
    if (f.kind != Factor::Kind::kDigit) {
      return absl::UnimplementedError(absl::StrCat(
          "Switch ", config.ToString(), ": CustomBroadcast is checked digit by digit, and InSlice `",
          slice.ToString(), "` has a part that is not an axis digit (a linear combination, skew or block padding)"));
    }
    if (!f.axis.empty()) digits.push_back({f.axis, f.coef, f.count, pos_stride});
    pos_stride *= f.count;
  }
  return digits;
}

// [lo, hi) in an axis's place values minus [cut_lo, cut_hi).
std::vector<std::pair<int64_t, int64_t>> Subtract(const std::vector<std::pair<int64_t, int64_t>>& ranges,
                                                  int64_t cut_lo, int64_t cut_hi) {
  std::vector<std::pair<int64_t, int64_t>> out;
  for (auto [lo, hi] : ranges) {
    if (lo < std::min(hi, cut_lo)) out.push_back({lo, std::min(hi, cut_lo)});
    if (std::max(lo, cut_hi) < hi) out.push_back({std::max(lo, cut_hi), hi});
  }
  return out;
}

// The parts of InSlice that OutSlice does not hold (the axes that must move to Time), outermost
// first, each as a position slice of InSlice so that its padding comes along. nullopt when they
// cannot be cut at digit boundaries (then messages fall back to words).
std::optional<Mapping> MovedParts(const Mapping& in_slice, const std::vector<SliceDigit>& in_digits,
                                  const Mapping& out_slice) {
  std::map<std::string, std::vector<std::pair<int64_t, int64_t>>> held;
  for (const Factor& f : out_slice.normal_form().factors()) {
    if (f.kind == Factor::Kind::kComposite) return std::nullopt;
    if (f.kind == Factor::Kind::kDigit && !f.axis.empty()) held[f.axis].push_back({f.coef, f.coef * f.count});
  }
  std::vector<std::pair<int64_t, Mapping>> pieces;  // (position stride, part)
  for (const SliceDigit& d : in_digits) {
    std::vector<std::pair<int64_t, int64_t>> rest = {{d.coef, d.coef * d.count}};
    for (auto [lo, hi] : held[d.axis]) rest = Subtract(rest, lo, hi);
    for (auto [lo, hi] : rest) {
      if (lo % d.coef != 0 || hi % lo != 0) return std::nullopt;
      int64_t stride = d.pos_stride * (lo / d.coef);
      absl::StatusOr<Mapping> strided = Mapping::MakeStride(in_slice, stride);
      if (!strided.ok()) return std::nullopt;
      absl::StatusOr<Mapping> part = Mapping::MakeModulo(*strided, hi / lo);
      if (!part.ok()) return std::nullopt;
      pieces.push_back({stride, *part});
    }
  }
  std::sort(pieces.begin(), pieces.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
  std::vector<Mapping> parts;
  for (auto& [stride, part] : pieces) parts.push_back(part);
  return Pair(parts);
}

// The moved block's digits, walked innermost first, must come from ever outer InSlice positions:
// the ring forwards packets in arrival order and cannot reorder axes (Constraint 1).
absl::Status CheckMovedOrder(const SwitchConfig& config, const Mapping& moved,
                             const std::vector<SliceDigit>& in_digits, absl::string_view expected_time,
                             const Mapping& out_time) {
  std::vector<int64_t> strides;  // InSlice position strides, innermost moved digit first
  for (const Factor& f : moved.normal_form().factors()) {
    if (f.kind != Factor::Kind::kDigit) {
      return absl::UnimplementedError(absl::StrCat("Switch ", config.ToString(), ": the moved part `",
                                                   moved.ToString(), "` of OutTime is not made of axis digits"));
    }
    if (f.axis.empty()) {
      return Violation(config,
                       absl::StrCat("the inner part `", Canon(moved), "` of OutTime `", out_time.ToString(),
                                    "` (the axes moved from Slice) holds a broadcast or padding digit `",
                                    DigitText(f), "`; only InSlice digits can move to Time"),
                       "moved axes come from Slice", "Custom Topologies");
    }
    for (int64_t at = f.coef; at < f.coef * f.count;) {
      auto it = std::find_if(in_digits.begin(), in_digits.end(), [&](const SliceDigit& d) {
        return d.axis == f.axis && d.coef <= at && at < d.coef * d.count && at % d.coef == 0;
      });
      if (it == in_digits.end()) {
        return Violation(config,
                         absl::StrCat("the inner part `", Canon(moved), "` of OutTime `", out_time.ToString(),
                                      "` holds `", DigitText(f), "`, which InSlice does not carry; only Slice axes ",
                                      "can move to Time, and InTime must stay outermost and unchanged"),
                         "moved axes come from Slice", "Custom Topologies");
      }
      strides.push_back(it->pos_stride * (at / it->coef));
      at = it->coef * it->count;
    }
  }
  for (size_t k = 1; k < strides.size(); ++k) {
    if (strides[k] <= strides[k - 1]) {
      return Violation(config,
                       absl::StrCat("the axes moved from Slice to Time must keep their InSlice order",
                                    expected_time.empty() ? "" : absl::StrCat(": OutTime must be `", expected_time, "`"),
                                    ", got `", out_time.ToString(), "` (moved part `", Canon(moved), "`)"),
                       "order preservation");
    }
  }
  return absl::OkStatus();
}

// A moved digit resized below its InSlice extent (`B % 4 = 3`, the manual's partial axis
// extraction): input slices whose digit value is at or above `count` are deliberately not read.
struct PartialDigit {
  std::string axis;
  int64_t coef, count, full;
};

std::vector<PartialDigit> PartialDigits(const Mapping& moved, const std::vector<SliceDigit>& in_digits,
                                        const Mapping& out_slice) {
  std::map<std::string, std::set<int64_t>> bounds;
  for (const SliceDigit& d : in_digits) bounds[d.axis].insert({d.coef, d.coef * d.count});
  for (const Factor& f : out_slice.normal_form().factors()) {
    if (f.kind == Factor::Kind::kDigit && !f.axis.empty()) bounds[f.axis].insert({f.coef, f.coef * f.count});
  }
  std::vector<PartialDigit> partial;
  for (const Factor& f : moved.normal_form().factors()) {
    if (f.kind != Factor::Kind::kDigit || f.axis.empty()) continue;
    int64_t end = f.coef * f.count;
    for (int64_t b : bounds[f.axis]) {
      if (b < end || b % f.coef != 0) continue;
      if (b > end) partial.push_back({f.axis, f.coef, f.count, b / f.coef});
      break;
    }
  }
  return partial;
}

// The smallest aligned power-of-two group of slices that contains both `a` and `b`.
int64_t RingSpan(int64_t a, int64_t b) {
  uint64_t diff = static_cast<uint64_t>(a ^ b);
  return diff == 0 ? 1 : static_cast<int64_t>(std::bit_floor(diff) * 2);
}

// Sweeps every (output slice, moved time position), finds the input slice holding that index, and
// returns the ring size: the smallest aligned group size that keeps every transfer inside a group.
absl::StatusOr<int64_t> SweepSlices(const SwitchConfig& config, const StreamShape& in, const Mapping& out_slice,
                                    const Mapping& moved, const std::vector<PartialDigit>& partial) {
  DigitSet slice_digits = InputDigits({&in.slice});
  DigitSet time_digits = InputDigits({&in.time});
  DigitSet other_digits = InputDigits({&in.chip, &in.cluster, &in.packet});

  std::map<Index, std::vector<int64_t>> holders;  // index -> input slices holding it
  std::vector<Cell> in_cells;
  for (int64_t s = 0; s < in.slice.size(); ++s) {
    in_cells.push_back(in.slice.map(s));
    if (in_cells.back().live()) holders[in_cells.back().index].push_back(s);
  }
  std::vector<Cell> moved_cells;
  for (int64_t j = 0; j < moved.size(); ++j) moved_cells.push_back(moved.map(j));

  std::vector<bool> covered(in.slice.size(), false);
  int64_t ring = 1;
  for (int64_t out = 0; out < out_slice.size(); ++out) {
    Cell cell = out_slice.map(out);
    if (!cell.live()) continue;
    if (time_digits.Touches(cell.index)) {
      return Violation(config,
                       absl::StrCat("OutSlice `", out_slice.ToString(), "` position ", out, " holds ",
                                    time_digits.Project(cell.index).ToString(),
                                    ", which the input carries in Time; a slice can only receive data from other "
                                    "slices, or a fresh broadcast"),
                       "OutSlice is sourced from InSlice", "Custom Topologies");
    }
    if (other_digits.Touches(cell.index)) {
      return Violation(config,
                       absl::StrCat("OutSlice `", out_slice.ToString(), "` position ", out, " holds ",
                                    other_digits.Project(cell.index).ToString(),
                                    ", which the input carries in Chip, Cluster or Packet; a broadcast tile must "
                                    "be new"),
                       "broadcast tile is new", "Custom Topologies");
    }
    for (int64_t j = 0; j < moved.size(); ++j) {
      if (!moved_cells[j].live()) continue;
      Index wanted = cell.index;
      wanted.AddAll(moved_cells[j].index);
      Index source = slice_digits.Project(wanted);
      auto it = holders.find(source);
      if (it == holders.end()) {
        return Violation(config,
                         absl::StrCat("output slice ", out, moved.size() > 1 ? absl::StrCat(" at moved time ", j) : "",
                                      " holds ", wanted.ToString(), ", but no input slice of `", in.slice.ToString(),
                                      "` holds ", source.ToString()),
                         "every output slice has a source slice", "Custom Topologies");
      }
      int64_t span = kSlicesPerCluster;
      for (int64_t s : it->second) {
        covered[s] = true;
        span = std::min(span, RingSpan(s, out));
      }
      ring = std::max(ring, span);
    }
  }
  for (int64_t s = 0; s < in.slice.size(); ++s) {
    if (!in_cells[s].live() || covered[s]) continue;
    const Index& index = in_cells[s].index;
    bool sliced = std::any_of(partial.begin(), partial.end(), [&](const PartialDigit& p) {
      return (index[p.axis] / p.coef) % p.full >= p.count;
    });
    if (sliced) continue;
    return Violation(config,
                     absl::StrCat("input slice ", s, " holds ", index.ToString(),
                                  ", which no output slice receives; live data may not be dropped (only padding, "
                                  "or the tail of an axis moved to Time and resized, as in partial axis "
                                  "extraction)"),
                     "no live data dropped", "Custom Topologies");
  }
  return ring;
}

absl::StatusOr<int64_t> PlanCustom(const StreamShape& in, const SwitchConfig& config, const Mapping& out_slice,
                                   const Mapping& out_time) {
  ASSIGN_OR_RETURN(std::vector<SliceDigit> in_digits, SliceDigits(config, in.slice));
  std::optional<Mapping> moved_parts = MovedParts(in.slice, in_digits, out_slice);
  std::string expected_time = moved_parts ? Canon(Pair({in.time, *moved_parts})) : "";

  // Constraint 2: InTime stays outermost and unchanged, the moved axes fill the inner positions.
  auto not_innermost = [&](absl::string_view detail) {
    return Violation(config,
                     absl::StrCat("OutTime must be ",
                                  expected_time.empty() ? absl::StrCat("InTime `", Canon(in.time),
                                                                       "` followed by the axes moved from Slice")
                                                        : absl::StrCat("`", expected_time, "`"),
                                  " (InTime `", Canon(in.time),
                                  "` unchanged and outermost, the axes moved from Slice innermost), got `",
                                  out_time.ToString(), "`", detail),
                     "innermost time position");
  };
  if (out_time.size() % in.time.size() != 0) {
    return not_innermost(absl::StrCat(" (size ", out_time.size(), " is not a multiple of InTime's ",
                                      in.time.size(), ")"));
  }
  ASSIGN_OR_RETURN(Mapping moved, Mapping::MakeModulo(out_time, out_time.size() / in.time.size()));
  ASSIGN_OR_RETURN(bool time_kept, Equivalent(Pair({in.time, moved}), out_time));
  if (!time_kept) return not_innermost("");

  RETURN_IF_ERROR(CheckDigitsOnce(config, {{"OutSlice", out_slice}, {"OutTime", moved}}));
  RETURN_IF_ERROR(CheckMovedOrder(config, moved, in_digits, expected_time, out_time));
  ASSIGN_OR_RETURN(int64_t ring,
                   SweepSlices(config, in, out_slice, moved, PartialDigits(moved, in_digits, out_slice)));
  if (ring != config.ring_size) {
    return Violation(config,
                     absl::StrCat("ring_size ", config.ring_size, " was given, but this topology exchanges data within ",
                                  "aligned groups of ", ring, " slices; use CustomBroadcast{ring_size=", ring, "}"),
                     "ring size matches the slot sweep");
  }
  return ring;
}

}  // namespace

// ---------------------------------------------------------------------------------------------

SwitchConfig SwitchConfig::Forward() { return SwitchConfig{}; }
SwitchConfig SwitchConfig::Broadcast01(int64_t slice1, int64_t slice0, int64_t time0) {
  return SwitchConfig{Kind::kBroadcast01, slice1, slice0, time0, 0};
}
SwitchConfig SwitchConfig::Broadcast1(int64_t slice1, int64_t slice0) {
  return SwitchConfig{Kind::kBroadcast1, slice1, slice0, 0, 0};
}
SwitchConfig SwitchConfig::Transpose(int64_t slice1, int64_t slice0) {
  return SwitchConfig{Kind::kTranspose, slice1, slice0, 0, 0};
}
SwitchConfig SwitchConfig::InterTranspose(int64_t slice1, int64_t slice0, int64_t time0) {
  return SwitchConfig{Kind::kInterTranspose, slice1, slice0, time0, 0};
}
SwitchConfig SwitchConfig::TransposedBroadcast1(int64_t slice1, int64_t slice0) {
  return SwitchConfig{Kind::kTransposedBroadcast1, slice1, slice0, 0, 0};
}
SwitchConfig SwitchConfig::CustomBroadcast(int64_t ring_size) {
  return SwitchConfig{Kind::kCustomBroadcast, 0, 0, 0, ring_size};
}

const char* SwitchKindName(SwitchConfig::Kind kind) {
  switch (kind) {
    case Kind::kForward: return "Forwarding";
    case Kind::kBroadcast01: return "Broadcast01";
    case Kind::kBroadcast1: return "Broadcast1";
    case Kind::kTranspose: return "Transpose";
    case Kind::kInterTranspose: return "InterTranspose";
    case Kind::kTransposedBroadcast1: return "TransposedBroadcast1";
    case Kind::kCustomBroadcast: return "CustomBroadcast";
  }
  return "?";
}

std::string SwitchConfig::ToString() const {
  std::vector<const char*> names = ParamNames(kind);
  if (names.empty()) return SwitchKindName(kind);
  std::vector<std::string> params;
  for (const char* name : names) params.push_back(absl::StrCat(name, "=", ParamValue(*this, name)));
  return absl::StrCat(SwitchKindName(kind), "{", absl::StrJoin(params, ", "), "}");
}

std::string SwitchStage::Describe() const { return absl::StrCat(config.ToString(), " ring ", ring_size); }

absl::StatusOr<SwitchStage> PlanSwitch(const StreamShape& in, const SwitchConfig& config, const Mapping& out_slice,
                                       const Mapping& out_time) {
  for (const auto& [what, m] : {std::pair<const char*, const Mapping*>{"InChip", &in.chip},
                                {"InCluster", &in.cluster}, {"InSlice", &in.slice}, {"InTime", &in.time},
                                {"InPacket", &in.packet}, {"OutSlice", &out_slice}, {"OutTime", &out_time}}) {
    RETURN_IF_ERROR(CheckValid(config, what, *m));
  }
  RETURN_IF_ERROR(CheckParameters(config));
  RETURN_IF_ERROR(CheckFullCluster(config, "InSlice", in.slice));
  RETURN_IF_ERROR(CheckFullCluster(config, "OutSlice", out_slice));
  RETURN_IF_ERROR(CheckPacket(config, in));

  SwitchStage stage;
  stage.config = config;
  if (config.kind == Kind::kCustomBroadcast) {
    ASSIGN_OR_RETURN(stage.ring_size, PlanCustom(in, config, out_slice, out_time));
  } else {
    ASSIGN_OR_RETURN(stage.ring_size, PlanRegular(in, config, out_slice, out_time));
  }
  stage.out = in;
  stage.out.slice = out_slice;
  stage.out.time = out_time;

  // ring_size x input_time x cycles_per_packet, a packet taking one cycle per 32-byte flit.
  int64_t bytes = (in.packet.size() * WireBits(in.dtype) + 7) / 8;
  int64_t flits = (bytes + kFlitBytes - 1) / kFlitBytes;
  int64_t per_ring = 0;
  if (__builtin_mul_overflow(stage.ring_size, in.time.size(), &per_ring) ||
      __builtin_mul_overflow(per_ring, flits, &stage.cycles)) {
    return Violation(config, "the cycle estimate overflows 64 bits", "cycle estimate", "Performance");
  }
  return stage;
}

absl::StatusOr<std::pair<Mapping, Mapping>> RegularSwitchOutput(const StreamShape& in, const SwitchConfig& config) {
  if (config.kind == Kind::kCustomBroadcast) {
    return absl::InvalidArgumentError(absl::StrCat(
        "Switch ", config.ToString(), ": a custom topology has no single output; give OutSlice and OutTime"));
  }
  RETURN_IF_ERROR(CheckValid(config, "InSlice", in.slice));
  RETURN_IF_ERROR(CheckValid(config, "InTime", in.time));
  RETURN_IF_ERROR(CheckParameters(config));
  RETURN_IF_ERROR(CheckFullCluster(config, "InSlice", in.slice));
  RETURN_IF_ERROR(CheckDivisibility(config, in));
  ASSIGN_OR_RETURN(Frames frames, RegularFrames(in, config));
  return std::pair<Mapping, Mapping>{FrameMapping(frames.slice), FrameMapping(frames.time)};
}

absl::StatusOr<SwitchConfig> ParseSwitchConfig(absl::string_view text) {
  auto error = [&](absl::string_view why) {
    return absl::InvalidArgumentError(absl::StrCat(
        "switch config `", text, "`: ", why,
        "; expected e.g. `Broadcast01{2, 2, 4}`, `Broadcast1{slice1=4, slice0=8}`, `CustomBroadcast{256}` or "
        "`Forwarding`"));
  };
  absl::string_view rest = absl::StripAsciiWhitespace(text);
  absl::ConsumePrefix(&rest, "SwitchConfig::");
  size_t brace = rest.find('{');
  std::string name = absl::AsciiStrToLower(absl::StripAsciiWhitespace(rest.substr(0, brace)));

  static const std::map<std::string, Kind>& kinds = *new std::map<std::string, Kind>{
      {"forwarding", Kind::kForward},       {"forward", Kind::kForward},
      {"broadcast01", Kind::kBroadcast01},  {"broadcast1", Kind::kBroadcast1},
      {"transpose", Kind::kTranspose},      {"intertranspose", Kind::kInterTranspose},
      {"transposedbroadcast1", Kind::kTransposedBroadcast1},
      {"custombroadcast", Kind::kCustomBroadcast}};
  auto kind = kinds.find(name);
  if (kind == kinds.end()) return error(absl::StrCat("unknown topology `", name, "`"));
  SwitchConfig config;
  config.kind = kind->second;
  std::vector<const char*> names = ParamNames(config.kind);

  absl::string_view body;
  if (brace != absl::string_view::npos) {
    body = rest.substr(brace + 1);
    if (!absl::ConsumeSuffix(&body, "}")) return error("missing the closing `}`");
    body = absl::StripAsciiWhitespace(body);
  }
  std::vector<absl::string_view> args;
  if (!body.empty()) args = absl::StrSplit(body, ',');
  if (!args.empty() && absl::StripAsciiWhitespace(args.back()).empty()) args.pop_back();  // trailing comma

  std::set<std::string> given;
  size_t next_positional = 0;
  for (absl::string_view arg : args) {
    arg = absl::StripAsciiWhitespace(arg);
    std::string param;
    absl::string_view value_text = arg;
    size_t sep = arg.find_first_of("=:");
    if (sep != absl::string_view::npos) {
      param = std::string(absl::StripAsciiWhitespace(arg.substr(0, sep)));
      value_text = absl::StripAsciiWhitespace(arg.substr(sep + 1));
      if (std::find_if(names.begin(), names.end(), [&](const char* n) { return param == n; }) == names.end()) {
        return error(absl::StrCat(SwitchKindName(config.kind), " has no parameter `", param, "` (it takes ",
                                  names.empty() ? "none" : absl::StrJoin(names, ", "), ")"));
      }
    } else {
      if (next_positional >= names.size()) {
        return error(absl::StrCat(SwitchKindName(config.kind), " takes ", names.size(), " parameter(s), got ",
                                  args.size()));
      }
      param = names[next_positional++];
    }
    int64_t value = 0;
    if (!absl::SimpleAtoi(value_text, &value)) {
      return error(absl::StrCat("`", value_text, "` is not an integer (parameter ", param, ")"));
    }
    if (!given.insert(param).second) return error(absl::StrCat("parameter ", param, " is given twice"));
    *ParamSlot(config, param) = value;
  }
  for (const char* n : names) {
    if (!given.count(n)) {
      return error(absl::StrCat(SwitchKindName(config.kind), " needs ", absl::StrJoin(names, ", "), "; ", n,
                                " is missing"));
    }
  }
  return config;
}

}  // namespace visa
