// Layout: a mapping's digits as a plain value, and the few operations every consumer of "where
// does this index live" derives from (CuTe's shape:stride layouts, over the mapping normal form).
//
// A layout lists modes innermost first. Mode k counts `extent` values at `weight` buffer positions
// apart; values below `live` hold `coef * value` on one axis (or nothing, for a broadcast), values
// at or above it are padding. Position p is read mixed-radix from the outermost mode in (a value
// at or past a mode's extent is the padding of a block pad, `[A, B] # 10`, which a one-value mode
// carries when no digit is inside it); coordinates an axis's digits sum past its end are padding
// too (the range rule). A mapping with composite factors
// (linear combinations, skews, strides across padding) has no modes: it is not `affine()`, and
// consumers use the run list, which evaluates such mappings position by position.
//
// Operations and their laws (tests/layout_test.cc checks each against Mapping::map / inverse):
//  - Evaluate(p) == mapping.map(p).
//  - RightInverse(i) is the smallest position holding i: Evaluate(RightInverse(i)) == i.
//  - Coalesce() merges adjacent modes that read as one and keeps Evaluate.
//  - Project(dst, src, rule) refines dst's live digits to src's digit boundaries; digits the
//    source lacks become broadcast modes (stride 0): Evaluate == Match(rule) of dst's index.
//  - Compose(src, projected) turns each projected mode into a (count, dst stride, src stride)
//    loop level: the source position is src.RightInverse of the projected index.
//  - SplitOuter(levels, threads) splits the outermost level; the set of (dst, src) pairs stays.
//  - ForEachRun(dst, src, rule) lists the move as runs {dst, src, length, src_stride}, exactly
//    as the interpreter's reference moves data, for every layout (affine or not).
//  - DigitHolding(axis, c) is the live digit whose coordinate range holds c; none: c is not held.
//  - Project(dst, src, rule, &why) names why a projection fails; kUnheld names a coordinate no
//    source position holds.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/functional/function_ref.h"
#include "absl/types/span.h"
#include "dsl/index.h"
#include "dsl/index_matching.h"
#include "dsl/mapping.h"

namespace visa {

struct LayoutMode {
  int64_t extent = 1;  // digit values
  int64_t live = 1;    // values below hold data
  int64_t weight = 1;  // buffer positions per value
  int axis = -1;       // Layout::axes() index; -1: a broadcast digit (no coordinate)
  int64_t coef = 0;    // coordinate per value
  bool operator==(const LayoutMode&) const = default;
};

// One level of a move's loop nest: `count` steps of `dst_stride` destination and `src_stride`
// source positions (0: the source broadcasts along it).
struct MoveLevel {
  int64_t count = 1;
  int64_t dst_stride = 0;
  int64_t src_stride = 0;
  bool operator==(const MoveLevel&) const = default;
};

// Destination positions dst + i read source positions src + i * src_stride, for i < length.
struct MoveRun {
  int64_t dst = 0;
  int64_t src = 0;
  int64_t length = 0;
  int64_t src_stride = 1;
  bool operator==(const MoveRun&) const = default;
};

struct ProjectionFailure;

class Layout {
 public:
  struct AxisInfo {
    std::string name;
    int64_t limit = 0;  // coordinates at or past it are not held (the declared size)
  };

  Layout() = default;
  // The layout of a valid mapping (its normal form's digits and block pads).
  static Layout Of(const Mapping& mapping);

  const Mapping& mapping() const { return mapping_; }
  int64_t size() const { return size_; }
  // Every factor is a digit or a block pad (false: composites; `modes()` is empty).
  bool affine() const { return affine_; }
  // Affine, one-to-one, and the live digits of each axis do not overlap: RightInverse is a sum of
  // per-axis digit decompositions.
  bool invertible() const { return invertible_; }
  const std::vector<LayoutMode>& modes() const { return modes_; }  // innermost first
  const std::vector<AxisInfo>& axes() const { return axes_; }      // every axis the mapping names
  int AxisId(absl::string_view name) const;                        // -1 when not named

  // What position p holds (agrees with Mapping::map). Liveness and coordinates come from the
  // modes; a padding position's kind comes from the mapping, because the normal form folds the
  // range rule (which loses to any explicit padding) into its digits' live values.
  Cell Evaluate(int64_t position) const;
  // The smallest position holding `index` (invertible layouts); nullopt when none does.
  std::optional<int64_t> RightInverse(const Index& index) const;
  // RightInverse restricted to one axis: the position offset of coordinate `value` after `rule`
  // matched it against this layout's digits; -1 when not held (invertible layouts).
  int64_t Offset(int axis, int64_t value, MatchRule rule) const;
  // MatchByDigit of one coordinate (affine layouts): nullopt when a digit value is padding.
  std::optional<int64_t> ProjectCoordinate(int axis, int64_t value) const;
  // The smallest position holding the index position p holds (invertible layouts, p live).
  int64_t FirstHolder(int64_t position) const;
  // Adjacent modes that read as one merged (same function).
  Layout Coalesce() const;
  // The live digit of `axis` whose coordinate range [coef, coef * live) holds `coordinate`, as a
  // mode (the innermost such; invertible layouts have at most one). nullopt: no digit's range
  // holds it, so no position holds the coordinate (invertible layouts).
  std::optional<LayoutMode> DigitHolding(int axis, int64_t coordinate) const;

  // "[4 : 1 A*1, 3 : 4 B*1]": extent : weight, then axis*coef (or `-`), innermost first.
  std::string ToString() const;

  // Internal constructor for projections: the same axes, other modes.
  Layout WithModes(std::vector<LayoutMode> modes) const;

 private:
  void BuildDigits();  // fills invertible_ and the per-axis digit lists
  struct AxisDigit {
    int64_t coef, live, weight, modulus, extent;
  };

  Mapping mapping_;
  int64_t size_ = 1;
  bool affine_ = false;
  bool invertible_ = false;
  std::vector<LayoutMode> modes_;
  std::vector<AxisInfo> axes_;
  std::vector<std::vector<AxisDigit>> digits_;  // per axis, ascending coefficient
  friend std::optional<Layout> Project(const Layout&, const Layout&, MatchRule, ProjectionFailure*);
  friend std::optional<std::vector<MoveLevel>> Compose(const Layout&, const Layout&);
};

// dst's live digits refined to src's digit boundaries under `rule` (see the laws above); nullopt
// when a digit straddles source digits unevenly, a value is not held, or the move has no affine
// form (src not invertible, dst not affine, dst coordinates that reach the range rule).
std::optional<Layout> Project(const Layout& dst, const Layout& src, MatchRule rule);

// Why Project found no projection: where a destination mode's walk over the source digits stopped.
struct ProjectionFailure {
  enum class Cause {
    kNoAffineForm,  // dst not affine or src not invertible
    kRangeRule,     // dst coordinates reach an axis's end
    kUnheld,        // by axis: no source digit holds coordinate `coef` (a multiple of the mode's)
    kMisaligned,    // `coef` falls inside a source digit of step `src_coef` that does not divide it
    kUneven,        // the mode's values cross a source digit boundary they cannot be split at
    kCarry,         // the pieces would carry between source digits
  };
  Cause cause = Cause::kNoAffineForm;
  int mode = -1;         // dst.modes() index (kUnheld, kMisaligned, kUneven)
  int64_t coef = 0;      // the coordinate step where the walk stopped
  int64_t src_coef = 0;  // kMisaligned
};
// Project, recording in `*why` (when not null) why there is no projection.
std::optional<Layout> Project(const Layout& dst, const Layout& src, MatchRule rule, ProjectionFailure* why);
// The loop levels (innermost first) of a projection: each mode's source stride is the weight of
// the source digit it steps. nullopt when the pieces of one source digit would carry.
std::optional<std::vector<MoveLevel>> Compose(const Layout& src, const Layout& projected);
// Compose(src, Project(dst, src, rule)) with mapping checks; nullopt when there is no nest.
std::optional<std::vector<MoveLevel>> MoveLevels(const Mapping& dst, const Mapping& src, MatchRule rule);

// Merges adjacent levels that read as one loop and drops one-step levels (never empty).
std::vector<MoveLevel> Coalesce(std::vector<MoveLevel> levels);
// Splits one level so that the outermost has at least 16 * threads steps (when threads > 1 and a
// level divides): levels are independent, so the outer part of any level can move outermost.
std::vector<MoveLevel> SplitOuter(std::vector<MoveLevel> levels, int threads);

// The move dst <- src as runs in increasing destination order, handed out in chunks, computed
// the way the interpreter's reference moves data (padding skipped, each live position reading
// the smallest source position holding Match(rule) of its index). Returns the first destination
// position whose index the source does not hold (the runs before it were handed out), or
// nullopt. Uses the loop nest, or the digit odometer, or Mapping::map / inverse.
using RunChunkFn = absl::FunctionRef<void(absl::Span<const MoveRun>)>;
std::optional<int64_t> ForEachRun(const Mapping& dst, const Mapping& src, MatchRule rule, RunChunkFn emit);
// The first live source position whose index no read position holds (`read(q)`: position q was
// read): the move would drop it. nullopt when every index is read.
std::optional<int64_t> FirstDropped(const Mapping& src, absl::FunctionRef<bool(int64_t)> read);

// Calls fn(position, coords) for every live position of an affine layout, increasing (an odometer).
// fn returns false to stop; coords are indexed by Layout::axes(). Positions the range rule pads are
// skipped.
void ForEachLive(const Layout& layout, absl::FunctionRef<bool(int64_t, const std::vector<int64_t>&)> fn);

}  // namespace visa
