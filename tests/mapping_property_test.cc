// Property test of the mapping algebra: random small mappings checked against an independent brute-force model of map(i).
//
// The model below is written straight from the normative `map(i)` table (notes 2.2) and the combine
// rule (notes 2.3: major padding wins, coordinates of one axis add, zero coordinates are dropped).
// Every case is reproducible from its seed: rerun one with
//   VISA_PROPERTY_SEED=<seed> VISA_PROPERTY_CASES=1 build/tests/mapping_property_test
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "dsl/axes.h"
#include "dsl/equivalence.h"
#include "dsl/index.h"
#include "dsl/mapping.h"
#include "dsl/mapping_parser.h"
#include "dsl/normal_form.h"
#include "gtest/gtest.h"

namespace visa {
namespace {

using Rng = std::mt19937;

int64_t Uniform(Rng& rng, int64_t lo, int64_t hi) {  // inclusive
  return std::uniform_int_distribution<int64_t>(lo, hi)(rng);
}
bool Chance(Rng& rng, double p) { return std::bernoulli_distribution(p)(rng); }

std::vector<int64_t> Divisors(int64_t n) {
  std::vector<int64_t> out;
  for (int64_t d = 1; d <= n; ++d) {
    if (n % d == 0) out.push_back(d);
  }
  return out;
}
template <typename T>
const T& Pick(Rng& rng, const std::vector<T>& v) {
  return v[static_cast<size_t>(Uniform(rng, 0, static_cast<int64_t>(v.size()) - 1))];
}

// ---------------------------------------------------------------------------------------------
// The model: cells and mapping trees.

struct MCell {
  Cell::Kind kind = Cell::Kind::kOutOfBounds;
  PadKind pad = PadKind::kTop;             // only meaningful for kPad (kept kTop otherwise)
  std::map<std::string, int64_t> coords;  // only for kLive; no zero entries
  bool operator==(const MCell&) const = default;
  bool operator<(const MCell& o) const { return std::tie(kind, pad, coords) < std::tie(o.kind, o.pad, o.coords); }
};

MCell MOob() { return {}; }
MCell MPad(PadKind k) { return {Cell::Kind::kPad, k, {}}; }
MCell MLive(std::map<std::string, int64_t> coords) {
  for (auto it = coords.begin(); it != coords.end();) it = it->second == 0 ? coords.erase(it) : std::next(it);
  return {Cell::Kind::kLive, PadKind::kTop, std::move(coords)};
}

std::string ShowCell(const MCell& c) {
  switch (c.kind) {
    case Cell::Kind::kOutOfBounds:
      return "out of bounds";
    case Cell::Kind::kPad:
      return c.pad == PadKind::kTop ? "pad" : c.pad == PadKind::kZero ? "pad#{0}" : "pad#{!}";
    case Cell::Kind::kLive: {
      std::string s = "{";
      for (const auto& [axis, v] : c.coords) absl::StrAppend(&s, s.size() > 1 ? ", " : "", axis, "=", v);
      return s + "}";
    }
  }
  return "?";
}

MCell FromLib(const Cell& c) {
  switch (c.kind) {
    case Cell::Kind::kOutOfBounds:
      return MOob();
    case Cell::Kind::kPad:
      return MPad(c.pad);
    case Cell::Kind::kLive: {
      std::map<std::string, int64_t> coords;
      for (const auto& [axis, v] : c.index.coords()) coords[axis] = v;
      return MLive(std::move(coords));
    }
  }
  return MOob();
}

Index ToLibIndex(const std::map<std::string, int64_t>& coords) {
  Index index;
  for (const auto& [axis, v] : coords) index.Add(axis, v);
  return index;
}

// Notes 2.3: major OOB -> OOB; major pad wins; minor OOB -> OOB; minor pad -> pad; else coordinates add.
MCell Combine(const MCell& major, const MCell& minor) {
  if (major.kind != Cell::Kind::kLive) return major;
  if (minor.kind != Cell::Kind::kLive) return minor;
  std::map<std::string, int64_t> sum = major.coords;
  for (const auto& [axis, v] : minor.coords) sum[axis] += v;
  return MLive(std::move(sum));
}

struct Node;
using NodeP = std::shared_ptr<const Node>;
struct Node {
  enum Op { kSym, kBcast, kPair, kPad, kResize, kStride, kMod };
  Op op = kBcast;
  std::string axis;  // kSym
  int64_t n = 1;     // kSym: axis size; kBcast: its size; otherwise the operator's argument
  PadKind kind = PadKind::kTop;
  NodeP a, b;  // a: operand or major; b: minor
  int64_t size = 1;
};

NodeP Sym(const std::string& axis, int64_t size) { return std::make_shared<Node>(Node{Node::kSym, axis, size, PadKind::kTop, nullptr, nullptr, size}); }
NodeP Bcast(int64_t n) { return std::make_shared<Node>(Node{Node::kBcast, "", n, PadKind::kTop, nullptr, nullptr, n}); }
NodeP PairN(NodeP a, NodeP b) {
  const int64_t size = a->size * b->size;
  return std::make_shared<Node>(Node{Node::kPair, "", 0, PadKind::kTop, std::move(a), std::move(b), size});
}
NodeP PadN(NodeP a, int64_t p, PadKind k) { return std::make_shared<Node>(Node{Node::kPad, "", p, k, std::move(a), nullptr, p}); }
NodeP ResizeN(NodeP a, int64_t r) { return std::make_shared<Node>(Node{Node::kResize, "", r, PadKind::kTop, std::move(a), nullptr, r}); }
NodeP StrideN(NodeP a, int64_t s) {
  const int64_t size = a->size / s;
  return std::make_shared<Node>(Node{Node::kStride, "", s, PadKind::kTop, std::move(a), nullptr, size});
}
NodeP ModN(NodeP a, int64_t m) { return std::make_shared<Node>(Node{Node::kMod, "", m, PadKind::kTop, std::move(a), nullptr, m}); }

// The normative table (notes 2.2).
MCell EvalRaw(const Node& n, int64_t i) {
  if (i < 0 || i >= n.size) return MOob();
  switch (n.op) {
    case Node::kSym:
      return MLive({{n.axis, i}});
    case Node::kBcast:
      return MLive({});
    case Node::kStride:
      return EvalRaw(*n.a, i * n.n);
    case Node::kMod:
      return EvalRaw(*n.a, i % n.a->size);
    case Node::kResize:
      return EvalRaw(*n.a, i);
    case Node::kPad:
      return i >= n.a->size ? MPad(n.kind) : EvalRaw(*n.a, i);
    case Node::kPair:
      return Combine(EvalRaw(*n.a, i / n.b->size), EvalRaw(*n.b, i % n.b->size));
  }
  return MOob();
}

void AxisSizes(const Node& n, std::map<std::string, int64_t>& sizes) {
  if (n.op == Node::kSym) sizes[n.axis] = n.n;
  if (n.a) AxisSizes(*n.a, sizes);
  if (n.b) AxisSizes(*n.b, sizes);
}

// Project decision (design.md, mapping semantics): digits of one axis can add up past the axis's
// end; such a position holds no tensor element and reads as (top) padding.
MCell Eval(const Node& n, int64_t i) {
  MCell cell = EvalRaw(n, i);
  if (cell.kind != Cell::Kind::kLive) return cell;
  std::map<std::string, int64_t> sizes;
  AxisSizes(n, sizes);
  for (const auto& [axis, v] : cell.coords) {
    if (v >= sizes[axis]) return MPad(PadKind::kTop);
  }
  return cell;
}

std::vector<MCell> Enumerate(const Node& n) {
  std::vector<MCell> out;
  out.reserve(static_cast<size_t>(n.size));
  for (int64_t i = 0; i < n.size; ++i) out.push_back(Eval(n, i));
  return out;
}

// Fully bracketed mapping text (only pairs need brackets: the postfix operators are left-associative).
std::string Text(const Node& n) {
  auto op = [](PadKind k) { return k == PadKind::kTop ? " # " : k == PadKind::kZero ? " #{0} " : " #{!} "; };
  switch (n.op) {
    case Node::kSym:
      return n.axis;
    case Node::kBcast:
      return absl::StrCat(n.n);
    case Node::kPair:
      return absl::StrCat("[", Text(*n.a), ", ", Text(*n.b), "]");
    case Node::kPad:
      return absl::StrCat(Text(*n.a), op(n.kind), n.n);
    case Node::kResize:
      return absl::StrCat(Text(*n.a), " = ", n.n);
    case Node::kStride:
      return absl::StrCat(Text(*n.a), " / ", n.n);
    case Node::kMod:
      return absl::StrCat(Text(*n.a), " % ", n.n);
  }
  return "?";
}

// Builds the library value with the checked factories.
absl::StatusOr<Mapping> Build(const Node& n, const Axes& axes) {
  switch (n.op) {
    case Node::kSym: {
      const Axis* axis = axes.Find(n.axis);
      if (axis == nullptr) return absl::InternalError("test bug: no axis " + n.axis);
      return Mapping::Symbol(*axis);
    }
    case Node::kBcast:
      return Mapping::Broadcast(n.n);
    default:
      break;
  }
  absl::StatusOr<Mapping> a = Build(*n.a, axes);
  if (!a.ok()) return a.status();
  switch (n.op) {
    case Node::kPair: {
      absl::StatusOr<Mapping> b = Build(*n.b, axes);
      if (!b.ok()) return b.status();
      return Mapping::MakePair(*a, *b);
    }
    case Node::kPad:
      return Mapping::MakePadding(*a, n.n, n.kind);
    case Node::kResize:
      return Mapping::MakeResize(*a, n.n);
    case Node::kStride:
      return Mapping::MakeStride(*a, n.n);
    case Node::kMod:
      return Mapping::MakeModulo(*a, n.n);
    default:
      return absl::InternalError("unreachable");
  }
}

// Reads a library tree back into the model (nullopt for what the model does not cover: linear
// combinations and skew axes), so that library-produced mappings are judged by the model too.
std::optional<NodeP> FromMapping(const Mapping& m) {
  switch (m.kind()) {
    case Mapping::Kind::kSymbol:
      if (m.axis().skew.has_value()) return std::nullopt;
      return Sym(m.axis().name, m.axis().size);
    case Mapping::Kind::kBroadcast:
      return Bcast(m.size());
    case Mapping::Kind::kPair: {
      std::optional<NodeP> a = FromMapping(m.major());
      std::optional<NodeP> b = FromMapping(m.minor());
      if (!a || !b) return std::nullopt;
      return PairN(*a, *b);
    }
    case Mapping::Kind::kPadding: {
      std::optional<NodeP> a = FromMapping(m.inner());
      if (!a) return std::nullopt;
      return PadN(*a, m.argument(), m.pad_kind());
    }
    case Mapping::Kind::kResize: {
      std::optional<NodeP> a = FromMapping(m.inner());
      if (!a) return std::nullopt;
      return ResizeN(*a, m.argument());
    }
    case Mapping::Kind::kStride: {
      std::optional<NodeP> a = FromMapping(m.inner());
      if (!a) return std::nullopt;
      return StrideN(*a, m.argument());
    }
    case Mapping::Kind::kModulo: {
      std::optional<NodeP> a = FromMapping(m.inner());
      if (!a) return std::nullopt;
      return ModN(*a, m.argument());
    }
    case Mapping::Kind::kLinear:
    case Mapping::Kind::kLeftPad:  // not in the model, like linear combinations
      return std::nullopt;
  }
  return std::nullopt;
}

// ---------------------------------------------------------------------------------------------
// Random worlds and mappings.

struct World {
  std::vector<std::pair<std::string, int64_t>> decls;
  std::string text;
  Axes axes;
};

World RandomWorld(Rng& rng) {
  World w;
  const int count = static_cast<int>(Uniform(rng, 2, 4));
  for (int k = 0; k < count; ++k) {
    const std::string name(1, static_cast<char>('A' + k));
    const int64_t size = Uniform(rng, 1, 6);
    w.decls.emplace_back(name, size);
    absl::StrAppend(&w.text, k ? ", " : "", name, " = ", size);
  }
  absl::StatusOr<Axes> axes = Axes::Parse(w.text);
  if (axes.ok()) w.axes = *axes;
  return w;
}

PadKind RandomKind(Rng& rng) {
  static const std::vector<PadKind> kinds = {PadKind::kTop, PadKind::kZero, PadKind::kBottom};
  return Pick(rng, kinds);
}

NodeP RandomLeaf(Rng& rng, const World& w, int64_t max_size) {
  std::vector<std::pair<std::string, int64_t>> fit;
  for (const auto& d : w.decls) {
    if (d.second <= max_size) fit.push_back(d);
  }
  if (!fit.empty() && Chance(rng, 0.8)) {
    const auto& d = Pick(rng, fit);
    return Sym(d.first, d.second);
  }
  return Bcast(Uniform(rng, 1, std::min<int64_t>(4, max_size)));
}

NodeP RandomTree(Rng& rng, const World& w, int depth, int64_t max_size) {
  if (depth <= 0 || Chance(rng, 0.1)) return RandomLeaf(rng, w, max_size);
  switch (Uniform(rng, 0, 10)) {
    case 0:
    case 1:
    case 2:
    case 10: {  // pair
      NodeP a = RandomTree(rng, w, depth - 1, max_size);
      const int64_t room = max_size / a->size;
      if (room < 1) return a;
      NodeP b = RandomTree(rng, w, depth - 1, room);
      return PairN(a, b);
    }
    case 3:
    case 4: {  // padding of kind top / zero / bottom (possibly to its own size)
      NodeP a = RandomTree(rng, w, depth - 1, std::max<int64_t>(1, max_size - 3));
      const int64_t p = a->size + Uniform(rng, 0, std::max<int64_t>(0, std::min<int64_t>(3, max_size - a->size)));
      return PadN(a, p, RandomKind(rng));
    }
    case 5: {  // resize
      NodeP a = RandomTree(rng, w, depth - 1, max_size);
      return ResizeN(a, Chance(rng, 0.5) ? Uniform(rng, 1, a->size) : Uniform(rng, (a->size + 1) / 2, a->size));
    }
    case 6:
    case 7: {  // stride by a divisor
      NodeP a = RandomTree(rng, w, depth - 1, max_size * 2);
      return StrideN(a, Pick(rng, Divisors(a->size)));
    }
    default: {  // modulo by a divisor
      NodeP a = RandomTree(rng, w, depth - 1, max_size * 2);
      const int64_t m = Pick(rng, Divisors(a->size));
      return m <= max_size ? ModN(a, m) : a;
    }
  }
}

// One meaning-preserving rewrite by the laws of "Equivalent Mapping" and table 2.2, applied at `x`.
NodeP RewriteHere(Rng& rng, const NodeP& x, const World& w) {
  auto small = [&]() { return RandomTree(rng, w, 2, 6); };
  switch (Uniform(rng, 0, 15)) {
    case 0:  // stride-modulo decomposition: by the table it holds only where n falls on a digit
    case 1: {  // boundary of X, so the model picks such an n (n = 1 and n = |X| always qualify)
      std::vector<int64_t> ds = Divisors(x->size);
      std::shuffle(ds.begin(), ds.end(), rng);
      for (int64_t d : ds) {
        NodeP split = PairN(StrideN(x, d), ModN(x, d));
        if (x->size <= 2048 && Enumerate(*split) == Enumerate(*x)) return split;
      }
      return PairN(StrideN(x, 1), ModN(x, 1));
    }
    case 2:  // identity of pairs
      return Chance(rng, 0.5) ? PairN(Bcast(1), x) : PairN(x, Bcast(1));
    case 3: {  // idempotent operations
      switch (Uniform(rng, 0, 3)) {
        case 0:
          return PadN(x, x->size, RandomKind(rng));
        case 1:
          return ResizeN(x, x->size);
        case 2:
          return StrideN(x, 1);
        default:
          return ModN(x, x->size);
      }
    }
    case 4: {  // pair projection, major side
      NodeP y = small();
      return StrideN(PairN(x, y), y->size);
    }
    case 5: {  // pair projection, minor side
      NodeP y = small();
      return ModN(PairN(y, x), x->size);
    }
    case 6:  // associativity
    case 7:
      if (x->op == Node::kPair && x->a->op == Node::kPair) return PairN(x->a->a, PairN(x->a->b, x->b));
      if (x->op == Node::kPair && x->b->op == Node::kPair) return PairN(PairN(x->a, x->b->a), x->b->b);
      return PairN(x, Bcast(1));
    case 8:  // broadcasts: n*m is [n, m]; 1 is `Y % 1`
      if (x->op == Node::kBcast) {
        if (x->n == 1) return ModN(small(), 1);
        const int64_t d = Pick(rng, Divisors(x->n));
        return PairN(Bcast(d), Bcast(x->n / d));
      }
      return PadN(x, x->size, RandomKind(rng));
    case 9:  // nested stride: X / (p*q) is X / p / q
      if (x->op == Node::kStride) {
        const int64_t p = Pick(rng, Divisors(x->n));
        return StrideN(StrideN(x->a, p), x->n / p);
      }
      return StrideN(x, 1);
    case 10:  // nested modulo: X % m is X % b % m when m | b | |X|
      if (x->op == Node::kMod) {
        std::vector<int64_t> bs;
        for (int64_t b : Divisors(x->a->size)) {
          if (b % x->n == 0) bs.push_back(b);
        }
        return ModN(ModN(x->a, Pick(rng, bs)), x->n);
      }
      return ModN(x, x->size);
    case 11:  // padding splits in two of the same kind, or is a resize of a longer one
      if (x->op == Node::kPad && x->a->size < x->n) {
        if (Chance(rng, 0.5)) return PadN(PadN(x->a, Uniform(rng, x->a->size, x->n), x->kind), x->n, x->kind);
        return ResizeN(PadN(x->a, x->n + Uniform(rng, 0, 3), x->kind), x->n);
      }
      return ResizeN(x, x->size);
    case 12:  // (X / s) % b is (X % (s*b)) / s, and back
      if (x->op == Node::kMod && x->a->op == Node::kStride) {
        const NodeP& st = x->a;
        return StrideN(ModN(st->a, st->n * x->n), st->n);
      }
      if (x->op == Node::kStride && x->a->op == Node::kMod && x->a->n % x->n == 0) {
        const NodeP& md = x->a;
        return ModN(StrideN(md->a, x->n), md->n / x->n);
      }
      return StrideN(x, 1);
    case 13:  // an axis of size 1 is the identity, and the identity may be any size-1 axis
      if (x->op == Node::kSym && x->size == 1) return Bcast(1);
      if (x->op == Node::kBcast && x->n == 1) {
        for (const auto& d : w.decls) {
          if (d.second == 1) return Sym(d.first, 1);
        }
      }
      return PairN(Bcast(1), x);
    case 14:  // resize of a resize
      if (x->op == Node::kResize) return ResizeN(ResizeN(x->a, Uniform(rng, x->n, x->a->size)), x->n);
      return ResizeN(x, x->size);
    default:  // pad then resize back
      return ResizeN(PadN(x, x->size + Uniform(rng, 0, 2), RandomKind(rng)), x->size);
  }
}

// `x` with new children (of the same sizes), rebuilt through the constructors so sizes stay right.
NodeP WithChildren(const NodeP& x, NodeP a, NodeP b) {
  switch (x->op) {
    case Node::kPair:
      return PairN(std::move(a), std::move(b));
    case Node::kPad:
      return PadN(std::move(a), x->n, x->kind);
    case Node::kResize:
      return ResizeN(std::move(a), x->n);
    case Node::kStride:
      return StrideN(std::move(a), x->n);
    case Node::kMod:
      return ModN(std::move(a), x->n);
    default:
      return x;
  }
}

NodeP Rewrite(Rng& rng, const NodeP& x, const World& w) {
  const bool leaf = x->a == nullptr;
  if (leaf || Chance(rng, 0.35)) return RewriteHere(rng, x, w);
  if (x->op == Node::kPair && Chance(rng, 0.5)) return WithChildren(x, x->a, Rewrite(rng, x->b, w));
  return WithChildren(x, Rewrite(rng, x->a, w), x->b);
}

// A small size-preserving change that usually (not always) changes the meaning; the model decides.
NodeP Mutate(Rng& rng, const NodeP& x, const World& w) {
  const bool leaf = x->a == nullptr;
  if (leaf || Chance(rng, 0.3)) {
    switch (x->op) {
      case Node::kPad: {
        auto copy = std::make_shared<Node>(*x);
        copy->kind = copy->kind == PadKind::kTop ? PadKind::kZero : copy->kind == PadKind::kZero ? PadKind::kBottom : PadKind::kTop;
        return copy;
      }
      case Node::kPair:
        return PairN(x->b, x->a);
      case Node::kSym:
        for (const auto& d : w.decls) {
          if (d.second == x->size && d.first != x->axis && Chance(rng, 0.7)) return Sym(d.first, d.second);
        }
        return Bcast(x->size);
      case Node::kBcast:
        return x->n > 1 ? PadN(Bcast(1), x->n, RandomKind(rng)) : x;
      case Node::kResize:  // the last kept cell becomes padding
        return x->n > 1 ? PadN(ResizeN(x->a, x->n - 1), x->n, RandomKind(rng)) : Bcast(1);
      default:
        return WithChildren(x, Mutate(rng, x->a, w), x->b);
    }
  }
  if (x->op == Node::kPair && Chance(rng, 0.5)) return WithChildren(x, x->a, Mutate(rng, x->b, w));
  return WithChildren(x, Mutate(rng, x->a, w), x->b);
}

// ---------------------------------------------------------------------------------------------
// Harness

int64_t BaseSeed() {
  const char* env = std::getenv("VISA_PROPERTY_SEED");
  return env != nullptr ? std::atoll(env) : 20250101;
}
int64_t Cases(int64_t fallback) {
  const char* env = std::getenv("VISA_PROPERTY_CASES");
  return env != nullptr ? std::atoll(env) : fallback;
}

struct Failures {
  int count = 0;
  void Add(int64_t seed, const World& w, const std::string& what) {
    ++count;
    if (count <= 12) {
      ADD_FAILURE() << "seed " << seed << " (rerun: VISA_PROPERTY_SEED=" << seed
                    << " VISA_PROPERTY_CASES=1), axes \"" << w.text << "\":\n  " << what;
    }
  }
  ~Failures() {
    if (count > 12) ADD_FAILURE() << count << " failing cases in all (first 12 shown)";
  }
};

std::string ShowLib(const Mapping& m) { return m.ok() ? m.ToString() : "<invalid: " + m.status().ToString() + ">"; }

// Everything about one mapping; returns "" when it all holds, else the first problem of each kind.
std::string CheckOne(Rng& rng, const World& w, const NodeP& node) {
  const std::string text = Text(*node);
  const std::string head = absl::StrCat("mapping \"", text, "\"");
  absl::StatusOr<Mapping> built = Build(*node, w.axes);
  if (!built.ok()) return absl::StrCat(head, ": a valid construction was rejected: ", built.status().ToString());
  const Mapping& m = *built;
  absl::StatusOr<Mapping> parsed = ParseMapping(text, w.axes);
  if (!parsed.ok()) return absl::StrCat(head, ": ParseMapping failed: ", parsed.status().ToString());
  if (!(*parsed == m)) return absl::StrCat(head, ": parsed text ", ShowLib(*parsed), " != factory value ", ShowLib(m));
  if (m.size() != node->size) return absl::StrCat(head, ": size ", m.size(), ", model says ", node->size);

  std::vector<std::string> problems;  // at most one per kind
  std::set<std::string> kinds;
  auto report = [&](const std::string& kind, const std::string& what) {
    if (kinds.insert(kind).second) problems.push_back(absl::StrCat(head, ": ", what));
  };

  const std::vector<MCell> model = Enumerate(*node);
  const NormalForm nf = NormalForm::Of(m);
  const std::string nf_text = nf.ToString();
  if (nf.size() != m.size()) report("nf size", absl::StrCat("normal form size ", nf.size(), " != ", m.size()));
  if (!(m.normal_form() == nf)) report("nf cache", "normal_form() != NormalForm::Of()");
  for (int64_t p = 0; p <= m.size(); ++p) {
    const MCell want = p < m.size() ? model[static_cast<size_t>(p)] : MOob();
    const MCell got = FromLib(m.map(p));
    if (!(got == want)) report("map", absl::StrCat("map(", p, ") = ", ShowCell(got), ", model says ", ShowCell(want)));
    const MCell got_nf = FromLib(nf.map(p));
    if (!(got_nf == want)) {
      report("nf map", absl::StrCat("NormalForm \"", nf_text, "\" .map(", p, ") = ", ShowCell(got_nf),
                                    ", model says ", ShowCell(want)));
    }
    if (p < m.size()) {
      const std::vector<Cell> all = m.maps(p);
      if (all.size() != 1 || !(FromLib(all[0]) == want)) {
        report("maps", absl::StrCat("maps(", p, ") has ", all.size(), " cells, expected just ", ShowCell(want)));
      }
    }
  }
  if (!m.is_one_to_one()) report("one to one", "is_one_to_one() is false without a linear combination");

  // Inverse: the smallest live position holding each index (by scan).
  std::map<std::map<std::string, int64_t>, int64_t> first;
  std::vector<int64_t> live;
  for (int64_t p = 0; p < m.size(); ++p) {
    const MCell& c = model[static_cast<size_t>(p)];
    if (c.kind != Cell::Kind::kLive) continue;
    first.emplace(c.coords, p);
    live.push_back(p);
  }
  std::shuffle(live.begin(), live.end(), rng);
  if (live.size() > 48) live.resize(48);
  for (int64_t p : live) {
    const auto& coords = model[static_cast<size_t>(p)].coords;
    const Index index = ToLibIndex(coords);
    const int64_t want = first.at(coords);
    const std::optional<int64_t> got = m.inverse(index);
    if (got != std::optional<int64_t>(want)) {
      report("inverse", absl::StrCat("inverse(", index.ToString(), ") = ", got ? absl::StrCat(*got) : "nullopt",
                                     ", smallest position holding it is ", want));
    }
    absl::StatusOr<std::optional<int64_t>> nf_got = nf.inverse(index);
    if (nf_got.ok() && *nf_got != std::optional<int64_t>(want)) {
      report("nf inverse", absl::StrCat("NormalForm \"", nf_text, "\" .inverse(", index.ToString(), ") = ",
                                        nf_got->has_value() ? absl::StrCat(**nf_got) : "nullopt", ", expected ", want));
    }
  }
  // Indices that no position holds.
  for (int k = 0; k < 12; ++k) {
    std::map<std::string, int64_t> coords;
    for (const auto& d : w.decls) {
      if (Chance(rng, 0.6)) coords[d.first] = Uniform(rng, 0, 2 * d.second + 1);
    }
    if (k == 0) coords["Q"] = 1;  // an axis no mapping names
    const MCell cell = MLive(coords);
    if (first.count(cell.coords)) continue;
    const Index index = ToLibIndex(cell.coords);
    const std::optional<int64_t> got = m.inverse(index);
    if (got.has_value()) {
      report("inverse", absl::StrCat("inverse(", index.ToString(), ") = ", *got, " but no position holds it"));
    }
    absl::StatusOr<std::optional<int64_t>> nf_got = nf.inverse(index);
    if (nf_got.ok() && nf_got->has_value()) {
      report("nf inverse", absl::StrCat("NormalForm \"", nf_text, "\" .inverse(", index.ToString(), ") = ", **nf_got,
                                        " but no position holds it"));
    }
  }

  // Printer round trip.
  const std::string printed = m.ToString();
  absl::StatusOr<Mapping> reparsed = ParseMapping(printed, w.axes);
  if (!reparsed.ok()) {
    report("print", absl::StrCat("ToString \"", printed, "\" does not parse: ", reparsed.status().ToString()));
  } else if (!(*reparsed == m)) {
    report("print", absl::StrCat("ToString \"", printed, "\" parses to a different value ", ShowLib(*reparsed)));
  }

  // The normal form as a mapping, and as text, judged by the model.
  std::vector<std::pair<std::string, absl::StatusOr<Mapping>>> forms;
  forms.emplace_back("NormalForm::ToMapping()", nf.ToMapping());
  forms.emplace_back(absl::StrCat("ParseMapping(NormalForm::ToString() = \"", nf_text, "\")"), ParseMapping(nf_text, w.axes));
  for (const auto& [what, form] : forms) {
    const std::string kind = what.substr(0, 24);
    if (!form.ok()) {
      report(kind, absl::StrCat(what, " failed: ", form.status().ToString()));
      continue;
    }
    if (!form->ok()) {
      report(kind, absl::StrCat(what, " is invalid: ", form->status().ToString()));
      continue;
    }
    std::optional<NodeP> back = FromMapping(*form);
    if (!back) {
      absl::StatusOr<bool> eq = Equivalent(*form, m);
      if (!eq.ok() || !*eq) report(kind, absl::StrCat(what, " = ", ShowLib(*form), " is not equivalent"));
      continue;
    }
    if ((*back)->size != m.size()) {
      report(kind, absl::StrCat(what, " = ", ShowLib(*form), " has size ", (*back)->size));
      continue;
    }
    const std::vector<MCell> again = Enumerate(**back);
    for (size_t p = 0; p < again.size(); ++p) {
      if (!(again[p] == model[p])) {
        report(kind, absl::StrCat(what, " = ", ShowLib(*form), " holds ", ShowCell(again[p]), " at ", p,
                                  ", the original holds ", ShowCell(model[p])));
        break;
      }
    }
  }
  std::string out;
  for (const std::string& p : problems) absl::StrAppend(&out, out.empty() ? "" : "\n  ", p);
  return out;
}

// Compares the library's verdicts on (a, b) with the model's enumeration.
std::string CheckPair(const World& w, const NodeP& a, const NodeP& b, bool* model_equal) {
  const std::string head = absl::StrCat("a = \"", Text(*a), "\", b = \"", Text(*b), "\"");
  absl::StatusOr<Mapping> ma = Build(*a, w.axes);
  absl::StatusOr<Mapping> mb = Build(*b, w.axes);
  if (!ma.ok() || !mb.ok()) {
    return absl::StrCat(head, ": a valid construction was rejected: ", (ma.ok() ? mb : ma).status().ToString());
  }
  // The model: same size and the same cell everywhere.
  std::optional<int64_t> first_diff;
  const bool same_size = a->size == b->size;
  if (same_size) {
    for (int64_t p = 0; p < a->size && !first_diff; ++p) {
      if (!(Eval(*a, p) == Eval(*b, p))) first_diff = p;
    }
  }
  const bool want = same_size && !first_diff;
  *model_equal = want;
  const std::string detail = absl::StrCat(" (library: a = ", ShowLib(*ma), ", b = ", ShowLib(*mb), ")");

  absl::StatusOr<bool> eq = Equivalent(*ma, *mb);
  if (!eq.ok()) return absl::StrCat(head, ": Equivalent failed: ", eq.status().ToString(), detail);
  if (*eq != want) {
    return absl::StrCat(head, ": Equivalent = ", *eq, ", enumeration says ", want,
                        first_diff ? absl::StrCat(" (first difference at ", *first_diff, ": ", ShowCell(Eval(*a, *first_diff)),
                                                  " vs ", ShowCell(Eval(*b, *first_diff)), ")")
                                   : "",
                        detail);
  }
  absl::StatusOr<bool> back = Equivalent(*mb, *ma);
  if (!back.ok() || *back != want) return absl::StrCat(head, ": Equivalent is not symmetric", detail);

  absl::StatusOr<std::optional<Difference>> diff = FirstDifference(*ma, *mb);
  if (!diff.ok()) return absl::StrCat(head, ": FirstDifference failed: ", diff.status().ToString(), detail);
  if (diff->has_value() == want) return absl::StrCat(head, ": FirstDifference disagrees with the enumeration", detail);
  if (diff->has_value()) {
    const Difference& d = **diff;
    if (d.sizes_differ != !same_size) return absl::StrCat(head, ": FirstDifference.sizes_differ is wrong", detail);
    if (same_size && d.position != *first_diff) {
      return absl::StrCat(head, ": FirstDifference at ", d.position, ", enumeration says ", *first_diff, detail);
    }
  }

  // Canonical forms are equal exactly when the mappings are equivalent.
  const NormalForm& na = ma->normal_form();
  const NormalForm& nb = mb->normal_form();
  if (na.is_canonical() && nb.is_canonical() && (na == nb) != want) {
    return absl::StrCat(head, ": canonical forms \"", na.ToString(), "\" and \"", nb.ToString(), "\" are ",
                        na == nb ? "equal" : "different", " but the enumeration says ", want ? "equivalent" : "not",
                        detail);
  }
  return "";
}

// ---------------------------------------------------------------------------------------------

TEST(MappingProperty, MapNormalFormInverseAndPrinterAgreeWithModel) {
  const int64_t base = BaseSeed();
  const int64_t cases = Cases(20000);
  Failures failures;
  int64_t positions = 0, large = 0;
  std::map<int, int> by_op;
  for (int64_t c = 0; c < cases; ++c) {
    const int64_t seed = base + c;
    Rng rng(static_cast<uint32_t>(seed));
    World w = RandomWorld(rng);
    if (w.axes.all().size() != w.decls.size()) {
      failures.Add(seed, w, "Axes::Parse rejected valid declarations");
      continue;
    }
    const int64_t max_size = Pick(rng, std::vector<int64_t>{16, 64, 256, 720});
    NodeP node = RandomTree(rng, w, static_cast<int>(Uniform(rng, 1, 4)), max_size);
    ++by_op[node->op];
    positions += node->size;
    large += node->size >= 64;
    const std::string problem = CheckOne(rng, w, node);
    if (!problem.empty()) failures.Add(seed, w, problem);
  }
  std::printf("[ STATS    ] %lld mappings (%lld of 64 positions or more), %lld positions checked\n",
              static_cast<long long>(cases), static_cast<long long>(large), static_cast<long long>(positions));
  if (cases >= 1000) {  // sanity of the generator itself
    EXPECT_GT(positions, cases * 4) << "the generator produced only tiny mappings";
    EXPECT_GE(by_op.size(), 6u) << "the generator does not reach every constructor at the root";
  }
}

TEST(MappingProperty, EquivalentAgreesWithEnumerationOnRandomPairs) {
  const int64_t base = BaseSeed() + 1000000;
  const int64_t cases = Cases(2000);
  Failures failures;
  int64_t equal = 0, same_size = 0, total = 0;
  for (int64_t c = 0; c < cases; ++c) {
    const int64_t seed = base + c;
    Rng rng(static_cast<uint32_t>(seed));
    World w = RandomWorld(rng);
    std::vector<NodeP> pool;
    for (int k = 0; k < 10; ++k) pool.push_back(RandomTree(rng, w, static_cast<int>(Uniform(rng, 0, 3)), 24));
    for (size_t i = 0; i < pool.size(); ++i) {
      for (size_t j = i; j < pool.size(); ++j) {
        bool eq = false;
        const std::string problem = CheckPair(w, pool[i], pool[j], &eq);
        if (!problem.empty()) failures.Add(seed, w, problem);
        ++total;
        same_size += pool[i]->size == pool[j]->size;
        equal += eq && i != j;
      }
    }
  }
  std::printf("[ STATS    ] %lld pairs, %lld of equal size, %lld distinct pairs equivalent\n",
              static_cast<long long>(total), static_cast<long long>(same_size), static_cast<long long>(equal));
  if (cases >= 100) {
    EXPECT_GT(same_size, total / 10) << "too few same-size pairs to be interesting";
    EXPECT_GT(equal, cases / 4) << "too few distinct random pairs were equivalent";
  }
}

TEST(MappingProperty, EquivalentAgreesWithEnumerationOnRewrittenPairs) {
  const int64_t base = BaseSeed() + 2000000;
  const int64_t cases = Cases(10000);
  Failures failures;
  int64_t equal = 0, mutated_equal = 0, mutated = 0;
  for (int64_t c = 0; c < cases; ++c) {
    const int64_t seed = base + c;
    Rng rng(static_cast<uint32_t>(seed));
    World w = RandomWorld(rng);
    NodeP x = RandomTree(rng, w, static_cast<int>(Uniform(rng, 1, 4)), Pick(rng, std::vector<int64_t>{16, 64, 256}));
    NodeP y = x;
    const int rewrites = static_cast<int>(Uniform(rng, 1, 4));
    for (int k = 0; k < rewrites; ++k) y = Rewrite(rng, y, w);
    // Self-check of the rewrite rules by the model itself.
    if (x->size != y->size || Enumerate(*x) != Enumerate(*y)) {
      failures.Add(seed, w, absl::StrCat("test bug: rewrite of \"", Text(*x), "\" to \"", Text(*y), "\" changed the meaning"));
      continue;
    }
    bool eq = false;
    std::string problem = CheckPair(w, x, y, &eq);
    if (!problem.empty()) failures.Add(seed, w, problem);
    equal += eq;
    // The rewritten mapping is a mapping like any other.
    problem = CheckOne(rng, w, y);
    if (!problem.empty()) failures.Add(seed, w, problem);
    // A near miss, judged by the model.
    NodeP z = Mutate(rng, y, w);
    problem = CheckPair(w, y, z, &eq);
    if (!problem.empty()) failures.Add(seed, w, problem);
    ++mutated;
    mutated_equal += eq;
  }
  std::printf("[ STATS    ] %lld rewritten pairs (%lld equivalent), %lld near misses (%lld equivalent)\n",
              static_cast<long long>(cases), static_cast<long long>(equal), static_cast<long long>(mutated),
              static_cast<long long>(mutated_equal));
  EXPECT_EQ(equal, cases) << "every rewritten pair should be equivalent";
  if (cases >= 100) {
    EXPECT_LT(mutated_equal, mutated) << "mutations never changed a meaning";
  }
}

TEST(MappingProperty, ModelSelfCheck) {
  // The model reproduces the manual's own examples, so the comparisons above rest on solid ground.
  NodeP pair = PairN(Sym("A", 8), Sym("B", 512));
  EXPECT_TRUE(Eval(*pair, 519) == MLive({{"A", 1}, {"B", 7}}));
  NodeP padded = PairN(Sym("C", 13), PadN(Sym("D", 61), 64, PadKind::kTop));
  EXPECT_TRUE(Eval(*padded, 61) == MPad(PadKind::kTop));
  EXPECT_TRUE(Eval(*padded, 64) == MLive({{"C", 1}}));
  NodeP b = Sym("B", 512);
  NodeP nested = PairN(StrideN(b, 64), PairN(ModN(b, 32), ModN(StrideN(b, 32), 2)));
  EXPECT_TRUE(Eval(*nested, 67) == MLive({{"B", 97}}));
  NodeP major_pad = PairN(PadN(Sym("A", 3), 4, PadKind::kTop), PadN(Sym("B", 3), 4, PadKind::kBottom));
  EXPECT_TRUE(Eval(*major_pad, 12) == MPad(PadKind::kTop));
  EXPECT_TRUE(Eval(*major_pad, 3) == MPad(PadKind::kBottom));
  NodeP ragged = StrideN(PadN(PairN(Sym("A", 2), Sym("B", 3)), 10, PadKind::kTop), 2);
  EXPECT_TRUE(Eval(*ragged, 2) == MLive({{"A", 1}, {"B", 1}}));
  EXPECT_TRUE(Eval(*ragged, 3) == MPad(PadKind::kTop));
  EXPECT_EQ(Text(*ragged), "[A, B] # 10 / 2");
}

}  // namespace
}  // namespace visa
