// Bounds on mapping work (issue 15, finding 4): linear combinations evaluated without building
// every combination, the work budget and its error, shared definitions, the `visa map` limits, and
// a user error instead of an internal check for a tile past every size.
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <bitset>
#include <functional>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <map>
#include <optional>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "dsl/axes.h"
#include "dsl/cell_code.h"
#include "dsl/equivalence.h"
#include "dsl/index.h"
#include "dsl/mapping.h"
#include "dsl/mapping_parser.h"
#include "dsl/normal_form.h"
#include "dsl/tile.h"
#include "dsl/work_budget.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tools/map_command.h"

namespace visa {
namespace {

using ::testing::HasSubstr;

Axes MakeAxes(absl::string_view text) {
  absl::StatusOr<Axes> axes = Axes::Parse(text);
  EXPECT_TRUE(axes.ok()) << axes.status();
  return axes.ok() ? *std::move(axes) : Axes();
}

Mapping Parse(absl::string_view text, const Axes& axes) {
  absl::StatusOr<Mapping> m = ParseMapping(text, axes);
  EXPECT_TRUE(m.ok()) << text << ": " << m.status();
  return m.ok() ? *std::move(m) : Mapping::Invalid(m.status());
}

// Runs `body` in a child process with at most `megabytes` of address space and `seconds` of time,
// so a blow-up fails this test instead of the machine. Sanitizer builds reserve huge shadow
// mappings, so they run without the memory cap.
template <typename Body>
[[noreturn]] void RunLimited(int megabytes, int seconds, Body body) {
#if !defined(__SANITIZE_ADDRESS__)
  const rlim_t bytes = static_cast<rlim_t>(megabytes) << 20;
  const rlimit limit = {bytes, bytes};
  setrlimit(RLIMIT_AS, &limit);
#else
  (void)megabytes;
#endif
  alarm(static_cast<unsigned>(seconds));
  std::exit(body() ? 0 : 1);
}

template <typename Body>
void RunBounded(int megabytes, int seconds, Body body) {
  EXPECT_EXIT(RunLimited(megabytes, seconds, body), ::testing::ExitedWithCode(0), "");
}

// ---- A brute-force model of a linear combination -------------------------------------------------

// A term of the model: a symbol (optionally strided or padded) times a coefficient.
struct ModelTerm {
  std::string text;        // the term's mapping text
  std::string axis;        // the symbol it names
  int64_t step = 1;        // `X / step` holds X = s * step
  int64_t live = 0;        // positions holding the axis; the rest (up to `size`) are padding
  int64_t size = 0;
  PadKind pad = PadKind::kTop;
  int64_t coefficient = 1;
};

// The raw cell term `t` holds at s (coordinates unchecked, as a pair adds them).
Cell RawTermCell(const ModelTerm& t, int64_t s) {
  if (s >= t.live) return Cell::Pad(t.pad);
  Index index;
  index.Add(t.axis, s * t.step);
  return Cell::Live(index);
}

// The manual's final rules written out: B' = B - A folds to B = (b + b' + a) mod |B|; a coordinate
// past its axis's end is padding.
// `skewed`: the mapping names B' (only then does the skew resolve).
Cell ModelFinalize(Cell cell, const std::map<std::string, int64_t>& sizes, bool skewed) {
  if (!cell.live()) return cell;
  Index& index = cell.index;
  if (skewed) {
    const int64_t b = index["B"] + index["B'"] + index["A"];
    index.Set("B'", 0);
    index.Set("B", b % sizes.at("B"));
  }
  for (const auto& [name, value] : index.coords()) {
    if (value >= sizes.at(name)) return Cell::Pad(PadKind::kTop);
  }
  return cell;
}

// Every raw cell of the combination at p, by enumerating every choice of per-term positions.
std::vector<Cell> ModelRawCells(const std::vector<ModelTerm>& terms, int64_t p) {
  std::vector<Cell> out;
  std::vector<int64_t> s(terms.size(), 0);
  std::function<void(size_t, int64_t)> walk = [&](size_t k, int64_t remaining) {
    if (k == terms.size()) {
      if (remaining != 0) return;
      Cell cell = Cell::Live({});
      for (size_t j = 0; j < terms.size(); ++j) cell = CombineCells(cell, RawTermCell(terms[j], s[j]));
      out.push_back(cell);
      return;
    }
    for (s[k] = 0; s[k] < terms[k].size && s[k] * terms[k].coefficient <= remaining; ++s[k]) {
      walk(k + 1, remaining - s[k] * terms[k].coefficient);
    }
  };
  walk(0, p);
  if (out.empty()) out.push_back(Cell::Pad(PadKind::kTop));  // a hole
  return out;
}

std::vector<Cell> SortedUnique(std::vector<Cell> cells) {
  std::sort(cells.begin(), cells.end());
  cells.erase(std::unique(cells.begin(), cells.end()), cells.end());
  return cells;
}

std::string Show(const std::vector<Cell>& cells) {
  std::vector<std::string> parts;
  for (const Cell& c : cells) parts.push_back(c.ToString());
  return absl::StrJoin(parts, " | ");
}

TEST(LinearCells, MatchEveryChoiceOfTermPositionsOnSmallCombinations) {
  // Small axes so that every choice can be enumerated; the skew and the padded terms exercise the
  // folds and the precedence of padding, the pair around the combination the raw sums.
  const std::map<std::string, int64_t> sizes = {{"A", 3}, {"B", 4}, {"C", 2}, {"B'", 4}};
  const Axes axes = MakeAxes("A = 3, B = 4, C = 2, B' = B - A");
  const std::vector<ModelTerm> pool = {
      {"A", "A", 1, 3, 3},           {"B", "B", 1, 4, 4},
      {"C", "C", 1, 2, 2},           {"B'", "B'", 1, 4, 4},
      {"B / 2", "B", 2, 2, 2},       {"A # 4", "A", 1, 3, 4, PadKind::kTop},
      {"C #{0} 3", "C", 1, 2, 3, PadKind::kZero}, {"A #{!} 5", "A", 1, 3, 5, PadKind::kBottom},
  };
  std::mt19937 rng(15);
  for (int round = 0; round < 300; ++round) {
    std::vector<ModelTerm> terms;
    std::vector<std::string> texts;
    const int d = 1 + static_cast<int>(rng() % 4);
    for (int k = 0; k < d; ++k) {
      ModelTerm t = pool[rng() % pool.size()];
      t.coefficient = 1 + static_cast<int64_t>(rng() % 3);
      texts.push_back(absl::StrCat(t.text, ": ", t.coefficient));
      terms.push_back(t);
    }
    const std::string linear = absl::StrCat("$(", absl::StrJoin(texts, ", "), ")");
    const bool skewed = std::any_of(terms.begin(), terms.end(), [](const ModelTerm& t) { return t.axis == "B'"; });
    // Alone, and as the minor side of a pair whose major adds to the same axes.
    for (const std::string& major : {std::string(), std::string("B"), std::string("A")}) {
      const std::string text = major.empty() ? linear : absl::StrCat(major, ", ", linear);
      Mapping m = Parse(text, axes);
      ASSERT_TRUE(m.ok());
      int64_t linear_size = 1;
      for (const ModelTerm& t : terms) linear_size += (t.size - 1) * t.coefficient;
      for (int64_t p = 0; p < m.size(); ++p) {
        std::vector<Cell> want;
        const int64_t q = p % linear_size;
        for (const Cell& raw : ModelRawCells(terms, q)) {
          Cell cell = raw;
          if (!major.empty()) {
            Index index;
            index.Add(major, p / linear_size);
            cell = CombineCells(Cell::Live(index), raw);
          }
          want.push_back(ModelFinalize(cell, sizes, skewed));
        }
        want = SortedUnique(want);
        const std::vector<Cell> got = m.maps(p);
        ASSERT_EQ(Show(got), Show(want)) << text << " at " << p;
        ASSERT_EQ(m.map(p), want.front()) << text << " at " << p;
        WorkBudget budget;
        absl::StatusOr<std::vector<Cell>> tried = m.TryMaps(p, budget);
        ASSERT_TRUE(tried.ok()) << tried.status();
        ASSERT_EQ(*tried, got);
      }
    }
  }
}

// Every choice of positions for terms that are bare symbols, combined raw and finalized by the
// library's final rules (FinalizeCell): a brute force for the codec's other forms.
std::vector<Cell> BruteForceSymbols(const Mapping& m, const std::vector<std::pair<std::string, int64_t>>& terms,
                                    const std::map<std::string, int64_t>& sizes, int64_t p) {
  std::vector<Cell> out;
  std::vector<int64_t> s(terms.size(), 0);
  std::function<void(size_t, int64_t)> walk = [&](size_t k, int64_t remaining) {
    if (k == terms.size()) {
      if (remaining != 0) return;
      Index index;
      for (size_t j = 0; j < terms.size(); ++j) index.Add(terms[j].first, s[j]);
      Cell cell = Cell::Live(index);
      FinalizeCell(m.symbols(), cell);
      out.push_back(cell);
      return;
    }
    for (s[k] = 0; s[k] < sizes.at(terms[k].first) && s[k] * terms[k].second <= remaining; ++s[k]) {
      walk(k + 1, remaining - s[k] * terms[k].second);
    }
  };
  walk(0, p);
  if (out.empty()) out.push_back(Cell::Pad(PadKind::kTop));
  return SortedUnique(out);
}

TEST(LinearCells, WideAndChainedAxesKeepExactCoordinates) {
  // Four axes of 2^20 values do not pack into one word (the codes are interned); A' = A - B and
  // B' = B - A make A and B both a base and an offset, so their coordinates stay exact.
  struct Case {
    const char* axes;
    std::map<std::string, int64_t> sizes;
    std::vector<std::pair<std::string, int64_t>> terms;
    int64_t positions;
  };
  const std::vector<Case> cases = {
      {"P = 1048576, Q = 1048576, R = 1048576, S = 1048576",
       {{"P", 1 << 20}, {"Q", 1 << 20}, {"R", 1 << 20}, {"S", 1 << 20}},
       {{"P", 1}, {"Q", 2}, {"R", 1}, {"S", 3}, {"P", 2}},
       40},
      {"A = 3, B = 4, B' = B - A, A' = A - B",
       {{"A", 3}, {"B", 4}, {"B'", 4}, {"A'", 3}},
       {{"A", 1}, {"B'", 2}, {"A'", 1}, {"B", 1}, {"B'", 1}},
       1 + 2 * 1 + 3 * 2 + 2 * 1 + 3 * 1 + 3 * 1},
  };
  for (const Case& c : cases) {
    const Axes axes = MakeAxes(c.axes);
    std::vector<std::string> texts;
    for (const auto& [axis, n] : c.terms) texts.push_back(absl::StrCat(axis, ": ", n));
    const Mapping m = Parse(absl::StrCat("$(", absl::StrJoin(texts, ", "), ")"), axes);
    ASSERT_TRUE(m.ok());
    for (int64_t p = 0; p < c.positions; ++p) {
      ASSERT_EQ(Show(m.maps(p)), Show(BruteForceSymbols(m, c.terms, c.sizes, p))) << c.axes << " at " << p;
    }
  }
}

// The issue's 31-byte combination: repeated and skewed terms over A = 8, B = 512, C = 3.
constexpr char kRepeatedSkewed[] = "$(C: 5, B': 25, B': 2, B: 4, B: 3)";

// What position p of kRepeatedSkewed holds, by a model independent of the library: a forward walk
// over the terms keeping, per partial position, which (c, b + b' mod 512) the choices so far reach.
std::set<std::pair<int64_t, int64_t>> RepeatedSkewedModel(int64_t p) {
  using Reach = std::array<std::bitset<512>, 3>;  // [c] -> residues of b + b'
  std::vector<Reach> reach(p + 1);
  reach[0][0][0] = true;
  struct T { bool is_c; int64_t size, n; };
  for (const T& t : {T{true, 3, 5}, T{false, 512, 25}, T{false, 512, 2}, T{false, 512, 4}, T{false, 512, 3}}) {
    std::vector<Reach> next(p + 1);
    for (int64_t q = 0; q <= p; ++q) {
      for (int c = 0; c < 3; ++c) {
        if (reach[q][c].none()) continue;
        for (int64_t s = 0; s < t.size && q + s * t.n <= p; ++s) {
          if (t.is_c) {
            next[q + s * t.n][c + s] |= reach[q][c];
          } else {
            const std::bitset<512>& r = reach[q][c];
            next[q + s * t.n][c] |= (r << s) | (r >> (512 - s) % 512);
          }
        }
      }
    }
    reach = std::move(next);
  }
  std::set<std::pair<int64_t, int64_t>> out;
  for (int c = 0; c < 3; ++c) {
    for (int b = 0; b < 512; ++b) {
      if (reach[p][c][b]) out.emplace(c, b);
    }
  }
  return out;
}

TEST(LinearCells, RepeatedSkewedTermsAreEvaluatedInLittleTimeAndMemory) {
  // Built combination by combination this needed 2-5 GB for one position; now it must fit in
  // 512 MB and a few seconds, and hold exactly what the model says.
  RunBounded(512, 30, [] {
    const Axes axes = MakeAxes("A = 8, B = 512, C = 3, B' = B - A");
    const Mapping m = Parse(kRepeatedSkewed, axes);
    if (m.size() != 1 + 2 * 5 + 511 * 25 + 511 * 2 + 511 * 4 + 511 * 3) return false;
    const int64_t p = m.size() / 2;
    const std::vector<Cell> got = m.maps(p);
    std::vector<Cell> want;
    for (const auto& [c, b] : RepeatedSkewedModel(p)) {
      Index index;
      index.Add("C", c);
      index.Add("B", b);
      want.push_back(Cell::Live(index));
    }
    std::sort(want.begin(), want.end());
    if (got != want || m.map(p) != want.front()) return false;
    WorkBudget budget;  // the default limit is enough
    absl::StatusOr<std::vector<Cell>> tried = m.TryMaps(p, budget);
    return tried.ok() && *tried == want;
  });
}

// ---- The work budget ------------------------------------------------------------------------------

TEST(WorkBudget, RunningOutOfStepsNamesTheLimitAndHowToRaiseIt) {
  const Axes axes = MakeAxes("A = 8, B = 512, C = 3, B' = B - A");
  const Mapping m = Parse(kRepeatedSkewed, axes);
  WorkBudget budget(16'000'000);  // the position needs about 17.5 M steps
  absl::StatusOr<std::vector<Cell>> cells = m.TryMaps(m.size() / 2, budget);
  ASSERT_FALSE(cells.ok());
  EXPECT_EQ(cells.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(cells.status().message(), HasSubstr("work limit: evaluating position 8692 of `$(C: 5, B': 25"));
  EXPECT_THAT(cells.status().message(), HasSubstr("needs more than 16000000 steps"));
  EXPECT_THAT(cells.status().message(), HasSubstr("raise it with `--max-work N`"));
  EXPECT_THAT(cells.status().message(), HasSubstr("WorkBudget(N)"));
}

TEST(WorkBudget, HoldingTooManyValuesNamesTheLimitAndHowToRaiseIt) {
  const Axes axes = MakeAxes("A = 8, B = 512, C = 3, B' = B - A");
  const Mapping m = Parse(kRepeatedSkewed, axes);
  WorkBudget small(1000);
  absl::StatusOr<std::vector<Cell>> cells = m.TryMaps(m.size() / 2, small);
  ASSERT_FALSE(cells.ok());
  EXPECT_EQ(cells.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(cells.status().message(), HasSubstr("holds more than 62 values at once"));
  EXPECT_THAT(cells.status().message(), HasSubstr("work limit 1000"));
  EXPECT_THAT(cells.status().message(), HasSubstr("--max-work"));
  absl::StatusOr<Cell> cell = m.TryMap(m.size() / 2, small);
  EXPECT_EQ(cell.status().code(), absl::StatusCode::kResourceExhausted);
}

TEST(WorkBudget, TermsWithHugeRangesStopAtTheDefaultLimit) {
  // Two terms of 2^27 positions each: about 2^27 choices at the middle position, each a different
  // remainder to keep. The default budget stops this in bounded time and memory.
  RunBounded(1024, 30, [] {
    const Axes axes = MakeAxes("A = 8, B = 512, C = 3, B' = B - A");
    const Mapping m = Parse("$([B, B, B]: 1, [B, B, B]: 1)", axes);
    WorkBudget budget;
    absl::StatusOr<std::vector<Cell>> cells = m.TryMaps(m.size() / 2, budget);
    return !cells.ok() && cells.status().code() == absl::StatusCode::kResourceExhausted &&
           budget.spent() > budget.limit();
  });
}

TEST(WorkBudget, SpendSaturatesInsteadOfOverflowing) {
  WorkBudget budget(10);
  EXPECT_TRUE(budget.Spend(10));
  EXPECT_FALSE(budget.Spend(std::numeric_limits<int64_t>::max()));
  EXPECT_TRUE(budget.exhausted());
  EXPECT_FALSE(budget.Spend(0));
  WorkBudget unlimited = WorkBudget::Unlimited();
  EXPECT_TRUE(unlimited.Spend(std::numeric_limits<int64_t>::max() / 2));
}

TEST(WorkBudget, EquivalenceOfAHugeCombinationStopsAtTheLimit) {
  // 2^40 positions, compared one by one because a combination has no canonical form.
  const Axes axes = MakeAxes("A = 8, B = 1024");
  const Mapping m = Parse("$(A: 1, [B, B, B, B]: 1)", axes);
  WorkBudget budget(100000);
  absl::StatusOr<std::optional<Difference>> diff = FirstDifference(m, m, budget);
  ASSERT_FALSE(diff.ok());
  EXPECT_EQ(diff.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(diff.status().message(), HasSubstr("deciding whether `$(A: 1, [B, B, B, B]: 1)`"));
  EXPECT_THAT(diff.status().message(), HasSubstr("1099511627783 positions"));
  EXPECT_THAT(diff.status().message(), HasSubstr("more than 100000 steps"));
  // A small one is decided within a budget ten times larger.
  const Mapping small = Parse("$(A: 1, B: 2)", axes);
  WorkBudget enough(1000000);
  absl::StatusOr<std::optional<Difference>> same = FirstDifference(small, small, enough);
  ASSERT_TRUE(same.ok()) << same.status();
  EXPECT_FALSE(same->has_value());
}

// ---- Shared definitions ---------------------------------------------------------------------------

TEST(SharedDefinitions, ADoublingChainStopsWithAClearErrorInsteadOfDoublingTheTime) {
  // L1 = {L0}, {L0} ... L60 = {L59}, {L59}: 61 small values standing for a 2^61-node tree. Walking it
  // as a tree doubled the time per level; now a definition past the limit is refused.
  RunBounded(1024, 20, [] {
    MappingScope scope(MakeAxes("A = 8"));
    if (!scope.Define("L0", "1").ok()) return false;
    int refused_at = -1;
    std::string message;
    for (int level = 1; level <= 60 && refused_at < 0; ++level) {
      absl::Status status = scope.Define(absl::StrCat("L", level), absl::StrCat("{L", level - 1, "}, {L", level - 1, "}"));
      if (!status.ok()) {
        refused_at = level;
        message = std::string(status.message());
      }
    }
    // 2^20 - 1 nodes fit the limit of 2^20; the next level does not.
    if (refused_at != 20) return false;
    if (message.find("expands to 2097151 terms, more than the limit of 1048576") == std::string::npos) return false;
    // The largest chain that fits is normalized once per shared definition, printed and compared.
    const Mapping& deepest = scope.defs().at("L19");
    return deepest.size() == 1 && deepest.normal_form().ToString() == "1" &&
           deepest.ToString().size() > (size_t{1} << 19) && deepest == deepest;
  });
}

TEST(SharedDefinitions, PrintingASharedPairGivesEveryUse) {
  MappingScope scope(MakeAxes("A = 8, B = 4"));
  ASSERT_TRUE(scope.Define("L", "A / 2").ok());
  const Mapping m = scope.m("{L}, B, {L}");
  ASSERT_TRUE(m.ok()) << m.status();
  EXPECT_EQ(m.ToString(), "A / 2, B, A / 2");
  EXPECT_EQ(m.normal_form().ToString(), "A / 2, B, A / 2");
  EXPECT_EQ(m.symbols().size(), 2u);
}

// ---- `visa map` limits -----------------------------------------------------------------------------

struct CliResult {
  int code;
  std::string out, err;
};

CliResult RunMapCommand(cli::MapOptions options) {
  std::ostringstream out, err;
  const int code = cli::RunMap(options, out, err);
  return {code, out.str(), err.str()};
}

TEST(MapCommandLimits, EquivalenceOverTwoToTheFortyPositionsStopsNamingTheFlag) {
  CliResult r = RunMapCommand({.expr = "$(A: 1, [B, B, B, B]: 1)", .axes = "A=8,B=1024",
                               .equiv = "$(A: 1, [B, B, B, B]: 1)", .max_work = 200000});
  EXPECT_EQ(r.code, 2);
  EXPECT_THAT(r.err, HasSubstr("error: work limit: deciding whether"));
  EXPECT_THAT(r.err, HasSubstr("more than 200000 steps"));
  EXPECT_THAT(r.err, HasSubstr("--max-work N"));
}

TEST(MapCommandLimits, EnumeratingTwoToTheFortyPositionsIsRefusedBeforePrinting) {
  CliResult r = RunMapCommand({.expr = "[B, B, B, B]", .axes = "B=1024", .enumerate = true});
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(r.out, "");
  EXPECT_THAT(r.err, HasSubstr("--enumerate: `B, B, B, B` has 1099511627776 positions, more than the limit "
                               "of 1048576 (--max-positions); raise it with `--max-positions N`"));
}

TEST(MapCommandLimits, RaisingTheLimitsLetsALargeCaseThrough) {
  CliResult small = RunMapCommand({.expr = "A, B", .axes = "A=4,B=4", .enumerate = true, .max_positions = 15});
  EXPECT_EQ(small.code, 2);
  EXPECT_THAT(small.err, HasSubstr("has 16 positions, more than the limit of 15"));
  CliResult raised = RunMapCommand({.expr = "A, B", .axes = "A=4,B=4", .enumerate = true, .max_positions = 16});
  EXPECT_EQ(raised.code, 0) << raised.err;
  EXPECT_THAT(raised.out, HasSubstr("15 A=3 B=3\n"));

  // The issue's combination: one position is cheap, all of them exceed a small budget.
  const std::string expr = kRepeatedSkewed;
  CliResult stopped = RunMapCommand({.expr = expr, .axes = "A=8,B=512,C=3,B'=B-A", .enumerate = true, .max_work = 1000});
  EXPECT_EQ(stopped.code, 2);
  EXPECT_THAT(stopped.err, HasSubstr("error: work limit: enumerating `$(C: 5, B': 25, B': 2, B: 4, B: 3)` (stopped at position"));
  CliResult equiv = RunMapCommand({.expr = "$(A: 1, B: 2)", .axes = "A=8,B=4", .equiv = "$(A: 1, B: 2)", .max_work = 10000});
  EXPECT_EQ(equiv.code, 0) << equiv.err;
  EXPECT_EQ(equiv.out, "equivalent\n");
}

TEST(MapCommandLimits, ADoublingDefinitionChainEndsWithTheLimit) {
  cli::MapOptions options{.expr = "{L60}", .axes = "A=8"};
  options.defs.push_back("L0=1");
  for (int level = 1; level <= 60; ++level) {
    options.defs.push_back(absl::StrCat("L", level, "={L", level - 1, "}, {L", level - 1, "}"));
  }
  CliResult r = RunMapCommand(options);
  EXPECT_EQ(r.code, 2);
  EXPECT_THAT(r.err, HasSubstr("--def L20: "));
  EXPECT_THAT(r.err, HasSubstr("more than the limit of 1048576"));
}

// ---- No internal check on a tile past every size -------------------------------------------------

TEST(NormalFormToMapping, ADigitNoMappingHasIsAnInvalidMappingNotACrash) {
  Factor digit;
  digit.axis = "A";
  digit.axis_size = 8;
  digit.coef = 1;
  digit.count = 8;
  digit.live = std::numeric_limits<int64_t>::max();  // more live values than the digit has
  const Mapping m = NormalForm({digit}).ToMapping();
  ASSERT_FALSE(m.ok());
  EXPECT_THAT(m.status().message(), HasSubstr("normal form: `A #"));
  EXPECT_THAT(m.status().message(), HasSubstr("is not a mapping: padding:"));
  EXPECT_THAT(m.status().message(), HasSubstr("more positions than the largest mapping size"));
  digit.coef = 4;  // coef * live overflows
  EXPECT_FALSE(NormalForm({digit}).ToMapping().ok());
  EXPECT_FALSE(NormalForm({digit}).ToString().empty());
}

TEST(NormalFormToMapping, ATileOfInt64MaxValuesIsAUserError) {
  const Axes axes = MakeAxes("A = 8, B = 512");
  absl::StatusOr<TileView> view =
      Tile(Parse("A, B", axes), Parse("A", axes), std::numeric_limits<int64_t>::max(), 1);
  ASSERT_FALSE(view.ok());
  EXPECT_EQ(view.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(view.status().message(), HasSubstr("A"));
}

}  // namespace
}  // namespace visa
