// Random mappings for property tests: axes, digit layouts (with padding, broadcasts, splits) and
// small expression trees, drawn from a seeded generator. Shared by the layout and move tests.
#pragma once

#include "gtest/gtest.h"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <utility>
#include <vector>
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "dsl/axes.h"
#include "dsl/mapping.h"
#include "dsl/mapping_parser.h"

namespace visa {
namespace {

using Rng = std::mt19937_64;

int64_t Uniform(Rng& rng, int64_t lo, int64_t hi) {  // inclusive
  return std::uniform_int_distribution<int64_t>(lo, hi)(rng);
}
bool Chance(Rng& rng, double p) { return std::bernoulli_distribution(p)(rng); }
template <typename T>
const T& Pick(Rng& rng, const std::vector<T>& v) {
  return v[static_cast<size_t>(Uniform(rng, 0, static_cast<int64_t>(v.size()) - 1))];
}

std::vector<int64_t> Divisors(int64_t n) {
  std::vector<int64_t> out;
  for (int64_t d = 1; d <= n; ++d) {
    if (n % d == 0) out.push_back(d);
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// Random worlds and mappings (as text, parsed by the library).

struct World {
  std::vector<std::pair<std::string, int64_t>> axes;  // plain axes
  bool skew = false;                                  // declares S' = <last> - A
  Axes declared;
};

World RandomWorld(Rng& rng) {
  static const std::vector<int64_t> sizes = {1, 2, 3, 4, 4, 5, 6, 6, 8, 8, 9, 12, 16};
  World w;
  std::vector<std::string> decls;
  const int count = static_cast<int>(Uniform(rng, 2, 4));
  for (int k = 0; k < count; ++k) {
    const std::string name(1, static_cast<char>('A' + k));
    w.axes.emplace_back(name, Pick(rng, sizes));
    decls.push_back(absl::StrCat(name, " = ", w.axes.back().second));
  }
  w.skew = Chance(rng, 0.03);
  if (w.skew) decls.push_back(absl::StrCat("S' = ", w.axes.back().first, " - A"));
  absl::StatusOr<Axes> axes = Axes::Parse(absl::StrJoin(decls, ", "));
  EXPECT_TRUE(axes.ok()) << axes.status();
  if (axes.ok()) w.declared = *axes;
  return w;
}

// A term of text with its number of positions.
struct Term {
  std::string text;
  int64_t size = 1;
};

// One axis laid out as digit terms: whole, split by strides and modulos (possibly three ways),
// padded (and then split), a padded inner digit, or resized (which drops data).
std::vector<Term> AxisTerms(Rng& rng, const std::string& x, int64_t n) {
  switch (Uniform(rng, 0, 7)) {
    case 0:
    case 1:
      return {{x, n}};
    case 2:
    case 3: {  // [X / s1, X / s2 % f2, ..., X % fk]
      std::vector<int64_t> factors;
      int64_t rest = n;
      while (rest > 1 && factors.size() < 2) {
        const int64_t f = Pick(rng, Divisors(rest));
        if (f == 1 || f == rest) break;
        factors.push_back(f);
        rest /= f;
      }
      factors.push_back(rest);  // outermost last
      std::vector<Term> out;
      int64_t stride = 1;
      for (size_t j = 0; j < factors.size(); ++j) {
        std::string text = x;
        if (stride != 1) absl::StrAppend(&text, " / ", stride);
        if (j + 1 < factors.size()) absl::StrAppend(&text, " % ", factors[j]);
        out.push_back({text, factors[j]});
        stride *= factors[j];
      }
      std::reverse(out.begin(), out.end());
      return out;
    }
    case 4: {  // X # m, maybe split: [X # m / d, X # m % d]
      const int64_t m = n + Uniform(rng, 1, 4);
      const int64_t d = Pick(rng, Divisors(m));
      if (d == 1 || d == m || Chance(rng, 0.3)) return {{absl::StrCat(x, " # ", m), m}};
      return {{absl::StrCat(x, " # ", m, " / ", d), m / d}, {absl::StrCat(x, " # ", m, " % ", d), d}};
    }
    case 5: {  // [X / d, X % d # (d + k)]: a padded inner digit
      const int64_t d = Pick(rng, Divisors(n));
      const int64_t k = Uniform(rng, 1, 2);
      return {{absl::StrCat(x, " / ", d), n / d}, {absl::StrCat(x, " % ", d, " #{0} ", d + k), d + k}};
    }
    case 6: {  // a resize (drops the tail)
      const int64_t r = Uniform(rng, 1, n);
      return {{absl::StrCat(x, " = ", r), r}};
    }
    default: {  // a stride alone (drops positions) or a split with its parts swapped
      const int64_t d = Pick(rng, Divisors(n));
      if (Chance(rng, 0.5)) return {{absl::StrCat(x, " / ", d), n / d}};
      return {{absl::StrCat(x, " % ", d), d}, {absl::StrCat(x, " / ", d), n / d}};
    }
  }
}

Term JoinTerms(const std::vector<Term>& terms) {
  Term out{"", 1};
  std::vector<std::string> texts;
  for (const Term& t : terms) {
    texts.push_back(t.text);
    out.size *= t.size;
  }
  out.text = absl::StrJoin(texts, ", ");
  return out;
}

// A layout: every (or some) axis as digit terms, shuffled, with broadcasts, bracketed groups that
// may be padded, strided or taken modulo, and occasionally a linear combination or a skew axis.
Term RandomLayout(Rng& rng, const World& w, bool all_axes) {
  std::vector<Term> terms;
  for (const auto& [name, size] : w.axes) {
    if (!all_axes && Chance(rng, 0.25)) continue;
    for (Term& t : AxisTerms(rng, name, size)) terms.push_back(std::move(t));
  }
  if (Chance(rng, 0.3)) {
    const int64_t n = Uniform(rng, 2, 3);
    terms.push_back({absl::StrCat(n), n});
  }
  if (w.skew && Chance(rng, 0.5)) terms.push_back({"S'", w.axes.back().second});
  if (Chance(rng, 0.05) && w.axes.size() >= 2) {
    const int64_t c = Uniform(rng, 1, 3);
    terms.push_back({absl::StrCat("$(A: 1, B: ", c, ")"),
                     (w.axes[0].second - 1) + (w.axes[1].second - 1) * c + 1});
  }
  if (terms.empty()) terms.push_back({"1", 1});
  std::shuffle(terms.begin(), terms.end(), rng);
  // Bracket a run of terms and maybe apply an operator to the group.
  if (terms.size() >= 2 && Chance(rng, 0.4)) {
    const size_t begin = static_cast<size_t>(Uniform(rng, 0, static_cast<int64_t>(terms.size()) - 2));
    const size_t end = static_cast<size_t>(Uniform(rng, static_cast<int64_t>(begin) + 2,
                                                   static_cast<int64_t>(terms.size())));
    Term group = JoinTerms({terms.begin() + begin, terms.begin() + end});
    group.text = absl::StrCat("[", group.text, "]");
    switch (Uniform(rng, 0, 3)) {
      case 0: {
        const int64_t m = group.size + Uniform(rng, 1, 5);
        group = {absl::StrCat(group.text, " # ", m), m};
        break;
      }
      case 1: {
        const int64_t s = Pick(rng, Divisors(group.size));
        group = {absl::StrCat(group.text, " / ", s), group.size / s};
        break;
      }
      case 2: {
        const int64_t m = Pick(rng, Divisors(group.size));
        group = {absl::StrCat(group.text, " % ", m), m};
        break;
      }
      default:
        break;
    }
    terms.erase(terms.begin() + begin, terms.begin() + end);
    terms.insert(terms.begin() + begin, group);
  }
  Term out = JoinTerms(terms);
  if (Chance(rng, 0.15)) {
    const int64_t m = out.size + Uniform(rng, 1, 7);
    out = {absl::StrCat("[", out.text, "] # ", m), m};
  }
  return out;
}

// An arbitrary expression tree over the world (pairs, paddings, resizes, strides, modulos).
Term RandomTree(Rng& rng, const World& w, int depth) {
  if (depth <= 0 || Chance(rng, 0.15)) {
    if (Chance(rng, 0.8)) {
      const auto& [name, size] = Pick(rng, w.axes);
      return {name, size};
    }
    const int64_t n = Uniform(rng, 1, 3);
    return {absl::StrCat(n), n};
  }
  Term a = RandomTree(rng, w, depth - 1);
  switch (Uniform(rng, 0, 7)) {
    case 0:
    case 1:
    case 2: {
      Term b = RandomTree(rng, w, depth - 1);
      return {absl::StrCat("[", a.text, ", ", b.text, "]"), a.size * b.size};
    }
    case 3: {
      const int64_t m = a.size + Uniform(rng, 0, 3);
      return {absl::StrCat("[", a.text, "] #{!} ", m), m};
    }
    case 4: {
      const int64_t r = Uniform(rng, 1, a.size);
      return {absl::StrCat("[", a.text, "] = ", r), r};
    }
    case 5: {
      const int64_t s = Pick(rng, Divisors(a.size));
      return {absl::StrCat("[", a.text, "] / ", s), a.size / s};
    }
    case 6: {
      const int64_t m = Pick(rng, Divisors(a.size));
      return {absl::StrCat("[", a.text, "] % ", m), m};
    }
    default:
      return a;
  }
}

Term RandomMapping(Rng& rng, const World& w, bool source) {
  if (Chance(rng, 0.2)) return RandomTree(rng, w, 4);
  return RandomLayout(rng, w, source && Chance(rng, 0.7));
}

// Mappings written as text over a fixed set of axes (the concrete cases).
struct Fixture {
  Axes axes;
  Mapping m(const std::string& text) const {
    absl::StatusOr<Mapping> m = ParseMapping(text, axes);
    EXPECT_TRUE(m.ok()) << m.status();
    return *m;
  }
};

Fixture With(const std::string& axes) { return {*Axes::Parse(axes)}; }

}  // namespace
}  // namespace visa
