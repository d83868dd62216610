// Layout: building digit layouts from normal forms, evaluating, inverting, projecting, composing,
// and the run list every move falls back to.
#include "dsl/layout.h"

#include <algorithm>
#include <limits>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "dsl/first_positions.h"
#include "dsl/normal_form.h"
#include "dsl/outer_padding.h"
#include "dsl/status_macros.h"

namespace visa {
namespace {

// The declared size of the first symbol named `name` (Mapping::inverse's range check).
int64_t DeclaredSize(const Mapping& m, const std::string& name) {
  for (const Axis& axis : m.symbols()) {
    if (axis.name == name) return axis.size;
  }
  return kMaxMappingSize;
}

}  // namespace

Layout Layout::Of(const Mapping& mapping) {
  Layout l;
  l.mapping_ = mapping;
  l.size_ = mapping.size();
  for (const std::string& name : mapping.axis_names()) {
    l.axes_.push_back({name, DeclaredSize(mapping, name)});
  }
  const NormalForm& form = mapping.normal_form();
  l.digits_.resize(l.axes_.size());
  if (!form.is_canonical()) return l;
  std::vector<bool> noted(l.axes_.size(), false);  // the first digit of an axis notes its size
  int64_t running = 1;
  bool mode_inside = false;  // a mode since the last block pad
  for (const Factor& f : form.factors()) {
    if (f.kind == Factor::Kind::kDigit) {
      LayoutMode m{f.count, f.live, running, l.AxisId(f.axis), f.axis.empty() ? 0 : f.coef};
      if (!f.axis.empty() && m.axis < 0) {  // a skew axis's own digits: no per-axis form
        l.modes_.clear();
        return l;
      }
      if (m.axis >= 0 && !noted[m.axis]) {
        l.axes_[m.axis].limit = std::min(l.axes_[m.axis].limit, f.axis_size);
        noted[m.axis] = true;
      }
      l.modes_.push_back(m);
      running *= f.count;
      mode_inside = true;
    } else {
      // A block pad pads what is inside it: values of its outermost inner mode past that mode's
      // extent. With no mode inside, a one-value mode carries the padding.
      if (!mode_inside) l.modes_.push_back({1, 1, running, -1, 0});
      running = f.block;
      mode_inside = false;
    }
  }
  l.affine_ = true;
  l.BuildDigits();
  return l;
}

void Layout::BuildDigits() {
  digits_.assign(axes_.size(), {});
  for (const LayoutMode& m : modes_) {
    if (m.axis >= 0 && m.live > 1) digits_[m.axis].push_back({m.coef, m.live, m.weight, 1, m.extent});
  }
  invertible_ = affine_ && mapping_.is_one_to_one();
  for (std::vector<AxisDigit>& ds : digits_) {
    std::stable_sort(ds.begin(), ds.end(), [](const AxisDigit& a, const AxisDigit& b) { return a.coef < b.coef; });
    for (size_t j = 0; j < ds.size(); ++j) {
      // How a coordinate reads the digit (MatchByDigit): the top digit wraps at its live values,
      // a lower one at its extent or the gap to the next digit, whichever is smaller.
      ds[j].modulus = j + 1 == ds.size() ? ds[j].live
                                          : std::min(ds[j].extent, std::max<int64_t>(1, ds[j + 1].coef / ds[j].coef));
      if (j + 1 < ds.size() && ds[j + 1].coef < ds[j].coef * ds[j].live) invertible_ = false;  // overlap
    }
  }
}

int Layout::AxisId(absl::string_view name) const {
  for (size_t a = 0; a < axes_.size(); ++a) {
    if (axes_[a].name == name) return static_cast<int>(a);
  }
  return -1;
}

Cell Layout::Evaluate(int64_t position) const {
  if (position < 0 || position >= size_) return Cell::OutOfBounds();
  if (!affine_) return mapping_.map(position);
  std::vector<int64_t> coords(axes_.size(), 0);
  int64_t rest = position;
  for (size_t k = modes_.size(); k-- > 0;) {  // outermost first: major padding wins
    const LayoutMode& m = modes_[k];
    const int64_t v = rest / m.weight;
    if (v >= m.live) return mapping_.map(position);  // padding (of the mapping's kind)
    rest -= v * m.weight;
    if (m.axis >= 0) coords[m.axis] += v * m.coef;
  }
  Index index;
  for (size_t a = 0; a < axes_.size(); ++a) {
    if (coords[a] >= axes_[a].limit) return mapping_.map(position);  // the range rule
    index.Set(axes_[a].name, coords[a]);
  }
  return Cell::Live(std::move(index));
}

int64_t Layout::Offset(int axis, int64_t value, MatchRule rule) const {
  VISA_CHECK(invertible_, "Offset of a layout that is not invertible");
  if (value == 0) return 0;  // an Index drops zero coordinates, so they are never checked
  if (value < 0) return -1;
  const std::vector<AxisDigit>& ds = digits_[axis];
  int64_t position = 0;
  if (rule == MatchRule::kByDigit) {
    int64_t projected = 0;
    for (const AxisDigit& d : ds) {
      const int64_t x = value / d.coef % d.modulus;
      if (x >= d.live) return -1;
      projected += x * d.coef;
      position += x * d.weight;
    }
    return projected < axes_[axis].limit ? position : -1;
  }
  if (value >= axes_[axis].limit) return -1;
  for (size_t j = ds.size(); j-- > 0;) {  // the greedy decomposition of NormalForm::inverse
    const int64_t q = std::min(value / ds[j].coef, ds[j].live - 1);
    value -= q * ds[j].coef;
    position += q * ds[j].weight;
  }
  return value == 0 ? position : -1;
}

std::optional<int64_t> Layout::RightInverse(const visa::Index& index) const {
  int64_t position = 0;
  for (const auto& [name, value] : index.coords()) {
    const int axis = AxisId(name);
    if (axis < 0) return std::nullopt;
    const int64_t offset = Offset(axis, value, MatchRule::kByAxis);
    if (offset < 0) return std::nullopt;
    position += offset;
  }
  return position;
}

std::optional<int64_t> Layout::ProjectCoordinate(int axis, int64_t value) const {
  VISA_CHECK(affine_ && axis >= 0, "ProjectCoordinate needs an affine layout naming the axis");
  int64_t projected = 0;
  for (const AxisDigit& d : digits_[axis]) {
    const int64_t x = value / d.coef % d.modulus;
    if (x >= d.live) return std::nullopt;
    projected += x * d.coef;
  }
  return projected;
}

int64_t Layout::FirstHolder(int64_t position) const {
  int64_t rest = position, first = 0;
  for (size_t k = modes_.size(); k-- > 0;) {
    const int64_t v = rest / modes_[k].weight;
    rest -= v * modes_[k].weight;
    if (modes_[k].axis >= 0) first += v * modes_[k].weight;  // broadcast digits repeat the index
  }
  return first;
}

Layout Layout::Coalesce() const {
  std::vector<LayoutMode> out;
  for (const LayoutMode& m : modes_) {
    if (!out.empty()) {
      LayoutMode& in = out.back();
      const bool contiguous = m.weight == in.weight * in.extent && in.live == in.extent;
      const bool same_digit = (in.axis < 0 && m.axis < 0) || (in.axis == m.axis && m.coef == in.coef * in.extent);
      if (contiguous && (same_digit || in.extent == 1)) {
        const LayoutMode inner = in;
        in = m;
        in.extent = inner.extent * m.extent;
        in.live = inner.extent * m.live;
        in.weight = inner.weight;
        if (inner.extent != 1) in.coef = inner.coef;
        if (in.axis < 0) in.coef = 0;
        continue;
      }
    }
    out.push_back(m);
  }
  return WithModes(std::move(out));
}

std::optional<LayoutMode> Layout::DigitHolding(int axis, int64_t coordinate) const {
  for (const LayoutMode& m : modes_) {
    if (m.axis == axis && axis >= 0 && m.coef <= coordinate && coordinate < m.coef * m.live) return m;
  }
  return std::nullopt;
}

Layout Layout::WithModes(std::vector<LayoutMode> modes) const {
  Layout l = *this;
  l.modes_ = std::move(modes);
  l.BuildDigits();
  return l;
}

std::string Layout::ToString() const {
  if (!affine_) return absl::StrCat("[composite ", mapping_.ToString(), "]");
  return absl::StrCat("[", absl::StrJoin(modes_, ", ", [&](std::string* out, const LayoutMode& m) {
                        absl::StrAppend(out, m.extent, m.live < m.extent ? absl::StrCat("(", m.live, ")") : "",
                                        " : ", m.weight, " ",
                                        m.axis < 0 ? std::string("-") : absl::StrCat(axes_[m.axis].name, "*", m.coef));
                      }), "]");
}

// ---------------------------------------------------------------------------------------------
// Projection and composition.

namespace {

// A piece of a projected digit: `count` values of coefficient `coef`, inside source digit `slot`
// (or, for a broadcast piece under the digit rule, in the gap below digit `slot`).
struct Piece {
  int slot;
  bool gap;
  int64_t coef, count;
};

}  // namespace

std::optional<Layout> Project(const Layout& dst, const Layout& src, MatchRule rule) {
  return Project(dst, src, rule, nullptr);
}

std::optional<Layout> Project(const Layout& dst, const Layout& src, MatchRule rule, ProjectionFailure* why) {
  using Cause = ProjectionFailure::Cause;
  // Records why the projection fails (when asked) and returns "no projection".
  auto fail = [why](Cause cause, int mode = -1, int64_t coef = 0, int64_t src_coef = 0) -> std::optional<Layout> {
    if (why != nullptr) *why = {cause, mode, coef, src_coef};
    return std::nullopt;
  };
  if (!dst.affine_ || !src.invertible_) return fail(Cause::kNoAffineForm);
  // Live digit values whose coordinates reach the range rule are padding: no product shape.
  std::vector<int64_t> reach(dst.axes_.size(), 0);
  for (const LayoutMode& m : dst.modes_) {
    if (m.axis >= 0) reach[m.axis] += (m.live - 1) * m.coef;
  }
  for (size_t a = 0; a < reach.size(); ++a) {
    if (reach[a] >= dst.axes_[a].limit) return fail(Cause::kRangeRule);
  }
  std::vector<std::vector<Piece>> pieces(src.axes_.size());
  std::vector<LayoutMode> out;
  auto broadcast = [&out](int64_t count, int64_t weight) { out.push_back({count, count, weight, -1, 0}); };
  for (size_t k = 0; k < dst.modes_.size(); ++k) {
    const LayoutMode& m = dst.modes_[k];
    const int mode = static_cast<int>(k);
    if (m.live <= 1) continue;  // one value: nothing to iterate
    const int sa = m.axis < 0 ? -1 : src.AxisId(dst.axes_[m.axis].name);
    if (sa < 0) {  // the source does not name the axis: broadcast under both rules
      broadcast(m.live, m.weight);
      continue;
    }
    const std::vector<Layout::AxisDigit>& ds = src.digits_[sa];
    int64_t coef = m.coef, remaining = m.live, weight = m.weight;
    while (remaining > 1) {
      int j = -1;  // the source digit whose values hold `coef`
      for (int i = 0; i < static_cast<int>(ds.size()); ++i) {
        const int64_t reach_i = rule == MatchRule::kByDigit ? ds[i].modulus : ds[i].live;
        if (ds[i].coef <= coef && coef < ds[i].coef * reach_i) j = i;
      }
      if (j < 0) {
        // Coordinates the source has no digit for: not held by axis, broadcast by digit (up to
        // the next source digit).
        if (rule == MatchRule::kByAxis) return fail(Cause::kUnheld, mode, coef);
        int slot = 0;
        while (slot < static_cast<int>(ds.size()) && ds[slot].coef < coef) ++slot;
        if (slot > 0 && coef % (ds[slot - 1].coef * ds[slot - 1].modulus) != 0) {
          return fail(Cause::kMisaligned, mode, coef, ds[slot - 1].coef);
        }
        const int64_t next = slot < static_cast<int>(ds.size()) ? ds[slot].coef : 0;
        if (next != 0 && next % coef != 0) return fail(Cause::kMisaligned, mode, coef, next);
        const int64_t gap = next == 0 ? remaining : next / coef;
        const int64_t count = std::min(remaining, gap);
        if (remaining % count != 0) return fail(Cause::kUneven, mode, coef);
        pieces[sa].push_back({slot, true, coef, count});
        broadcast(count, weight);
        coef *= count;
        weight *= count;
        remaining /= count;
        continue;
      }
      if (coef % ds[j].coef != 0) return fail(Cause::kMisaligned, mode, coef, ds[j].coef);
      const int64_t step = coef / ds[j].coef;
      const int64_t fits = (ds[j].live - 1) / step + 1;  // values t * step below live
      const int64_t reach_j = rule == MatchRule::kByDigit ? ds[j].modulus : ds[j].live;
      int64_t count = remaining;
      if (remaining > fits) {
        // The rest continues in the next digit range: only when no value lands in padding.
        if (reach_j % step != 0 || reach_j / step != fits || remaining % fits != 0) {
          return fail(Cause::kUneven, mode, coef);
        }
        count = fits;
      }
      pieces[sa].push_back({j, false, coef, count});
      out.push_back({count, count, weight, m.axis, coef});
      coef *= count;
      weight *= count;
      remaining /= count;
    }
  }
  // No carries: below each source digit the pieces sum to less than its coefficient, inside it
  // to less than its live values; higher digits are whole multiples of it.
  for (size_t sa = 0; sa < pieces.size(); ++sa) {
    const std::vector<Layout::AxisDigit>& ds = src.digits_[sa];
    int64_t total = 0;
    for (const Piece& p : pieces[sa]) total += (p.count - 1) * p.coef;
    if (total >= src.axes_[sa].limit) return fail(Cause::kCarry);
    for (size_t j = 0; j < ds.size(); ++j) {
      if (j + 1 < ds.size() && ds[j + 1].coef % (ds[j].coef * ds[j].modulus) != 0) return fail(Cause::kCarry);
      int64_t below = 0, inside = 0;
      for (const Piece& p : pieces[sa]) {
        if ((!p.gap && p.slot < static_cast<int>(j)) || (p.gap && p.slot <= static_cast<int>(j))) {
          below += (p.count - 1) * p.coef;
        } else if (!p.gap && p.slot == static_cast<int>(j)) {
          inside += (p.count - 1) * (p.coef / ds[j].coef);
        }
      }
      if (below >= ds[j].coef || inside >= ds[j].live) return fail(Cause::kCarry);
    }
  }
  return dst.WithModes(std::move(out));
}

std::optional<std::vector<MoveLevel>> Compose(const Layout& src, const Layout& projected) {
  if (!src.invertible_) return std::nullopt;
  std::vector<MoveLevel> levels;
  for (const LayoutMode& m : projected.modes_) {
    if (m.axis < 0) {
      levels.push_back({m.extent, m.weight, 0});
      continue;
    }
    const int sa = src.AxisId(projected.axes_[m.axis].name);
    VISA_CHECK(sa >= 0, "a projected mode names an axis the source lacks");
    int64_t stride = -1;
    for (const Layout::AxisDigit& d : src.digits_[sa]) {
      if (d.coef <= m.coef && m.coef < d.coef * d.live && m.coef % d.coef == 0) stride = m.coef / d.coef * d.weight;
    }
    if (stride < 0) return std::nullopt;  // not a projection onto `src`
    levels.push_back({m.extent, m.weight, stride});
  }
  if (levels.empty()) levels.push_back({1, 1, 0});  // one position holding the empty index
  return levels;
}

std::optional<std::vector<MoveLevel>> MoveLevels(const Mapping& dst, const Mapping& src, MatchRule rule) {
  if (!dst.ok() || !src.ok()) return std::nullopt;
  const Layout s = Layout::Of(src);
  std::optional<Layout> projected = Project(Layout::Of(dst), s, rule);
  if (!projected) return std::nullopt;
  return Compose(s, *projected);
}

std::vector<MoveLevel> Coalesce(std::vector<MoveLevel> levels) {
  std::vector<MoveLevel> merged;
  for (const MoveLevel& l : levels) {
    if (l.count == 1) continue;
    if (!merged.empty()) {
      MoveLevel& in = merged.back();
      if (l.dst_stride == in.count * in.dst_stride && l.src_stride == in.count * in.src_stride) {
        in.count *= l.count;
        continue;
      }
    }
    merged.push_back(l);
  }
  if (merged.empty()) merged.push_back({1, 1, 0});
  return merged;
}

std::vector<MoveLevel> SplitOuter(std::vector<MoveLevel> levels, int threads) {
  const int64_t want = int64_t{16} * std::max(threads, 1);  // in 64 bits: no int overflow
  if (threads <= 1 || levels.back().count >= want) return levels;
  for (size_t k = levels.size(); k-- > 0;) {
    const MoveLevel level = levels[k];
    int64_t f = want;
    while (f <= 4096 && f < level.count && level.count % f != 0) ++f;
    if (f > 4096 || f >= level.count) continue;
    const int64_t inner = level.count / f;
    levels[k] = {inner, level.dst_stride, level.src_stride};
    levels.push_back({f, level.dst_stride * inner, level.src_stride * inner});
    break;
  }
  return levels;
}

// ---------------------------------------------------------------------------------------------
// Walking positions and runs.

void ForEachLive(const Layout& layout, absl::FunctionRef<bool(int64_t, const std::vector<int64_t>&)> fn) {
  VISA_CHECK(layout.affine(), "ForEachLive of a layout that is not affine");
  const std::vector<LayoutMode>& modes = layout.modes();
  const size_t n = modes.size();
  std::vector<int64_t> coords(layout.axes().size(), 0), value(n, 0);
  int over = 0;  // axes whose coordinate reaches the range rule
  auto step_axis = [&](int axis, int64_t delta) {
    const int64_t limit = layout.axes()[axis].limit;
    const bool was = coords[axis] >= limit;
    coords[axis] += delta;
    over += (coords[axis] >= limit) - was;
  };
  int64_t position = 0;
  while (true) {
    if (over == 0 && !fn(position, coords)) return;
    size_t k = 0;
    for (; k < n; ++k) {
      const LayoutMode& m = modes[k];
      position += m.weight;
      if (m.axis >= 0) step_axis(m.axis, m.coef);
      if (++value[k] < m.live) break;
      position -= m.live * m.weight;  // wrap this digit and carry into the next
      if (m.axis >= 0) step_axis(m.axis, -m.live * m.coef);
      value[k] = 0;
    }
    if (k == n) return;
  }
}

namespace {

constexpr size_t kChunk = size_t{1} << 14;

// Collects (destination, source) pairs into runs and hands out full chunks.
class RunBuilder {
 public:
  explicit RunBuilder(RunChunkFn emit) : emit_(emit) { runs_.reserve(kChunk); }

  void Add(int64_t p, int64_t q, int64_t length = 1, int64_t stride = 1) {
    if (!runs_.empty()) {
      MoveRun& last = runs_.back();
      if (p == last.dst + last.length) {
        if (last.length == 1) {
          const int64_t s = length == 1 ? q - last.src : stride;
          if (q == last.src + s) {
            last.src_stride = s;
            last.length += length;
            return;
          }
        } else if ((length == 1 || stride == last.src_stride) && q == last.src + last.length * last.src_stride) {
          last.length += length;
          return;
        }
      }
      if (runs_.size() == kChunk) Flush();
    }
    runs_.push_back({p, q, length, length == 1 ? 1 : stride});
  }

  void Flush() {
    if (!runs_.empty()) emit_(runs_);
    runs_.clear();
  }

 private:
  RunChunkFn emit_;
  std::vector<MoveRun> runs_;
};

// The loop nest as runs: its innermost level swept per step of the outer ones.
void NestRuns(const std::vector<MoveLevel>& levels, RunBuilder& out) {
  const MoveLevel inner = levels.front();
  std::vector<int64_t> value(levels.size(), 0);
  int64_t p = 0, q = 0;
  while (true) {
    if (inner.dst_stride == 1) {
      out.Add(p, q, inner.count, inner.src_stride);
    } else {
      for (int64_t i = 0; i < inner.count; ++i) out.Add(p + i * inner.dst_stride, q + i * inner.src_stride);
    }
    size_t k = 1;
    for (; k < levels.size(); ++k) {
      p += levels[k].dst_stride;
      q += levels[k].src_stride;
      if (++value[k] < levels[k].count) break;
      p -= levels[k].count * levels[k].dst_stride;
      q -= levels[k].count * levels[k].src_stride;
      value[k] = 0;
    }
    if (k == levels.size()) return;
  }
}

// Affine destination, invertible source: the destination odometer, the source's per-axis offsets.
std::optional<int64_t> DigitRuns(const Layout& dst, const Layout& src, MatchRule rule, RunBuilder& out) {
  std::vector<int> to_src(dst.axes().size());
  for (size_t a = 0; a < to_src.size(); ++a) to_src[a] = src.AxisId(dst.axes()[a].name);
  std::optional<int64_t> unheld;
  ForEachLive(dst, [&](int64_t p, const std::vector<int64_t>& coords) {
    int64_t q = 0;
    for (size_t a = 0; a < coords.size(); ++a) {
      if (to_src[a] < 0) continue;  // an axis the source does not name: broadcast
      const int64_t offset = src.Offset(to_src[a], coords[a], rule);
      if (offset < 0) {
        unheld = p;
        return false;
      }
      q += offset;
    }
    out.Add(p, q);
    return true;
  });
  return unheld;
}

// Any layouts: the reference's own map and inverse per position (the source's inverse from one
// sweep of it when the normal form cannot answer, not a search per destination position).
std::optional<int64_t> MappingRuns(const Mapping& dst, const Mapping& src, MatchRule rule, RunBuilder& out) {
  FirstPositions src_inverse(src);
  for (int64_t p = 0; p < dst.size(); ++p) {
    const Cell cell = dst.map(p);
    if (!cell.live()) continue;
    const std::optional<visa::Index> wanted = Match(cell.index, src, rule);
    const std::optional<int64_t> q = wanted ? src_inverse(*wanted) : std::nullopt;
    if (!q) return p;
    out.Add(p, *q);
  }
  return std::nullopt;
}

}  // namespace

std::optional<int64_t> ForEachRun(const Mapping& dst, const Mapping& src, MatchRule rule, RunChunkFn emit) {
  const std::optional<PeeledPadding> peeled_dst = PeelOuterPadding(dst), peeled_src = PeelOuterPadding(src);
  if (peeled_dst || peeled_src) {
    const int64_t dst_offset = peeled_dst ? peeled_dst->offset : 0, src_offset = peeled_src ? peeled_src->offset : 0;
    std::vector<MoveRun> shifted;
    const std::optional<int64_t> unheld =
        ForEachRun(peeled_dst ? peeled_dst->mapping : dst, peeled_src ? peeled_src->mapping : src, rule,
                   [&](absl::Span<const MoveRun> runs) {
                     shifted.assign(runs.begin(), runs.end());
                     for (MoveRun& run : shifted) {
                       run.dst += dst_offset;
                       run.src += src_offset;
                     }
                     emit(shifted);
                   });
    if (unheld) return *unheld + dst_offset;
    return std::nullopt;
  }
  const Layout d = Layout::Of(dst), s = Layout::Of(src);
  RunBuilder out(emit);
  std::optional<int64_t> unheld;
  if (std::optional<Layout> projected = Project(d, s, rule)) {
    std::optional<std::vector<MoveLevel>> levels = Compose(s, *projected);
    VISA_CHECK(levels.has_value(), "a projection does not compose with its source");
    NestRuns(*levels, out);
  } else if (d.affine() && s.invertible()) {
    unheld = DigitRuns(d, s, rule, out);
  } else {
    unheld = MappingRuns(dst, src, rule, out);
  }
  out.Flush();
  return unheld;
}

std::optional<int64_t> FirstDropped(const Mapping& src, absl::FunctionRef<bool(int64_t)> read) {
  if (const std::optional<PeeledPadding> peeled = PeelOuterPadding(src)) {
    const int64_t offset = peeled->offset;
    const std::optional<int64_t> dropped =
        FirstDropped(peeled->mapping, [&](int64_t q) { return read(q + offset); });
    if (dropped) return *dropped + offset;
    return std::nullopt;
  }
  const Layout s = Layout::Of(src);
  std::optional<int64_t> dropped;
  if (s.invertible()) {
    ForEachLive(s, [&](int64_t q, const std::vector<int64_t>&) {
      if (read(q) || read(s.FirstHolder(q))) return true;
      dropped = q;
      return false;
    });
    return dropped;
  }
  FirstPositions src_inverse(src);
  for (int64_t q = 0; q < src.size(); ++q) {
    if (read(q)) continue;
    const Cell cell = src.map(q);
    // Broadcast digits repeat an index; only the first position holding it is ever read.
    if (cell.live() && !read(*src_inverse(cell.index))) return q;
  }
  return std::nullopt;
}

}  // namespace visa
