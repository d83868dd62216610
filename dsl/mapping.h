// Mapping: the manual's mapping expressions as immutable runtime values (no templates).
//
// A mapping says which tensor element each buffer position holds. It is a small expression tree
// (symbol, broadcast / identity, pair, padding, resize, stride, modulo, linear combination) shared
// by pointer, so copies are cheap. Operations that can fail come in two forms: checked factories
// returning absl::StatusOr, and operators / methods that return an *invalid* mapping carrying the
// error, which propagates through later operations and is reported by `status()` at the call that
// uses it (an engine call, equivalence, a tensor constructor).
#pragma once

#include <cstdint>
#include <initializer_list>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "dsl/axes.h"
#include "dsl/index.h"

namespace visa {

class NormalForm;
class WorkBudget;

class Mapping {
 public:
  enum class Kind { kSymbol, kBroadcast, kPair, kPadding, kResize, kStride, kModulo, kLinear, kLeftPad };

  // One term `e : n` of a linear combination `$(e1:n1, ..., ed:nd)`.
  struct LinearTerm;

  // The identity `1`.
  Mapping();

  // Checked constructors; each error message names the rule that was broken.
  static absl::StatusOr<Mapping> Symbol(const Axis& axis);
  static absl::StatusOr<Mapping> Broadcast(int64_t size);  // `n`; 1 is the identity
  static absl::StatusOr<Mapping> MakePair(const Mapping& major, const Mapping& minor);
  static absl::StatusOr<Mapping> MakePadding(const Mapping& inner, int64_t size, PadKind kind);
  static absl::StatusOr<Mapping> MakeResize(const Mapping& inner, int64_t size);
  static absl::StatusOr<Mapping> MakeStride(const Mapping& inner, int64_t stride);
  static absl::StatusOr<Mapping> MakeModulo(const Mapping& inner, int64_t modulo);
  static absl::StatusOr<Mapping> MakeLinear(std::vector<LinearTerm> terms);
  // Left padding `# n + E` (manual, "Masking Configuration": `# n + A + # m`): n padding positions
  // before E's, so position i holds E's position i - n. `# 0 + E` is E itself.
  static absl::StatusOr<Mapping> MakeLeftPad(const Mapping& inner, int64_t left, PadKind kind);

  // Unchecked-at-call-site forms: an error yields an invalid mapping (see `status()`).
  Mapping operator/(int64_t stride) const;
  Mapping operator%(int64_t modulo) const;
  Mapping resize(int64_t size) const;                             // `= n`
  Mapping pad(int64_t size, PadKind kind = PadKind::kTop) const;  // `# n`, `#{0} n`, `#{!} n`
  Mapping left_pad(int64_t left, PadKind kind = PadKind::kTop) const;  // `# n + E`
  static Mapping Invalid(absl::Status status);

  bool ok() const { return status_.ok(); }
  const absl::Status& status() const { return status_; }

  Kind kind() const;
  int64_t size() const;  // number of buffer positions (0 for an invalid mapping)
  bool is_identity() const { return kind() == Kind::kBroadcast && size() == 1; }

  // Tree access (for printers, normalization and lowering).
  const Axis& axis() const;                          // kSymbol
  const Mapping& inner() const;                      // kPadding, kResize, kStride, kModulo, kLeftPad
  const Mapping& major() const;                      // kPair (left)
  const Mapping& minor() const;                      // kPair (right)
  int64_t argument() const;                          // the n of `/ n`, `% n`, `= n`, `# n`, `# n +`
  PadKind pad_kind() const;                          // kPadding, kLeftPad
  const std::vector<LinearTerm>& linear_terms() const;  // kLinear

  // What position `i` holds. For a one-to-many mapping (linear combination) this is the first of
  // `maps(i)`; `is_injective()` says whether that can happen.
  Cell map(int64_t i) const;
  // Every cell position `i` holds, sorted (one element unless a linear combination is involved).
  std::vector<Cell> maps(int64_t i) const;
  // `map` and `maps` under a work budget (dsl/work_budget.h): a position of a huge one-to-many
  // mapping can hold more combinations than any budget allows; then the error names the limit.
  // `map` and `maps` themselves never fail: use these on mappings from untrusted input.
  absl::StatusOr<Cell> TryMap(int64_t i, WorkBudget& budget) const;
  absl::StatusOr<std::vector<Cell>> TryMaps(int64_t i, WorkBudget& budget) const;
  // `map` before the range rule: coordinates as the pairs add them, possibly past an axis's end
  // (for evaluating a sub-mapping inside a larger one; see FinalizeCell in cell_code.h). A
  // one-to-many mapping gives its `map`.
  Cell map_raw(int64_t i) const;
  bool is_one_to_one() const;

  // The axes the mapping names, sorted; skew axes are reported as their base and offset axes.
  std::vector<std::string> axis_names() const;
  // The declared axes of the symbols inside, in first-encounter order (outer first).
  std::vector<Axis> symbols() const;

  // The canonical factor form (computed once per value and cached).
  const NormalForm& normal_form() const;

  // The smallest live position holding `index`, or nullopt when no position holds it.
  std::optional<int64_t> inverse(const Index& index) const;

  // Mapping syntax that `ParseMapping` turns back into an equal value.
  std::string ToString() const;

  // Structural equality of the expression trees (equivalence by meaning is `Equivalent`).
  bool operator==(const Mapping& other) const;

  struct Node;

 private:
  explicit Mapping(std::shared_ptr<const Node> node);
  std::shared_ptr<const Node> node_;
  absl::Status status_;
};

struct Mapping::LinearTerm {
  Mapping mapping;
  int64_t coefficient = 1;
  bool operator==(const LinearTerm&) const = default;
};

// Pairs mappings major-to-minor: Pair(a, Pair(b, c)), as the manual's `m![a, b, c]`.
Mapping Pair(std::initializer_list<Mapping> parts);
Mapping Pair(const std::vector<Mapping>& parts);

}  // namespace visa
