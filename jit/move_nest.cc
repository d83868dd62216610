// Move nests: composing the destination's digits with the source's digit lookup.
#include "jit/move_nest.h"

#include <algorithm>
#include <map>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "dsl/index_projection.h"
#include "dsl/normal_form.h"

namespace visa::jit {
namespace {

struct Digit {
  std::string axis;  // "" for a broadcast digit
  int64_t coef = 0, live = 1, weight = 1;
  int64_t count = 1, modulus = 1;  // the digit's extent; how a coordinate reads it (source side)
};

// The digits of a canonical form with their position weights (innermost first); nullopt when the
// form has composites.
std::optional<std::vector<Digit>> DigitsOf(const Mapping& mapping) {
  const NormalForm& form = mapping.normal_form();
  if (!form.is_canonical()) return std::nullopt;
  std::vector<Digit> digits;
  int64_t running = 1;
  for (const Factor& f : form.factors()) {
    if (f.kind == Factor::Kind::kDigit) {
      digits.push_back({f.axis, f.coef, f.live, running, f.count, 1});
      running *= f.count;
    } else {
      running = f.block;  // a block pad only changes the weights of the factors outside it
    }
  }
  return digits;
}

// The source's digits of one axis, ascending by coefficient, with the largest value the
// destination's pieces put into each (to prove the pieces never carry into the next digit).
struct AxisLookup {
  std::vector<Digit> ascending;
  std::vector<int64_t> used;  // sum over pieces of (count - 1) * step, per digit
};

// Splits destination digit `d` over the source digits of its axis: each piece steps one source
// digit by a whole multiple. False when the digit straddles source digits unevenly or reaches a
// value the source does not hold.
bool Split(const Digit& d, AxisLookup& lookup, std::vector<NestLevel>& levels) {
  int64_t coef = d.coef, remaining = d.live, weight = d.weight;
  const std::vector<Digit>& src = lookup.ascending;
  while (remaining > 1) {
    int j = -1;  // the source digit whose range (coef_j, modulus_j) holds `coef`
    for (int i = 0; i < static_cast<int>(src.size()); ++i) {
      if (src[i].coef <= coef && coef < src[i].coef * src[i].modulus) j = i;
    }
    if (j < 0) {
      // Coordinates the source has no digit for broadcast (ProjectOntoSource), up to the next
      // source digit.
      int64_t next = 0;
      for (const Digit& s : src) {
        if (s.coef > coef && (next == 0 || s.coef < next)) next = s.coef;
      }
      if (next != 0 && next % coef != 0) return false;
      const int64_t gap = next == 0 ? remaining : next / coef;
      if (remaining <= gap) {
        levels.push_back({remaining, weight, 0});
        return true;
      }
      if (remaining % gap != 0) return false;
      levels.push_back({gap, weight, 0});
      coef *= gap;
      weight *= gap;
      remaining /= gap;
      continue;
    }
    if (coef % src[j].coef != 0) return false;
    const int64_t step = coef / src[j].coef;
    const int64_t fits = (src[j].live - 1) / step + 1;  // values t * step < live
    if (remaining <= fits) {
      levels.push_back({remaining, weight, step * src[j].weight});
      lookup.used[j] += (remaining - 1) * step;
      return true;
    }
    // The rest wraps to the next digit range: only when no value lands in this digit's padding.
    if (src[j].modulus % step != 0 || src[j].modulus / step != fits || remaining % fits != 0) return false;
    levels.push_back({fits, weight, step * src[j].weight});
    lookup.used[j] += (fits - 1) * step;
    coef *= fits;
    weight *= fits;
    remaining /= fits;
  }
  return true;
}

}  // namespace

int64_t MoveNest::elements() const {
  int64_t n = 1;
  for (const NestLevel& l : levels) n *= l.count;
  return n;
}

int64_t MoveNest::max_dst() const {
  int64_t m = 0;
  for (const NestLevel& l : levels) m += (l.count - 1) * l.dst_stride;
  return m;
}

int64_t MoveNest::max_src() const {
  int64_t m = 0;
  for (const NestLevel& l : levels) m += (l.count - 1) * l.src_stride;
  return m;
}

std::string MoveNest::ToString() const {
  return absl::StrCat("[", absl::StrJoin(levels, ", ", [](std::string* out, const NestLevel& l) {
                        absl::StrAppend(out, l.count, " : ", l.dst_stride, " <- ", l.src_stride);
                      }), "]");
}

std::optional<MoveNest> DeriveMoveNest(const Mapping& dst, const Mapping& src) {
  if (!dst.ok() || !src.ok() || !src.is_one_to_one()) return std::nullopt;
  std::optional<std::vector<Digit>> dst_digits = DigitsOf(dst);
  std::optional<std::vector<Digit>> src_digits = DigitsOf(src);
  if (!dst_digits || !src_digits) return std::nullopt;
  std::map<std::string, AxisLookup> lookup;
  for (const Digit& d : *src_digits) {
    if (!d.axis.empty() && d.live > 1) lookup[d.axis].ascending.push_back(d);
  }
  for (auto& [axis, l] : lookup) {
    std::sort(l.ascending.begin(), l.ascending.end(),
              [](const Digit& a, const Digit& b) { return a.coef < b.coef; });
    for (size_t i = 0; i + 1 < l.ascending.size(); ++i) {
      if (l.ascending[i + 1].coef < l.ascending[i].coef * l.ascending[i].live) return std::nullopt;  // overlap
    }
    // The moduli of ProjectOntoSource (dsl/index_projection.h).
    const std::vector<SourceDigit> moduli = SourceDigitsOf(src.normal_form(), axis);
    if (moduli.size() != l.ascending.size()) return std::nullopt;
    for (size_t i = 0; i < moduli.size(); ++i) l.ascending[i].modulus = moduli[i].modulus;
    l.used.assign(l.ascending.size(), 0);
  }
  const std::vector<std::string> src_axes = src.axis_names();
  MoveNest nest;
  for (const Digit& d : *dst_digits) {
    if (d.live <= 1) continue;
    const bool held = !d.axis.empty() && std::binary_search(src_axes.begin(), src_axes.end(), d.axis);
    if (!held) {
      nest.levels.push_back({d.live, d.weight, 0});  // broadcast: the source has no such axis
      continue;
    }
    auto it = lookup.find(d.axis);
    if (it == lookup.end()) {
      nest.levels.push_back({d.live, d.weight, 0});  // named without digits (`B = 1`): broadcast
      continue;
    }
    if (!Split(d, it->second, nest.levels)) return std::nullopt;
  }
  for (const auto& [axis, l] : lookup) {
    for (size_t i = 0; i < l.ascending.size(); ++i) {
      if (l.used[i] >= l.ascending[i].live) return std::nullopt;  // pieces would carry
    }
  }
  if (nest.levels.empty()) nest.levels.push_back({1, 1, 0});
  return nest;
}

MoveNest Simplify(MoveNest nest, int threads) {
  std::vector<NestLevel> merged;
  for (const NestLevel& l : nest.levels) {
    if (l.count == 1) continue;
    if (!merged.empty()) {
      NestLevel& in = merged.back();
      if (l.dst_stride == in.count * in.dst_stride && l.src_stride == in.count * in.src_stride) {
        in.count *= l.count;
        continue;
      }
    }
    merged.push_back(l);
  }
  if (merged.empty()) merged.push_back({1, 1, 0});
  // Enough outer iterations to balance the threads: levels are independent dimensions, so the
  // outer part of a long level can become the outermost loop (the one the threads share).
  const int64_t want = 16 * std::max(threads, 1);
  if (threads > 1 && merged.back().count < want) {
    for (size_t k = merged.size(); k-- > 0;) {
      const NestLevel level = merged[k];
      int64_t f = want;
      while (f <= 4096 && f < level.count && level.count % f != 0) ++f;
      if (f > 4096 || f >= level.count) continue;
      const int64_t inner = level.count / f;
      merged[k] = {inner, level.dst_stride, level.src_stride};
      merged.push_back({f, level.dst_stride * inner, level.src_stride * inner});
      break;
    }
  }
  nest.levels = std::move(merged);
  return nest;
}

}  // namespace visa::jit
