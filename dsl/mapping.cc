// Mapping values: construction with the manual's rules, map(i), printing and structural equality.
#include "dsl/mapping.h"

#include <algorithm>
#include <map>
#include <mutex>
#include <optional>
#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "dsl/cell_code.h"
#include "dsl/normal_form.h"
#include "dsl/position_cells.h"
#include "dsl/status_macros.h"

namespace visa {

struct Mapping::Node {
  Kind kind = Kind::kBroadcast;
  int64_t size = 1;
  Axis axis;                      // kSymbol
  Mapping first{nullptr}, second{nullptr};  // inner, or major and minor (unset: null)
  int64_t argument = 0;           // the operator's number
  PadKind pad = PadKind::kTop;    // kPadding
  std::vector<LinearTerm> terms;  // kLinear
  bool one_to_one = true;
  int depth = 1;            // bounded so that recursive walks cannot exhaust the stack
  int64_t expanded = 1;     // nodes counted once per use: bounded so tree walks stay bounded
  std::vector<Axis> axes;  // axes named anywhere inside (skews resolved, ranges checked)

  mutable std::once_flag normal_once;
  mutable std::unique_ptr<NormalForm> normal;
  mutable std::once_flag unshifted_once;
  mutable std::optional<Mapping> unshifted;  // see Unshifted: the twin without left paddings
};

namespace {

absl::Status RuleError(absl::string_view rule, absl::string_view message) {
  return absl::InvalidArgumentError(absl::StrCat(rule, ": ", message));
}

constexpr int kMaxDepth = 1000;

// Shared sub-expressions (a definition used twice by the next one) make a small value stand for a
// huge tree: L1 = {L0}, {L0} ... L60 is 2^61 nodes. Printing, comparing and evaluating walk the
// tree, so its expanded size is bounded like its depth.
constexpr int64_t kMaxExpandedNodes = int64_t{1} << 20;

absl::Status CheckShape(const Mapping::Node& node) {
  if (node.depth > kMaxDepth) {
    return RuleError("mapping", absl::StrCat("the expression nests deeper than ", kMaxDepth, " levels"));
  }
  if (node.expanded > kMaxExpandedNodes) {
    return RuleError("mapping", absl::StrCat(
        "the expression expands to ", node.expanded, " terms, more than the limit of ", kMaxExpandedNodes,
        ", when every use of a shared definition is counted (a definition used twice by the next one "
        "doubles the count at every level); the limit is fixed: write the mapping with fewer "
        "repeated definitions"));
  }
  return absl::OkStatus();
}

bool HasShift(const std::vector<Axis>& axes) {
  return std::any_of(axes.begin(), axes.end(), [](const Axis& a) { return a.shift.has_value(); });
}

// A one-to-many position holds several coordinate sums; a left padding's shift applies to one.
absl::Status LeftPadWithCombination(const Mapping& a, const Mapping& b) {
  return RuleError("left padding", absl::StrCat("`", a.ToString(), "` and `", b.ToString(),
                                                "` combine a left padding with a linear combination (one position, ",
                                                "several indices), which this implementation does not shift"));
}

void AddAxes(std::vector<Axis>& into, const std::vector<Axis>& from) {
  for (const Axis& axis : from) {
    if (std::find(into.begin(), into.end(), axis) == into.end()) into.push_back(axis);
  }
}


}  // namespace

Mapping::Mapping() {
  static const std::shared_ptr<const Node> identity = std::make_shared<Node>();
  node_ = identity;
}

Mapping::Mapping(std::shared_ptr<const Node> node) : node_(std::move(node)) {}

Mapping Mapping::Invalid(absl::Status status) {
  VISA_CHECK(!status.ok(), "an invalid mapping needs an error");
  Mapping m(nullptr);
  m.status_ = std::move(status);
  return m;
}

absl::StatusOr<Mapping> Mapping::Symbol(const Axis& axis) {
  if (axis.size < 1 || axis.size > kMaxMappingSize) {
    return RuleError("symbol", absl::StrCat("axis `", axis.name, "` has size ", axis.size));
  }
  auto node = std::make_shared<Node>();
  node->kind = Kind::kSymbol;
  node->size = axis.size;
  node->axis = axis;
  node->axes.push_back(axis);
  return Mapping(std::move(node));
}

absl::StatusOr<Mapping> Mapping::Broadcast(int64_t size) {
  if (size < 1 || size > kMaxMappingSize) {
    return RuleError("broadcast", absl::StrCat("`", size, "` is not a size between 1 and ",
                                               kMaxMappingSize));
  }
  if (size == 1) return Mapping();
  auto node = std::make_shared<Node>();
  node->size = size;
  return Mapping(std::move(node));
}

absl::StatusOr<Mapping> Mapping::MakePair(const Mapping& major, const Mapping& minor) {
  RETURN_IF_ERROR(major.status());
  RETURN_IF_ERROR(minor.status());
  if (major.size() > kMaxMappingSize / minor.size()) {
    return RuleError("pair", absl::StrCat("`", major.ToString(), "` x `", minor.ToString(),
                                          "` has more than ", kMaxMappingSize, " positions"));
  }
  auto node = std::make_shared<Node>();
  node->kind = Kind::kPair;
  node->depth = 1 + std::max(major.node_->depth, minor.node_->depth);
  node->expanded = 1 + major.node_->expanded + minor.node_->expanded;
  RETURN_IF_ERROR(CheckShape(*node));
  node->size = major.size() * minor.size();
  node->first = major;
  node->second = minor;
  node->one_to_one = major.is_one_to_one() && minor.is_one_to_one();
  AddAxes(node->axes, major.node_->axes);
  AddAxes(node->axes, minor.node_->axes);
  if (!node->one_to_one && HasShift(node->axes)) return LeftPadWithCombination(major, minor);
  return Mapping(std::move(node));
}

namespace {

std::string Operand(const Mapping& m) {
  return m.kind() == Mapping::Kind::kPair ? absl::StrCat("[", m.ToString(), "]") : m.ToString();
}

}  // namespace

absl::StatusOr<Mapping> Mapping::MakePadding(const Mapping& inner, int64_t size, PadKind kind) {
  RETURN_IF_ERROR(inner.status());
  if (size > kMaxMappingSize) {
    return RuleError("padding", absl::StrCat("`", Operand(inner), " ", PadKindOperator(kind), " ", size,
                                             "` has more positions than the largest mapping size ",
                                             kMaxMappingSize));
  }
  if (size < inner.size()) {
    return RuleError("padding", absl::StrCat(
        "`", Operand(inner), " ", PadKindOperator(kind), " ", size, "` pads a mapping of size ",
        inner.size(), " to ", size, " positions, but padding cannot be smaller than its operand",
        size >= 1 && size < inner.size()
            ? absl::StrCat(" (to keep ", size, " positions, resize with `= ", size, "`)")
            : ""));
  }
  auto node = std::make_shared<Node>();
  node->kind = Kind::kPadding;
  node->depth = 1 + inner.node_->depth;
  node->expanded = 1 + inner.node_->expanded;
  RETURN_IF_ERROR(CheckShape(*node));
  node->size = size;
  node->first = inner;
  node->argument = size;
  node->pad = kind;
  node->one_to_one = inner.is_one_to_one();
  node->axes = inner.node_->axes;
  return Mapping(std::move(node));
}

absl::StatusOr<Mapping> Mapping::MakeResize(const Mapping& inner, int64_t size) {
  RETURN_IF_ERROR(inner.status());
  if (size < 1 || size > inner.size()) {
    return RuleError("resize", absl::StrCat(
        "`", Operand(inner), " = ", size, "` resizes a mapping of size ", inner.size(), " to ", size,
        "; a resize must be between 1 and its operand's size",
        size > inner.size() ? absl::StrCat(" (to grow it, pad with `# ", size, "`)") : ""));
  }
  auto node = std::make_shared<Node>();
  node->kind = Kind::kResize;
  node->depth = 1 + inner.node_->depth;
  node->expanded = 1 + inner.node_->expanded;
  RETURN_IF_ERROR(CheckShape(*node));
  node->size = size;
  node->first = inner;
  node->argument = size;
  node->one_to_one = inner.is_one_to_one();
  node->axes = inner.node_->axes;
  return Mapping(std::move(node));
}

absl::StatusOr<Mapping> Mapping::MakeStride(const Mapping& inner, int64_t stride) {
  RETURN_IF_ERROR(inner.status());
  if (stride < 1 || inner.size() % stride != 0) {
    return RuleError("stride", absl::StrCat(
        "`", Operand(inner), " / ", stride, "`: the stride must divide the size ", inner.size(),
        " of its operand (Stride and Modulo)"));
  }
  auto node = std::make_shared<Node>();
  node->kind = Kind::kStride;
  node->depth = 1 + inner.node_->depth;
  node->expanded = 1 + inner.node_->expanded;
  RETURN_IF_ERROR(CheckShape(*node));
  node->size = inner.size() / stride;
  node->first = inner;
  node->argument = stride;
  node->one_to_one = inner.is_one_to_one();
  node->axes = inner.node_->axes;
  return Mapping(std::move(node));
}

absl::StatusOr<Mapping> Mapping::MakeModulo(const Mapping& inner, int64_t modulo) {
  RETURN_IF_ERROR(inner.status());
  if (modulo < 1 || inner.size() % modulo != 0) {
    return RuleError("modulo", absl::StrCat(
        "`", Operand(inner), " % ", modulo, "`: the modulo must divide the size ", inner.size(),
        " of its operand (Stride and Modulo)"));
  }
  auto node = std::make_shared<Node>();
  node->kind = Kind::kModulo;
  node->depth = 1 + inner.node_->depth;
  node->expanded = 1 + inner.node_->expanded;
  RETURN_IF_ERROR(CheckShape(*node));
  node->size = modulo;
  node->first = inner;
  node->argument = modulo;
  node->one_to_one = inner.is_one_to_one();
  node->axes = inner.node_->axes;
  return Mapping(std::move(node));
}

absl::StatusOr<Mapping> Mapping::MakeLinear(std::vector<LinearTerm> terms) {
  if (terms.empty()) return RuleError("linear combination", "`$()` needs at least one term");
  int64_t size = 1;
  auto node = std::make_shared<Node>();
  for (const LinearTerm& term : terms) {
    RETURN_IF_ERROR(term.mapping.status());
    if (term.coefficient < 1 || term.coefficient > kMaxMappingSize) {
      return RuleError("linear combination",
                       absl::StrCat("coefficient ", term.coefficient, " of `",
                                    term.mapping.ToString(), "` must be positive"));
    }
    int64_t reach = term.mapping.size() - 1;
    if (reach > 0 && term.coefficient > (kMaxMappingSize - size) / reach) {
      return RuleError("linear combination", "the combination has too many positions");
    }
    size += reach * term.coefficient;
    node->depth = std::max(node->depth, 1 + term.mapping.node_->depth);
    node->expanded += term.mapping.node_->expanded;
    AddAxes(node->axes, term.mapping.node_->axes);
    if (HasShift(term.mapping.node_->axes)) return LeftPadWithCombination(term.mapping, Mapping());
  }
  RETURN_IF_ERROR(CheckShape(*node));
  node->kind = Kind::kLinear;
  node->size = size;
  node->terms = std::move(terms);
  node->one_to_one = node->terms.size() == 1 && node->terms[0].coefficient == 1 &&
                     node->terms[0].mapping.is_one_to_one();
  return Mapping(std::move(node));
}

absl::StatusOr<Mapping> Mapping::MakeLeftPad(const Mapping& inner, int64_t left, PadKind kind) {
  RETURN_IF_ERROR(inner.status());
  if (left < 0 || left > kMaxMappingSize - inner.size()) {
    return RuleError("left padding", absl::StrCat("`", PadKindOperator(kind), " ", left, " + ", Operand(inner),
                                                  "` needs a left pad between 0 and ",
                                                  kMaxMappingSize - inner.size()));
  }
  if (inner.kind() != Kind::kSymbol || inner.axis().skew || inner.axis().shift) {
    return RuleError("left padding", absl::StrCat("`", PadKindOperator(kind), " ", left, " + ", Operand(inner),
                                                  "` left-pads `", inner.ToString(),
                                                  "`; a left padding pads an axis (`# n + A + # m`)"));
  }
  if (left == 0) return inner;
  auto node = std::make_shared<Node>();
  node->kind = Kind::kLeftPad;
  node->depth = 1 + inner.node_->depth;
  node->expanded = 1 + inner.node_->expanded;
  RETURN_IF_ERROR(CheckShape(*node));
  node->size = left + inner.size();
  node->first = inner;
  node->argument = left;
  node->pad = kind;
  node->one_to_one = true;
  // The hidden axis b' (see Shift in axes.h), then the base it resolves to.
  Shift shift{inner.axis().name, left, inner.size(), kind};
  node->axes.push_back(Axis{absl::StrCat(PadKindOperator(kind), left, "+", inner.axis().name), node->size,
                            std::nullopt, shift});
  node->axes.push_back(inner.axis());
  return Mapping(std::move(node));
}

namespace {

Mapping OrInvalid(absl::StatusOr<Mapping> m) {
  return m.ok() ? *std::move(m) : Mapping::Invalid(m.status());
}

}  // namespace

Mapping Mapping::operator/(int64_t stride) const { return OrInvalid(MakeStride(*this, stride)); }
Mapping Mapping::operator%(int64_t modulo) const { return OrInvalid(MakeModulo(*this, modulo)); }
Mapping Mapping::resize(int64_t size) const { return OrInvalid(MakeResize(*this, size)); }
Mapping Mapping::pad(int64_t size, PadKind kind) const {
  return OrInvalid(MakePadding(*this, size, kind));
}
Mapping Mapping::left_pad(int64_t left, PadKind kind) const {
  return OrInvalid(MakeLeftPad(*this, left, kind));
}

Mapping Pair(const std::vector<Mapping>& parts) {
  if (parts.empty()) return Mapping();
  Mapping result = parts.back();
  for (size_t i = parts.size() - 1; i-- > 0;) {
    result = OrInvalid(Mapping::MakePair(parts[i], result));
  }
  return result;
}

Mapping Pair(std::initializer_list<Mapping> parts) { return Pair(std::vector<Mapping>(parts)); }

Mapping::Kind Mapping::kind() const {
  VISA_CHECK(node_ != nullptr, "kind() of an invalid mapping");
  return node_->kind;
}
int64_t Mapping::size() const { return node_ ? node_->size : 0; }
const Axis& Mapping::axis() const {
  VISA_CHECK(node_ && node_->kind == Kind::kSymbol, "axis() of a non-symbol");
  return node_->axis;
}
const Mapping& Mapping::inner() const {
  VISA_CHECK(node_ && node_->kind != Kind::kPair && node_->kind != Kind::kSymbol &&
                 node_->kind != Kind::kBroadcast && node_->kind != Kind::kLinear,
             "inner() of a mapping without an operand");
  return node_->first;
}
const Mapping& Mapping::major() const {
  VISA_CHECK(node_ && node_->kind == Kind::kPair, "major() of a non-pair");
  return node_->first;
}
const Mapping& Mapping::minor() const {
  VISA_CHECK(node_ && node_->kind == Kind::kPair, "minor() of a non-pair");
  return node_->second;
}
int64_t Mapping::argument() const {
  VISA_CHECK(node_ != nullptr, "argument() of an invalid mapping");
  return node_->argument;
}
PadKind Mapping::pad_kind() const {
  VISA_CHECK(node_ && (node_->kind == Kind::kPadding || node_->kind == Kind::kLeftPad),
             "pad_kind() of a non-padding");
  return node_->pad;
}
const std::vector<Mapping::LinearTerm>& Mapping::linear_terms() const {
  VISA_CHECK(node_ && node_->kind == Kind::kLinear, "linear_terms() of a non-combination");
  return node_->terms;
}
bool Mapping::is_one_to_one() const { return node_ == nullptr || node_->one_to_one; }

namespace {

// One cell of a one-to-one mapping, coordinates as the pairs add them (before FinalizeCell).
Cell EvaluateOne(const Mapping& m, int64_t i) {
  if (i < 0 || i >= m.size()) return Cell::OutOfBounds();
  switch (m.kind()) {
    case Mapping::Kind::kSymbol: {
      Index index;
      index.Add(m.axis().name, i);
      return Cell::Live(std::move(index));
    }
    case Mapping::Kind::kBroadcast:
      return Cell::Live({});
    case Mapping::Kind::kPair: {
      int64_t minor_size = m.minor().size();
      Cell major = EvaluateOne(m.major(), i / minor_size);
      if (!major.live()) return major;  // CombineCells would return it; skip evaluating the minor side
      return CombineCells(major, EvaluateOne(m.minor(), i % minor_size));
    }
    case Mapping::Kind::kPadding:
      if (i >= m.inner().size()) return Cell::Pad(m.pad_kind());
      return EvaluateOne(m.inner(), i);
    case Mapping::Kind::kLeftPad: {
      // The hidden axis's raw b'; FinalizeCell shifts it (ResolveSkews in cell_code.h).
      Index index;
      index.Add(absl::StrCat(PadKindOperator(m.pad_kind()), m.argument(), "+", m.inner().axis().name), i);
      return Cell::Live(std::move(index));
    }
    case Mapping::Kind::kResize:
    case Mapping::Kind::kModulo:
      return EvaluateOne(m.inner(), i);
    case Mapping::Kind::kStride:
      return EvaluateOne(m.inner(), i * m.argument());
    case Mapping::Kind::kLinear:
      // One-to-one: a single term with coefficient 1, which is its mapping.
      return EvaluateOne(m.linear_terms().front().mapping, i);
  }
  return Cell::OutOfBounds();
}

std::vector<Cell> MustCells(absl::StatusOr<std::vector<Cell>> cells) {
  VISA_CHECK(cells.ok(), "an unlimited work budget ran out");
  return *std::move(cells);
}

}  // namespace

Cell Mapping::map(int64_t i) const {
  if (node_ == nullptr) return Cell::OutOfBounds();
  if (!node_->one_to_one) return maps(i).front();
  Cell cell = EvaluateOne(*this, i);
  FinalizeCell(node_->axes, cell);
  return cell;
}

namespace {

// A one-to-one position visits the expression tree once: one step per node.
absl::Status SpendOneToOne(const Mapping& m, int64_t expanded, int64_t i, WorkBudget& budget) {
  if (budget.Spend(expanded)) return absl::OkStatus();
  return budget.Exhausted(absl::StrCat("evaluating position ", i, " of `", MappingExcerpt(m), "`"));
}

}  // namespace

absl::StatusOr<Cell> Mapping::TryMap(int64_t i, WorkBudget& budget) const {
  if (node_ == nullptr) return map(i);
  if (node_->one_to_one) {
    RETURN_IF_ERROR(SpendOneToOne(*this, node_->expanded, i, budget));
    return map(i);
  }
  ASSIGN_OR_RETURN(std::vector<Cell> cells, PositionCells(*this, i, budget));
  return cells.front();
}

Cell Mapping::map_raw(int64_t i) const {
  if (node_ == nullptr) return Cell::OutOfBounds();
  if (!node_->one_to_one) return map(i);  // the first finalized cell, which no range rule changes
  Cell cell = EvaluateOne(*this, i);
  if (cell.kind == Cell::Kind::kLive) ResolveSkews(node_->axes, cell);
  return cell;
}

std::vector<Cell> Mapping::maps(int64_t i) const {
  if (node_ == nullptr) return {Cell::OutOfBounds()};
  if (node_->one_to_one) return {map(i)};
  WorkBudget unlimited = WorkBudget::Unlimited();
  return MustCells(PositionCells(*this, i, unlimited));
}

absl::StatusOr<std::vector<Cell>> Mapping::TryMaps(int64_t i, WorkBudget& budget) const {
  if (node_ == nullptr) return maps(i);
  if (node_->one_to_one) {
    RETURN_IF_ERROR(SpendOneToOne(*this, node_->expanded, i, budget));
    return maps(i);
  }
  return PositionCells(*this, i, budget);
}

// The node's axes are collected at construction in the same first-encounter order, so shared
// sub-expressions are not walked again for every use.
std::vector<Axis> Mapping::symbols() const { return node_ != nullptr ? node_->axes : std::vector<Axis>{}; }

std::vector<std::string> Mapping::axis_names() const {
  std::vector<std::string> names;
  for (const Axis& axis : symbols()) {
    if (axis.shift) continue;  // its base is listed too
    if (axis.skew) {
      names.push_back(axis.skew->base);
      names.push_back(axis.skew->offset);
    } else {
      names.push_back(axis.name);
    }
  }
  std::sort(names.begin(), names.end());
  names.erase(std::unique(names.begin(), names.end()), names.end());
  return names;
}

const NormalForm& Mapping::normal_form() const {
  VISA_CHECK(node_ != nullptr, "normal_form() of an invalid mapping");
  // The form may keep the mapping itself as a composite factor; normalizing a copy of the root
  // keeps the cache from owning its own node (a reference cycle).
  std::call_once(node_->normal_once, [this] {
    auto root = std::make_shared<Node>();
    root->kind = node_->kind;
    root->size = node_->size;
    root->axis = node_->axis;
    root->first = node_->first;
    root->second = node_->second;
    root->argument = node_->argument;
    root->pad = node_->pad;
    root->terms = node_->terms;
    root->one_to_one = node_->one_to_one;
    root->depth = node_->depth;
    root->expanded = node_->expanded;
    root->axes = node_->axes;
    node_->normal = std::make_unique<NormalForm>(NormalForm::Of(Mapping(std::move(root))));
  });
  return *node_->normal;
}

namespace {

void FlattenPairs(const Mapping& m, std::vector<Mapping>& leaves) {
  if (m.kind() == Mapping::Kind::kPair) {
    FlattenPairs(m.major(), leaves);
    FlattenPairs(m.minor(), leaves);
  } else {
    leaves.push_back(m);
  }
}

// A pair's leaves fall into groups that share no axis (no skews): an index is held exactly where
// each group holds its share, and the smallest such position takes each group's smallest, so a
// composite leaf (a linear combination) is searched with the few leaves it shares axes with
// instead of across the whole pair. nullopt: the mapping does not split that way.
std::optional<std::optional<int64_t>> InverseByParts(const Mapping& m, const Index& index) {
  if (m.kind() != Mapping::Kind::kPair) return std::nullopt;
  for (const Axis& axis : m.symbols()) {
    if (axis.skew || axis.shift) return std::nullopt;
  }
  std::vector<Mapping> leaves;
  FlattenPairs(m, leaves);
  const size_t n = leaves.size();
  std::vector<std::vector<std::string>> names(n);
  std::vector<size_t> group(n);
  for (size_t i = 0; i < n; ++i) {
    names[i] = leaves[i].axis_names();
    group[i] = i;
  }
  auto root = [&group](size_t i) {
    while (group[i] != i) i = group[i] = group[group[i]];
    return i;
  };
  for (size_t i = 0; i < n; ++i) {
    for (size_t j = i + 1; j < n; ++j) {
      const bool shared = std::any_of(names[i].begin(), names[i].end(), [&](const std::string& a) {
        return std::binary_search(names[j].begin(), names[j].end(), a);
      });
      if (shared) group[root(j)] = root(i);
    }
  }
  for (const auto& [name, value] : index.coords()) {
    bool named = false;
    for (size_t i = 0; i < n && !named; ++i) named = std::binary_search(names[i].begin(), names[i].end(), name);
    if (!named) return std::optional<int64_t>();  // an axis no leaf names is held nowhere
  }
  std::vector<int64_t> leaf_position(n, 0);
  std::vector<bool> done(n, false);
  for (size_t i = 0; i < n; ++i) {
    if (done[root(i)]) continue;
    done[root(i)] = true;
    std::vector<size_t> members;
    std::vector<Mapping> parts;
    std::vector<std::string> axes;
    for (size_t j = 0; j < n; ++j) {
      if (root(j) != root(i)) continue;
      members.push_back(j);
      parts.push_back(leaves[j]);
      axes.insert(axes.end(), names[j].begin(), names[j].end());
    }
    std::sort(axes.begin(), axes.end());
    Index share;
    for (const auto& [name, value] : index.coords()) {
      if (std::binary_search(axes.begin(), axes.end(), name)) share.Set(name, value);
    }
    const Mapping joined = parts.size() == 1 ? parts[0] : Pair(parts);
    const Cell wanted = Cell::Live(share);
    std::optional<int64_t> found;
    for (int64_t p = 0; p < joined.size() && !found; ++p) {
      for (const Cell& cell : joined.maps(p)) {
        if (cell == wanted) {
          found = p;
          break;
        }
      }
    }
    if (!found) return std::optional<int64_t>();
    for (size_t k = members.size(); k-- > 0;) {  // the group's position, minor leaf first
      const int64_t size = leaves[members[k]].size();
      leaf_position[members[k]] = *found % size;
      *found /= size;
    }
  }
  int64_t position = 0;
  for (size_t i = 0; i < n; ++i) position = position * leaves[i].size() + leaf_position[i];
  return std::optional<int64_t>(position);
}

// The twin of a left-padded mapping: each `# n + B` replaced by its hidden axis b' (Shift in
// axes.h) as a plain symbol of n + |B| values. Positions of the twin hold b' where the mapping
// holds b = b' - n, so an index's inverse is the twin's inverse at b' = b + n, which the twin's
// normal form answers digit by digit instead of a search over every position. Only when each B is
// named through one hidden axis and nowhere else (else b would be a sum the twin cannot split).
struct UnshiftBuilder {
  std::map<std::string, std::string> hidden_of;  // B -> b'
  std::set<std::string> plain;                   // axes named outside left paddings
  bool ambiguous = false;

  std::optional<Mapping> Build(const Mapping& m) {
    if (!HasShift(m.symbols())) {
      for (const std::string& name : m.axis_names()) plain.insert(name);
      return m;
    }
    switch (m.kind()) {
      case Mapping::Kind::kLeftPad: {
        const Axis hidden = m.symbols().front();
        auto [it, inserted] = hidden_of.emplace(hidden.shift->base, hidden.name);
        if (!inserted && it->second != hidden.name) ambiguous = true;
        return Ok(Mapping::Symbol(Axis{hidden.name, hidden.size}));
      }
      case Mapping::Kind::kPair: {
        std::optional<Mapping> major = Build(m.major()), minor = Build(m.minor());
        if (!major || !minor) return std::nullopt;
        return Ok(Mapping::MakePair(*major, *minor));
      }
      case Mapping::Kind::kPadding:
      case Mapping::Kind::kResize:
      case Mapping::Kind::kStride:
      case Mapping::Kind::kModulo: {
        std::optional<Mapping> inner = Build(m.inner());
        if (!inner) return std::nullopt;
        if (m.kind() == Mapping::Kind::kPadding) return Ok(Mapping::MakePadding(*inner, m.size(), m.pad_kind()));
        if (m.kind() == Mapping::Kind::kResize) return Ok(Mapping::MakeResize(*inner, m.size()));
        if (m.kind() == Mapping::Kind::kStride) return Ok(Mapping::MakeStride(*inner, m.argument()));
        return Ok(Mapping::MakeModulo(*inner, m.argument()));
      }
      default:  // a linear combination never holds a shift (LeftPadWithCombination)
        return std::nullopt;
    }
  }

  static std::optional<Mapping> Ok(absl::StatusOr<Mapping> m) {
    return m.ok() ? std::optional<Mapping>(*std::move(m)) : std::nullopt;
  }
};

std::optional<Mapping> UnshiftedTwin(const Mapping& m) {
  UnshiftBuilder builder;
  std::optional<Mapping> twin = builder.Build(m);
  if (!twin || builder.ambiguous) return std::nullopt;
  for (const auto& [base, hidden] : builder.hidden_of) {
    if (builder.plain.count(base) != 0) return std::nullopt;
  }
  return twin;
}

// The index the twin holds where the mapping holds `index`: each B's value moved to b' = b + n.
Index UnshiftedIndex(const Mapping& m, const Index& index) {
  Index twin = index;
  for (const Axis& hidden : m.symbols()) {
    if (!hidden.shift) continue;
    twin.Set(hidden.shift->base, 0);
    twin.Set(hidden.name, index[hidden.shift->base] + hidden.shift->left);
  }
  return twin;
}

}  // namespace

std::optional<int64_t> Mapping::inverse(const Index& index) const {
  if (node_ == nullptr) return std::nullopt;
  for (const auto& [name, value] : index.coords()) {
    if (value < 0 || value >= AxisSize(node_->axes, name)) return std::nullopt;
  }
  absl::StatusOr<std::optional<int64_t>> fast = normal_form().inverse(index);
  if (fast.ok()) return *fast;
  if (HasShift(node_->axes)) {
    std::call_once(node_->unshifted_once, [this] { node_->unshifted = UnshiftedTwin(*this); });
    if (node_->unshifted) return node_->unshifted->inverse(UnshiftedIndex(*this, index));
  }
  if (std::optional<std::optional<int64_t>> parts = InverseByParts(*this, index)) return *parts;
  // The factors cannot answer (overlapping digits, composites): search position by position.
  const Cell wanted = Cell::Live(index);
  for (int64_t p = 0; p < size(); ++p) {
    for (const Cell& cell : maps(p)) {
      if (cell == wanted) return p;
    }
  }
  return std::nullopt;
}

namespace {

std::string Print(const Mapping& m, bool top_level);

// A left padding, alone or closed by a right one: `# n + E` or `# n + E + # m`.
bool IsPaddedSum(const Mapping& m) {
  return m.kind() == Mapping::Kind::kLeftPad ||
         (m.kind() == Mapping::Kind::kPadding && m.inner().kind() == Mapping::Kind::kLeftPad);
}

// An operand of a postfix operator or of a pair's major side must not contain a bare comma, nor
// a sum (the postfix operator would bind to its last term).
std::string PrintAtom(const Mapping& m) {
  if (m.kind() == Mapping::Kind::kPair || IsPaddedSum(m)) return absl::StrCat("[", Print(m, true), "]");
  return Print(m, false);
}

std::string Print(const Mapping& m, bool top_level) {
  switch (m.kind()) {
    case Mapping::Kind::kSymbol:
      return m.axis().name;
    case Mapping::Kind::kBroadcast:
      return absl::StrCat(m.size());
    case Mapping::Kind::kPair: {
      std::string text = absl::StrCat(PrintAtom(m.major()), ", ", Print(m.minor(), true));
      return top_level ? text : absl::StrCat("[", text, "]");
    }
    case Mapping::Kind::kPadding:
      if (m.inner().kind() == Mapping::Kind::kLeftPad) {
        return absl::StrCat(Print(m.inner(), false), " + ", PadKindOperator(m.pad_kind()), " ",
                            m.size() - m.inner().size());
      }
      return absl::StrCat(PrintAtom(m.inner()), " ", PadKindOperator(m.pad_kind()), " ", m.argument());
    case Mapping::Kind::kLeftPad:
      return absl::StrCat(PadKindOperator(m.pad_kind()), " ", m.argument(), " + ", PrintAtom(m.inner()));
    case Mapping::Kind::kResize:
      return absl::StrCat(PrintAtom(m.inner()), " = ", m.argument());
    case Mapping::Kind::kStride:
      return absl::StrCat(PrintAtom(m.inner()), " / ", m.argument());
    case Mapping::Kind::kModulo:
      return absl::StrCat(PrintAtom(m.inner()), " % ", m.argument());
    case Mapping::Kind::kLinear: {
      std::vector<std::string> terms;
      for (const auto& term : m.linear_terms()) {
        terms.push_back(absl::StrCat(PrintAtom(term.mapping), ": ", term.coefficient));
      }
      return absl::StrCat("$(", absl::StrJoin(terms, ", "), ")");
    }
  }
  return "";
}

}  // namespace

std::string Mapping::ToString() const {
  if (node_ == nullptr) return absl::StrCat("<invalid: ", status_.message(), ">");
  return Print(*this, true);
}

bool Mapping::operator==(const Mapping& other) const {
  if (node_ == other.node_) return status_ == other.status_;
  if (node_ == nullptr || other.node_ == nullptr) return false;
  const Node& a = *node_;
  const Node& b = *other.node_;
  return a.kind == b.kind && a.size == b.size && a.axis == b.axis && a.argument == b.argument &&
         a.pad == b.pad && a.terms == b.terms &&
         (a.kind == Kind::kSymbol || a.kind == Kind::kBroadcast || a.kind == Kind::kLinear ||
          a.first == b.first) &&
         (a.kind != Kind::kPair || a.second == b.second);
}

}  // namespace visa
