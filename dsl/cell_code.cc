// CellCode: the final rules on raw cells, and the codec that folds raw cells as those rules allow.
#include "dsl/cell_code.h"

#include <bit>

#include "absl/container/flat_hash_set.h"
#include "dsl/status_macros.h"

namespace visa {
namespace {

int BitsFor(int64_t values) { return values <= 1 ? 0 : std::bit_width(static_cast<uint64_t>(values - 1)); }

// Coordinates never reach 2^52 (kMaxMappingSize bounds every sum), so a sum of two fits 53 bits.
constexpr int kExactBits = 53;

}  // namespace

int64_t AxisSize(const std::vector<Axis>& axes, const std::string& name) {
  for (const Axis& axis : axes) {
    if (axis.name == name) return axis.size;
    if (axis.skew && axis.skew->base == name) return axis.size;
  }
  return kMaxMappingSize;
}

// B' = B - A: the skew coordinate b' stands for b = (b' + a) mod |B|.
void ResolveSkews(const std::vector<Axis>& axes, Cell& cell) {
  for (const Axis& skew : axes) {
    if (!skew.skew) continue;
    Index& index = cell.index;
    int64_t base = index[skew.skew->base] + index[skew.name] + index[skew.skew->offset];
    index.Set(skew.name, 0);
    index.Set(skew.skew->base, base % skew.size);
  }
  // Left paddings: the summed b' of a hidden axis shifts back to its base, or is padding.
  for (const Axis& hidden : axes) {
    if (!hidden.shift || cell.kind != Cell::Kind::kLive) continue;
    Index& index = cell.index;
    const int64_t base = index[hidden.name] - hidden.shift->left;
    index.Set(hidden.name, 0);
    if (base < 0 || base >= hidden.shift->base_size) {
      cell = Cell::Pad(hidden.shift->pad);
      return;
    }
    index.Add(hidden.shift->base, base);
  }
}

// Turns raw coordinates into the tensor index. Pairs add coordinates, so digits of one axis can
// sum past its end (`[R # 16 / 4, R # 16 % 4]` at 15 with R = 14): such a position holds no
// element of the tensor, so it is padding, as the reference implementation's normal forms treat it.
void FinalizeCell(const std::vector<Axis>& axes, Cell& cell) {
  if (cell.kind != Cell::Kind::kLive) return;
  ResolveSkews(axes, cell);
  for (const auto& [name, value] : cell.index.coords()) {
    if (value >= AxisSize(axes, name)) {
      cell = Cell::Pad(PadKind::kTop);
      return;
    }
  }
}

CellCodec::CellCodec(const std::vector<Axis>& root_axes) : root_axes_(root_axes) {
  // Which skews fold into their base: ResolveSkews reads a base and an offset raw, so a name that
  // is both a base and an offset makes the result depend on the order skews resolve in; such
  // skews keep every coordinate exact.
  absl::flat_hash_set<std::string> bases, offsets, conflicted;
  for (const Axis& axis : root_axes) {
    if (!axis.skew) continue;
    bases.insert(axis.skew->base);
    offsets.insert(axis.skew->offset);
  }
  for (const std::string& base : bases) {
    if (offsets.contains(base)) conflicted.insert(base);
  }
  auto foldable = [&](const Axis& skew) {
    return !conflicted.contains(skew.skew->base) && !conflicted.contains(skew.skew->offset);
  };
  absl::flat_hash_set<std::string> exact_bases;
  absl::flat_hash_map<std::string, int64_t> base_size;  // skews of one base fold only at one size
  for (const Axis& axis : root_axes) {
    if (!axis.skew) continue;
    auto [it, first] = base_size.try_emplace(axis.skew->base, axis.size);
    if (!foldable(axis) || it->second != axis.size) exact_bases.insert(axis.skew->base);
  }
  for (const Axis& axis : root_axes) {
    if (axis.skew) {
      const std::string& base = axis.skew->base;
      if (exact_bases.contains(base)) {
        AddField(base, FieldKind::kExact, kMaxMappingSize);
        AddField(axis.name, FieldKind::kExact, kMaxMappingSize);
      } else {
        AddField(base, FieldKind::kModulo, axis.size);
        // b' adds to b, modulo |B|. Copied first: inserting b' may rehash and move b's entry.
        const FieldRef base_field = by_name_[base];
        by_name_[axis.name] = base_field;
      }
      continue;
    }
    if (conflicted.contains(axis.name) || exact_bases.contains(axis.name)) {
      AddField(axis.name, FieldKind::kExact, kMaxMappingSize);
    } else if (bases.contains(axis.name)) {
      continue;  // the skew's entry adds the base's modulo field
    } else {
      AddField(axis.name, FieldKind::kSaturate, AxisSize(root_axes, axis.name));
    }
  }
  int shift = 0;
  for (Field& field : fields_) {
    field.bits = field.kind == FieldKind::kExact ? kExactBits : BitsFor(field.bound);
    field.shift = shift;
    shift += field.bits;
  }
  packed_ = shift <= 62;
  code_bits_ = shift;
  if (!packed_) Pack(std::vector<int64_t>(fields_.size(), 0));  // kEmpty is entry 0
}

void CellCodec::AddField(std::string name, FieldKind kind, int64_t bound) {
  if (by_name_.contains(name)) return;
  by_name_[name] = FieldRef{fields_.size()};
  fields_.push_back(Field{std::move(name), kind, bound});
}

bool CellCodec::AddTo(std::vector<int64_t>& coords, size_t f, int64_t value) const {
  const Field& field = fields_[f];
  int64_t& c = coords[f];
  c += value;
  switch (field.kind) {
    case FieldKind::kSaturate:
      return c < field.bound;
    case FieldKind::kModulo:
      c %= field.bound;
      return true;
    case FieldKind::kExact:
      return true;
  }
  return true;
}

std::vector<int64_t> CellCodec::Unpack(CellCode code) const {
  if (!packed_) return table_[code];
  std::vector<int64_t> coords(fields_.size());
  for (size_t f = 0; f < fields_.size(); ++f) {
    const Field& field = fields_[f];
    coords[f] = field.bits == 0 ? 0 : static_cast<int64_t>((code >> field.shift) & ((CellCode{1} << field.bits) - 1));
  }
  return coords;
}

CellCode CellCodec::Pack(const std::vector<int64_t>& coords) {
  if (packed_) {
    CellCode code = 0;
    for (size_t f = 0; f < fields_.size(); ++f) code |= static_cast<CellCode>(coords[f]) << fields_[f].shift;
    return code;
  }
  auto [it, inserted] = interned_.try_emplace(coords, table_.size());
  if (inserted) {
    VISA_CHECK(table_.size() < kMaxLive, "too many interned cells");
    table_.push_back(coords);
  }
  return it->second;
}

CellCode CellCodec::Symbol(const std::string& axis, int64_t value) {
  auto it = by_name_.find(axis);
  VISA_CHECK(it != by_name_.end(), "a symbol outside the root mapping's axes");
  if (packed_) {
    const Field& field = fields_[it->second.field];
    int64_t v = value;
    if (field.kind == FieldKind::kSaturate && v >= field.bound) return kPastEnd;
    if (field.kind == FieldKind::kModulo) v %= field.bound;
    return static_cast<CellCode>(v) << field.shift;
  }
  std::vector<int64_t> coords(fields_.size(), 0);
  if (!AddTo(coords, it->second.field, value)) return kPastEnd;
  return Pack(coords);
}

CellCode CellCodec::Pad(PadKind kind) { return kNonLive | static_cast<CellCode>(kind); }
CellCode CellCodec::OutOfBounds() { return kNonLive | 3; }

CellCode CellCodec::Combine(CellCode major, CellCode minor) {
  if (!HoldsIndex(major)) return major;
  if (!HoldsIndex(minor)) return minor;
  if (major == kPastEnd || minor == kPastEnd) return kPastEnd;
  if (minor == kEmpty) return major;
  if (major == kEmpty) return minor;
  if (packed_) {
    CellCode out = 0;
    for (const Field& field : fields_) {
      if (field.bits == 0) continue;
      const CellCode mask = (CellCode{1} << field.bits) - 1;
      int64_t sum = static_cast<int64_t>(((major >> field.shift) & mask) + ((minor >> field.shift) & mask));
      if (field.kind == FieldKind::kSaturate && sum >= field.bound) return kPastEnd;
      if (field.kind == FieldKind::kModulo && sum >= field.bound) sum -= field.bound;
      out |= static_cast<CellCode>(sum) << field.shift;
    }
    return out;
  }
  std::vector<int64_t> coords = table_[major];
  const std::vector<int64_t>& add = table_[minor];
  for (size_t f = 0; f < fields_.size(); ++f) {
    if (!AddTo(coords, f, add[f])) return kPastEnd;
  }
  return Pack(coords);
}

Cell CellCodec::Decode(CellCode code) const {
  if (!HoldsIndex(code)) {
    const CellCode tag = code & 3;
    return tag == 3 ? Cell::OutOfBounds() : Cell::Pad(static_cast<PadKind>(tag));
  }
  if (code == kPastEnd) return Cell::Pad(PadKind::kTop);
  const std::vector<int64_t> coords = Unpack(code);
  Index index;
  for (size_t f = 0; f < fields_.size(); ++f) index.Set(fields_[f].name, coords[f]);
  Cell cell = Cell::Live(std::move(index));
  FinalizeCell(root_axes_, cell);
  return cell;
}

}  // namespace visa
