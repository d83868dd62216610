// Index and Cell: what a buffer position holds (a tensor index, a padding cell, or nothing).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include "absl/strings/string_view.h"

#include "absl/status/statusor.h"

namespace visa {

class Axes;

// Padding kinds of the mapping grammar, ordered by strictness as in the reference model:
// Bottom `#{!}` (inaccessible) < Zero `#{0}` (holds zero) < Top `#` (arbitrary dummy value).
enum class PadKind { kBottom, kZero, kTop };

const char* PadKindOperator(PadKind kind);  // "#", "#{0}", "#{!}"
const char* PadKindName(PadKind kind);      // "top", "zero", "bottom"

// A tensor index: each axis's coordinate. Zero coordinates are not stored, so the manual's rule
// "i![A: 0] is the empty index i![]" holds by construction.
class Index {
 public:
  Index() = default;

  // Adds `value` to the coordinate of `axis` (terms of the same axis accumulate, as in `i![...]`).
  void Add(const std::string& axis, int64_t value);
  void AddAll(const Index& other);
  void Set(const std::string& axis, int64_t value);

  int64_t operator[](absl::string_view axis) const;
  const std::map<std::string, int64_t, std::less<>>& coords() const { return coords_; }
  bool empty() const { return coords_.empty(); }
  bool operator==(const Index&) const = default;
  bool operator<(const Index& other) const { return coords_ < other.coords_; }

  // "{A=1, B=7}", or "{}" for the empty index.
  std::string ToString() const;

 private:
  std::map<std::string, int64_t, std::less<>> coords_;
};

// What one buffer position holds.
struct Cell {
  enum class Kind { kLive, kPad, kOutOfBounds };
  Kind kind = Kind::kOutOfBounds;
  PadKind pad = PadKind::kTop;  // meaningful for kPad
  Index index;                  // meaningful for kLive

  static Cell Live(Index index) { return {Kind::kLive, PadKind::kTop, std::move(index)}; }
  static Cell Pad(PadKind kind) { return {Kind::kPad, kind, {}}; }
  static Cell OutOfBounds() { return {}; }

  bool live() const { return kind == Kind::kLive; }
  bool operator==(const Cell& other) const;
  bool operator<(const Cell& other) const;
  // "{A=1}", "pad", "pad#{0}", "pad#{!}", "out of bounds".
  std::string ToString() const;
};

// Pair's combination of a major and a minor cell: a major non-live cell wins, then a minor one,
// else the coordinates add (notes: `Cell::combine`).
Cell CombineCells(const Cell& major, const Cell& minor);

// The manual's `i![m1: e1, m2: e2, ...]`: each term's mapping is evaluated at its value and the
// results are combined major-to-minor, so `i("B / 64: 2, B % 64: 2")` equals `i("B: 130")`.
// A bare symbol term adds its value without a bounds check, as in the manual.
absl::StatusOr<Cell> ParseIndex(absl::string_view text, const Axes& axes);

}  // namespace visa
