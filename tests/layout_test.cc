// Laws of the layout algebra (dsl/layout.h), each checked against brute-force enumeration with
// Mapping::map / Mapping::inverse over random mappings, plus the manual-shaped concrete cases.
//
// The random generator mirrors tests/index_move_test.cc (text mappings over a random world, parsed
// by the library). Cases the parser rejects or that are too large are redrawn; each law counts and
// prints how many cases it actually checked, and asserts that enough of every kind ran. Rerun one
// case with
//   VISA_PROPERTY_SEED=<seed> VISA_PROPERTY_CASES=1 build/tests/layout_test
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "dsl/axes.h"
#include "dsl/index_matching.h"
#include "dsl/layout.h"
#include "dsl/mapping.h"
#include "dsl/mapping_parser.h"
#include "gtest/gtest.h"
#include "tests/random_mappings.h"

namespace visa {
namespace {

int EnvInt(const char* name, int fallback) {
  const char* v = std::getenv(name);
  return v ? std::atoi(v) : fallback;
}

// A random mapping pair over one world; nullopt when the parser rejects one or it is too large
// (the caller counts these as skipped).
struct Case {
  uint64_t seed = 0;
  Mapping dst, src;
  std::string what;
};

std::optional<Case> DrawCase(uint64_t seed) {
  Rng rng(seed);
  const World w = RandomWorld(rng);
  const Term src = RandomMapping(rng, w, /*source=*/true);
  const Term dst = RandomMapping(rng, w, /*source=*/false);
  absl::StatusOr<Mapping> s = ParseMapping(src.text, w.declared);
  absl::StatusOr<Mapping> d = ParseMapping(dst.text, w.declared);
  if (!s.ok() || !d.ok() || s->size() > 2048 || d->size() > 2048) return std::nullopt;
  return Case{seed, *d, *s, absl::StrCat("seed ", seed, ": dst `", dst.text, "` src `", src.text, "`")};
}

// Runs `check` over the configured number of seeds; returns how many cases were drawn.
template <typename Check>
int ForCases(Check check) {
  const int cases = EnvInt("VISA_PROPERTY_CASES", 2000);
  const uint64_t first = static_cast<uint64_t>(EnvInt("VISA_PROPERTY_SEED", 1));
  int drawn = 0;
  for (int c = 0; c < cases; ++c) {
    std::optional<Case> one = DrawCase(first + static_cast<uint64_t>(c));
    if (!one) continue;
    ++drawn;
    check(*one);
    if (::testing::Test::HasFatalFailure()) break;
  }
  return drawn;
}

bool Many() { return EnvInt("VISA_PROPERTY_CASES", 2000) >= 1000; }

// The reference: destination position p reads this source position (nullopt: not held).
std::optional<int64_t> ReferenceSource(const Mapping& dst, const Mapping& src, int64_t p, MatchRule rule) {
  const Cell cell = dst.map(p);
  std::optional<Index> wanted = Match(cell.index, src, rule);
  return wanted ? src.inverse(*wanted) : std::nullopt;
}

// ---------------------------------------------------------------------------------------------
// Laws.

TEST(LayoutLaw, EvaluateAgreesWithMap) {
  int affine = 0, composite = 0;
  const int drawn = ForCases([&](const Case& c) {
    for (const Mapping* m : {&c.dst, &c.src}) {
      const Layout l = Layout::Of(*m);
      (l.affine() ? affine : composite)++;
      for (int64_t p = -1; p <= m->size(); ++p) {
        ASSERT_EQ(l.Evaluate(p), m->map(p)) << c.what << " mapping `" << m->ToString() << "` " << l.ToString()
                                            << " position " << p;
      }
    }
  });
  std::printf("drawn %d: affine layouts %d, composite %d\n", drawn, affine, composite);
  if (Many()) {
    EXPECT_GT(affine, drawn);
    EXPECT_GT(composite, 0);
  }
}

TEST(LayoutLaw, RightInverseIsTheSmallestHolder) {
  int invertible = 0, indices = 0, unheld = 0;
  const int drawn = ForCases([&](const Case& c) {
    for (const Mapping* m : {&c.dst, &c.src}) {
      const Layout l = Layout::Of(*m);
      if (!l.invertible()) continue;
      ++invertible;
      std::set<Index> seen;
      for (int64_t p = 0; p < m->size(); ++p) {
        const Cell cell = m->map(p);
        if (!cell.live() || !seen.insert(cell.index).second) continue;
        ++indices;
        const std::optional<int64_t> r = l.RightInverse(cell.index);
        ASSERT_TRUE(r.has_value()) << c.what << " index " << cell.index.ToString();
        EXPECT_EQ(*r, p) << c.what << " index " << cell.index.ToString();  // the first holder
        EXPECT_EQ(l.Evaluate(*r), cell) << c.what;                        // L(r(i)) = i
        EXPECT_EQ(l.FirstHolder(p), p) << c.what;
      }
      // Indices off the layout: RightInverse agrees with Mapping::inverse (not held).
      for (const Index& i : seen) {
        for (const auto& [axis, value] : i.coords()) {
          Index off = i;
          off.Set(axis, value + 1);
          if (seen.count(off)) continue;
          ++unheld;
          EXPECT_EQ(l.RightInverse(off), m->inverse(off)) << c.what << " index " << off.ToString();
        }
      }
    }
  });
  std::printf("drawn %d: invertible layouts %d, indices %d, unheld probes %d\n", drawn, invertible, indices, unheld);
  if (Many()) {
    EXPECT_GT(invertible, drawn / 2);
    EXPECT_GT(unheld, 0);
  }
}

// Normal forms are already coalesced; projections split digits at source boundaries, and their
// pieces merge back where the source digits are contiguous.
TEST(LayoutLaw, CoalesceKeepsTheFunction) {
  int merged = 0, checked = 0;
  ForCases([&](const Case& c) {
    const Layout d = Layout::Of(c.dst);
    std::vector<Layout> layouts = {d, Layout::Of(c.src)};
    if (std::optional<Layout> p = Project(d, Layout::Of(c.src), MatchRule::kByDigit)) layouts.push_back(*p);
    for (const Layout& l : layouts) {
      if (!l.affine()) continue;
      const Layout k = l.Coalesce();
      ++checked;
      if (k.modes().size() < l.modes().size()) ++merged;
      EXPECT_EQ(k.Coalesce().modes(), k.modes()) << c.what << ": coalesce is idempotent";
      for (int64_t p = 0; p < l.size(); ++p) {
        ASSERT_EQ(k.Evaluate(p), l.Evaluate(p)) << c.what << " " << l.ToString() << " -> " << k.ToString() << " at " << p;
      }
    }
  });
  std::printf("coalesced %d layouts, %d with merged modes\n", checked, merged);
  if (Many()) { EXPECT_GT(merged, 0); }
}

TEST(LayoutLaw, ProjectionIsTheMatchingRule) {
  int projected[2] = {0, 0}, none[2] = {0, 0};
  ForCases([&](const Case& c) {
    const Layout d = Layout::Of(c.dst), s = Layout::Of(c.src);
    for (MatchRule rule : {MatchRule::kByAxis, MatchRule::kByDigit}) {
      const int r = rule == MatchRule::kByAxis ? 0 : 1;
      const std::optional<Layout> pr = Project(d, s, rule);
      if (!pr) {
        ++none[r];
        continue;
      }
      ++projected[r];
      for (int64_t p = 0; p < c.dst.size(); ++p) {
        const Cell cell = c.dst.map(p);
        if (!cell.live()) continue;
        const std::optional<Index> want = Match(cell.index, c.src, rule);
        ASSERT_TRUE(want.has_value()) << c.what << " rule " << r << ": a projection of an unheld index at " << p;
        ASSERT_EQ(pr->Evaluate(p), Cell::Live(*want)) << c.what << " rule " << r << " " << pr->ToString() << " at " << p;
        ASSERT_TRUE(c.src.inverse(*want).has_value()) << c.what << " rule " << r << " at " << p;
      }
    }
  });
  std::printf("projections by axis %d (none %d), by digit %d (none %d)\n", projected[0], none[0], projected[1], none[1]);
  if (Many()) {
    EXPECT_GT(projected[0], 0);
    EXPECT_GT(projected[1], projected[0]);  // digits the source lacks broadcast
    EXPECT_GT(none[1], 0);
  }
}

// The (destination, source) pairs of a loop nest, in loop order (innermost fastest).
std::vector<std::pair<int64_t, int64_t>> Pairs(const std::vector<MoveLevel>& levels) {
  std::vector<std::pair<int64_t, int64_t>> out = {{0, 0}};
  for (const MoveLevel& l : levels) {
    std::vector<std::pair<int64_t, int64_t>> next;
    for (int64_t i = 0; i < l.count; ++i) {
      for (const auto& [p, q] : out) next.push_back({p + i * l.dst_stride, q + i * l.src_stride});
    }
    out = std::move(next);
  }
  return out;
}

TEST(LayoutLaw, ComposeAgreesWithSequentialApplication) {
  int nests = 0, pairs = 0;
  ForCases([&](const Case& c) {
    for (MatchRule rule : {MatchRule::kByAxis, MatchRule::kByDigit}) {
      const std::optional<std::vector<MoveLevel>> levels = MoveLevels(c.dst, c.src, rule);
      if (!levels) continue;
      ++nests;
      std::vector<int64_t> live;
      for (int64_t p = 0; p < c.dst.size(); ++p) {
        if (c.dst.map(p).live()) live.push_back(p);
      }
      std::vector<std::pair<int64_t, int64_t>> got = Pairs(*levels);
      std::vector<int64_t> visited;
      for (const auto& [p, q] : got) {
        ++pairs;
        visited.push_back(p);
        ASSERT_EQ(std::optional<int64_t>(q), ReferenceSource(c.dst, c.src, p, rule))
            << c.what << " rule " << static_cast<int>(rule) << " position " << p;
      }
      ASSERT_TRUE(std::is_sorted(visited.begin(), visited.end())) << c.what << ": destination order";
      ASSERT_EQ(visited, live) << c.what << ": the nest visits exactly the live positions";
    }
  });
  std::printf("nests %d, pairs %d\n", nests, pairs);
  if (Many()) { EXPECT_GT(nests, 100); }
}

TEST(LayoutLaw, CoalesceAndSplitKeepThePairs) {
  int splits = 0, checked = 0;
  ForCases([&](const Case& c) {
    std::optional<std::vector<MoveLevel>> levels = MoveLevels(c.dst, c.src, MatchRule::kByDigit);
    if (!levels) return;
    auto sorted = [](std::vector<std::pair<int64_t, int64_t>> v) {
      std::sort(v.begin(), v.end());
      return v;
    };
    const auto want = sorted(Pairs(*levels));
    const std::vector<MoveLevel> merged = Coalesce(*levels);
    EXPECT_EQ(Pairs(merged), Pairs(*levels)) << c.what << ": coalescing keeps the order too";
    for (int threads : {1, 2, 3, 8}) {
      const std::vector<MoveLevel> split = SplitOuter(merged, threads);
      ++checked;
      if (split.size() > merged.size()) ++splits;
      EXPECT_EQ(sorted(Pairs(split)), want) << c.what << " threads " << threads;
    }
  });
  std::printf("split checks %d, splits made %d\n", checked, splits);
  if (Many()) { EXPECT_GT(splits, 0); }
}

TEST(LayoutLaw, RunListEqualsThePerPositionReference) {
  int ok = 0, unheld = 0, runs_total = 0, elements = 0;
  ForCases([&](const Case& c) {
    for (MatchRule rule : {MatchRule::kByAxis, MatchRule::kByDigit}) {
      std::vector<std::pair<int64_t, int64_t>> got;
      const std::optional<int64_t> stop = ForEachRun(c.dst, c.src, rule, [&](absl::Span<const MoveRun> runs) {
        for (const MoveRun& r : runs) {
          ++runs_total;
          for (int64_t i = 0; i < r.length; ++i) got.push_back({r.dst + i, r.src + i * r.src_stride});
        }
      });
      std::vector<std::pair<int64_t, int64_t>> want;
      std::optional<int64_t> want_stop;
      for (int64_t p = 0; p < c.dst.size() && !want_stop; ++p) {
        if (!c.dst.map(p).live()) continue;
        const std::optional<int64_t> q = ReferenceSource(c.dst, c.src, p, rule);
        if (q) {
          want.push_back({p, *q});
        } else {
          want_stop = p;
        }
      }
      ASSERT_EQ(stop, want_stop) << c.what << " rule " << static_cast<int>(rule);
      ASSERT_EQ(got, want) << c.what << " rule " << static_cast<int>(rule);
      elements += static_cast<int>(got.size());
      (stop ? unheld : ok)++;
      if (stop) continue;
      // The drop check: the first source position whose index no position read.
      std::vector<bool> read(static_cast<size_t>(c.src.size()), false);
      for (const auto& [p, q] : got) read[q] = true;
      std::optional<int64_t> dropped;
      for (int64_t q = 0; q < c.src.size() && !dropped; ++q) {
        const Cell cell = c.src.map(q);
        if (!read[q] && cell.live() && !read[*c.src.inverse(cell.index)]) dropped = q;
      }
      EXPECT_EQ(FirstDropped(c.src, [&](int64_t q) { return read[q]; }), dropped) << c.what;
    }
  });
  std::printf("run lists: held %d, unheld %d, %d runs for %d elements\n", ok, unheld, runs_total, elements);
  if (Many()) {
    EXPECT_GT(ok, 100);
    EXPECT_GT(unheld, 100);
    EXPECT_LT(runs_total, elements);
  }
}

TEST(LayoutLaw, DigitHoldingIsWhereACoordinateLives) {
  int held = 0, unheld = 0;
  ForCases([&](const Case& c) {
    for (const Mapping* m : {&c.dst, &c.src}) {
      const Layout l = Layout::Of(*m);
      if (!l.invertible()) continue;
      for (size_t a = 0; a < l.axes().size(); ++a) {
        const std::string& name = l.axes()[a].name;
        for (int64_t x = 1; x < l.axes()[a].limit + 3; ++x) {
          Index index;
          index.Set(name, x);
          const std::optional<LayoutMode> d = l.DigitHolding(static_cast<int>(a), x);
          if (!d) {  // no digit's range: no position holds the coordinate
            ++unheld;
            ASSERT_EQ(m->inverse(index), std::nullopt) << c.what << " " << index.ToString();
            continue;
          }
          ++held;
          ASSERT_TRUE(d->axis == static_cast<int>(a) && d->coef <= x && x < d->coef * d->live) << c.what;
          if (x >= l.axes()[a].limit) continue;
          Index step;  // the digit's value holding x's multiple of its coefficient, alone
          step.Set(name, x / d->coef * d->coef);
          ASSERT_EQ(m->map(x / d->coef * d->weight), Cell::Live(step)) << c.what << " " << index.ToString();
        }
      }
    }
  });
  std::printf("digit holding: %d coordinates in a digit's range, %d in none\n", held, unheld);
  if (Many()) {
    EXPECT_GT(held, 1000);
    EXPECT_GT(unheld, 100);
  }
}

// The set of coordinates a mapping's live positions hold on `axis` (brute force).
std::set<int64_t> Coordinates(const Mapping& m, const std::string& axis) {
  std::set<int64_t> out;
  for (int64_t p = 0; p < m.size(); ++p) {
    const Cell cell = m.map(p);
    if (!cell.live()) continue;
    const auto it = cell.index.coords().find(axis);
    out.insert(it == cell.index.coords().end() ? 0 : it->second);
  }
  return out;
}

TEST(LayoutLaw, ProjectionFailureNamesItsCause) {
  std::map<ProjectionFailure::Cause, int> causes;
  ForCases([&](const Case& c) {
    const Layout d = Layout::Of(c.dst), s = Layout::Of(c.src);
    for (MatchRule rule : {MatchRule::kByAxis, MatchRule::kByDigit}) {
      ProjectionFailure why;
      const std::optional<Layout> with = Project(d, s, rule, &why);
      const std::optional<Layout> without = Project(d, s, rule);
      ASSERT_EQ(with.has_value(), without.has_value()) << c.what;
      if (with) {
        ASSERT_EQ(with->modes(), without->modes()) << c.what;
        continue;
      }
      ++causes[why.cause];
      using Cause = ProjectionFailure::Cause;
      ASSERT_EQ(why.cause == Cause::kNoAffineForm, !d.affine() || !s.invertible()) << c.what;
      if (why.cause != Cause::kUnheld && why.cause != Cause::kMisaligned && why.cause != Cause::kUneven) continue;
      ASSERT_TRUE(why.mode >= 0 && why.mode < static_cast<int>(d.modes().size())) << c.what;
      const LayoutMode& m = d.modes()[why.mode];
      ASSERT_GE(m.axis, 0) << c.what;
      const std::string& axis = d.axes()[m.axis].name;
      ASSERT_TRUE(why.coef % m.coef == 0 && why.coef / m.coef < m.live) << c.what << ": a coordinate of the mode";
      if (why.cause != Cause::kUnheld) continue;
      // By axis, the named coordinate is one the destination holds and the source does not.
      ASSERT_EQ(rule, MatchRule::kByAxis) << c.what;
      ASSERT_TRUE(Coordinates(c.dst, axis).count(why.coef)) << c.what << " " << axis << "=" << why.coef;
      Index index;
      index.Set(axis, why.coef);
      ASSERT_EQ(c.src.inverse(index), std::nullopt) << c.what << " " << index.ToString();
    }
  });
  std::printf("projection failures:");
  for (const auto& [cause, count] : causes) std::printf(" cause %d: %d", static_cast<int>(cause), count);
  std::printf("\n");
  if (Many()) {
    EXPECT_GT(causes[ProjectionFailure::Cause::kUnheld], 10);
    EXPECT_GT(causes[ProjectionFailure::Cause::kUneven] + causes[ProjectionFailure::Cause::kMisaligned], 10);
  }
}

// ---------------------------------------------------------------------------------------------
// Concrete cases.


std::string Show(const std::optional<std::vector<MoveLevel>>& levels) {
  if (!levels) return "none";
  return absl::StrCat("[", absl::StrJoin(*levels, ", ", [](std::string* out, const MoveLevel& l) {
                        absl::StrAppend(out, l.count, " : ", l.dst_stride, " <- ", l.src_stride);
                      }), "]");
}

TEST(Layout, ModesAreShapeAndStride) {
  Fixture f = With("A = 8, B = 512");
  // m![A / 2, B, A % 2]: A % 2 innermost at weight 1, then B, then A / 2.
  const Layout l = Layout::Of(f.m("A / 2, B, A % 2"));
  EXPECT_EQ(l.ToString(), "[2 : 1 A*1, 512 : 2 B*1, 4 : 1024 A*2]");
  EXPECT_EQ(Layout::Of(f.m("B / 64, B % 64")).Coalesce().ToString(), "[512 : 1 B*1]");
  EXPECT_EQ(Layout::Of(f.m("A # 10")).ToString(), "[10(8) : 1 A*1]");
}

TEST(Layout, TransposeAndBroadcastNests) {
  Fixture f = With("A = 4, B = 8, X = 3");
  EXPECT_EQ(Show(MoveLevels(f.m("B, A"), f.m("A, B"), MatchRule::kByAxis)), "[4 : 1 <- 8, 8 : 4 <- 1]");
  EXPECT_EQ(Show(MoveLevels(f.m("X, A"), f.m("A"), MatchRule::kByAxis)), "[4 : 1 <- 1, 3 : 4 <- 0]");
  // By digit, B / 2 % 2 reads a source holding B / 4 only with stride 0; by axis it is not held.
  EXPECT_EQ(Show(MoveLevels(f.m("B"), f.m("B / 4"), MatchRule::kByDigit)), "[4 : 1 <- 0, 2 : 4 <- 1]");
  EXPECT_EQ(Show(MoveLevels(f.m("B"), f.m("B / 4"), MatchRule::kByAxis)), "none");
}

TEST(Layout, MatchingRules) {
  Fixture f = With("J = 512, I = 4");
  Index index;
  index.Set("J", 13 * 8 + 5);
  index.Set("I", 3);
  const Mapping src = f.m("J / 32");
  EXPECT_EQ(MatchByAxis(index, src).ToString(), "{J=109}");
  EXPECT_EQ(MatchByDigit(index, src)->ToString(), "{J=96}");
}

TEST(Layout, SplitForThreads) {
  // A contiguous copy merges into one level, long enough to share as is.
  EXPECT_EQ(Coalesce({{1024, 1, 1}, {4, 1024, 1024}}), (std::vector<MoveLevel>{{4096, 1, 1}}));
  EXPECT_EQ(SplitOuter({{4096, 1, 1}}, 4).size(), 1u);
  // A broadcast over 4 outer steps: the inner level's outer part moves outermost.
  const std::vector<MoveLevel> split = SplitOuter(Coalesce({{1024, 1, 1}, {4, 2048, 0}}), 4);
  EXPECT_EQ(split, (std::vector<MoveLevel>{{16, 1, 1}, {4, 2048, 0}, {64, 16, 16}}));
}

}  // namespace
}  // namespace visa
