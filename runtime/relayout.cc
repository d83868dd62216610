// Relayout tables: digit odometer over the destination, digit decomposition into the source.
#include "runtime/relayout.h"

#include <algorithm>
#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "dsl/index.h"
#include "dsl/normal_form.h"
#include "dsl/status_macros.h"

namespace visa {
namespace {

constexpr size_t kChunk = size_t{1} << 14;

// Axis names <-> dense ids, so coordinates are a plain vector.
class AxisTable {
 public:
  int Id(const std::string& name) {
    auto it = std::find(names_.begin(), names_.end(), name);
    if (it != names_.end()) return static_cast<int>(it - names_.begin());
    names_.push_back(name);
    return static_cast<int>(names_.size()) - 1;
  }
  int Find(absl::string_view name) const {
    auto it = std::find(names_.begin(), names_.end(), name);
    return it == names_.end() ? -1 : static_cast<int>(it - names_.begin());
  }
  const std::string& name(int id) const { return names_[id]; }
  int size() const { return static_cast<int>(names_.size()); }

 private:
  std::vector<std::string> names_;
};

using Coords = std::vector<int64_t>;

Index ToIndex(const Coords& coords, const AxisTable& axes, const std::vector<int>* only = nullptr) {
  Index index;
  for (int id = 0; id < axes.size(); ++id) {
    if (coords[id] == 0) continue;
    if (only != nullptr && std::find(only->begin(), only->end(), id) == only->end()) continue;
    index.Set(axes.name(id), coords[id]);
  }
  return index;
}

// One mapping prepared for enumeration (all live positions with their coordinates) and lookup
// (coordinates to the smallest position holding them).
class Side {
 public:
  Side(const Mapping& mapping, AxisTable& axes) : mapping_(mapping) {
    for (const std::string& name : mapping.axis_names()) axis_ids_.push_back(axes.Id(name));
    fast_ = Compile(axes);
  }

  struct Digit {
    int axis = -1;  // -1: a broadcast digit (no coordinate)
    int64_t coef = 0, live = 1, weight = 1;
  };
  struct AxisDigits {
    int axis = 0;
    std::vector<Digit> descending;  // by coefficient, largest first
  };

  bool fast() const { return fast_; }
  const Mapping& mapping() const { return mapping_; }
  const std::vector<int>& axis_ids() const { return axis_ids_; }
  // Fast sides: the digits innermost first (the odometer), and each axis's digits (the lookup).
  const std::vector<Digit>& digits() const { return digits_; }
  const std::vector<AxisDigits>& lookup() const { return lookup_; }

  // The position contribution of coordinate `v` of one axis (the greedy digit decomposition of
  // NormalForm::inverse), or -1 when no live position holds it. When `unit` names one of the
  // digits, `*unit_value` receives that digit's value.
  static int64_t Contribution(const AxisDigits& ad, int64_t v, int unit = -1,
                              int64_t* unit_value = nullptr) {
    int64_t position = 0;
    for (size_t j = 0; j < ad.descending.size(); ++j) {
      const Digit& d = ad.descending[j];
      const int64_t q = std::min(v / d.coef, d.live - 1);
      v -= q * d.coef;
      position += q * d.weight;
      if (static_cast<int>(j) == unit) *unit_value = q;
    }
    return v == 0 ? position : -1;
  }

  // Calls fn(position, coords) for every live position in increasing order; stops at the first
  // error fn returns.
  template <typename Fn>
  absl::Status Enumerate(const AxisTable& axes, Fn&& fn) const {
    return fast_ ? EnumerateDigits(axes, fn) : EnumerateSlow(axes, fn);
  }

  // The smallest live position holding `coords` restricted to this side's axes, or -1.
  int64_t Locate(const Coords& coords, const AxisTable& axes) const {
    if (!fast_) {
      std::optional<int64_t> p = mapping_.inverse(ToIndex(coords, axes, &axis_ids_));
      return p ? *p : -1;
    }
    int64_t position = 0;
    for (const AxisDigits& ad : lookup_) {
      const int64_t part = Contribution(ad, coords[ad.axis]);
      if (part < 0) return -1;
      position += part;
    }
    return position;
  }

  // One past the last live position.
  int64_t Extent() const {
    if (fast_) {
      int64_t last = 0;
      for (const Digit& d : digits_) last += (d.live - 1) * d.weight;
      return last + 1;
    }
    for (int64_t p = mapping_.size(); p-- > 0;) {
      if (mapping_.map(p).live()) return p + 1;
    }
    return 0;
  }

  // How many distinct tensor indices the live positions hold.
  int64_t DistinctCount() const {
    if (fast_) {
      int64_t count = 1;
      for (const Digit& d : digits_) {
        if (d.axis >= 0) count *= d.live;
      }
      return count;
    }
    int64_t count = 0;
    for (int64_t p = 0; p < mapping_.size(); ++p) {
      for (const Cell& cell : mapping_.maps(p)) {
        if (cell.live() && mapping_.inverse(cell.index) == p) ++count;
      }
    }
    return count;
  }

 private:
  // Digits from the normal form; false when the form has composites or overlapping digits.
  bool Compile(AxisTable& axes) {
    const NormalForm& form = mapping_.normal_form();
    if (!form.is_canonical()) return false;
    int64_t running = 1;
    for (const Factor& f : form.factors()) {
      if (f.kind == Factor::Kind::kDigit) {
        Digit d;
        d.axis = f.axis.empty() ? -1 : axes.Id(f.axis);
        d.coef = f.coef;
        d.live = f.live;
        d.weight = running;
        digits_.push_back(d);
        running *= f.count;
      } else {
        running = f.block;  // a block pad only changes the weights of the factors outside it
      }
    }
    for (const Digit& d : digits_) {
      if (d.axis < 0) continue;
      auto it = std::find_if(lookup_.begin(), lookup_.end(),
                             [&](const AxisDigits& ad) { return ad.axis == d.axis; });
      if (it == lookup_.end()) {
        lookup_.push_back(AxisDigits{d.axis, {}});
        it = lookup_.end() - 1;
      }
      it->descending.push_back(d);
    }
    for (AxisDigits& ad : lookup_) {
      std::sort(ad.descending.begin(), ad.descending.end(),
                [](const Digit& a, const Digit& b) { return a.coef > b.coef; });
      for (size_t j = 0; j + 1 < ad.descending.size(); ++j) {
        const Digit& lower = ad.descending[j + 1];
        if (ad.descending[j].coef < lower.coef * lower.live) return false;  // overlapping digits
      }
    }
    return true;
  }

  template <typename Fn>
  absl::Status EnumerateDigits(const AxisTable& axes, Fn& fn) const {
    Coords coords(axes.size(), 0);
    std::vector<int64_t> value(digits_.size(), 0);
    int64_t position = 0;
    const size_t n = digits_.size();
    while (true) {
      RETURN_IF_ERROR(fn(position, coords));
      size_t k = 0;
      for (; k < n; ++k) {
        const Digit& d = digits_[k];
        ++value[k];
        position += d.weight;
        if (d.axis >= 0) coords[d.axis] += d.coef;
        if (value[k] < d.live) break;
        position -= d.live * d.weight;  // wrap this digit and carry into the next
        if (d.axis >= 0) coords[d.axis] -= d.live * d.coef;
        value[k] = 0;
      }
      if (k == n) return absl::OkStatus();
    }
  }

  template <typename Fn>
  absl::Status EnumerateSlow(const AxisTable& axes, Fn& fn) const {
    Coords coords(axes.size(), 0);
    for (int64_t p = 0; p < mapping_.size(); ++p) {
      Cell cell = mapping_.map(p);
      if (!cell.live()) continue;
      std::fill(coords.begin(), coords.end(), 0);
      for (const auto& [name, value] : cell.index.coords()) {
        int id = axes.Find(name);
        if (id < 0) {
          return absl::InternalError(absl::StrCat("relayout: axis `", name, "` of `",
                                                  mapping_.ToString(), "` is not in axis_names()"));
        }
        coords[id] = value;
      }
      RETURN_IF_ERROR(fn(p, coords));
    }
    return absl::OkStatus();
  }

  Mapping mapping_;
  std::vector<int> axis_ids_;
  bool fast_ = false;
  std::vector<Digit> digits_;  // innermost first
  std::vector<AxisDigits> lookup_;
};

std::string AxisList(const Side& side, const AxisTable& axes) {
  std::vector<std::string> names;
  for (int id : side.axis_ids()) names.push_back(axes.name(id));
  return names.empty() ? std::string("no axes") : absl::StrCat("axes ", absl::StrJoin(names, ", "));
}

absl::Status DroppedError(const Side& src, const Side& dst, const AxisTable& axes,
                          const Coords& coords, int64_t q) {
  return absl::InvalidArgumentError(absl::StrCat(
      "Tensor Function: the source `", src.mapping().ToString(), "` holds tensor index ",
      ToIndex(coords, axes).ToString(), " (position ", q, ") that no position of the destination `",
      dst.mapping().ToString(),
      "` holds; the move would drop it, so it would not be the identity on the mathematical "
      "tensor (manual, \"Tensor Functions\")"));
}

// Coverage when a source position holds several indices (linear combinations): positions no
// longer stand for indices, so compare the index sets themselves (such mappings are small).
absl::Status CheckCoversManyToOne(const Side& src, const Side& dst, const AxisTable& axes) {
  std::set<Coords> held;
  auto to_coords = [&axes](const Cell& cell) {
    Coords coords(axes.size(), 0);
    for (const auto& [name, value] : cell.index.coords()) {
      int id = axes.Find(name);
      if (id >= 0) coords[id] = value;
    }
    return coords;
  };
  // Every index a destination position holds counts (a combination position holds several).
  for (int64_t p = 0; p < dst.mapping().size(); ++p) {
    if (!dst.mapping().map(p).live()) continue;  // padding everywhere: skip the full evaluation
    for (const Cell& cell : dst.mapping().maps(p)) {
      if (!cell.live()) continue;
      Coords coords = to_coords(cell);
      Coords restricted(coords.size(), 0);
      for (int id : src.axis_ids()) restricted[id] = coords[id];
      held.insert(std::move(restricted));
    }
  }
  const Mapping& m = src.mapping();
  for (int64_t q = 0; q < m.size(); ++q) {
    if (!m.map(q).live()) continue;
    for (const Cell& cell : m.maps(q)) {
      if (!cell.live()) continue;
      Coords coords(axes.size(), 0);
      for (const auto& [name, value] : cell.index.coords()) {
        int id = axes.Find(name);
        if (id >= 0) coords[id] = value;
      }
      if (!held.contains(coords)) return DroppedError(src, dst, axes, coords, q);
    }
  }
  return absl::OkStatus();
}

}  // namespace

struct RelayoutPlan::Impl {
  AxisTable axes;
  std::unique_ptr<Side> dst, src;
};

RelayoutPlan::RelayoutPlan(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
RelayoutPlan::~RelayoutPlan() = default;
RelayoutPlan::RelayoutPlan(RelayoutPlan&&) noexcept = default;
RelayoutPlan& RelayoutPlan::operator=(RelayoutPlan&&) noexcept = default;

absl::StatusOr<RelayoutPlan> RelayoutPlan::Make(const Mapping& dst, const Mapping& src) {
  RETURN_IF_ERROR(dst.status());
  RETURN_IF_ERROR(src.status());
  auto impl = std::make_unique<Impl>();
  impl->dst = std::make_unique<Side>(dst, impl->axes);
  impl->src = std::make_unique<Side>(src, impl->axes);
  return RelayoutPlan(std::move(impl));
}

bool RelayoutPlan::fast() const { return impl_->dst->fast() && impl_->src->fast(); }

namespace {

absl::Status UnheldError(const Side& dst, const Side& src, const AxisTable& axes, int64_t p,
                         const Coords& coords) {
  return absl::InvalidArgumentError(absl::StrCat(
      "Tensor Function: destination position ", p, " of `", dst.mapping().ToString(),
      "` holds tensor index ", ToIndex(coords, axes).ToString(), ", which the source `",
      src.mapping().ToString(), "` (", AxisList(src, axes),
      ") does not hold; a move is the identity on the mathematical tensor (manual, \"Tensor "
      "Functions\"), so every destination element must come from the source"));
}

// Collects (destination, source) pairs into runs, hands out full chunks, and marks which source
// positions were read.
class RunBuilder {
 public:
  RunBuilder(RelayoutPlan::ChunkFn apply, int64_t src_size)
      : apply_(apply), seen_((src_size + 63) / 64, 0) {
    runs_.reserve(kChunk);
  }

  void Add(int64_t p, int64_t q, int64_t length = 1, int64_t stride = 1) {
    if (!runs_.empty()) {
      RelayoutRun& last = runs_.back();
      if (p == last.dst + last.length) {
        if (last.length == 1) last.src_stride = length == 1 ? q - last.src : stride;  // adopt one
        if ((length == 1 || stride == last.src_stride) &&
            q == last.src + last.length * last.src_stride) {
          last.length += length;
          return;
        }
        if (last.length == 1) last.src_stride = 1;
      }
      Mark(last);  // `last` is complete
      if (runs_.size() == kChunk) {
        apply_(runs_);
        runs_.clear();
      }
    }
    runs_.push_back({p, q, length, length == 1 ? 1 : stride});
  }

  void Finish() {
    if (runs_.empty()) return;
    Mark(runs_.back());
    apply_(runs_);
    runs_.clear();
  }

  bool seen(int64_t q) const { return (seen_[q >> 6] >> (q & 63)) & 1; }
  int64_t distinct() const {
    int64_t count = 0;
    for (uint64_t word : seen_) count += __builtin_popcountll(word);
    return count;
  }

 private:
  void Mark(const RelayoutRun& run) {
    if (run.src_stride != 1) {
      for (int64_t i = 0; i < run.length; ++i) {
        const int64_t q = run.src + i * run.src_stride;
        seen_[q >> 6] |= uint64_t{1} << (q & 63);
      }
      return;
    }
    int64_t q = run.src;
    const int64_t end = run.src + run.length;
    for (; q < end && (q & 63) != 0; ++q) seen_[q >> 6] |= uint64_t{1} << (q & 63);
    for (; q + 64 <= end; q += 64) seen_[q >> 6] = ~uint64_t{0};
    for (; q < end; ++q) seen_[q >> 6] |= uint64_t{1} << (q & 63);
  }

  RelayoutPlan::ChunkFn apply_;
  std::vector<RelayoutRun> runs_;
  std::vector<uint64_t> seen_;
};

// Both sides have digit forms. An odometer over the outer destination digits keeps the source
// position of the other axes up to date (one decomposition per outer step); the innermost
// destination digit is swept in place. When the source has a digit of the same axis and step at
// position weight 1, the sweep reads consecutive source positions until that digit wraps, and the
// whole stretch is one run: contiguous layouts cost one decomposition per run, not per element.
absl::Status RunDigits(const Side& dst, const Side& src, const AxisTable& axes, RunBuilder& out) {
  const std::vector<Side::AxisDigits>& lookup = src.lookup();
  std::vector<int> table_of(axes.size(), -1);  // axis -> index into lookup
  for (size_t t = 0; t < lookup.size(); ++t) table_of[lookup[t].axis] = static_cast<int>(t);
  std::vector<Side::Digit> digits = dst.digits();
  if (digits.empty()) digits.push_back({-1, 0, 1, 1});  // one position holding the empty index
  const Side::Digit inner = digits.front();
  const int inner_table = inner.axis >= 0 ? table_of[inner.axis] : -1;
  // The source digit that steps with the inner destination digit, if any.
  int unit = -1;
  if (inner_table >= 0) {
    const std::vector<Side::Digit>& ds = lookup[inner_table].descending;
    for (size_t j = 0; j < ds.size(); ++j) {
      if (ds[j].coef == inner.coef) unit = static_cast<int>(j);
    }
  }
  const size_t n = digits.size();
  Coords coords(axes.size(), 0);
  std::vector<int64_t> part(lookup.size(), 0);  // current contribution of each source axis
  int missing = 0;                              // source axes whose coordinate is not held
  int64_t q = 0;                                // all coordinates are 0: contributions 0
  auto update = [&](int axis) {
    const int t = table_of[axis];
    if (t < 0) return;  // a destination axis the source lacks: broadcast
    const int64_t now = Side::Contribution(lookup[t], coords[axis]);
    const int64_t before = part[t];
    if (before < 0) --missing; else q -= before;
    if (now < 0) ++missing; else q += now;
    part[t] = now;
  };
  std::vector<int64_t> value(n, 0);
  int64_t p = 0;  // destination position with the innermost digit at 0
  while (true) {
    // Sweep the innermost digit.
    if (inner_table < 0) {
      if (missing > 0) return UnheldError(dst, src, axes, p, coords);
      if (inner.weight == 1) {
        out.Add(p, q, inner.live, 0);  // broadcast along the inner digit
      } else {
        for (int64_t i = 0; i < inner.live; ++i) out.Add(p + i * inner.weight, q);
      }
    } else {
      const Side::AxisDigits& ad = lookup[inner_table];
      const int64_t v0 = coords[inner.axis];
      const int64_t others = q - (part[inner_table] < 0 ? 0 : part[inner_table]);
      const int others_missing = missing - (part[inner_table] < 0 ? 1 : 0);
      for (int64_t i = 0; i < inner.live;) {
        const int64_t v = v0 + i * inner.coef;
        int64_t unit_value = 0;
        const int64_t t = Side::Contribution(ad, v, unit, &unit_value);
        if (others_missing > 0 || t < 0) {
          coords[inner.axis] = v;
          return UnheldError(dst, src, axes, p + i * inner.weight, coords);
        }
        // With a stepping source digit, the run lasts until that digit wraps (the digits above
        // it do not change meanwhile: digits do not overlap), reading its weight apart.
        if (unit >= 0 && inner.weight == 1) {
          const Side::Digit& step = ad.descending[unit];
          const int64_t length = std::min(inner.live - i, step.live - unit_value);
          out.Add(p + i, others + t, length, step.weight);
          i += length;
        } else {
          out.Add(p + i * inner.weight, others + t);
          ++i;
        }
      }
    }
    // Step the outer digits.
    size_t k = 1;
    for (; k < n; ++k) {
      const Side::Digit& d = digits[k];
      ++value[k];
      p += d.weight;
      if (value[k] < d.live) {
        if (d.axis >= 0) {
          coords[d.axis] += d.coef;
          update(d.axis);
        }
        break;
      }
      p -= d.live * d.weight;  // wrap this digit and carry into the next
      value[k] = 0;
      if (d.axis >= 0) {
        coords[d.axis] -= (d.live - 1) * d.coef;
        update(d.axis);
      }
    }
    if (k == n) return absl::OkStatus();
  }
}

}  // namespace

absl::Status RelayoutPlan::Run(ChunkFn apply) const {
  const AxisTable& axes = impl_->axes;
  const Side& dst = *impl_->dst;
  const Side& src = *impl_->src;
  RunBuilder out(apply, src.mapping().size());
  if (dst.fast() && src.fast()) {
    RETURN_IF_ERROR(RunDigits(dst, src, axes, out));
  } else {
    RETURN_IF_ERROR(dst.Enumerate(axes, [&](int64_t p, const Coords& coords) -> absl::Status {
      int64_t q = src.Locate(coords, axes);
      if (q < 0) return UnheldError(dst, src, axes, p, coords);
      out.Add(p, q);
      return absl::OkStatus();
    }));
  }
  out.Finish();
  if (!src.mapping().is_one_to_one()) return CheckCoversManyToOne(src, dst, axes);
  const int64_t held = src.DistinctCount();
  if (out.distinct() == held) return absl::OkStatus();
  // Name the first source index that no destination position took.
  absl::Status dropped = absl::OkStatus();
  absl::Status walk = src.Enumerate(axes, [&](int64_t q, const Coords& coords) -> absl::Status {
    if (out.seen(q)) return absl::OkStatus();
    if (src.Locate(coords, axes) != q) return absl::OkStatus();  // a copy of a read index
    dropped = DroppedError(src, dst, axes, coords, q);
    return absl::CancelledError();  // stops the walk
  });
  if (!dropped.ok()) return dropped;
  RETURN_IF_ERROR(walk);
  VISA_CHECK(!dropped.ok(), "a source index is missing but none was found");
  return dropped;
}

absl::StatusOr<std::pair<std::vector<int64_t>, std::vector<int64_t>>> RelayoutPlan::Table() const {
  std::pair<std::vector<int64_t>, std::vector<int64_t>> table;
  RETURN_IF_ERROR(Run([&](absl::Span<const RelayoutRun> runs) {
    for (const RelayoutRun& run : runs) {
      for (int64_t i = 0; i < run.length; ++i) {
        table.first.push_back(run.dst + i);
        table.second.push_back(run.src + i * run.src_stride);
      }
    }
  }));
  return table;
}

absl::StatusOr<std::vector<int64_t>> LivePositions(const Mapping& mapping) {
  RETURN_IF_ERROR(mapping.status());
  AxisTable axes;
  Side side(mapping, axes);
  std::vector<int64_t> positions;
  RETURN_IF_ERROR(side.Enumerate(axes, [&](int64_t p, const Coords&) -> absl::Status {
    positions.push_back(p);
    return absl::OkStatus();
  }));
  return positions;
}

absl::StatusOr<int64_t> LiveExtent(const Mapping& mapping) {
  RETURN_IF_ERROR(mapping.status());
  AxisTable axes;
  return Side(mapping, axes).Extent();
}

}  // namespace visa
