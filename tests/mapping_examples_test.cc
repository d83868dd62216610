// Checks every example of the manual's "Mapping Expressions" page and the notes' mapping vectors (5.1, 5.2).
#include <algorithm>
#include <cstdlib>
#include <iterator>
#include <cstdint>
#include <optional>
#include <ostream>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "dsl/axes.h"
#include "dsl/equivalence.h"
#include "dsl/index.h"
#include "dsl/mapping.h"
#include "dsl/mapping_parser.h"
#include "dsl/normal_form.h"
#include "dsl/tile.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace visa {

// GoogleTest printers (internal linkage; found by argument-dependent lookup).
static void PrintTo(const Cell& cell, std::ostream* os) { *os << cell.ToString(); }
static void PrintTo(const Index& index, std::ostream* os) { *os << index.ToString(); }
static void PrintTo(const Mapping& m, std::ostream* os) {
  *os << (m.ok() ? m.ToString() : "<invalid: " + m.status().ToString() + ">");
}

namespace {

using ::testing::AssertionFailure;
using ::testing::AssertionResult;
using ::testing::AssertionSuccess;
using Coords = std::vector<std::pair<std::string, int64_t>>;

Axes MakeAxes(absl::string_view text) {
  absl::StatusOr<Axes> axes = Axes::Parse(text);
  EXPECT_TRUE(axes.ok()) << "Axes::Parse(\"" << text << "\"): " << axes.status();
  return axes.ok() ? *std::move(axes) : Axes();
}

Mapping Parse(absl::string_view text, const Axes& axes, const MappingDefs& defs = {}) {
  absl::StatusOr<Mapping> m = ParseMapping(text, axes, defs);
  EXPECT_TRUE(m.ok()) << "ParseMapping(\"" << text << "\"): " << m.status();
  return m.ok() ? *std::move(m) : Mapping::Invalid(m.status());
}

Index Idx(const Coords& coords) {
  Index index;
  for (const auto& [axis, value] : coords) index.Add(axis, value);
  return index;
}
Cell Live(const Coords& coords) { return Cell::Live(Idx(coords)); }
Cell PadCell(PadKind kind = PadKind::kTop) { return Cell::Pad(kind); }
Cell Oob() { return Cell::OutOfBounds(); }

Cell IndexCell(absl::string_view text, const Axes& axes) {
  absl::StatusOr<Cell> cell = ParseIndex(text, axes);
  EXPECT_TRUE(cell.ok()) << "ParseIndex(\"" << text << "\"): " << cell.status();
  return cell.ok() ? *std::move(cell) : Cell::OutOfBounds();
}

std::string Show(const Mapping& m) {
  return m.ok() ? m.ToString() : "<invalid: " + m.status().ToString() + ">";
}

AssertionResult AreEquivalent(const Mapping& a, const Mapping& b) {
  absl::StatusOr<bool> eq = Equivalent(a, b);
  if (!eq.ok()) return AssertionFailure() << "Equivalent(" << Show(a) << ", " << Show(b) << "): " << eq.status();
  if (*eq) return AssertionSuccess() << Show(a) << " is equivalent to " << Show(b);
  AssertionResult r = AssertionFailure() << Show(a) << " is not equivalent to " << Show(b);
  absl::StatusOr<std::optional<Difference>> diff = FirstDifference(a, b);
  if (diff.ok() && diff->has_value()) r << " (" << (*diff)->ToString() << ")";
  return r;
}

AssertionResult AreNotEquivalent(const Mapping& a, const Mapping& b) {
  absl::StatusOr<bool> eq = Equivalent(a, b);
  if (!eq.ok()) return AssertionFailure() << "Equivalent(" << Show(a) << ", " << Show(b) << "): " << eq.status();
  if (!*eq) return AssertionSuccess() << Show(a) << " is not equivalent to " << Show(b);
  return AssertionFailure() << Show(a) << " is (wrongly) equivalent to " << Show(b);
}

// Equivalence straight from the manual's definition, by the library's own `maps`: same size and
// the same cells at every position.
bool SameCells(const Mapping& a, const Mapping& b) {
  if (a.size() != b.size()) return false;
  for (int64_t i = 0; i < a.size(); ++i) {
    if (a.maps(i) != b.maps(i)) return false;
  }
  return true;
}

// An error whose message contains, for each group, at least one of its needles. A needle with an
// uppercase letter is matched exactly, others case-insensitively.
AssertionResult ErrorMentions(const absl::Status& status, const std::vector<std::vector<std::string>>& groups) {
  if (status.ok()) return AssertionFailure() << "expected an error, got OK";
  const std::string message(status.message());
  const std::string lower = absl::AsciiStrToLower(message);
  for (const auto& group : groups) {
    bool found = false;
    for (const std::string& needle : group) {
      const bool exact = std::any_of(needle.begin(), needle.end(), [](char c) { return absl::ascii_isupper(c); });
      if ((exact ? message : lower).find(exact ? needle : absl::AsciiStrToLower(needle)) != std::string::npos) {
        found = true;
      }
    }
    if (!found) {
      std::string wanted;
      for (const std::string& needle : group) absl::StrAppend(&wanted, wanted.empty() ? "" : " | ", needle);
      return AssertionFailure() << "error message \"" << message << "\" does not mention any of: " << wanted;
    }
  }
  return AssertionSuccess() << message;
}

// ---------------------------------------------------------------------------------------------
// Constructors

TEST(ManualSymbol, MapsEachPositionToItsCoordinate) {
  Axes axes = MakeAxes("A = 8");
  Mapping e = Parse("A", axes);
  EXPECT_EQ(e.kind(), Mapping::Kind::kSymbol);
  EXPECT_EQ(e.size(), 8);
  for (int64_t i = 0; i < e.size(); ++i) EXPECT_EQ(e.map(i), Live({{"A", i}})) << i;
  EXPECT_EQ(e.map(e.size()), Oob());
  // i![A: 0] is the empty index i![].
  EXPECT_EQ(e.map(0), Cell::Live(Index()));
  EXPECT_EQ(e.map(0).index.ToString(), "{}");
  EXPECT_TRUE(e.map(0).live());
  EXPECT_EQ(IndexCell("A: 0", axes), Cell::Live(Index()));
}

TEST(ManualPair, MajorThenMinor) {
  Axes axes = MakeAxes("A = 8, B = 512");
  Mapping e = Parse("A, B", axes);
  EXPECT_EQ(e.kind(), Mapping::Kind::kPair);
  EXPECT_EQ(e.size(), 4096);
  for (int64_t i = 0; i < e.size(); ++i) EXPECT_EQ(e.map(i), Live({{"A", i / 512}, {"B", i % 512}})) << i;
  EXPECT_EQ(e.map(2 * 512 + 7), Live({{"A", 2}, {"B", 7}}));
  EXPECT_EQ(e.map(519), Live({{"A", 1}, {"B", 7}}));
  EXPECT_EQ(e.map(519).index.ToString(), "{A=1, B=7}");
  EXPECT_EQ(e.map(519).ToString(), "{A=1, B=7}");
  EXPECT_EQ(e.map(0), Live({}));
  EXPECT_EQ(e.map(511), Live({{"B", 511}}));
  EXPECT_EQ(e.map(512), Live({{"A", 1}}));
  EXPECT_EQ(e.map(4096), Oob());
  // m![A, B, C, D] is right-associative: Pair<A, Pair<B, Pair<C, D>>>.
  Axes abcd = MakeAxes("A = 2, B = 3, C = 4, D = 5");
  Mapping chain = Parse("A, B, C, D", abcd);
  ASSERT_EQ(chain.kind(), Mapping::Kind::kPair);
  EXPECT_EQ(chain.major(), abcd["A"]);
  ASSERT_EQ(chain.minor().kind(), Mapping::Kind::kPair);
  EXPECT_EQ(chain.minor().major(), abcd["B"]);
  ASSERT_EQ(chain.minor().minor().kind(), Mapping::Kind::kPair);
  EXPECT_EQ(chain.minor().minor().major(), abcd["C"]);
  EXPECT_EQ(chain.minor().minor().minor(), abcd["D"]);
}

TEST(ManualIdentity, SingleEmptyCell) {
  Axes axes = MakeAxes("A = 8");
  Mapping e = Parse("1", axes);
  EXPECT_TRUE(e.is_identity());
  EXPECT_EQ(e.size(), 1);
  EXPECT_EQ(e.map(0), Live({}));
  EXPECT_EQ(e.map(1), Oob());
  Mapping identity;
  EXPECT_TRUE(identity.ok());
  EXPECT_TRUE(identity.is_identity());
  EXPECT_EQ(identity.size(), 1);
  EXPECT_TRUE(AreEquivalent(identity, e));
  // The identity element of Pair.
  EXPECT_TRUE(AreEquivalent(Parse("1, A", axes), Parse("A", axes)));
  EXPECT_TRUE(AreEquivalent(Parse("A, 1", axes), Parse("A", axes)));
}

TEST(ManualPadding, RowsAlignedTo64) {
  Axes axes = MakeAxes("C = 13, D = 61");
  Mapping e = Parse("C, D # 64", axes);
  EXPECT_EQ(e.size(), 13 * 64);
  ASSERT_EQ(e.kind(), Mapping::Kind::kPair);
  ASSERT_EQ(e.minor().kind(), Mapping::Kind::kPadding);
  EXPECT_EQ(e.minor().argument(), 64);
  EXPECT_EQ(e.minor().pad_kind(), PadKind::kTop);
  EXPECT_EQ(e.map(0), Live({}));
  EXPECT_EQ(e.map(60), Live({{"D", 60}}));
  for (int64_t i : {61, 62, 63}) {
    EXPECT_EQ(e.map(i).kind, Cell::Kind::kPad) << i;
    EXPECT_EQ(e.map(i).pad, PadKind::kTop) << i;
    EXPECT_EQ(e.map(i), PadCell(PadKind::kTop)) << i;
  }
  EXPECT_EQ(e.map(64), Live({{"C", 1}}));
  for (int64_t c = 0; c < 13; ++c) {
    for (int64_t d = 0; d < 64; ++d) {
      EXPECT_EQ(e.map(64 * c + d), d < 61 ? Live({{"C", c}, {"D", d}}) : PadCell()) << c << "," << d;
    }
  }
  EXPECT_EQ(e.map(832), Oob());
  EXPECT_EQ(e.map(61).ToString(), "pad");
}

TEST(ManualResize, TakesFirstElements) {
  Axes axes = MakeAxes("C = 2, D = 3");
  Mapping e = Parse("C, D = 2", axes);
  EXPECT_EQ(e.size(), 4);
  EXPECT_EQ(e.map(0), Live({}));
  EXPECT_EQ(e.map(1), Live({{"D", 1}}));
  EXPECT_EQ(e.map(2), Live({{"C", 1}}));
  EXPECT_EQ(e.map(3), Live({{"C", 1}, {"D", 1}}));
  EXPECT_EQ(e.map(4), Oob());
  EXPECT_EQ(Parse("D = 2", axes).size(), 2);
}

TEST(ManualStrideModulo, BlocksOf64) {
  Axes axes = MakeAxes("A = 8, B = 512");
  Mapping d1 = Parse("B / 64", axes);
  Mapping d2 = Parse("B % 64", axes);
  Mapping e = Parse("B / 64, B % 64", axes);
  Mapping b = Parse("B", axes);
  EXPECT_EQ(d1.size(), 8);
  EXPECT_EQ(d2.size(), 64);
  EXPECT_EQ(e.size(), 512);
  for (int64_t i = 0; i < 8; ++i) {
    EXPECT_EQ(d1.map(i), Live({{"B", 64 * i}})) << i;
    EXPECT_EQ(d1.map(i), IndexCell(absl::StrCat("B / 64: ", i), axes)) << i;
  }
  EXPECT_EQ(d1.map(8), Oob());
  for (int64_t j = 0; j < 64; ++j) {
    EXPECT_EQ(d2.map(j), Live({{"B", j}})) << j;
    EXPECT_EQ(d2.map(j), IndexCell(absl::StrCat("B % 64: ", j), axes)) << j;
  }
  EXPECT_EQ(d2.map(64), Oob());
  for (int64_t i = 0; i < 8; ++i) {
    for (int64_t j = 0; j < 64; ++j) {
      EXPECT_EQ(e.map(64 * i + j), b.map(64 * i + j));
      EXPECT_EQ(e.map(64 * i + j), IndexCell(absl::StrCat("B / 64: ", i, ", B % 64: ", j), axes));
    }
  }
  EXPECT_EQ(e.map(130), Live({{"B", 130}}));
  EXPECT_EQ(e.map(512), Oob());
  EXPECT_TRUE(AreEquivalent(e, b));
}

TEST(ManualStrideModulo, TabularB16) {
  Axes axes = MakeAxes("B = 16");
  Mapping e = Parse("B / 4, B % 4", axes);
  ASSERT_EQ(e.size(), 16);
  for (int64_t row = 0; row < 4; ++row) {
    EXPECT_EQ(Parse("B / 4", axes).map(row), Live({{"B", 4 * row}}));
    for (int64_t col = 0; col < 4; ++col) {
      const Cell want = Live({{"B", 4 * row + col}});
      EXPECT_EQ(e.map(4 * row + col), want) << row << "," << col;
      EXPECT_EQ(IndexCell(absl::StrCat("B / 4: ", row, ", B % 4: ", col), axes), want);
      EXPECT_EQ(IndexCell(absl::StrCat("B: ", 4 * row + col), axes), want);
    }
  }
  EXPECT_EQ(e.map(16), Oob());
  // Modulo keeps the buffer of its operand partitioned; resize truncates: both keep the first cells.
  EXPECT_TRUE(AreEquivalent(Parse("B % 4", axes), Parse("B = 4", axes)));
}

TEST(ManualStrideModulo, NestedStrideRearrangesBits) {
  Axes axes = MakeAxes("A = 8, B = 512");
  Mapping e = Parse("B / 64, B % 32, B / 32 % 2", axes);
  ASSERT_EQ(e.size(), 512);
  for (int64_t i = 0; i < 8; ++i) {
    for (int64_t j = 0; j < 32; ++j) {
      for (int64_t k = 0; k < 2; ++k) {
        EXPECT_EQ(e.map(64 * i + 2 * j + k), Live({{"B", 64 * i + j + 32 * k}})) << i << "," << j << "," << k;
      }
    }
  }
  EXPECT_EQ(e.map(512), Oob());
  EXPECT_EQ(e.map(67), Live({{"B", 97}}));
  EXPECT_EQ(e.map(0b001000011), Live({{"B", 0b001100001}}));
  EXPECT_EQ(IndexCell("B / 64: 1, B % 32: 1, B / 32 % 2: 1", axes), Live({{"B", 97}}));
  EXPECT_EQ(e.inverse(Idx({{"B", 97}})), std::optional<int64_t>(67));
  // A permutation of B, so every coordinate is held exactly once.
  for (int64_t p = 0; p < 512; ++p) EXPECT_EQ(e.inverse(e.map(p).index), std::optional<int64_t>(p)) << p;
  EXPECT_TRUE(AreNotEquivalent(e, Parse("B", axes)));
  absl::StatusOr<std::optional<Difference>> diff = FirstDifference(e, Parse("B", axes));
  ASSERT_TRUE(diff.ok()) << diff.status();
  ASSERT_TRUE(diff->has_value());
  EXPECT_FALSE((*diff)->sizes_differ);
  EXPECT_EQ((*diff)->position, 1);
  EXPECT_EQ((*diff)->ToString(), "position 1: {B=32} vs {B=1}");
}

// ---------------------------------------------------------------------------------------------
// Tiles

TEST(ManualTile, FirstExampleKeepsTheStrideOfA) {
  Axes axes = MakeAxes("A = 8, B = 512");
  Mapping buffer = Parse("A, B", axes);
  Mapping dim = Parse("B", axes);
  for (int64_t start : {0, 2}) {
    SCOPED_TRACE(absl::StrCat("start ", start));
    absl::StatusOr<TileView> view = Tile(buffer, dim, 2, start);
    ASSERT_TRUE(view.ok()) << view.status();
    EXPECT_EQ(view->offset, start);
    EXPECT_EQ(view->start, start);
    EXPECT_EQ(view->len, 2);
    EXPECT_EQ(view->dim, dim);
    // B keeps a footprint of 512 so that A keeps its stride of 512.
    EXPECT_TRUE(AreEquivalent(view->mapping, Parse("A, B = 2 # 512", axes)));
    for (int64_t p = 0; p < view->mapping.size(); ++p) {
      const Cell cell = view->mapping.map(p);
      if (!cell.live()) continue;
      EXPECT_EQ(view->ToBufferIndex(cell.index), buffer.map(view->offset + p).index) << p;
    }
    EXPECT_EQ(view->ToBufferIndex(Idx({{"A", 3}, {"B", 1}})), Idx({{"A", 3}, {"B", start + 1}}));
    // The derived E2 is accepted...
    absl::StatusOr<TileView> checked = Tile(buffer, dim, 2, Parse("A, B = 2 # 512", axes), start);
    EXPECT_TRUE(checked.ok()) << checked.status();
    // ...but the manual's `A, B = 2 # 4` would move A to a stride of 4.
    absl::StatusOr<TileView> wrong = Tile(buffer, dim, 2, Parse("A, B = 2 # 4", axes), start);
    EXPECT_TRUE(ErrorMentions(wrong.status(), {{"B = 2 # 4"}}));
  }
  // With B = 4 the manual's tile mapping is exactly right.
  Axes small = MakeAxes("A = 8, B = 4");
  Mapping small_buffer = Parse("A, B", small);
  for (int64_t start : {0, 2}) {
    absl::StatusOr<TileView> view = Tile(small_buffer, Parse("B", small), 2, Parse("A, B = 2 # 4", small), start);
    ASSERT_TRUE(view.ok()) << view.status();
    EXPECT_EQ(view->offset, start);
    EXPECT_TRUE(AreEquivalent(view->mapping, Parse("A, B = 2 # 4", small)));
    EXPECT_EQ(small_buffer.map(view->offset + 4 * 5 + 1).index, view->ToBufferIndex(view->mapping.map(4 * 5 + 1).index));
  }
}

TEST(ManualTile, OverlappingBlockTiles) {
  Axes axes = MakeAxes("A = 8, B = 512");
  Mapping buffer = Parse("A, B", axes);
  Mapping dim = Parse("B / 32", axes);
  Mapping expected = Parse("A, B / 32 = 2 # 16, B % 32", axes);
  EXPECT_EQ(expected.size(), 4096);
  std::vector<std::set<int64_t>> positions(15);  // buffer positions each tile covers
  for (int64_t i = 0; i < 15; ++i) {
    SCOPED_TRACE(absl::StrCat("tile ", i));
    absl::StatusOr<TileView> view = Tile(buffer, dim, 2, expected, i);
    ASSERT_TRUE(view.ok()) << view.status();
    EXPECT_EQ(view->offset, 32 * i);
    EXPECT_TRUE(AreEquivalent(view->mapping, expected));
    absl::StatusOr<TileView> derived = Tile(buffer, dim, 2, i);
    ASSERT_TRUE(derived.ok()) << derived.status();
    EXPECT_TRUE(AreEquivalent(derived->mapping, view->mapping));
    EXPECT_EQ(derived->offset, view->offset);
    int64_t live = 0;
    for (int64_t p = 0; p < view->mapping.size(); ++p) {
      const Cell cell = view->mapping.map(p);
      if (!cell.live()) continue;
      ++live;
      const Index in_buffer = view->ToBufferIndex(cell.index);
      ASSERT_EQ(in_buffer, buffer.map(view->offset + p).index) << p;
      const int64_t block = in_buffer["B"] / 32;
      EXPECT_TRUE(block == i || block == i + 1) << p;
      positions[i].insert(view->offset + p);
    }
    EXPECT_EQ(live, 8 * 2 * 32);
  }
  // Tiles 0 and 1 share block 1, and only it.
  std::vector<int64_t> shared;
  std::set_intersection(positions[0].begin(), positions[0].end(), positions[1].begin(), positions[1].end(),
                        std::back_inserter(shared));
  EXPECT_EQ(shared.size(), 8u * 32u);
  for (int64_t p : shared) EXPECT_EQ(buffer.map(p).index["B"] / 32, 1) << p;
  // Tile 14 covers blocks 14 and 15, the last ones.
  EXPECT_TRUE(positions[14].count(7 * 512 + 511));
  // A single block: `B / 32 = 1` is the identity.
  absl::StatusOr<TileView> single = Tile(buffer, dim, 1, 5);
  ASSERT_TRUE(single.ok()) << single.status();
  EXPECT_TRUE(AreEquivalent(single->mapping, Parse("A, 1 # 16, B % 32", axes)));
  EXPECT_TRUE(AreEquivalent(single->mapping, Parse("A, B / 32 = 1 # 16, B % 32", axes)));
  EXPECT_TRUE(Parse("B / 32 = 1", axes).is_identity() || AreEquivalent(Parse("B / 32 = 1", axes), Mapping()));
}

TEST(ManualTile, BadStartIsRejected) {
  Axes axes = MakeAxes("A = 8, B = 512");
  Mapping buffer = Parse("A, B", axes);
  Mapping dim = Parse("B / 32", axes);
  absl::StatusOr<TileView> past_end = Tile(buffer, dim, 2, 15);  // blocks 15 and 16 of 16
  EXPECT_TRUE(ErrorMentions(past_end.status(), {{"start", "15", "exceed", "out of"}}));
  absl::StatusOr<TileView> negative = Tile(buffer, dim, 2, -1);
  EXPECT_TRUE(ErrorMentions(negative.status(), {{"start", "-1", "negative"}}));
  absl::StatusOr<TileView> checked = Tile(buffer, dim, 2, Parse("A, B / 32 = 2 # 16, B % 32", axes), 15);
  EXPECT_FALSE(checked.ok());
  absl::StatusOr<TileView> too_long = Tile(buffer, Parse("B", axes), 513, 0);
  EXPECT_FALSE(too_long.ok());
}

// ---------------------------------------------------------------------------------------------
// Escape

TEST(ManualEscape, NamedMappingsSplice) {
  Axes axes = MakeAxes("A = 8, B = 512");
  MappingDefs defs{{"L", Parse("A", axes)}, {"R", Parse("B", axes)}};
  Mapping e = Parse("{ L }, { R }", axes, defs);
  EXPECT_EQ(e, Parse("A, B", axes));
  EXPECT_TRUE(AreEquivalent(e, Parse("A, B", axes)));
  EXPECT_EQ(Parse("{L},{R}", axes, defs), e);
  EXPECT_EQ(Parse("{ L }", axes, defs), Parse("A", axes));
  EXPECT_EQ(Parse("{ R } / 64, { R } % 64", axes, defs), Parse("B / 64, B % 64", axes));

  MappingScope scope(axes);
  ASSERT_TRUE(scope.Define("L", "A").ok());
  ASSERT_TRUE(scope.Define("R", "B").ok());
  EXPECT_EQ(scope.m("{ L }, { R }"), Parse("A, B", axes));
  EXPECT_EQ(scope.m("A, B").size(), 4096);
  EXPECT_FALSE(scope.m("A, Z").ok());
}

// ---------------------------------------------------------------------------------------------
// Advanced constructors

TEST(ManualSkew, DiagonalTable) {
  Axes axes = MakeAxes("A = 4, B = 4, B' = B - A");
  const Axis* skew = axes.Find("B'");
  ASSERT_NE(skew, nullptr);
  ASSERT_TRUE(skew->skew.has_value());
  EXPECT_EQ(*skew->skew, (Skew{"B", "A"}));
  Mapping e = Parse("A, B' = 4", axes);
  ASSERT_EQ(e.size(), 16);
  // The manual's table, (A, B') -> (A, B).
  const int64_t table[16][4] = {{0, 0, 0, 0}, {0, 1, 0, 1}, {0, 2, 0, 2}, {0, 3, 0, 3},
                                {1, 0, 1, 1}, {1, 1, 1, 2}, {1, 2, 1, 3}, {1, 3, 1, 0},
                                {2, 0, 2, 2}, {2, 1, 2, 3}, {2, 2, 2, 0}, {2, 3, 2, 1},
                                {3, 0, 3, 3}, {3, 1, 3, 0}, {3, 2, 3, 1}, {3, 3, 3, 2}};
  for (const auto& row : table) {
    EXPECT_EQ(e.map(4 * row[0] + row[1]), Live({{"A", row[2]}, {"B", row[3]}}))
        << "(A, B') = (" << row[0] << ", " << row[1] << ")";
  }
  EXPECT_EQ(e.map(7), Live({{"A", 1}, {"B", 0}}));  // B = (3 + 1) % 4
  EXPECT_EQ(e.map(16), Oob());
  EXPECT_EQ(e.axis_names(), (std::vector<std::string>{"A", "B"}));
  EXPECT_TRUE(e.is_one_to_one());
  // Every (A, B) appears once.
  for (int64_t p = 0; p < 16; ++p) EXPECT_EQ(e.inverse(e.map(p).index), std::optional<int64_t>(p)) << p;
  EXPECT_TRUE(AreNotEquivalent(e, Parse("A, B", axes)));
  EXPECT_TRUE(AreEquivalent(e, e));
}

TEST(ManualSliding, LinearCombination) {
  Axes axes = MakeAxes("N = 5, F = 3");
  Mapping e = Parse("$(N: 1, F: 2)", axes);
  EXPECT_EQ(e.kind(), Mapping::Kind::kLinear);
  EXPECT_EQ(e.size(), 1 + (5 - 1) * 1 + (3 - 1) * 2);
  EXPECT_EQ(e.size(), 9);
  EXPECT_FALSE(e.is_one_to_one());
  // Position 4 holds {N:4}, {N:2, F:1} and {F:2}.
  EXPECT_THAT(e.maps(4), ::testing::UnorderedElementsAre(Live({{"N", 4}}), Live({{"N", 2}, {"F", 1}}),
                                                          Live({{"F", 2}})));
  // The manual's table: element (N, F) sits at N + 2F.
  for (int64_t p = 0; p < 9; ++p) {
    std::vector<Cell> want;
    for (int64_t n = 0; n < 5; ++n) {
      for (int64_t f = 0; f < 3; ++f) {
        if (n + 2 * f == p) want.push_back(Live({{"N", n}, {"F", f}}));
      }
    }
    std::sort(want.begin(), want.end());
    const std::vector<Cell> got = e.maps(p);
    EXPECT_EQ(got, want) << p;
    EXPECT_TRUE(std::is_sorted(got.begin(), got.end())) << p;
    ASSERT_FALSE(got.empty());
    EXPECT_EQ(e.map(p), got.front()) << p;
  }
  EXPECT_EQ(e.map(9), Oob());
  EXPECT_EQ(e.inverse(Idx({{"N", 2}, {"F", 1}})), std::optional<int64_t>(4));
  EXPECT_EQ(e.inverse(Idx({{"F", 2}})), std::optional<int64_t>(4));
  EXPECT_EQ(e.inverse(Idx({{"N", 5}})), std::nullopt);
  // The same value from the constructor.
  absl::StatusOr<Mapping> built = Mapping::MakeLinear({{axes["N"], 1}, {axes["F"], 2}});
  ASSERT_TRUE(built.ok()) << built.status();
  EXPECT_EQ(*built, e);
  ASSERT_EQ(e.linear_terms().size(), 2u);
  EXPECT_EQ(e.linear_terms()[1].coefficient, 2);
  // size = 1 + sum((size(e_k) - 1) * n_k).
  EXPECT_EQ(Parse("$(N: 1, F: 1)", axes).size(), 1 + 4 + 2);
  EXPECT_EQ(Parse("$(N: 2)", axes).size(), 1 + 4 * 2);
  EXPECT_EQ(Parse("$(N = 2: 4, F: 1)", axes).size(), 1 + 1 * 4 + 2);
  EXPECT_EQ(Parse("$(N: 3, F: 1, N: 1)", axes).size(), 1 + 12 + 2 + 4);
  // Outer sum: e1 * e2 is $(e1 : size(e2), e2 : 1), i.e. the pair.
  EXPECT_TRUE(AreEquivalent(Parse("$(N: 3, F: 1)", axes), Parse("N, F", axes)));
  EXPECT_TRUE(AreNotEquivalent(e, Parse("N # 9", axes)));
}

// ---------------------------------------------------------------------------------------------
// Equivalent Mapping: the laws, on several concrete E.

const char* const kLawAxes = "A = 4, B = 6, C = 3, D = 8, B' = B - A";
const std::vector<std::string>& LawMappings() {
  static const std::vector<std::string> kTexts = {
      "A",        "A, B",           "B # 8",       "[A, C] # 16",   "D / 2",      "D % 4, A",
      "A #{0} 6, C", "B = 4",       "4",           "1 # 3",         "[B, A] / 2", "C, A #{!} 5, B % 2",
      "A, B'",    "$(A: 1, C: 2)",  "[D # 10] / 5", "A / 2, C, A % 2",
  };
  return kTexts;
}

std::vector<int64_t> Divisors(int64_t n) {
  std::vector<int64_t> out;
  for (int64_t d = 1; d <= n; ++d) {
    if (n % d == 0) out.push_back(d);
  }
  return out;
}

TEST(ManualEquivalence, IdentityOfPairs) {
  Axes axes = MakeAxes(kLawAxes);
  for (const std::string& text : LawMappings()) {
    SCOPED_TRACE(text);
    MappingDefs defs{{"E", Parse(text, axes)}};
    const Mapping& e = defs.at("E");
    EXPECT_TRUE(AreEquivalent(e, Parse("{ E }, 1", axes, defs)));
    EXPECT_TRUE(AreEquivalent(e, Parse("1, { E }", axes, defs)));
    EXPECT_TRUE(AreEquivalent(e, e));
  }
}

TEST(ManualEquivalence, StrideModuloDecomposition) {
  // By the normative map(i) table, `[E / n, E % n]` at position n*i + j holds the sum of E.map(n*i)
  // and E.map(j), so the manual's law holds when n falls on a digit boundary of E (always for a
  // single axis) and fails otherwise (A = 4, B = 6: `[A, B] / 4, [A, B] % 4` holds {B=6} at 6).
  // Equivalent must agree with the definition for every divisor, and the law must hold where it does.
  Axes axes = MakeAxes(kLawAxes);
  int checked = 0;
  for (const std::string& text : LawMappings()) {
    MappingDefs defs{{"E", Parse(text, axes)}};
    const Mapping& e = defs.at("E");
    for (int64_t n : Divisors(e.size())) {
      SCOPED_TRACE(absl::StrCat(text, " split by ", n));
      Mapping split = Parse(absl::StrCat("{ E } / ", n, ", { E } % ", n), axes, defs);
      EXPECT_EQ(split.size(), e.size());
      EXPECT_TRUE(SameCells(e, split) ? AreEquivalent(e, split) : AreNotEquivalent(e, split));
      ++checked;
    }
  }
  EXPECT_GT(checked, 40);
  const std::vector<std::pair<std::string, std::vector<int64_t>>> holds = {
      {"A", Divisors(4)},          {"D / 2", Divisors(4)}, {"B = 4", Divisors(4)},
      {"4", Divisors(4)},          {"D", Divisors(8)},     {"[D # 10] / 5", Divisors(2)},
      {"A, B", {1, 2, 3, 6, 12, 24}}, {"B # 8", {1, 2, 8}}, {"[A, C] # 16", {1, 16}},
      {"A #{0} 6, C", {1, 3, 18}},  {"$(A: 1, C: 2)", {1, 8}}, {"A, B'", {1, 2, 3, 6, 12, 24}},
  };
  for (const auto& [text, divisors] : holds) {
    MappingDefs defs{{"E", Parse(text, axes)}};
    for (int64_t n : divisors) {
      SCOPED_TRACE(absl::StrCat(text, " split by ", n));
      EXPECT_TRUE(AreEquivalent(defs.at("E"), Parse(absl::StrCat("{ E } / ", n, ", { E } % ", n), axes, defs)));
    }
  }
  EXPECT_TRUE(AreNotEquivalent(Parse("A, B", axes), Parse("[A, B] / 4, [A, B] % 4", axes)));
  // The manual's instance.
  Axes ab = MakeAxes("A = 8, B = 512");
  EXPECT_TRUE(AreEquivalent(Parse("B / 64, B % 64", ab), Parse("B", ab)));
}

TEST(ManualEquivalence, PairProjection) {
  Axes axes = MakeAxes(kLawAxes);
  // The skew E `A, B'` is left out of the general loop: B' resolves against the index's total A
  // coordinate, so pairing it with another mapping of A is not a projection (checked below).
  std::vector<std::string> texts = LawMappings();
  texts.erase(std::remove(texts.begin(), texts.end(), "A, B'"), texts.end());
  for (size_t i = 0; i < texts.size(); ++i) {
    for (size_t j = 0; j < texts.size(); j += 3) {
      SCOPED_TRACE(absl::StrCat("A = ", texts[i], ", B = ", texts[j]));
      MappingDefs defs{{"X", Parse(texts[i], axes)}, {"Y", Parse(texts[j], axes)}};
      const int64_t y = defs.at("Y").size();
      EXPECT_TRUE(AreEquivalent(Parse(absl::StrCat("[{ X }, { Y }] / ", y), axes, defs), defs.at("X")));
      EXPECT_TRUE(AreEquivalent(Parse(absl::StrCat("[{ X }, { Y }] % ", y), axes, defs), defs.at("Y")));
    }
  }
  MappingDefs skew{{"S", Parse("A, B'", axes)}, {"T", Parse("C, D % 2", axes)}};
  EXPECT_TRUE(AreEquivalent(Parse("[{ S }, { T }] / 6", axes, skew), skew.at("S")));
  EXPECT_TRUE(AreEquivalent(Parse("[{ S }, { T }] % 6", axes, skew), skew.at("T")));
  EXPECT_TRUE(AreEquivalent(Parse("[{ T }, { S }] / 24", axes, skew), skew.at("T")));
  EXPECT_TRUE(AreEquivalent(Parse("[{ T }, { S }] % 24", axes, skew), skew.at("S")));
  Axes ab = MakeAxes("A = 8, B = 512");
  EXPECT_TRUE(AreEquivalent(Parse("[A, B] / 512", ab), Parse("A", ab)));
  EXPECT_TRUE(AreEquivalent(Parse("[A, B] % 512", ab), Parse("B", ab)));
}

TEST(ManualEquivalence, AssociativityOfPairs) {
  Axes axes = MakeAxes(kLawAxes);
  const std::vector<std::string>& texts = LawMappings();
  for (size_t i = 0; i < texts.size(); ++i) {
    const size_t j = (i * 7 + 3) % texts.size();
    const size_t k = (i * 5 + 1) % texts.size();
    SCOPED_TRACE(absl::StrCat(texts[i], " | ", texts[j], " | ", texts[k]));
    MappingDefs defs{{"E1", Parse(texts[i], axes)}, {"E2", Parse(texts[j], axes)}, {"E3", Parse(texts[k], axes)}};
    Mapping flat = Parse("{ E1 }, { E2 }, { E3 }", axes, defs);
    Mapping left = Parse("[{ E1 }, { E2 }], { E3 }", axes, defs);
    Mapping right = Parse("{ E1 }, [{ E2 }, { E3 }]", axes, defs);
    EXPECT_EQ(flat, right);  // `,` is right-associative
    EXPECT_TRUE(AreEquivalent(flat, left));
    EXPECT_TRUE(AreEquivalent(left, right));
    EXPECT_TRUE(AreEquivalent(right, flat));
  }
  Axes abc = MakeAxes("A = 2, B = 3, C = 4");
  EXPECT_TRUE(AreEquivalent(Parse("A, B, C", abc), Parse("[A, B], C", abc)));
  EXPECT_TRUE(AreEquivalent(Parse("(A, B), C", abc), Parse("A, (B, C)", abc)));
}

TEST(ManualEquivalence, IdempotentOperations) {
  Axes axes = MakeAxes(kLawAxes);
  for (const std::string& text : LawMappings()) {
    SCOPED_TRACE(text);
    MappingDefs defs{{"E", Parse(text, axes)}};
    const Mapping& e = defs.at("E");
    const int64_t n = e.size();
    EXPECT_TRUE(AreEquivalent(e, Parse("{ E } / 1", axes, defs)));
    EXPECT_TRUE(AreEquivalent(e, Parse(absl::StrCat("{ E } # ", n), axes, defs)));
    EXPECT_TRUE(AreEquivalent(e, Parse(absl::StrCat("{ E } #{0} ", n), axes, defs)));
    EXPECT_TRUE(AreEquivalent(e, Parse(absl::StrCat("{ E } #{!} ", n), axes, defs)));
    EXPECT_TRUE(AreEquivalent(e, Parse(absl::StrCat("{ E } = ", n), axes, defs)));
    EXPECT_TRUE(AreEquivalent(e, Parse(absl::StrCat("{ E } % ", n), axes, defs)));
    EXPECT_TRUE(AreEquivalent(e, e / 1));
    EXPECT_TRUE(AreEquivalent(e, e.pad(n)));
    EXPECT_TRUE(AreEquivalent(e, e.resize(n)));
  }
}

TEST(ManualEquivalence, ModuloByOne) {
  Axes axes = MakeAxes(kLawAxes);
  for (const std::string& text : LawMappings()) {
    SCOPED_TRACE(text);
    MappingDefs defs{{"E", Parse(text, axes)}};
    Mapping mod1 = Parse("{ E } % 1", axes, defs);
    EXPECT_EQ(mod1.size(), 1);
    EXPECT_TRUE(AreEquivalent(mod1, Parse("1", axes)));
    EXPECT_TRUE(AreEquivalent(mod1, Mapping()));
    EXPECT_TRUE(AreEquivalent(defs.at("E") % 1, Mapping()));
  }
  EXPECT_TRUE(AreEquivalent(Parse("A % 1", axes), Parse("1", axes)));
}

// ---------------------------------------------------------------------------------------------
// Notes 5.1: grammar and map

TEST(NotesMap, StrideOfPaddedAxis) {
  // #8: R = 5, `R # 16 / 4`.
  Axes r5 = MakeAxes("R = 5");
  Mapping e8 = Parse("R # 16 / 4", r5);
  ASSERT_EQ(e8.size(), 4);
  EXPECT_EQ(e8.map(0), Live({}));
  EXPECT_EQ(e8.map(1), Live({{"R", 4}}));
  EXPECT_EQ(e8.map(2), PadCell());
  EXPECT_EQ(e8.map(3), PadCell());
  EXPECT_EQ(e8.map(4), Oob());
  // #9: R = 50 and R = 3, `R # 64 / 8`.
  Axes r50 = MakeAxes("R = 50");
  Mapping e9 = Parse("R # 64 / 8", r50);
  ASSERT_EQ(e9.size(), 8);
  for (int64_t i = 0; i <= 6; ++i) EXPECT_EQ(e9.map(i), Live({{"R", 8 * i}})) << i;
  EXPECT_EQ(e9.map(7), PadCell());
  Axes r3 = MakeAxes("R = 3");
  Mapping e9b = Parse("R # 64 / 8", r3);
  EXPECT_EQ(e9b.map(0), Live({}));
  for (int64_t i = 1; i < 8; ++i) EXPECT_EQ(e9b.map(i), PadCell()) << i;
  // #10: A = 2, B = 3, `[A, B] # 10 / 2`.
  Axes ab = MakeAxes("A = 2, B = 3");
  Mapping e10 = Parse("[A, B] # 10 / 2", ab);
  ASSERT_EQ(e10.size(), 5);
  EXPECT_EQ(e10.map(0), Live({}));
  EXPECT_EQ(e10.map(1), Live({{"B", 2}}));
  EXPECT_EQ(e10.map(2), Live({{"A", 1}, {"B", 1}}));
  EXPECT_EQ(e10.map(3), PadCell());
  EXPECT_EQ(e10.map(4), PadCell());
  EXPECT_EQ(e10.map(5), Oob());
}

TEST(NotesMap, BroadcastAndPadKinds) {
  Axes axes = MakeAxes("A = 3, B = 3");
  // #11
  Mapping four = Parse("4", axes);
  EXPECT_EQ(four.kind(), Mapping::Kind::kBroadcast);
  EXPECT_EQ(four.size(), 4);
  for (int64_t i = 0; i < 4; ++i) EXPECT_EQ(four.map(i), Live({})) << i;
  EXPECT_EQ(four.map(4), Oob());
  Mapping one_pad = Parse("1 # 4", axes);
  EXPECT_EQ(one_pad.map(0), Live({}));
  for (int64_t i = 1; i < 4; ++i) EXPECT_EQ(one_pad.map(i), PadCell()) << i;
  EXPECT_TRUE(AreNotEquivalent(four, one_pad));
  // #12
  EXPECT_EQ(Parse("A #{0} 4", axes).map(3), PadCell(PadKind::kZero));
  EXPECT_EQ(Parse("A #{!} 4", axes).map(3), PadCell(PadKind::kBottom));
  EXPECT_EQ(Parse("A # 4", axes).map(3), PadCell(PadKind::kTop));
  EXPECT_EQ(Parse("A #{0} 4", axes).map(3).ToString(), "pad#{0}");
  EXPECT_EQ(Parse("A #{!} 4", axes).map(3).ToString(), "pad#{!}");
  // #13: major padding wins.
  Mapping e13 = Parse("A # 4, B #{!} 4", axes);
  EXPECT_EQ(e13.map(12), PadCell(PadKind::kTop));
  EXPECT_EQ(e13.map(3), PadCell(PadKind::kBottom));
  EXPECT_EQ(e13.map(15), PadCell(PadKind::kTop));
  EXPECT_EQ(e13.map(5), Live({{"A", 1}, {"B", 1}}));
  // #14
  Mapping e14 = Parse("A # 4 #{0} 8", axes);
  EXPECT_EQ(e14.map(3), PadCell(PadKind::kTop));
  EXPECT_EQ(e14.map(5), PadCell(PadKind::kZero));
  EXPECT_EQ(e14.map(8), Oob());
  EXPECT_EQ(e14.map(8).ToString(), "out of bounds");
}

TEST(NotesMap, ExplicitTopPaddingSpelling) {
  // #12: `#{*}` is Top padding, the same value as `#`.
  Axes axes = MakeAxes("A = 3");
  EXPECT_EQ(Parse("A #{*} 4", axes), Parse("A # 4", axes));
}

TEST(NotesMap, PadKindNames) {
  EXPECT_STREQ(PadKindOperator(PadKind::kTop), "#");
  EXPECT_STREQ(PadKindOperator(PadKind::kZero), "#{0}");
  EXPECT_STREQ(PadKindOperator(PadKind::kBottom), "#{!}");
  EXPECT_STREQ(PadKindName(PadKind::kTop), "top");
  EXPECT_STREQ(PadKindName(PadKind::kZero), "zero");
  EXPECT_STREQ(PadKindName(PadKind::kBottom), "bottom");
  EXPECT_EQ(PadCell(PadKind::kTop).ToString(), "pad");
  EXPECT_EQ(Oob().ToString(), "out of bounds");
  EXPECT_NE(PadCell(PadKind::kTop), PadCell(PadKind::kZero));
  EXPECT_NE(PadCell(PadKind::kTop), Oob());
  EXPECT_NE(Live({}), PadCell());
}

TEST(NotesMap, EscapesAndTrailingCommas) {
  // #15 (mapping escapes; this API has no const-expression escapes).
  Axes axes = MakeAxes("A = 4, B = 2");
  MappingDefs defs{{"M", Parse("A", axes)}};
  EXPECT_EQ(Parse("{ M }", axes, defs), Parse("A", axes));
  // #16
  EXPECT_EQ(Parse("A,", axes), Parse("A", axes));
  EXPECT_EQ(Parse("A, B,", axes), Parse("A, B", axes));
  EXPECT_EQ(Parse("(A, B,)", axes), Parse("A, B", axes));
  EXPECT_EQ(Parse("[A, B,]", axes), Parse("A, B", axes));
  for (const char* bad : {",", "A,,B", ",A"}) {
    absl::StatusOr<Mapping> m = ParseMapping(bad, axes);
    EXPECT_TRUE(ErrorMentions(m.status(), {{"column"}})) << bad;
  }
}

TEST(NotesMap, IndexMacro) {
  // #17
  Axes axes = MakeAxes("A = 4, B = 2");
  EXPECT_EQ(IndexCell("A: 1, B: 0,", axes), IndexCell("A: 1, B: 0", axes));
  EXPECT_EQ(IndexCell("A: 1, B: 0", axes), Live({{"A", 1}}));
  EXPECT_EQ(IndexCell("(A, B,): 5,", axes), Live({{"A", 2}, {"B", 1}}));
  EXPECT_EQ(IndexCell("[A, B]: 5", axes), Live({{"A", 2}, {"B", 1}}));
  Axes big = MakeAxes("A = 512");
  EXPECT_EQ(IndexCell("A / 32 = 8: 0", big), Live({}));
  EXPECT_EQ(IndexCell("A % 32: 3", big), Live({{"A", 3}}));
  // Terms of the same axis add; a bare symbol is not bounds-checked, a mapping term is.
  EXPECT_EQ(IndexCell("A: 1, A: 2", axes), Live({{"A", 3}}));
  EXPECT_EQ(IndexCell("A: 5", axes), Live({{"A", 5}}));
  EXPECT_EQ(IndexCell("A / 2: 5", axes), Oob());
  // Padding precedence follows the combine rule.
  Axes cd = MakeAxes("C = 13, D = 61");
  EXPECT_EQ(IndexCell("[C, D # 64]: 61", cd), PadCell());
  EXPECT_EQ(IndexCell("C: 1, D # 64: 61", cd), PadCell());
  EXPECT_EQ(IndexCell("C # 16: 13, D: 1", cd), PadCell());
  EXPECT_EQ(IndexCell("C: 1, D #{0} 64: 62", cd), PadCell(PadKind::kZero));
}

TEST(NotesMap, IndexMacroPairWithoutBrackets) {
  // #17: `i![A, B: 5]` reads `A, B` as one mapping term.
  Axes axes = MakeAxes("A = 4, B = 2");
  EXPECT_EQ(IndexCell("A, B: 5", axes), Live({{"A", 2}, {"B", 1}}));
  Axes big = MakeAxes("A = 8, B = 512");
  EXPECT_EQ(IndexCell("A, B: 519", big), Parse("A, B", big).map(519));
}

TEST(NotesMap, ParseShapes) {
  // #18
  Axes axes = MakeAxes("A = 8, B = 2, C = 3");
  Mapping s = Parse("A # 16 / 4", axes);
  ASSERT_EQ(s.kind(), Mapping::Kind::kStride);
  EXPECT_EQ(s.argument(), 4);
  EXPECT_EQ(s.size(), 4);
  ASSERT_EQ(s.inner().kind(), Mapping::Kind::kPadding);
  EXPECT_EQ(s.inner().argument(), 16);
  EXPECT_EQ(s.inner().pad_kind(), PadKind::kTop);
  ASSERT_EQ(s.inner().inner().kind(), Mapping::Kind::kSymbol);
  EXPECT_EQ(s.inner().inner().axis().name, "A");
  EXPECT_EQ(s.inner().inner().axis().size, 8);

  Mapping p = Parse("(A, B) # 32", axes);
  ASSERT_EQ(p.kind(), Mapping::Kind::kPadding);
  EXPECT_EQ(p.argument(), 32);
  ASSERT_EQ(p.inner().kind(), Mapping::Kind::kPair);
  EXPECT_EQ(p.inner().major(), axes["A"]);
  EXPECT_EQ(p.inner().minor(), axes["B"]);
  EXPECT_EQ(Parse("[A, B] # 32", axes), p);

  Mapping chain = Parse("A / 4 % 2", axes);  // left-associative
  ASSERT_EQ(chain.kind(), Mapping::Kind::kModulo);
  EXPECT_EQ(chain.argument(), 2);
  ASSERT_EQ(chain.inner().kind(), Mapping::Kind::kStride);
  EXPECT_EQ(chain.inner().argument(), 4);

  Mapping r = Parse("A # 16 % 8 # 32", axes);
  ASSERT_EQ(r.kind(), Mapping::Kind::kPadding);
  EXPECT_EQ(r.argument(), 32);
  ASSERT_EQ(r.inner().kind(), Mapping::Kind::kModulo);
  ASSERT_EQ(r.inner().inner().kind(), Mapping::Kind::kPadding);

  Mapping e = Parse("A, B, C", axes);
  EXPECT_EQ(e, Pair({axes["A"], axes["B"], axes["C"]}));
  absl::StatusOr<Mapping> bc = Mapping::MakePair(axes["B"], axes["C"]);
  ASSERT_TRUE(bc.ok());
  absl::StatusOr<Mapping> abc = Mapping::MakePair(axes["A"], *bc);
  ASSERT_TRUE(abc.ok());
  EXPECT_EQ(e, *abc);

  for (const char* bad : {"A @ 2", "A * 2", "A / 2 * 2"}) {
    absl::StatusOr<Mapping> m = ParseMapping(bad, axes);
    EXPECT_TRUE(ErrorMentions(m.status(), {{"column"}})) << bad;
  }
}

TEST(NotesMap, Display) {
  // #19 (this printer's syntax need only parse back; these simple forms have one spelling).
  Axes axes = MakeAxes("A = 8, B = 4");
  EXPECT_EQ(Parse("A", axes).ToString(), "A");
  EXPECT_EQ(Parse("4", axes).ToString(), "4");
  EXPECT_EQ(Parse("1", axes).ToString(), "1");
  EXPECT_EQ(Parse("A #{0} 16", axes).ToString(), "A #{0} 16");
  EXPECT_EQ(Parse("A #{!} 16", axes).ToString(), "A #{!} 16");
  EXPECT_EQ(Parse("A # 16", axes).ToString(), "A # 16");
  EXPECT_EQ(Parse("A / 4 % 2", axes).ToString(), "A / 4 % 2");
  EXPECT_EQ(Parse("A = 3", axes).ToString(), "A = 3");
  const std::string two = Parse("A / 4 % 2, B #{!} 8", axes).ToString();
  EXPECT_THAT(two, ::testing::HasSubstr("A / 4 % 2"));
  EXPECT_THAT(two, ::testing::HasSubstr("B #{!} 8"));
  EXPECT_EQ(Parse(two, axes), Parse("A / 4 % 2, B #{!} 8", axes));
  const std::string grouped = Parse("(A, B) / 2", axes).ToString();
  EXPECT_EQ(Parse(grouped, axes), Parse("(A, B) / 2", axes)) << grouped;
  EXPECT_NE(Parse(grouped, axes), Parse("A, B / 2", axes)) << grouped;
}

// ---------------------------------------------------------------------------------------------
// Notes 5.2: equivalence

TEST(NotesEquivalence, IdentitiesAndNoOps) {
  Axes axes = MakeAxes("A = 8, B = 512, C = 3");
  // #21
  EXPECT_TRUE(AreEquivalent(Parse("1, A", axes), Parse("A", axes)));
  EXPECT_TRUE(AreEquivalent(Parse("A", axes), Parse("A, 1", axes)));
  EXPECT_TRUE(AreEquivalent(Parse("A / 1", axes), Parse("A", axes)));
  EXPECT_TRUE(AreEquivalent(Parse("A # 8", axes), Parse("A", axes)));
  EXPECT_TRUE(AreEquivalent(Parse("A = 8", axes), Parse("A", axes)));
  EXPECT_TRUE(AreEquivalent(Parse("A % 1", axes), Parse("1", axes)));
  // #22
  EXPECT_TRUE(AreEquivalent(Parse("B / 64, B % 64", axes), Parse("B", axes)));
  for (int64_t n : Divisors(512)) {
    EXPECT_TRUE(AreEquivalent(Parse(absl::StrCat("B / ", n, ", B % ", n), axes), Parse("B", axes))) << n;
  }
  // #23
  EXPECT_TRUE(AreEquivalent(Parse("[A, B] / 512", axes), Parse("A", axes)));
  EXPECT_TRUE(AreEquivalent(Parse("[A, B] % 512", axes), Parse("B", axes)));
  EXPECT_TRUE(AreEquivalent(Parse("A, B, C", axes), Parse("[A, B], C", axes)));
  EXPECT_TRUE(AreEquivalent(Parse("A, [B, C]", axes), Parse("[A, B], C", axes)));
}

TEST(NotesEquivalence, PaddedDigits) {
  // #24 (an upstream test): `R # 16 / 4, R # 16 % 4` == `R # 16` for R = 14. The pair adds
  // R.map(12) + R.map(2) = 14 at position 14, past R's end: no tensor element is there, so the
  // position is padding (the project's reading of the table, matching upstream's normal form).
  Axes r14 = MakeAxes("R = 14");
  Mapping split = Parse("R # 16 / 4, R # 16 % 4", r14);
  Mapping whole = Parse("R # 16", r14);
  for (int64_t p = 0; p < 14; ++p) EXPECT_EQ(split.map(p), Live({{"R", p}})) << p;
  EXPECT_EQ(split.map(14), Cell::Pad(PadKind::kTop));
  EXPECT_EQ(split.map(15), Cell::Pad(PadKind::kTop));
  EXPECT_TRUE(AreEquivalent(split, whole));
  EXPECT_EQ(NormalForm::Of(split), NormalForm::Of(whole));
  // With R = 16 the split is the whole.
  Axes r16 = MakeAxes("R = 16");
  EXPECT_TRUE(AreEquivalent(Parse("R # 16 / 4, R # 16 % 4", r16), Parse("R # 16", r16)));
  // #25
  Axes ra = MakeAxes("R = 3, A = 5");
  EXPECT_TRUE(AreEquivalent(Parse("R # 16 / 4, A", ra), Parse("A # 20", ra)));
  EXPECT_TRUE(AreEquivalent(Parse("R # 64 / 8, A", ra), Parse("A # 40", ra)));
  EXPECT_TRUE(AreEquivalent(Parse("R # 64 / 8", ra), Parse("1 # 8", ra)));
  EXPECT_TRUE(AreEquivalent(Parse("[A # 16 / 4] / 2", ra), Parse("1 # 2", ra)));
  // #28
  Axes b32 = MakeAxes("B = 32");
  EXPECT_TRUE(AreEquivalent(Parse("B # 32", b32), Parse("B", b32)));
}

TEST(NotesEquivalence, NotEquivalent) {
  // #26
  Axes a15 = MakeAxes("A = 15");
  Mapping five = Parse("A % 5, A / 5", a15);
  Mapping three = Parse("A % 3, A / 3", a15);
  EXPECT_EQ(five.map(1), Live({{"A", 5}}));
  EXPECT_EQ(three.map(1), Live({{"A", 3}}));
  EXPECT_TRUE(AreNotEquivalent(five, three));
  absl::StatusOr<std::optional<Difference>> diff = FirstDifference(five, three);
  ASSERT_TRUE(diff.ok()) << diff.status();
  ASSERT_TRUE(diff->has_value());
  EXPECT_EQ((*diff)->position, 1);
  EXPECT_EQ((*diff)->ToString(), "position 1: {A=5} vs {A=3}");
  // #27
  Axes axes = MakeAxes("A = 3, B = 4, U = 1, V = 1");
  EXPECT_TRUE(AreNotEquivalent(Parse("A # 8", axes), Parse("A #{0} 8", axes)));
  EXPECT_TRUE(AreNotEquivalent(Parse("A #{0} 8", axes), Parse("A #{!} 8", axes)));
  EXPECT_TRUE(AreNotEquivalent(Parse("A # 8", axes), Parse("A #{!} 8", axes)));
  absl::StatusOr<std::optional<Difference>> kinds = FirstDifference(Parse("A # 8", axes), Parse("A #{0} 8", axes));
  ASSERT_TRUE(kinds.ok() && kinds->has_value());
  EXPECT_EQ((*kinds)->position, 3);
  EXPECT_EQ((*kinds)->ToString(), "position 3: pad vs pad#{0}");
  EXPECT_TRUE(AreNotEquivalent(Parse("A, B", axes), Parse("B, A", axes)));
  EXPECT_TRUE(AreEquivalent(Parse("U, V", axes), Parse("V, U", axes)));  // |U| = |V| = 1
  // Different sizes.
  absl::StatusOr<std::optional<Difference>> sizes = FirstDifference(Parse("A", axes), Parse("B", axes));
  ASSERT_TRUE(sizes.ok() && sizes->has_value());
  EXPECT_TRUE((*sizes)->sizes_differ);
  EXPECT_EQ((*sizes)->ToString(), "sizes 3 and 4");
  EXPECT_TRUE(AreNotEquivalent(Parse("A", axes), Parse("A # 4", axes)));
  absl::StatusOr<std::optional<Difference>> none = FirstDifference(Parse("A", axes), Parse("A # 3", axes));
  ASSERT_TRUE(none.ok());
  EXPECT_FALSE(none->has_value());
}

TEST(NotesEquivalence, SplitAt) {
  // #29: outer = E / t, inner = E % t, Pair(outer, inner) == E.
  struct Case {
    const char* axes;
    const char* e;
    int64_t t;
    const char* inner;
    const char* outer;
  };
  const Case cases[] = {
      {"A = 2, B = 2", "[A # 4, B # 4]", 8, "[A, B # 4]", "[1 # 2]"},
      {"A = 2, B = 2, C = 2", "[A # 4, B, C]", 8, "[A, B, C]", "[1 # 2]"},
      {"A = 2, B = 2, C = 2, D = 2", "[A # 4, B # 4, C # 16, D # 4]", 16, "[C # 4, D # 4]", "[A # 4, B # 4, 1 # 4]"},
      {"A = 8", "[A # 16]", 4, "[A % 4]", "[1 # 2, A / 4 % 2]"},
      {"A = 2, B = 2, C = 2, D = 2", "[A, B # 4, [C, D] # 8]", 16, "[B, 1 # 2, C, D]", "[A, 1 # 2]"},
      {"A = 3", "[A # 16]", 4, "[A # 4]", "[1 # 4]"},
      {"A = 3", "[1 # 64]", 8, "[1 # 8]", "[1 # 8]"},
      {"A = 4, B = 4", "[B, A # 9]", 4, nullptr, nullptr},
  };
  // The last one is the notes' "composite kept" case: there the parts do not pair back to E by the
  // normative table (position 9 = 4 * 2 + 1 holds E.map(8) = pad, while E.map(9) = {B=1}).
  for (const Case& c : cases) {
    SCOPED_TRACE(absl::StrCat(c.e, " at ", c.t));
    Axes axes = MakeAxes(c.axes);
    Mapping e = Parse(c.e, axes);
    Mapping outer = e / c.t;
    Mapping inner = e % c.t;
    ASSERT_TRUE(outer.ok()) << outer.status();
    ASSERT_TRUE(inner.ok()) << inner.status();
    if (c.inner != nullptr) {
      EXPECT_TRUE(AreEquivalent(inner, Parse(c.inner, axes)));
      EXPECT_TRUE(AreEquivalent(outer, Parse(c.outer, axes)));
    }
    if (c.inner != nullptr) {
      EXPECT_TRUE(AreEquivalent(Pair({outer, inner}), e));
    } else {
      EXPECT_TRUE(AreNotEquivalent(Pair({outer, inner}), e));
    }
  }
  // A = 6: `A # 9` cannot be split at 4.
  Axes a6 = MakeAxes("A = 6");
  Mapping e = Parse("A # 9", a6);
  EXPECT_TRUE(ErrorMentions((e / 4).status(), {{"divi"}, {"4"}, {"9"}}));
  EXPECT_TRUE(ErrorMentions((e % 4).status(), {{"divi"}, {"4"}, {"9"}}));
}

// ---------------------------------------------------------------------------------------------
// Indices, printer, C++ operators

TEST(Indices, ValuesAndText) {
  Index index;
  EXPECT_TRUE(index.empty());
  EXPECT_EQ(index.ToString(), "{}");
  index.Add("A", 0);
  EXPECT_TRUE(index.empty());
  index.Add("B", 7);
  index.Add("A", 1);
  EXPECT_EQ(index.ToString(), "{A=1, B=7}");
  EXPECT_EQ(index["A"], 1);
  EXPECT_EQ(index["C"], 0);
  index.Add("B", -7);
  EXPECT_EQ(index.ToString(), "{A=1}");
  index.Set("A", 0);
  EXPECT_TRUE(index.empty());
  Index other;
  other.Add("A", 2);
  Index sum = Idx({{"A", 1}, {"B", 1}});
  sum.AddAll(other);
  EXPECT_EQ(sum, Idx({{"A", 3}, {"B", 1}}));

  Axes axes = MakeAxes("A = 8, B = 512");
  EXPECT_EQ(IndexCell("B / 64: 2, B % 64: 2", axes), IndexCell("B: 130", axes));
  EXPECT_EQ(IndexCell("B: 130", axes), Live({{"B", 130}}));
  EXPECT_EQ(IndexCell("A: 1, B: 7", axes), Parse("A, B", axes).map(519));
  EXPECT_EQ(IndexCell("B / 64: 8", axes), Oob());
  EXPECT_TRUE(ErrorMentions(ParseIndex("Z: 1", axes).status(), {{"Z"}}));
  EXPECT_FALSE(ParseIndex("A 1", axes).ok());
}

TEST(Printer, RoundTrips) {
  Axes axes = MakeAxes("A = 8, B = 4, C = 3, N = 5, F = 3, R = 14, B' = B - A");
  MappingDefs defs{{"L", Parse("A % 4, C", axes)}};
  const char* const texts[] = {
      "A", "A, B", "1", "4", "1 # 4", "A #{0} 16", "A #{!} 16, B", "(A, B) / 2", "[A, B] # 40 / 4",
      "A, [B, C]", "[A, B], C", "A, B, C", "{ L }, B", "$(N: 1, F: 2)", "A, B' = 4", "$(A / 2: 3, B: 1)",
      "[A, B] % 4 = 3", "A # 10 #{0} 12 #{!} 16", "R # 16 / 4, R # 16 % 4", "B / 2, C, B % 2",
      "[A # 9, 2] / 3", "[[A, B] # 33, C] % 11", "2, 3, 1 # 5", "A % 1", "A / 8", "A = 1",
      "$(A: 1, [B, C] # 13: 2)", "[$(N: 1, F: 2), C] / 3",
  };
  for (const char* text : texts) {
    SCOPED_TRACE(text);
    Mapping m = Parse(text, axes, defs);
    ASSERT_TRUE(m.ok());
    const std::string printed = m.ToString();
    absl::StatusOr<Mapping> again = ParseMapping(printed, axes);
    ASSERT_TRUE(again.ok()) << "printed \"" << printed << "\": " << again.status();
    EXPECT_EQ(*again, m) << "printed \"" << printed << "\"";
    EXPECT_EQ(again->ToString(), printed);
    EXPECT_TRUE(AreEquivalent(*again, m));
    // The normal form prints parseable text too.
    const std::string nf = m.normal_form().ToString();
    absl::StatusOr<Mapping> from_nf = ParseMapping(nf, axes);
    ASSERT_TRUE(from_nf.ok()) << "normal form \"" << nf << "\": " << from_nf.status();
    EXPECT_TRUE(AreEquivalent(*from_nf, m)) << "normal form \"" << nf << "\"";
  }
}

TEST(Operators, MatchText) {
  Axes axes = MakeAxes("A = 8, B = 512, C = 13, D = 61");
  EXPECT_EQ(axes["B"] / 64, Parse("B / 64", axes));
  EXPECT_EQ(axes["B"] % 64, Parse("B % 64", axes));
  EXPECT_EQ(axes["B"] / 32 % 2, Parse("B / 32 % 2", axes));
  EXPECT_EQ(axes["D"].pad(64), Parse("D # 64", axes));
  EXPECT_EQ(axes["D"].pad(64, PadKind::kZero), Parse("D #{0} 64", axes));
  EXPECT_EQ(axes["D"].pad(64, PadKind::kBottom), Parse("D #{!} 64", axes));
  EXPECT_EQ(axes["D"].resize(2), Parse("D = 2", axes));
  EXPECT_EQ(Pair({axes["A"], axes["B"]}), Parse("A, B", axes));
  EXPECT_EQ(Pair({axes["C"], axes["D"].pad(64)}), Parse("C, D # 64", axes));
  EXPECT_EQ(Pair({axes["B"] / 64, axes["B"] % 32, axes["B"] / 32 % 2}), Parse("B / 64, B % 32, B / 32 % 2", axes));
  EXPECT_EQ(Pair(std::vector<Mapping>{axes["A"], axes["B"] / 32 % 2}), Parse("A, B / 32 % 2", axes));
  EXPECT_EQ(Pair({axes["A"], axes["B"]}).pad(8192, PadKind::kZero), Parse("[A, B] #{0} 8192", axes));
  EXPECT_EQ(axes["A"].ToString(), "A");
  EXPECT_EQ(axes["A"].axis(), *axes.Find("A"));

  absl::StatusOr<Mapping> symbol = Mapping::Symbol(*axes.Find("A"));
  ASSERT_TRUE(symbol.ok());
  EXPECT_EQ(*symbol, axes["A"]);
  absl::StatusOr<Mapping> four = Mapping::Broadcast(4);
  ASSERT_TRUE(four.ok());
  EXPECT_EQ(*four, Parse("4", axes));
  absl::StatusOr<Mapping> one = Mapping::Broadcast(1);
  ASSERT_TRUE(one.ok());
  EXPECT_TRUE(one->is_identity());
  absl::StatusOr<Mapping> stride = Mapping::MakeStride(axes["B"], 64);
  ASSERT_TRUE(stride.ok());
  EXPECT_EQ(*stride, Parse("B / 64", axes));
  absl::StatusOr<Mapping> modulo = Mapping::MakeModulo(axes["B"], 64);
  ASSERT_TRUE(modulo.ok());
  EXPECT_EQ(*modulo, Parse("B % 64", axes));
  absl::StatusOr<Mapping> resize = Mapping::MakeResize(axes["D"], 2);
  ASSERT_TRUE(resize.ok());
  EXPECT_EQ(*resize, Parse("D = 2", axes));
  absl::StatusOr<Mapping> padding = Mapping::MakePadding(axes["D"], 64, PadKind::kZero);
  ASSERT_TRUE(padding.ok());
  EXPECT_EQ(*padding, Parse("D #{0} 64", axes));
  absl::StatusOr<Mapping> pair = Mapping::MakePair(axes["A"], axes["B"]);
  ASSERT_TRUE(pair.ok());
  EXPECT_EQ(*pair, Parse("A, B", axes));

  // Structural equality is not equivalence.
  EXPECT_NE(Parse("B / 64, B % 64", axes), Parse("B", axes));
  EXPECT_NE(Parse("A, B", axes), Parse("B, A", axes));

  // Names and symbols.
  Mapping mixed = Parse("C, A / 2, B, A % 2", axes);
  EXPECT_EQ(mixed.axis_names(), (std::vector<std::string>{"A", "B", "C"}));
  std::vector<std::string> order;
  for (const Axis& axis : mixed.symbols()) order.push_back(axis.name);
  EXPECT_EQ(order, (std::vector<std::string>{"C", "A", "B"}));
  EXPECT_TRUE(Parse("4, 1 # 3", axes).axis_names().empty());

  // Invalid mappings carry their error through later operations.
  Mapping bad = axes["A"] / 3;
  EXPECT_FALSE(bad.ok());
  EXPECT_EQ(bad.size(), 0);
  Mapping worse = Pair({bad % 2, axes["B"]});
  EXPECT_FALSE(worse.ok());
  EXPECT_EQ(worse.status(), bad.status());
  EXPECT_FALSE(Equivalent(bad, axes["A"]).ok());
  EXPECT_FALSE(FirstDifference(axes["A"], bad).ok());
  EXPECT_FALSE(Mapping::Invalid(absl::InvalidArgumentError("boom")).ok());
  EXPECT_FALSE(Tile(bad, axes["A"], 1, 0).ok());
}

TEST(AxesDeclarations, ParseFindDeclare) {
  Axes axes = MakeAxes("A=8,B=512");
  ASSERT_EQ(axes.all().size(), 2u);
  EXPECT_EQ(axes.all()[0], (Axis{"A", 8, std::nullopt}));
  EXPECT_EQ(axes.all()[1], (Axis{"B", 512, std::nullopt}));
  ASSERT_NE(axes.Find("B"), nullptr);
  EXPECT_EQ(axes.Find("B")->size, 512);
  EXPECT_EQ(axes.Find("C"), nullptr);
  EXPECT_TRUE(axes.Declare("Batch_2", 3).ok());
  EXPECT_EQ(axes["Batch_2"].size(), 3);
  EXPECT_TRUE(axes.DeclareSkew("B'", "B", "A").ok());
  EXPECT_EQ(Parse("A, B'", axes).size(), 8 * 512);
  EXPECT_TRUE(IsAxisName("A"));
  EXPECT_TRUE(IsAxisName("Batch"));
  EXPECT_TRUE(IsAxisName("ASD_X"));
  EXPECT_TRUE(IsAxisName("B'"));
  EXPECT_TRUE(IsAxisName("X9"));
  EXPECT_FALSE(IsAxisName(""));
  EXPECT_FALSE(IsAxisName("a"));
  EXPECT_FALSE(IsAxisName("1A"));
  EXPECT_FALSE(IsAxisName("_A"));
  EXPECT_FALSE(IsAxisName("B''"));
  EXPECT_FALSE(IsAxisName("A-B"));
  Axes trailing = MakeAxes("A = 4, B = 2,");  // the axes! macro allows a trailing comma
  EXPECT_EQ(trailing.all().size(), 2u);
}

// ---------------------------------------------------------------------------------------------
// Errors: each message names the problem.

TEST(MappingErrors, UnknownAxis) {
  Axes axes = MakeAxes("A = 8, B = 512");
  absl::StatusOr<Mapping> m = ParseMapping("A, Zed", axes);
  EXPECT_TRUE(ErrorMentions(m.status(), {{"Zed"}, {"unknown", "undeclared", "not declared", "no axis"}}));
  EXPECT_TRUE(ErrorMentions(axes["Zed"].status(), {{"Zed"}}));
  EXPECT_TRUE(ErrorMentions(ParseMapping("[A, B] / 2, Q # 4", axes).status(), {{"Q"}}));
}

TEST(MappingErrors, StrideOrModuloMustDivide) {
  Axes axes = MakeAxes("A = 8, B = 512");
  EXPECT_TRUE(ErrorMentions(ParseMapping("A / 3", axes).status(), {{"divi"}, {"3"}, {"8"}}));
  EXPECT_TRUE(ErrorMentions(ParseMapping("B % 100", axes).status(), {{"divi"}, {"100"}, {"512"}}));
  EXPECT_TRUE(ErrorMentions(ParseMapping("A, B / 64 % 3", axes).status(), {{"divi"}, {"3"}}));
  EXPECT_TRUE(ErrorMentions((axes["A"] / 3).status(), {{"divi"}, {"3"}, {"8"}}));
  EXPECT_TRUE(ErrorMentions((axes["A"] % 3).status(), {{"divi"}, {"3"}, {"8"}}));
  EXPECT_TRUE(ErrorMentions(Mapping::MakeStride(axes["A"], 3).status(), {{"divi"}, {"3"}, {"8"}}));
  EXPECT_TRUE(ErrorMentions(Mapping::MakeModulo(axes["B"], 100).status(), {{"divi"}, {"100"}}));
  EXPECT_FALSE(ParseMapping("A / 0", axes).ok());
  EXPECT_FALSE(ParseMapping("A % 0", axes).ok());
  EXPECT_FALSE(ParseMapping("A / 16", axes).ok());
  EXPECT_FALSE(ParseMapping("A % 16", axes).ok());
}

TEST(MappingErrors, ResizeLargerThanOperand) {
  Axes axes = MakeAxes("A = 8");
  EXPECT_TRUE(ErrorMentions(ParseMapping("A = 10", axes).status(),
                            {{"10"}, {"8"}, {"resize", "exceed", "larger", "greater"}}));
  EXPECT_TRUE(ErrorMentions(axes["A"].resize(10).status(), {{"10"}, {"8"}}));
  EXPECT_TRUE(ErrorMentions(Mapping::MakeResize(axes["A"], 9).status(), {{"9"}, {"8"}}));
}

TEST(MappingErrors, PaddingSmallerThanOperand) {
  Axes axes = MakeAxes("A = 8");
  EXPECT_TRUE(ErrorMentions(ParseMapping("A # 4", axes).status(), {{"4"}, {"8"}, {"pad"}}));
  EXPECT_TRUE(ErrorMentions(ParseMapping("A #{0} 7", axes).status(), {{"7"}, {"8"}, {"pad"}}));
  EXPECT_TRUE(ErrorMentions(axes["A"].pad(4, PadKind::kBottom).status(), {{"4"}, {"8"}}));
  EXPECT_TRUE(ErrorMentions(Mapping::MakePadding(axes["A"], 5, PadKind::kTop).status(), {{"5"}, {"8"}}));
}

TEST(MappingErrors, EmptyText) {
  Axes axes = MakeAxes("A = 8");
  for (const char* text : {"", "   "}) {
    EXPECT_TRUE(ErrorMentions(ParseMapping(text, axes).status(),
                              {{"empty", "end of input", "expected", "nothing", "missing"}}))
        << "\"" << text << "\"";
  }
  EXPECT_EQ(IndexCell("", axes), Live({}));  // the manual's `i![]`
  EXPECT_FALSE(Axes::Parse("A = ").ok());
}

TEST(MappingErrors, MalformedTextNamesTheColumn) {
  Axes axes = MakeAxes("A = 8, B = 4");
  for (const char* text : {"A,,B", ",", ",A", "A / ", "A * 2", "[A, B", "(A, B]", "A B", "A / x", "A @ 2",
                           "A / -2", "A / 2.5", "A ]", "A #", "A #{0}", "$(A 1)", "A, ("}) {
    EXPECT_TRUE(ErrorMentions(ParseMapping(text, axes).status(), {{"column"}})) << "\"" << text << "\"";
  }
  MappingScope scope(axes);
  Mapping invalid = scope.m("A,,B");
  EXPECT_FALSE(invalid.ok());
  EXPECT_TRUE(ErrorMentions(invalid.status(), {{"column"}}));
}

TEST(MappingErrors, DuplicateAxisDeclaration) {
  EXPECT_TRUE(ErrorMentions(Axes::Parse("A = 8, A = 4").status(),
                            {{"A"}, {"duplicate", "already", "multiple", "twice", "more than once", "redecl"}}));
  Axes axes = MakeAxes("A = 8");
  EXPECT_TRUE(ErrorMentions(axes.Declare("A", 4), {{"A"}}));
  EXPECT_TRUE(ErrorMentions(axes.DeclareSkew("A", "A", "A"), {{"A"}}));
  EXPECT_FALSE(Axes::Parse("B = 4, B' = B - Q").ok());
  EXPECT_FALSE(axes.Declare("lower", 4).ok());
}

TEST(MappingErrors, UnknownEscapeName) {
  Axes axes = MakeAxes("A = 8");
  MappingDefs defs{{"L", Parse("A", axes)}};
  EXPECT_TRUE(ErrorMentions(ParseMapping("{ Q }, A", axes, defs).status(), {{"Q"}}));
  EXPECT_TRUE(ErrorMentions(ParseMapping("{ Lx }", axes, defs).status(), {{"Lx"}}));
  MappingScope scope(axes);
  EXPECT_TRUE(ErrorMentions(scope.m("{ L }").status(), {{"L"}}));
}

// ---------------------------------------------------------------------------------------------
// Normal forms and inverse

TEST(NormalForms, CanonicalExamples) {
  Axes axes = MakeAxes("A = 8, B = 512, C = 13, D = 61");
  Mapping split = Parse("B / 64, B % 64", axes);
  EXPECT_EQ(NormalForm::Of(split).ToString(), "B");
  EXPECT_EQ(split.normal_form(), NormalForm::Of(split));
  EXPECT_EQ(NormalForm::Of(split), NormalForm::Of(Parse("B", axes)));
  EXPECT_TRUE(NormalForm::Of(split).is_canonical());
  EXPECT_EQ(NormalForm::Of(Parse("1, A, 1", axes)), NormalForm::Of(Parse("A", axes)));
  EXPECT_NE(NormalForm::Of(Parse("A, B", axes)), NormalForm::Of(Parse("B, A", axes)));
  const char* const texts[] = {"A, B", "C, D # 64", "B / 64, B % 32, B / 32 % 2", "A, B / 32 = 2 # 16, B % 32",
                               "[C, D] # 1000", "A #{0} 9 #{!} 12", "4, 1 # 3", "[A, C] # 110 / 11"};
  for (const char* text : texts) {
    SCOPED_TRACE(text);
    Mapping m = Parse(text, axes);
    const NormalForm& nf = m.normal_form();
    EXPECT_EQ(nf.size(), m.size());
    for (int64_t p = 0; p < m.size(); ++p) ASSERT_EQ(nf.map(p), m.map(p)) << p;
    EXPECT_TRUE(AreEquivalent(nf.ToMapping(), m));
    EXPECT_TRUE(AreEquivalent(Parse(nf.ToString(), axes), m));
    EXPECT_EQ(NormalForm::Of(nf.ToMapping()), nf);
  }
}

TEST(NormalForms, SplitOfPaddedAxisBeyondItsRange) {
  // R = 14: `R # 16 / 4, R # 16 % 4` holds {R=p} at every p < 16 (notes 2.2), so its normal form
  // must not read back as `R # 16`, which pads positions 14 and 15.
  Axes axes = MakeAxes("R = 14");
  Mapping m = Parse("R # 16 / 4, R # 16 % 4", axes);
  const NormalForm& nf = m.normal_form();
  for (int64_t p = 0; p < 16; ++p) EXPECT_EQ(nf.map(p), m.map(p)) << p;
  EXPECT_TRUE(AreEquivalent(nf.ToMapping(), m)) << nf.ToString();
  absl::StatusOr<Mapping> printed = ParseMapping(nf.ToString(), axes);
  ASSERT_TRUE(printed.ok()) << printed.status();
  EXPECT_TRUE(AreEquivalent(*printed, m)) << nf.ToString();
}

TEST(NormalForms, Inverse) {
  Axes axes = MakeAxes("A = 8, B = 512, C = 13, D = 61");
  Mapping ab = Parse("A, B", axes);
  EXPECT_EQ(ab.inverse(Idx({{"A", 1}, {"B", 7}})), std::optional<int64_t>(519));
  EXPECT_EQ(ab.inverse(Index()), std::optional<int64_t>(0));
  EXPECT_EQ(ab.inverse(Idx({{"A", 8}})), std::nullopt);
  EXPECT_EQ(ab.inverse(Idx({{"C", 1}})), std::nullopt);
  absl::StatusOr<std::optional<int64_t>> nf = ab.normal_form().inverse(Idx({{"A", 1}, {"B", 7}}));
  ASSERT_TRUE(nf.ok()) << nf.status();
  EXPECT_EQ(*nf, std::optional<int64_t>(519));
  Mapping cd = Parse("C, D # 64", axes);
  EXPECT_EQ(cd.inverse(Idx({{"C", 1}})), std::optional<int64_t>(64));
  EXPECT_EQ(cd.inverse(Idx({{"D", 61}})), std::nullopt);
  EXPECT_EQ(Parse("4", axes).inverse(Index()), std::optional<int64_t>(0));
  EXPECT_EQ(Parse("4, A", axes).inverse(Idx({{"A", 3}})), std::optional<int64_t>(3));
  EXPECT_EQ(Parse("A, 4", axes).inverse(Idx({{"A", 3}})), std::optional<int64_t>(12));
  Mapping nested = Parse("B / 64, B % 32, B / 32 % 2", axes);
  absl::StatusOr<std::optional<int64_t>> nested_nf = nested.normal_form().inverse(Idx({{"B", 97}}));
  ASSERT_TRUE(nested_nf.ok()) << nested_nf.status();
  EXPECT_EQ(*nested_nf, std::optional<int64_t>(67));
}

TEST(NormalForms, MapAcrossBlockPadding) {
  // Factors outside a block pad step by the padded block, not by the digits inside it:
  // in `B, A # 6 #{0} 8` position 8 is B = 1 and the first cell of the block.
  struct Case {
    const char* axes;
    const char* text;
  };
  const Case cases[] = {{"A = 4, B = 4", "B, A # 6 #{0} 8"},
                        {"A = 6", "A, 4 # 5 #{0} 7"},
                        {"A = 2, B = 2", "B, [A, A] #{0} 5"},
                        {"A = 2, B = 6, C = 3", "B, [C, C, C] #{!} 28"},
                        {"A = 3, C = 3", "[A # 4, [C, C] #{!} 10] # 43"}};
  for (const Case& c : cases) {
    SCOPED_TRACE(c.text);
    Axes axes = MakeAxes(c.axes);
    Mapping m = Parse(c.text, axes);
    const NormalForm& nf = m.normal_form();
    for (int64_t p = 0; p <= m.size(); ++p) ASSERT_EQ(nf.map(p), m.map(p)) << "position " << p;
  }
  Axes ab = MakeAxes("A = 4, B = 4");
  EXPECT_EQ(Parse("B, A # 6 #{0} 8", ab).map(8), Live({{"B", 1}}));
  EXPECT_EQ(Parse("B, A # 6 #{0} 8", ab).normal_form().map(8), Live({{"B", 1}}));
}

TEST(ManualSliding, SingleTermCombination) {
  // `$(A: 1)` is A itself; `$(A: 2)` spreads A over every second position. Run in a child process so
  // that a crash (unbounded recursion) fails only this test.
  EXPECT_EXIT(
      {
        Axes axes = MakeAxes("A = 8");
        bool ok = true;
        Mapping one = Parse("$(A: 1)", axes);
        ok = ok && one.size() == 8;
        for (int64_t i = 0; i < 8; ++i) ok = ok && one.map(i) == Live({{"A", i}}) && one.maps(i).size() == 1;
        ok = ok && one.map(8) == Oob();
        absl::StatusOr<bool> eq = Equivalent(one, Parse("A", axes));
        ok = ok && eq.ok() && *eq;
        Mapping two = Parse("$(A: 2)", axes);
        ok = ok && two.size() == 15;
        for (int64_t i = 0; i < 8; ++i) ok = ok && two.map(2 * i) == Live({{"A", i}});
        ok = ok && two.inverse(Idx({{"A", 3}})) == std::optional<int64_t>(6);
        Mapping trailing = Parse("$(A: 1,)", axes);
        ok = ok && trailing.size() == 8 && trailing.map(5) == Live({{"A", 5}});
        std::exit(ok ? 0 : 1);
      },
      ::testing::ExitedWithCode(0), "");
}

}  // namespace
}  // namespace visa
