// Memory ranges of tensors and views, and their overlap test.
#include "runtime/memory_range.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "runtime/address_book.h"
#include "runtime/relayout.h"

namespace visa {
namespace {

// Windows larger than this are not enumerated position by position: their range is the hull of
// the window (conservative for hazards, never missing a byte).
constexpr int64_t kMaxEnumeratedPositions = int64_t{1} << 20;
// A window scattered over more intervals than this is also described by its hull.
constexpr size_t kMaxByteIntervals = 4096;

// True when some interval of `x` (shifted by dx) meets some interval of `y` (shifted by dy).
bool Intersect(const std::vector<Interval>& x, int64_t dx, const std::vector<Interval>& y, int64_t dy) {
  size_t i = 0, j = 0;
  while (i < x.size() && j < y.size()) {
    const int64_t xb = x[i].begin + dx, xe = x[i].end + dx;
    const int64_t yb = y[j].begin + dy, ye = y[j].end + dy;
    if (xb < ye && yb < xe) return true;
    if (xe <= ye) {
      ++i;
    } else {
      ++j;
    }
  }
  return false;
}

int64_t Total(const std::vector<Interval>& intervals) {
  int64_t total = 0;
  for (const Interval& i : intervals) total += i.size();
  return total;
}

// The bytes of element positions [first, last) of a tensor at `address`, rounded outward.
Interval BytesOf(int64_t address, int64_t bits, int64_t first, int64_t last) {
  return {address + first * bits / 8, address + (last * bits + 7) / 8};
}

// The window's reach from its first position to one past its last live one, clipped to the tensor.
std::vector<Interval> WindowHull(const DeviceTensor& t, const Interval& whole) {
  absl::StatusOr<int64_t> extent = LiveExtent(t.element());
  if (!extent.ok()) return {whole};
  const int64_t base = t.base_element().size();
  const int64_t first = std::min(t.window_offset(), base);
  const int64_t last = std::max(first, std::min(t.window_offset() + *extent, base));
  return Coalesce({BytesOf(t.address(), StorageBits(t.dtype()), first, last)});
}

// The bytes of every live position of the handle's window, in each unit.
std::vector<Interval> WindowBytes(const DeviceTensor& t) {
  const Placement& p = t.placement();
  const Interval whole{p.address, p.address + p.unit_bytes()};
  // A tensor, or a view of all of it, covers what the tensor claims (padding included).
  if (!t.is_view() || (t.window_offset() == 0 && t.element() == t.base_element())) return {whole};
  if (t.element().size() > kMaxEnumeratedPositions) return WindowHull(t, whole);
  absl::StatusOr<std::vector<int64_t>> live = LivePositions(t.element());
  if (!live.ok()) return WindowHull(t, whole);
  const int64_t bits = StorageBits(p.dtype);
  const int64_t base = t.base_element().size();
  std::vector<Interval> out;
  for (int64_t position : *live) {  // increasing
    const int64_t q = t.window_offset() + position;
    if (q >= base) break;
    const Interval b = BytesOf(p.address, bits, q, q + 1);
    if (!out.empty() && b.begin <= out.back().end) {
      out.back().end = std::max(out.back().end, b.end);
    } else {
      out.push_back(b);
      if (out.size() > kMaxByteIntervals) return WindowHull(t, whole);
    }
  }
  return out;
}

const char* UnitNoun(Tier tier) {
  switch (tier) {
    case Tier::kHbm:
      return "chips";
    case Tier::kTrf:
      return "rows";
    default:
      return "slices";
  }
}

std::string IntervalsText(const std::vector<Interval>& intervals) {
  return absl::StrJoin(intervals, ",", [](std::string* out, const Interval& i) {
    if (i.size() == 1) {
      absl::StrAppend(out, i.begin);
    } else {
      absl::StrAppend(out, i.begin, "-", i.end - 1);
    }
  });
}

}  // namespace

std::vector<Interval> Coalesce(std::vector<Interval> intervals) {
  std::sort(intervals.begin(), intervals.end(),
            [](const Interval& a, const Interval& b) { return a.begin < b.begin; });
  std::vector<Interval> out;
  for (const Interval& i : intervals) {
    if (i.size() <= 0) continue;
    if (!out.empty() && i.begin <= out.back().end) {
      out.back().end = std::max(out.back().end, i.end);
    } else {
      out.push_back(i);
    }
  }
  return out;
}

int64_t MemoryRange::unit_count() const { return Total(units); }
int64_t MemoryRange::bytes_per_unit() const { return Total(bytes); }

std::string MemoryRange::ToString() const {
  std::string where;
  if (bytes.size() == 1) {
    where = absl::StrFormat("bytes [0x%x, 0x%x)", bytes[0].begin, bytes[0].end);
  } else if (bytes.empty()) {
    where = "no bytes";
  } else {
    where = absl::StrFormat("%d B in %d intervals within [0x%x, 0x%x)", bytes_per_unit(),
                            bytes.size(), bytes.front().begin, bytes.back().end);
  }
  return absl::StrCat(TierName(tier), " ", UnitNoun(tier), " ", IntervalsText(units), " ", where,
                      " `", tensor, "`");
}

bool Overlaps(const MemoryRange& a, const MemoryRange& b) {
  if (SpaceOf(a.tier) != SpaceOf(b.tier)) return false;
  if (!Intersect(a.units, 0, b.units, 0)) return false;
  return Intersect(a.bytes, SpaceOffset(a.tier), b.bytes, SpaceOffset(b.tier));
}

MemoryRange RangeOf(const DeviceTensor& tensor, const std::string& name) {
  MemoryRange range;
  range.tier = tensor.tier();
  std::vector<Interval> units;
  for (int64_t unit : tensor.placement().units) units.push_back({unit, unit + 1});
  range.units = Coalesce(std::move(units));
  range.bytes = WindowBytes(tensor);
  range.tensor = name;
  return range;
}

std::optional<MemoryRange> RangeOf(const TensorRef& ref) {
  if (!ref.handle.has_value()) return std::nullopt;
  return RangeOf(*ref.handle, TensorNameOf(ref));
}

std::string TensorNameOf(const TensorRef& ref) {
  const size_t open = ref.text.find('`');
  if (open == std::string::npos) return ref.text;
  const size_t close = ref.text.find('`', open + 1);
  if (close == std::string::npos) return ref.text;
  return ref.text.substr(open + 1, close - open - 1);
}

}  // namespace visa
