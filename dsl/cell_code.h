// CellCode: the cells a mapping's parts combine into, as small integers that keep only what the
// final rules can tell apart.
//
// A position of a one-to-many mapping (a linear combination) holds every combination of its
// parts' cells. Combined raw, those are far more than the position finally holds: a coordinate
// that has passed its axis's end only ever grows (coordinates add), so the cell is padding
// whatever is added later; and a skew `B' = B - A` only ever reads b + b' + a mod |B|. A code
// keeps exactly that: one field per axis, a past-the-end cell collapsed into one "past the end"
// code, skew coordinates folded into their base modulo its size. Distinct raw cells that finalize
// alike become one code, so contradictory combinations are dropped as they are built.
//
// Fields pack into one 64-bit word when they fit; otherwise each distinct coordinate list is
// interned and its code is its number in the table. Both forms combine and decode alike.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/hash/hash.h"
#include "dsl/axes.h"
#include "dsl/index.h"

namespace visa {

// The final rules that turn a raw cell (coordinates as the parts add them) into what a position
// holds: skews resolve to their base, and a coordinate past its axis's end makes the cell padding.
// `axes` are the root mapping's axes (Mapping::symbols()).
void ResolveSkews(const std::vector<Axis>& axes, Cell& cell);
void FinalizeCell(const std::vector<Axis>& axes, Cell& cell);
// The size a coordinate of `name` is checked against (a skew base: its skew's size).
int64_t AxisSize(const std::vector<Axis>& axes, const std::string& name);

using CellCode = uint64_t;

class CellCodec {
 public:
  explicit CellCodec(const std::vector<Axis>& root_axes);

  static constexpr CellCode kEmpty = 0;  // the live cell with no coordinates

  // The raw cell {axis: value} of a symbol.
  CellCode Symbol(const std::string& axis, int64_t value);
  static CellCode Pad(PadKind kind);
  static CellCode OutOfBounds();
  // Live, possibly past an axis's end: the cells Pair and CombineCells add coordinates to.
  static bool HoldsIndex(CellCode code) { return code < kNonLive; }

  // CombineCells on codes: a major non-live cell wins, then a minor one, else coordinates add.
  CellCode Combine(CellCode major, CellCode minor);

  // The finalized cell (what Mapping::maps reports).
  Cell Decode(CellCode code) const;

  bool packed() const { return packed_; }
  // Packed live codes that hold an index in range are below 2^code_bits().
  int code_bits() const { return packed_ ? code_bits_ : 64; }

 private:
  enum class FieldKind {
    kSaturate,  // a coordinate at or past `bound` makes the cell past the end
    kModulo,    // a skew base: only the value modulo `bound` matters
    kExact,     // an axis in a chain of skews: kept as is
  };
  struct Field {
    std::string name;
    FieldKind kind = FieldKind::kExact;
    int64_t bound = 0;
    int shift = 0;  // packed form
    int bits = 0;
  };
  struct FieldRef {
    size_t field = 0;
  };

  static constexpr CellCode kNonLive = CellCode{1} << 63;  // | 0..2 pad kind, | 3 out of bounds
  static constexpr CellCode kPastEnd = CellCode{1} << 62;  // live, but some coordinate is past its end
  static constexpr CellCode kMaxLive = kPastEnd - 1;

  void AddField(std::string name, FieldKind kind, int64_t bound);
  // Adds `value` to field `f` of `coords`; false when the cell goes past the end.
  bool AddTo(std::vector<int64_t>& coords, size_t f, int64_t value) const;
  std::vector<int64_t> Unpack(CellCode code) const;
  CellCode Pack(const std::vector<int64_t>& coords);

  std::vector<Axis> root_axes_;
  std::vector<Field> fields_;
  absl::flat_hash_map<std::string, FieldRef> by_name_;
  bool packed_ = true;
  int code_bits_ = 0;
  // Interned coordinate lists (when the fields do not fit one word).
  std::vector<std::vector<int64_t>> table_;
  absl::flat_hash_map<std::vector<int64_t>, CellCode> interned_;
};

}  // namespace visa
