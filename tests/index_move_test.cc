// MoveByIndex (compiled) against MoveByIndexReference (the oracle): a property test over random
// (source mapping, destination mapping, policy, dtype) moves, plus concrete cases for each path.
//
// Every random case must agree exactly: both succeed with the same bytes, or both fail with the same
// status. Rerun one case with
//   VISA_PROPERTY_SEED=<seed> VISA_PROPERTY_CASES=1 build/tests/index_move_test
#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "dsl/axes.h"
#include "dsl/dtype.h"
#include "dsl/mapping.h"
#include "dsl/mapping_parser.h"
#include "gtest/gtest.h"
#include "interp/index_move.h"
#include "runtime/host_tensor.h"

namespace visa::interp {
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

DType RandomDType(Rng& rng) {
  static const std::vector<DType> types = {DType::kI4,  DType::kI8,   DType::kF8E4M3,
                                           DType::kI16, DType::kBF16, DType::kF32};
  return Pick(rng, types);
}

// Every position (padding too) holds random bits, so a wrong source position shows.
HostTensor RandomTensor(Rng& rng, DType dtype, const Mapping& mapping) {
  std::vector<uint32_t> bits(static_cast<size_t>(mapping.size()));
  const uint32_t mask = Bits(dtype) >= 32 ? 0xffffffffu : (1u << Bits(dtype)) - 1;
  for (uint32_t& b : bits) b = static_cast<uint32_t>(rng()) & mask;
  absl::StatusOr<HostTensor> t = HostTensor::FromBits(dtype, mapping, bits);
  EXPECT_TRUE(t.ok()) << t.status();
  return *std::move(t);
}

MovePolicy RandomPolicy(Rng& rng, DType dtype) {
  MovePolicy policy;
  policy.allow_drop = Chance(rng, 0.5);
  const double r = std::uniform_real_distribution<double>(0, 1)(rng);
  const uint32_t mask = Bits(dtype) >= 32 ? 0xffffffffu : (1u << Bits(dtype)) - 1;
  if (r < 0.4) {
    policy.pad_bits = static_cast<uint32_t>(rng()) & mask;
  } else if (r < 0.45 && Bits(dtype) < 32) {
    policy.pad_bits = mask + 1;  // does not fit: an error at the first padding position
  }
  return policy;
}

// Both succeed with the same tensor, or both fail with the same status.
void ExpectSame(const absl::StatusOr<HostTensor>& want, const absl::StatusOr<HostTensor>& got,
                const std::string& what) {
  ASSERT_EQ(want.ok(), got.ok()) << what << "\nreference: " << want.status()
                                 << "\ncompiled: " << got.status();
  if (!want.ok()) {
    EXPECT_EQ(want.status(), got.status()) << what;
    return;
  }
  EXPECT_EQ(want->dtype(), got->dtype()) << what;
  EXPECT_TRUE(want->mapping() == got->mapping()) << what;
  EXPECT_EQ(want->bytes(), got->bytes()) << what;
}

void ExpectSameMove(const HostTensor& src, const Mapping& dst, MovePolicy policy,
                    const std::string& what) {
  ExpectSame(MoveByIndexReference(src, dst, policy), MoveByIndex(src, dst, policy), what);
}

// Thresholds small enough that tiny moves take every branch: several threads with uneven chunks.
MoveLimits TinyLimits(Rng& rng) {
  MoveLimits limits;
  limits.min_parallel = Uniform(rng, 0, 64);
  limits.threads = static_cast<int>(Uniform(rng, 1, 5));
  return limits;
}

int EnvInt(const char* name, int fallback) {
  const char* v = std::getenv(name);
  return v ? std::atoi(v) : fallback;
}

TEST(IndexMoveProperty, CompiledEqualsReference) {
  const int cases = EnvInt("VISA_PROPERTY_CASES", 3000);
  const uint64_t first_seed = static_cast<uint64_t>(EnvInt("VISA_PROPERTY_SEED", 1));
  int compiled_ok = 0, compiled_error = 0, reference_only = 0;
  for (int c = 0; c < cases; ++c) {
    const uint64_t seed = first_seed + static_cast<uint64_t>(c);
    Rng rng(seed);
    const World w = RandomWorld(rng);
    const Term src_term = RandomMapping(rng, w, /*source=*/true);
    const Term dst_term = RandomMapping(rng, w, /*source=*/false);
    absl::StatusOr<Mapping> src_map = ParseMapping(src_term.text, w.declared);
    absl::StatusOr<Mapping> dst_map = ParseMapping(dst_term.text, w.declared);
    if (!src_map.ok() || !dst_map.ok() || src_map->size() > 4096 || dst_map->size() > 4096) continue;
    const DType dtype = RandomDType(rng);
    const HostTensor src = RandomTensor(rng, dtype, *src_map);
    const MovePolicy policy = RandomPolicy(rng, dtype);
    const std::string what = absl::StrCat("seed ", seed, ": src `", src_term.text, "` dst `", dst_term.text,
                                          "` dtype ", Name(dtype), " allow_drop ", policy.allow_drop,
                                          " pad_bits ", policy.pad_bits);
    const absl::StatusOr<HostTensor> want = MoveByIndexReference(src, *dst_map, policy);
    ASSERT_NO_FATAL_FAILURE(ExpectSame(want, MoveByIndex(src, *dst_map, policy), what));
    MovePolicy tiny_policy = policy;
    tiny_policy.limits = TinyLimits(rng);
    const absl::StatusOr<HostTensor> tiny = MoveByIndex(src, *dst_map, tiny_policy);
    ASSERT_NO_FATAL_FAILURE(ExpectSame(want, tiny, absl::StrCat(what, " (tiny limits)")));
    if (!MoveByIndexIsCompiled(src, *dst_map, policy)) {
      ++reference_only;
    } else if (want.ok()) {
      ++compiled_ok;
    } else {
      ++compiled_error;
    }
  }
  std::printf("compiled ok %d, compiled error %d, reference only %d\n", compiled_ok, compiled_error,
              reference_only);
  if (cases >= 1000) {  // the generator must exercise the compiled path, successes and errors
    EXPECT_GT(compiled_ok, cases / 5);
    EXPECT_GT(compiled_error, cases / 20);
    EXPECT_GT(reference_only, 0);
  }
}

// ---------------------------------------------------------------------------------------------
// Concrete cases.

struct Fixture {
  Axes axes;
  Mapping m(const std::string& text) const {
    absl::StatusOr<Mapping> m = ParseMapping(text, axes);
    EXPECT_TRUE(m.ok()) << m.status();
    return *m;
  }
};

Fixture With(const std::string& axes) { return {*Axes::Parse(axes)}; }

HostTensor Iota(DType dtype, const Mapping& m) { return *HostTensor::Iota(dtype, m); }

TEST(IndexMove, FetchLikeRelayoutIsCompiledAndExact) {
  Fixture f = With("A = 256, B = 64");
  HostTensor src = Iota(DType::kI32, f.m("A / 16, B, A % 16"));
  Mapping dst = f.m("B, A");
  EXPECT_TRUE(MoveByIndexIsCompiled(src, dst));
  ExpectSameMove(src, dst, {}, "relayout");
  absl::StatusOr<HostTensor> out = MoveByIndex(src, dst);
  ASSERT_TRUE(out.ok()) << out.status();
  Index index;
  index.Set("A", 37);
  index.Set("B", 5);
  EXPECT_EQ(*out->GetBits(index), *src.GetBits(index));
}

TEST(IndexMove, BroadcastAxisAbsentFromTheSource) {
  Fixture f = With("A = 8, B = 3");
  HostTensor src = Iota(DType::kI8, f.m("A"));
  Mapping dst = f.m("B, A");
  EXPECT_TRUE(MoveByIndexIsCompiled(src, dst));
  absl::StatusOr<HostTensor> out = MoveByIndex(src, dst);
  ASSERT_TRUE(out.ok()) << out.status();
  for (int64_t p = 0; p < 24; ++p) EXPECT_EQ(*out->GetBits(p), static_cast<uint32_t>(p % 8));
}

TEST(IndexMove, LargeThreadedMovesWithPaddingAndNibbles) {
  Fixture f = With("A = 300, B = 250");
  for (DType dtype : {DType::kI4, DType::kBF16}) {
    HostTensor src = Iota(dtype, f.m("A, B"));
    for (const char* dst : {"B # 256, A # 320", "[A / 4, B, A % 4] # 80000", "B / 2, A, B % 2"}) {
      Mapping m = f.m(dst);
      EXPECT_TRUE(MoveByIndexIsCompiled(src, m, {.pad_bits = 5}));
      ExpectSameMove(src, m, {.pad_bits = 5}, dst);
      ExpectSameMove(src, m, {.allow_drop = true}, dst);
    }
  }
}

TEST(IndexMove, LargeMinorPartInClosedForm) {
  Fixture f = With("A = 40000, B = 2");
  HostTensor src = Iota(DType::kI16, f.m("A, B"));
  for (const char* dst : {"B, A", "B, A # 40003", "B, [A # 40010] / 2", "B, A = 39999"}) {
    Mapping m = f.m(dst);
    EXPECT_TRUE(MoveByIndexIsCompiled(src, m, {.allow_drop = true}));
    ExpectSameMove(src, m, {.allow_drop = true, .pad_bits = 7}, dst);
    ExpectSameMove(src, m, {}, dst);  // drops data unless every index is read
  }
}

TEST(IndexMove, DropErrorInALargeMove) {
  Fixture f = With("A = 300, B = 250");
  HostTensor src = Iota(DType::kI8, f.m("A, B"));
  Mapping dst = f.m("B = 249, A");
  absl::StatusOr<HostTensor> out = MoveByIndex(src, dst);
  ASSERT_FALSE(out.ok());
  EXPECT_NE(out.status().message().find("would drop data"), std::string::npos) << out.status();
  ExpectSameMove(src, dst, {}, "drop");
  ExpectSameMove(src, dst, {.allow_drop = true}, "drop allowed");
}

// Matching is by digit: the source holds A / 2 only, so A's lowest digit broadcasts (odd A reads
// the even A below it), as the fetch sequencer reads it with stride 0.
TEST(IndexMove, DigitsTheSourceLacksBroadcast) {
  Fixture f = With("A = 8, B = 4");
  HostTensor src = Iota(DType::kF32, f.m("A / 2, B"));  // even A only
  Mapping dst = f.m("A, B");
  EXPECT_TRUE(MoveByIndexIsCompiled(src, dst));
  absl::StatusOr<HostTensor> out = MoveByIndex(src, dst);
  ASSERT_TRUE(out.ok()) << out.status();
  for (int a = 0; a < 8; ++a) {
    for (int b = 0; b < 4; ++b) EXPECT_EQ(*out->Get(a * 4 + b), *src.Get((a / 2) * 4 + b)) << a << " " << b;
  }
  ExpectSameMove(src, dst, {}, "digit broadcast");
}

TEST(IndexMove, GemmLikeStreamBroadcastsJ) {
  // A stream whose packet reads J in steps of 8 from a source holding J in steps of 32.
  Fixture f = With("I = 512, J = 512, K = 64");
  HostTensor src = Iota(DType::kBF16, f.m("1, 1 # 2, [I / 32, J / 32], I % 32, K"));
  Mapping dst = f.m("1, 1 # 2, [I / 32, J / 32], [I % 32, J / 8 % 4], K");
  EXPECT_TRUE(MoveByIndexIsCompiled(src, dst, {.allow_drop = true}));
  ExpectSameMove(src, dst, {.allow_drop = true}, "gemm-like");
  ExpectSameMove(src, dst, {}, "gemm-like, no drop");
}

TEST(IndexMove, PadBitsThatDoNotFit) {
  Fixture f = With("A = 5");
  HostTensor src = Iota(DType::kI8, f.m("A"));
  ExpectSameMove(src, f.m("A # 8"), {.pad_bits = 0x100}, "pad bits");
  EXPECT_FALSE(MoveByIndex(src, f.m("A # 8"), {.pad_bits = 0x100}).ok());
  ExpectSameMove(src, f.m("A"), {.pad_bits = 0x100}, "no padding: never stored");
}

TEST(IndexMove, InvalidDestination) {
  Fixture f = With("A = 6");
  HostTensor src = Iota(DType::kI8, f.m("A"));
  Mapping bad = f.m("A") / 4;
  ExpectSameMove(src, bad, {}, "invalid");
  EXPECT_FALSE(MoveByIndex(src, bad).ok());
}

TEST(IndexMove, RangeRuleAcrossParts) {
  // [R # 16 / 4, R # 16 % 4] with R = 14: positions 14 and 15 sum past R's end and are padding.
  Fixture f = With("R = 14, C = 3");
  HostTensor src = Iota(DType::kI8, f.m("C, R"));
  Mapping dst = f.m("C, R # 16 / 4, R # 16 % 4");
  EXPECT_TRUE(MoveByIndexIsCompiled(src, dst));
  ExpectSameMove(src, dst, {.pad_bits = 9}, "range rule");
}

TEST(IndexMove, LinearCombinationDestinationsFallBack) {
  // A one-to-many position maps to its first live combination, which parts cannot compose.
  Fixture f = With("A = 3, B = 3");
  HostTensor src = Iota(DType::kI8, f.m("A, B"));
  for (const char* dst : {"$(A: 1, B: 2), 2", "$(A: 1, B: 1) / 5, $(A: 1, B: 1) % 5 # 6"}) {
    EXPECT_FALSE(MoveByIndexIsCompiled(src, f.m(dst), {.allow_drop = true}));
    ExpectSameMove(src, f.m(dst), {.allow_drop = true}, dst);
    ExpectSameMove(src, f.m(dst), {}, dst);
  }
  // A one-term combination is one-to-one, but its normal form keeps it composite: the layout
  // algebra has no modes for it, so the reference moves it.
  EXPECT_FALSE(MoveByIndexIsCompiled(src, f.m("$(A: 1), B"), {}));
  ExpectSameMove(src, f.m("$(A: 1), B"), {}, "one-term combination");
}

TEST(IndexMove, FallsBackForLinearSourcesAndSkews) {
  Fixture f = With("A = 3, B = 3, B' = B - A");
  HostTensor linear = Iota(DType::kI8, f.m("$(A: 1, B: 2)"));
  EXPECT_FALSE(MoveByIndexIsCompiled(linear, f.m("A, B"), {.allow_drop = true}));
  ExpectSameMove(linear, f.m("A, B"), {.allow_drop = true}, "linear source");
  HostTensor plain = Iota(DType::kI8, f.m("A, B"));
  EXPECT_FALSE(MoveByIndexIsCompiled(plain, f.m("A, B'")));
  ExpectSameMove(plain, f.m("A, B'"), {}, "skew destination");
}

TEST(IndexMove, OverlappingSourceDigitsFallBack) {
  // `A / 2, A % 4` reads A twice with overlapping digits: the normal form cannot invert it alone.
  Fixture f = With("A = 8");
  HostTensor src = Iota(DType::kI8, f.m("A / 2, A % 4"));
  ExpectSameMove(src, f.m("A"), {.allow_drop = true}, "overlap");
}

}  // namespace
}  // namespace visa::interp
