// Index-driven relayout of host tensor images (the interpreter's data movement).
//
// MoveByIndexReference is the definition: one `map`, one `inverse` per destination position.
// MoveByIndex compiles that same computation into integer form once per move:
//  - Destination cells. Mapping::map evaluates a pair by combining its parts' raw cells (a non-live
//    part makes the position padding, otherwise the coordinates add), then applies the range rule
//    (a coordinate at or past its axis's size makes padding; Finalize in dsl/mapping.cc). The
//    destination is cut into its pair parts, each part's raw cells are tabulated once with map_raw
//    (or, for a symbol under strides / modulos / resizes / paddings, computed in closed form), and
//    a position's cell becomes a sum of table entries and one compare per axis.
//  - Source positions. For a canonical normal form whose digits of each axis do not overlap,
//    NormalForm::inverse is a sum over the index's axes of a per-axis greedy digit decomposition;
//    that decomposition is tabulated per axis, so `inverse` becomes a few table lookups.
//  - The drop check walks the source through its own inverse the same way.
// Structures outside this model (one-to-many mappings such as linear combinations, skew axes, a
// source normal form with composites or overlapping digits, a large part that is neither closed
// form nor tabulable, one axis name with two sizes)
// run the reference for the whole move. Errors are reported at the position the reference stops
// at, with the reference's message, after re-deriving that one position the reference's way.
#include "interp/index_move.h"

#include <algorithm>
#include <atomic>
#include <map>
#include <optional>
#include <thread>
#include <utility>

#include "absl/strings/str_cat.h"
#include "dsl/dtype.h"
#include "dsl/normal_form.h"
#include "dsl/status_macros.h"
#include "runtime/packed_storage.h"

namespace visa::interp {

Index Restrict(const Index& index, const std::vector<std::string>& names) {
  Index out;
  for (const auto& [axis, value] : index.coords()) {
    if (std::binary_search(names.begin(), names.end(), axis)) out.Set(axis, value);
  }
  return out;
}

namespace {

// The reference's two data errors; the compiled path reports its first error with the same text.
absl::Status NotHeldError(const Mapping& dst, int64_t p, const Cell& cell, const Mapping& src) {
  return absl::InvalidArgumentError(absl::StrCat(
      "move: position ", p, " of `", dst.ToString(), "` holds ", cell.index.ToString(),
      ", which the source `", src.ToString(), "` does not hold"));
}

absl::Status DropError(const Mapping& src, int64_t q, const Cell& cell, const Mapping& dst) {
  return absl::InvalidArgumentError(absl::StrCat(
      "move: the source `", src.ToString(), "` holds ", cell.index.ToString(), " (position ", q,
      "), which `", dst.ToString(), "` does not hold; the move would drop data"));
}

}  // namespace

absl::StatusOr<HostTensor> MoveByIndexReference(const HostTensor& src, const Mapping& dst,
                                                MovePolicy policy) {
  RETURN_IF_ERROR(dst.status());
  ASSIGN_OR_RETURN(HostTensor out, HostTensor::Zeros(src.dtype(), dst));
  const std::vector<std::string> src_axes = src.mapping().axis_names();
  std::vector<bool> read(policy.allow_drop ? 0 : src.size(), false);
  for (int64_t p = 0; p < dst.size(); ++p) {
    Cell cell = dst.map(p);
    if (!cell.live()) {
      if (policy.pad_bits != 0) RETURN_IF_ERROR(out.SetBits(p, policy.pad_bits));
      continue;
    }
    std::optional<Index> wanted = ProjectOntoSource(Restrict(cell.index, src_axes), src.mapping());
    std::optional<int64_t> q = wanted ? src.mapping().inverse(*wanted) : std::nullopt;
    if (!q) return NotHeldError(dst, p, cell, src.mapping());
    ASSIGN_OR_RETURN(uint32_t bits, src.GetBits(*q));
    RETURN_IF_ERROR(out.SetBits(p, bits));
    if (!read.empty()) read[*q] = true;
  }
  for (int64_t q = 0; q < static_cast<int64_t>(read.size()); ++q) {
    if (read[q]) continue;
    Cell cell = src.mapping().map(q);
    // Broadcast digits repeat an index; only the first position holding it is ever read.
    if (cell.live() && !read[*src.mapping().inverse(cell.index)]) {
      return DropError(src.mapping(), q, cell, dst);
    }
  }
  return out;
}

namespace {

// ---------------------------------------------------------------------------------------------
// Compiling a move.

// Parts above max_tabulated are not tabulated with map_raw (about a microsecond per position).
// Minor parts are merged into one row table of at most max_row positions: the per-row work (the
// outer parts' cells) is then amortized over the whole row. Coordinates at or above
// max_inverse_table are decomposed per element instead of looked up.
MoveLimits g_limits;

// One pair part of the walked mapping: Mapping::map_raw at each of its positions.
struct Part {
  int64_t size = 1;
  // Closed form: live below `live_limit`, holding coordinate i * scale on `axis` (-1: no axis).
  bool closed = false;
  int axis = -1;
  int64_t scale = 0;
  int64_t live_limit = 0;
  // Table form: live[i], and coords[i * axes + a] for every axis of the walk.
  std::vector<uint8_t> live;
  std::vector<int64_t> coords;

  bool Live(int64_t i) const { return closed ? i < live_limit : live[i] != 0; }
  // Adds the coordinates position `i` holds to `v` (one entry per axis of the walk).
  void AddCoords(int64_t i, int axes, int64_t* v) const {
    if (closed) {
      if (axis >= 0) v[axis] += i * scale;
      return;
    }
    const int64_t* c = coords.data() + i * axes;
    for (int a = 0; a < axes; ++a) v[a] += c[a];
  }
};

using AxisIds = std::map<std::string, int, std::less<>>;

int64_t CeilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

// Mapping::map_raw of a chain of strides, modulos, resizes and paddings over a symbol or a
// broadcast, in closed form: position i reaches the leaf at i * (product of the strides above),
// and a padding whose operand has n positions makes i padding once that reaches n.
std::optional<Part> ClosedForm(const Mapping& m, const AxisIds& ids) {
  Part part;
  part.closed = true;
  part.size = m.size();
  part.live_limit = m.size();
  int64_t scale = 1;
  for (const Mapping* node = &m;; node = &node->inner()) {
    switch (node->kind()) {
      case Mapping::Kind::kSymbol: {
        auto it = ids.find(node->axis().name);
        if (it == ids.end()) return std::nullopt;
        part.axis = it->second;
        part.scale = scale;
        return part;
      }
      case Mapping::Kind::kBroadcast:
        return part;
      case Mapping::Kind::kStride:
        scale *= node->argument();
        break;
      case Mapping::Kind::kModulo:
      case Mapping::Kind::kResize:
        break;
      case Mapping::Kind::kPadding:
        part.live_limit = std::min(part.live_limit, CeilDiv(node->inner().size(), scale));
        break;
      default:
        return std::nullopt;
    }
  }
}

// Any part of a one-to-one mapping, position by position through map_raw, when it is small enough.
std::optional<Part> Tabulate(const Mapping& m, const AxisIds& ids) {
  if (m.size() > g_limits.max_tabulated) return std::nullopt;
  const int axes = static_cast<int>(ids.size());
  Part part;
  part.size = m.size();
  part.live.assign(static_cast<size_t>(part.size), 0);
  part.coords.assign(static_cast<size_t>(part.size * axes), 0);
  for (int64_t i = 0; i < part.size; ++i) {
    const Cell cell = m.map_raw(i);
    if (!cell.live()) continue;
    part.live[i] = 1;
    for (const auto& [name, value] : cell.index.coords()) {
      auto it = ids.find(name);
      if (it == ids.end()) return std::nullopt;
      part.coords[static_cast<size_t>(i * axes + it->second)] = value;
    }
  }
  return part;
}

// A table part, also from a closed one.
Part AsTable(const Part& part, int axes) {
  if (!part.closed) return part;
  Part table;
  table.size = part.size;
  table.live.assign(static_cast<size_t>(part.size), 0);
  table.coords.assign(static_cast<size_t>(part.size * axes), 0);
  for (int64_t i = 0; i < part.size; ++i) {
    table.live[i] = part.Live(i) ? 1 : 0;
    part.AddCoords(i, axes, table.coords.data() + i * axes);
  }
  return table;
}

// The pair of two parts as one part: live where both are, coordinates added.
Part MergeParts(const Part& major, const Part& minor, int axes) {
  const Part a = AsTable(major, axes);
  const Part b = AsTable(minor, axes);
  Part out;
  out.size = a.size * b.size;
  out.live.assign(static_cast<size_t>(out.size), 0);
  out.coords.assign(static_cast<size_t>(out.size * axes), 0);
  for (int64_t i = 0; i < a.size; ++i) {
    for (int64_t j = 0; j < b.size; ++j) {
      const int64_t k = i * b.size + j;
      out.live[k] = a.live[i] & b.live[j];
      for (int x = 0; x < axes; ++x) {
        out.coords[k * axes + x] = a.coords[i * axes + x] + b.coords[j * axes + x];
      }
    }
  }
  return out;
}

// Pair(a, Pair(b, c)) and Pair(Pair(a, b), c) both read as the parts a, b, c, major first: the
// position splits mixed-radix and combining cells is associative.
void FlattenPairs(const Mapping& m, std::vector<const Mapping*>& out) {
  if (m.kind() == Mapping::Kind::kPair) {
    FlattenPairs(m.major(), out);
    FlattenPairs(m.minor(), out);
    return;
  }
  out.push_back(&m);
}

// The source's inverse restricted to one axis, after projecting the coordinate onto the axis's
// digits (ProjectOntoSource: each digit keeps its live values, digits the source lacks
// broadcast): the position offset of coordinate v, or -1 past the axis. Exact when the digits of
// the axis do not overlap.
struct AxisInverse {
  struct Digit {
    int64_t coef, live, inner, count, modulus;
  };
  int64_t limit = 0;           // Mapping::inverse's and NormalForm::inverse's range checks
  std::vector<Digit> digits;   // largest coefficient first, as the greedy decomposition runs
  std::vector<int64_t> table;  // Decompose(v) for small v

  int64_t Decompose(int64_t v) const {
    if (v == 0) return 0;  // an Index drops zero coordinates, so they are never checked
    if (v >= limit) return -1;
    int64_t position = 0;
    for (const Digit& d : digits) {
      const int64_t x = v / d.coef % d.modulus;
      if (x >= d.live) return -1;
      position += x * d.inner;
    }
    return position;
  }
  int64_t Of(int64_t v) const {
    return v < static_cast<int64_t>(table.size()) ? table[static_cast<size_t>(v)] : Decompose(v);
  }
};

// The declared size of the first symbol named `name` (Mapping::inverse's range check).
int64_t DeclaredSize(const Mapping& m, const std::string& name) {
  for (const Axis& axis : m.symbols()) {
    if (axis.name == name) return axis.size;
  }
  return kMaxMappingSize;
}

// The source's inverse per named axis, or nullopt when NormalForm::inverse would not answer it
// with digits alone (composite factors, overlapping digits of one axis).
std::optional<std::map<std::string, AxisInverse>> SourceInverse(const Mapping& src) {
  const NormalForm& form = src.normal_form();
  if (!form.is_canonical()) return std::nullopt;
  std::map<std::string, AxisInverse> out;
  for (const std::string& name : src.axis_names()) out[name].limit = DeclaredSize(src, name);
  std::map<std::string, bool> noted;  // NormalForm notes the first digit's axis size per name
  int64_t inner = 1;
  for (const Factor& f : form.factors()) {
    if (f.kind == Factor::Kind::kDigit && !f.axis.empty()) {
      auto it = out.find(f.axis);
      if (it == out.end()) return std::nullopt;
      if (!noted[f.axis]) it->second.limit = std::min(it->second.limit, f.axis_size);
      noted[f.axis] = true;
      it->second.digits.push_back({f.coef, f.live, inner, f.count, 1});
    }
    inner = f.kind == Factor::Kind::kBlockPad ? f.block : inner * f.count;
  }
  for (auto& [name, inverse] : out) {
    std::vector<AxisInverse::Digit>& d = inverse.digits;
    std::sort(d.begin(), d.end(), [](const auto& a, const auto& b) { return a.coef < b.coef; });
    for (size_t j = 1; j < d.size(); ++j) {
      if (d[j].coef < d[j - 1].coef * d[j - 1].live) return std::nullopt;
    }
    // The moduli of ProjectOntoSource (dsl/index_projection.h), over the same digits.
    const std::vector<SourceDigit> moduli = SourceDigitsOf(form, name);
    if (moduli.size() != d.size()) return std::nullopt;
    for (size_t j = 0; j < d.size(); ++j) d[j].modulus = moduli[j].modulus;
    std::reverse(d.begin(), d.end());
  }
  return out;
}

// Skew axes couple coordinates across parts, and one name with two sizes makes "the axis's size"
// ambiguous: both are left to the reference.
bool PlainAxes(const Mapping& a, const Mapping& b) {
  std::map<std::string, int64_t> sizes;
  for (const Mapping* m : {&a, &b}) {
    for (const Axis& axis : m->symbols()) {
      if (axis.skew) return false;
      auto [it, inserted] = sizes.emplace(axis.name, axis.size);
      if (!inserted && it->second != axis.size) return false;
    }
  }
  return true;
}

// A mapping walked position by position against a source's inverse: for each position, padding,
// or the live cell's source position.
struct Walk {
  int64_t size = 0;
  int64_t live_bound = 0;             // positions from here on are padding (outer paddings)
  int axes = 0;                       // the walked mapping's axes, in symbol order
  std::vector<int64_t> limit;         // per axis: the range rule's bound
  std::vector<int> inverse;           // per axis: index into `inverses`, -1 if the source lacks it
  std::vector<AxisInverse> inverses;
  std::vector<Part> outer;            // major first; the row part excluded
  Part row;                           // the minor part(s), one row of the walk
  std::vector<int> row_axes;          // axes the row's coordinates touch
  std::vector<int> outer_axes;        // the rest: constant along a row
  std::vector<std::vector<int64_t>> row_coords;  // table row: per row axis, per row position
};

// The row: minor parts merged while the table stays small; a larger minor part stays alone.
void BuildRow(std::vector<Part> parts, Walk& w) {
  size_t first = parts.size() - 1;
  int64_t row_size = parts.back().size;
  while (first > 0 && row_size * parts[first - 1].size <= g_limits.max_row) row_size *= parts[--first].size;
  Part row = parts.back();
  for (size_t k = parts.size() - 1; k-- > first;) row = MergeParts(parts[k], row, w.axes);
  if (row.size <= g_limits.max_row) row = AsTable(row, w.axes);
  parts.resize(first);
  w.outer = std::move(parts);
  for (int a = 0; a < w.axes; ++a) {
    bool touched = row.closed ? row.axis == a : false;
    for (int64_t r = 0; !row.closed && r < row.size && !touched; ++r) {
      touched = row.coords[static_cast<size_t>(r * w.axes + a)] != 0;
    }
    (touched ? w.row_axes : w.outer_axes).push_back(a);
  }
  if (!row.closed) {
    for (int a : w.row_axes) {
      std::vector<int64_t> column(static_cast<size_t>(row.size));
      for (int64_t r = 0; r < row.size; ++r) column[r] = row.coords[static_cast<size_t>(r * w.axes + a)];
      w.row_coords.push_back(std::move(column));
    }
  }
  w.row = std::move(row);
}

// Compiles `walked` against the inverse of `source`; nullopt when the model is not exact for them.
std::optional<Walk> CompileWalk(const Mapping& walked, const Mapping& source) {
  // A one-to-many mapping's `map` is the first live cell of all its combinations, which is not a
  // combination of its parts' first cells.
  if (!walked.is_one_to_one()) return std::nullopt;
  if (!PlainAxes(walked, source)) return std::nullopt;
  std::optional<std::map<std::string, AxisInverse>> source_axes = SourceInverse(source);
  if (!source_axes) return std::nullopt;
  Walk w;
  w.size = walked.size();
  // Paddings, resizes and modulos around the whole mapping only bound the live positions: below
  // the bound, position p holds what their operand holds at p.
  const Mapping* body = &walked;
  w.live_bound = walked.size();
  while (body->kind() == Mapping::Kind::kPadding || body->kind() == Mapping::Kind::kResize ||
         body->kind() == Mapping::Kind::kModulo) {
    if (body->kind() == Mapping::Kind::kPadding) w.live_bound = std::min(w.live_bound, body->inner().size());
    body = &body->inner();
  }
  AxisIds ids;
  for (const Axis& axis : walked.symbols()) {
    if (ids.count(axis.name)) continue;
    ids.emplace(axis.name, static_cast<int>(ids.size()));
    w.limit.push_back(axis.size);
    auto it = source_axes->find(axis.name);
    if (it == source_axes->end()) {
      w.inverse.push_back(-1);
      continue;
    }
    AxisInverse inverse = it->second;
    // Live coordinates stay below the walked axis's size, so the table needs no more.
    inverse.table.resize(static_cast<size_t>(std::min(axis.size, g_limits.max_inverse_table)));
    for (int64_t v = 0; v < static_cast<int64_t>(inverse.table.size()); ++v) {
      inverse.table[v] = inverse.Decompose(v);
    }
    w.inverse.push_back(static_cast<int>(w.inverses.size()));
    w.inverses.push_back(std::move(inverse));
  }
  w.axes = static_cast<int>(ids.size());
  std::vector<const Mapping*> leaves;
  FlattenPairs(*body, leaves);
  std::vector<Part> parts;
  for (const Mapping* leaf : leaves) {
    std::optional<Part> part = ClosedForm(*leaf, ids);
    if (!part) part = Tabulate(*leaf, ids);
    if (!part) return std::nullopt;
    parts.push_back(*std::move(part));
  }
  BuildRow(std::move(parts), w);
  return w;
}

// ---------------------------------------------------------------------------------------------
// Walking.

// The walk's per-row state: the outer parts' combined cell, constant along one row.
struct RowStart {
  bool live = true;      // every outer part live and every outer-only axis in range
  bool held = true;      // the outer-only axes' coordinates are held by the source
  int64_t position = 0;  // their source position offset
};

RowStart StartRow(const Walk& w, int64_t row_index, int64_t* v) {
  RowStart s;
  std::fill(v, v + w.axes, 0);
  for (size_t k = w.outer.size(); k-- > 0;) {
    const Part& part = w.outer[k];
    const int64_t i = row_index % part.size;
    row_index /= part.size;
    if (!part.Live(i)) {
      s.live = false;
      return s;
    }
    part.AddCoords(i, w.axes, v);
  }
  for (int a : w.outer_axes) {
    if (v[a] >= w.limit[a]) s.live = false;
  }
  if (!s.live) return s;
  for (int a : w.outer_axes) {
    if (w.inverse[a] < 0) continue;
    const int64_t offset = w.inverses[w.inverse[a]].Of(v[a]);
    if (offset < 0) s.held = false;
    s.position += offset;
  }
  return s;
}

// Positions [r_begin, r_end) of a row whose outer cell is live: padding by the row part or the
// range rule, else the source position (-1 when not held). Returns the stop position or -1.
template <typename Visitor>
int64_t WalkTableRow(const Walk& w, const RowStart& s, const int64_t* v, int64_t p, int64_t r_begin,
                     int64_t r_end, Visitor& visit) {
  const uint8_t* live = w.row.live.data();
  const size_t n = w.row_axes.size();
  if (n == 1) {  // the common case, kept tight
    const int a = w.row_axes[0];
    const int64_t* column = w.row_coords[0].data();
    const int64_t base = v[a], limit = w.limit[a];
    const AxisInverse* inverse = w.inverse[a] >= 0 ? &w.inverses[w.inverse[a]] : nullptr;
    for (int64_t r = r_begin; r < r_end; ++r, ++p) {
      const int64_t x = base + column[r];
      if (!live[r] || x >= limit) {
        if (!visit.Pad(p)) return p;
        continue;
      }
      int64_t q = s.position;
      bool held = s.held;
      if (inverse != nullptr) {
        const int64_t offset = inverse->Of(x);
        held = held && offset >= 0;
        q += offset;
      }
      if (!visit.Live(p, held ? q : -1)) return p;
    }
    return -1;
  }
  for (int64_t r = r_begin; r < r_end; ++r, ++p) {
    bool in_range = live[r] != 0;
    for (size_t j = 0; j < n && in_range; ++j) {
      const int a = w.row_axes[j];
      in_range = v[a] + w.row_coords[j][r] < w.limit[a];
    }
    if (!in_range) {
      if (!visit.Pad(p)) return p;
      continue;
    }
    int64_t q = s.position;
    bool held = s.held;
    for (size_t j = 0; j < n; ++j) {
      const int a = w.row_axes[j];
      if (w.inverse[a] < 0) continue;
      const int64_t offset = w.inverses[w.inverse[a]].Of(v[a] + w.row_coords[j][r]);
      held = held && offset >= 0;
      q += offset;
    }
    if (!visit.Live(p, held ? q : -1)) return p;
  }
  return -1;
}

// The same for a closed-form row (a large minor part): coordinate r * scale on one axis.
template <typename Visitor>
int64_t WalkClosedRow(const Walk& w, const RowStart& s, const int64_t* v, int64_t p, int64_t r_begin,
                      int64_t r_end, Visitor& visit) {
  const Part& row = w.row;
  const int a = row.axis;
  const AxisInverse* inverse = a >= 0 && w.inverse[a] >= 0 ? &w.inverses[w.inverse[a]] : nullptr;
  for (int64_t r = r_begin; r < r_end; ++r, ++p) {
    const int64_t x = a >= 0 ? v[a] + r * row.scale : 0;
    if (r >= row.live_limit || (a >= 0 && x >= w.limit[a])) {
      if (!visit.Pad(p)) return p;
      continue;
    }
    int64_t q = s.position;
    bool held = s.held;
    if (inverse != nullptr) {
      const int64_t offset = inverse->Of(x);
      held = held && offset >= 0;
      q += offset;
    }
    if (!visit.Live(p, held ? q : -1)) return p;
  }
  return -1;
}

// Walks positions [begin, end) in order: visit.Pad(p) at padding, visit.Live(p, q) at live
// positions (q: the source position, -1 when the source does not hold the index). A visitor
// returning false stops the walk; returns the position it stopped at, or -1.
template <typename Visitor>
int64_t WalkRange(const Walk& w, int64_t begin, int64_t end, Visitor& visit) {
  const int64_t row_size = w.row.size;
  const int64_t live_end = std::min(end, w.live_bound);
  std::vector<int64_t> v(static_cast<size_t>(w.axes));
  for (int64_t p = begin; p < live_end;) {
    const int64_t r_begin = p % row_size;
    const int64_t r_end = std::min(row_size, r_begin + (live_end - p));
    const RowStart s = StartRow(w, p / row_size, v.data());
    int64_t stop = -1;
    if (!s.live) {
      for (int64_t r = r_begin; r < r_end && stop < 0; ++r) {
        if (!visit.Pad(p + r - r_begin)) stop = p + r - r_begin;
      }
    } else if (w.row.closed) {
      stop = WalkClosedRow(w, s, v.data(), p, r_begin, r_end, visit);
    } else {
      stop = WalkTableRow(w, s, v.data(), p, r_begin, r_end, visit);
    }
    if (stop >= 0) return stop;
    p += r_end - r_begin;
  }
  for (int64_t p = std::max(begin, live_end); p < end; ++p) {
    if (!visit.Pad(p)) return p;
  }
  return -1;
}

// Splits the walk over threads in contiguous chunks (even-aligned, so i4 nibble pairs never
// straddle two threads). Each chunk stops at its own first stop; the first chunk that stopped
// holds the walk's first stop, so the answer does not depend on scheduling.
template <typename MakeVisitor>
int64_t ParallelWalk(const Walk& w, const MakeVisitor& make) {
  int threads = 1;
  if (w.size >= g_limits.min_parallel) {
    threads = g_limits.threads > 0
                  ? g_limits.threads
                  : static_cast<int>(std::clamp(std::thread::hardware_concurrency(), 1u, 8u));
  }
  std::vector<int64_t> bounds(threads + 1, w.size);
  for (int t = 0; t < threads; ++t) bounds[t] = (w.size * t / threads) & ~int64_t{1};
  std::vector<int64_t> stops(threads, -1);
  auto run = [&](int t) {
    auto visitor = make();
    stops[t] = WalkRange(w, bounds[t], bounds[t + 1], visitor);
  };
  std::vector<std::thread> pool;
  for (int t = 1; t < threads; ++t) pool.emplace_back(run, t);
  run(0);
  for (std::thread& thread : pool) thread.join();
  for (int64_t stop : stops) {
    if (stop >= 0) return stop;
  }
  return -1;
}

// Copies elements of kWidth bytes (0: i4 nibbles) from the source image into the destination.
template <int kWidth>
class CopyVisitor {
 public:
  CopyVisitor(const uint8_t* src, uint8_t* out, uint8_t* read, bool pad_fits, bool write_pad,
              const uint8_t* pad_bytes)
      : src_(src), out_(out), read_(read), pad_fits_(pad_fits), write_pad_(write_pad) {
    std::copy(pad_bytes, pad_bytes + 4, pad_);
  }

  bool Pad(int64_t p) {
    if (!pad_fits_) return false;  // the reference's SetBits fails at the first padding position
    if (write_pad_) Store(p, pad_);
    return true;
  }

  bool Live(int64_t p, int64_t q) {
    if (q < 0) return false;
    if constexpr (kWidth == 0) {
      const uint8_t nibble = (src_[q >> 1] >> ((q & 1) * 4)) & 0x0f;
      Store(p, &nibble);
    } else {
      Store(p, src_ + q * kWidth);
    }
    // Several positions may read one source element; the flag only ever goes to 1.
    if (read_ != nullptr) std::atomic_ref<uint8_t>(read_[q]).store(1, std::memory_order_relaxed);
    return true;
  }

 private:
  void Store(int64_t p, const uint8_t* bytes) {
    if constexpr (kWidth == 0) {
      uint8_t& byte = out_[p >> 1];
      const int shift = static_cast<int>(p & 1) * 4;
      byte = static_cast<uint8_t>((byte & ~(0x0f << shift)) | ((bytes[0] & 0x0f) << shift));
    } else {
      std::copy(bytes, bytes + kWidth, out_ + p * kWidth);
    }
  }

  const uint8_t* src_;
  uint8_t* out_;
  uint8_t* read_;
  bool pad_fits_, write_pad_;
  uint8_t pad_[4] = {};
};

// The reference's drop check over the source walked through its own inverse: stops at an unread
// live position whose index's first position (the one a move reads) is unread too.
class DropVisitor {
 public:
  explicit DropVisitor(const uint8_t* read) : read_(read) {}
  bool Pad(int64_t) { return true; }
  bool Live(int64_t q, int64_t first) { return read_[q] != 0 || (first >= 0 && read_[first] != 0); }

 private:
  const uint8_t* read_;
};

struct CompiledMove {
  Walk move;                 // the destination against the source
  std::optional<Walk> self;  // the source against itself, for the drop check
};

std::optional<CompiledMove> CompileMove(const Mapping& src, const Mapping& dst, MovePolicy policy) {
  std::optional<Walk> move = CompileWalk(dst, src);
  if (!move) return std::nullopt;
  CompiledMove out{*std::move(move), std::nullopt};
  if (!policy.allow_drop) {
    out.self = CompileWalk(src, src);
    if (!out.self) return std::nullopt;
  }
  return out;
}

// The copy pass for one element width.
template <int kWidth>
int64_t CopyAll(const Walk& w, const HostTensor& src, std::vector<uint8_t>& out,
                std::vector<uint8_t>& read, MovePolicy policy) {
  const bool pad_fits = CheckBitsFit(src.dtype(), policy.pad_bits).ok();
  uint8_t pad_bytes[4] = {};
  if (pad_fits && policy.pad_bits != 0) {
    VISA_CHECK(StoreElementBits(src.dtype(), pad_bytes, 0, policy.pad_bits).ok(), "pad bits store");
  }
  const uint8_t* src_bytes = src.bytes().data();
  uint8_t* read_flags = read.empty() ? nullptr : read.data();
  return ParallelWalk(w, [&] {
    return CopyVisitor<kWidth>(src_bytes, out.data(), read_flags, pad_fits, policy.pad_bits != 0,
                               pad_bytes);
  });
}

// The reference's error at destination position `p`, where the compiled walk stopped.
absl::Status MoveError(const HostTensor& src, const Mapping& dst, int64_t p, MovePolicy policy) {
  const Cell cell = dst.map(p);
  if (!cell.live()) {
    absl::Status fit = CheckBitsFit(src.dtype(), policy.pad_bits);
    VISA_CHECK(!fit.ok(), "compiled move stopped at padding the reference writes");
    return fit;
  }
  const std::optional<Index> wanted =
      ProjectOntoSource(Restrict(cell.index, src.mapping().axis_names()), src.mapping());
  VISA_CHECK(!wanted || !src.mapping().inverse(*wanted),
             "compiled move stopped at an index the source holds");
  return NotHeldError(dst, p, cell, src.mapping());
}

// The reference's drop error at source position `q`, where the compiled drop check stopped.
absl::Status DropErrorAt(const HostTensor& src, const Mapping& dst, int64_t q,
                         const std::vector<uint8_t>& read) {
  const Cell cell = src.mapping().map(q);
  VISA_CHECK(cell.live() && !read[q], "compiled drop check stopped at a position it must not");
  std::optional<int64_t> first = src.mapping().inverse(cell.index);
  VISA_CHECK(first && !read[*first], "compiled drop check disagrees with the source's inverse");
  return DropError(src.mapping(), q, cell, dst);
}

}  // namespace

MoveLimits SetMoveLimits(const MoveLimits& limits) { return std::exchange(g_limits, limits); }

bool MoveByIndexIsCompiled(const HostTensor& src, const Mapping& dst, MovePolicy policy) {
  return dst.ok() && CompileMove(src.mapping(), dst, policy).has_value();
}

absl::StatusOr<HostTensor> MoveByIndex(const HostTensor& src, const Mapping& dst, MovePolicy policy) {
  RETURN_IF_ERROR(dst.status());
  std::optional<CompiledMove> compiled = CompileMove(src.mapping(), dst, policy);
  if (!compiled) return MoveByIndexReference(src, dst, policy);
  size_t out_bytes = 0;
  {  // the reference's output checks (storable dtype, size), in its order
    ASSIGN_OR_RETURN(HostTensor zeros, HostTensor::Zeros(src.dtype(), dst));
    out_bytes = zeros.bytes().size();
  }
  std::vector<uint8_t> out(out_bytes, 0);
  std::vector<uint8_t> read(policy.allow_drop ? 0 : static_cast<size_t>(src.size()), 0);
  int64_t stop = -1;
  switch (StorageBits(src.dtype())) {
    case 4: stop = CopyAll<0>(compiled->move, src, out, read, policy); break;
    case 8: stop = CopyAll<1>(compiled->move, src, out, read, policy); break;
    case 16: stop = CopyAll<2>(compiled->move, src, out, read, policy); break;
    case 32: stop = CopyAll<4>(compiled->move, src, out, read, policy); break;
    default: return MoveByIndexReference(src, dst, policy);
  }
  if (stop >= 0) return MoveError(src, dst, stop, policy);
  if (!policy.allow_drop && std::find(read.begin(), read.end(), 0) != read.end()) {
    stop = ParallelWalk(*compiled->self, [&] { return DropVisitor(read.data()); });
    if (stop >= 0) return DropErrorAt(src, dst, stop, read);
  }
  return HostTensor::FromBytes(src.dtype(), dst, std::move(out));
}

}  // namespace visa::interp
