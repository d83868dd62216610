// PositionCells: evaluation of a position's cells on cell codes, level by level for linear
// combinations, charging every step to a work budget.
#include "dsl/position_cells.h"

#include <memory>
#include <optional>

#include <algorithm>

#include "absl/cleanup/cleanup.h"
#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "dsl/cell_code.h"
#include "dsl/status_macros.h"

namespace visa {
namespace {

void SortUnique(std::vector<CellCode>& codes) {
  std::sort(codes.begin(), codes.end());
  codes.erase(std::unique(codes.begin(), codes.end()), codes.end());
}

// Collects distinct codes. Once a set grows past a few hundred codes, packed codes of few bits are
// marked in a bitmap the evaluation shares (cleared again by Take), so a duplicate costs one load
// instead of a slot in a sort; other codes are kept and sorted, with duplicates dropped whenever
// they pile up. Small sets never pay for the bitmap.
class CodeAccumulator {
 public:
  // `seen` is the shared bitmap (allocated on first need), `bitmap_size` its size (0: none fits).
  CodeAccumulator(std::vector<uint8_t>& seen, size_t bitmap_size) : seen_(seen), bitmap_size_(bitmap_size) {}
  void Add(CellCode code) {
    if (code < marked_) {
      if (seen_[code]) return;
      seen_[code] = 1;
    }
    codes_.push_back(code);
    if (codes_.size() == kBitmapFrom && bitmap_size_ > 0) StartMarking();
    if (codes_.size() > 2 * unique_size_ + 4096) {
      SortUnique(codes_);
      unique_size_ = codes_.size();
    }
  }
  std::vector<CellCode> Take() {
    for (CellCode code : codes_) {
      if (code < marked_) seen_[code] = 0;
    }
    SortUnique(codes_);
    unique_size_ = 0;
    marked_ = 0;
    return std::move(codes_);
  }

 private:
  static constexpr size_t kBitmapFrom = 256;

  void StartMarking() {
    if (seen_.size() < bitmap_size_) seen_.assign(bitmap_size_, 0);
    SortUnique(codes_);
    unique_size_ = codes_.size();
    for (CellCode code : codes_) {
      if (code < bitmap_size_) seen_[code] = 1;
    }
    marked_ = bitmap_size_;
  }

  std::vector<uint8_t>& seen_;
  size_t bitmap_size_;
  size_t marked_ = 0;  // codes below this are marked in `seen_`
  std::vector<CellCode> codes_;
  size_t unique_size_ = 0;
};

// The codec of a mapping's axes, kept per thread for the last axes asked for: moves evaluate every
// position of one mapping in turn, and building a codec costs more than evaluating a position. A
// codec that interns coordinate lists (too wide to pack) grows with use and is built afresh. Shared,
// because an evaluation may start another one (of another mapping) that replaces the cached codec.
std::shared_ptr<CellCodec> CodecFor(const Mapping& root) {
  thread_local std::vector<Axis> axes;
  thread_local std::shared_ptr<CellCodec> codec;
  std::vector<Axis> symbols = root.symbols();
  if (codec && codec->packed() && symbols == axes) return codec;
  auto built = std::make_shared<CellCodec>(symbols);
  codec = built;
  axes = std::move(symbols);
  return built;
}

class Evaluator {
 public:
  Evaluator(const Mapping& root, WorkBudget& budget)
      : codec_holder_(CodecFor(root)), codec_(*codec_holder_), budget_(budget) {
    constexpr int kMaxBitmapBits = 20;  // a 1 MB bitmap
    if (codec_.code_bits() <= kMaxBitmapBits) bitmap_size_ = size_t{1} << codec_.code_bits();
  }

  // The distinct codes position `i` of `m` holds; false when the budget ran out.
  bool Eval(const Mapping& m, int64_t i, std::vector<CellCode>& out);
  // Whether a failed Eval ran out of room for values held at once (else out of steps).
  bool out_of_room() const { return out_of_room_; }

  Cell Decode(CellCode code) const { return codec_.Decode(code); }

 private:
  bool EvalPair(const Mapping& m, int64_t i, std::vector<CellCode>& out);
  bool EvalLinear(const std::vector<Mapping::LinearTerm>& terms, int64_t i, std::vector<CellCode>& out);

  // Counts `n` more values (remainders, codes) held until the enclosing combination is done.
  bool Hold(int64_t n, int64_t& held_here) {
    held_ += n;
    held_here += n;
    out_of_room_ = held_ > budget_.max_held();
    return !out_of_room_;
  }
  void Release(int64_t n, int64_t& held_here) {
    held_ -= n;
    held_here -= n;
  }

  std::shared_ptr<CellCodec> codec_holder_;  // CodecFor's, kept alive for this evaluation
  CellCodec& codec_;
  WorkBudget& budget_;
  std::vector<uint8_t> seen_;  // CodeAccumulator's bitmap, allocated when a set first grows large
  size_t bitmap_size_ = 0;     // 0: the codes are too wide for a bitmap
  int64_t held_ = 0;           // values the combinations being evaluated hold
  bool out_of_room_ = false;
};

bool Evaluator::Eval(const Mapping& m, int64_t i, std::vector<CellCode>& out) {
  out.clear();
  if (!budget_.Spend(1)) return false;
  if (i < 0 || i >= m.size()) {
    out.push_back(CellCodec::OutOfBounds());
    return true;
  }
  switch (m.kind()) {
    case Mapping::Kind::kSymbol:
      out.push_back(codec_.Symbol(m.axis().name, i));
      return true;
    case Mapping::Kind::kBroadcast:
      out.push_back(CellCodec::kEmpty);
      return true;
    case Mapping::Kind::kPair:
      return EvalPair(m, i, out);
    case Mapping::Kind::kPadding:
      if (i >= m.inner().size()) {
        out.push_back(CellCodec::Pad(m.pad_kind()));
        return true;
      }
      return Eval(m.inner(), i, out);
    case Mapping::Kind::kLeftPad:
      if (i < m.argument()) {
        out.push_back(CellCodec::Pad(m.pad_kind()));
        return true;
      }
      return Eval(m.inner(), i - m.argument(), out);
    case Mapping::Kind::kResize:
    case Mapping::Kind::kModulo:
      return Eval(m.inner(), i, out);
    case Mapping::Kind::kStride:
      return Eval(m.inner(), i * m.argument(), out);
    case Mapping::Kind::kLinear:
      if (!EvalLinear(m.linear_terms(), i, out)) return false;
      // A position no combination reaches holds nothing: it reads as padding.
      if (out.empty()) out.push_back(CellCodec::Pad(PadKind::kTop));
      return true;
  }
  return true;
}

bool Evaluator::EvalPair(const Mapping& m, int64_t i, std::vector<CellCode>& out) {
  const int64_t minor_size = m.minor().size();
  std::vector<CellCode> majors, minors;
  if (!Eval(m.major(), i / minor_size, majors)) return false;
  if (std::none_of(majors.begin(), majors.end(), CellCodec::HoldsIndex)) {
    out = std::move(majors);  // every combination is this padding
    return true;
  }
  if (!Eval(m.minor(), i % minor_size, minors)) return false;
  if (!budget_.Spend(static_cast<int64_t>(majors.size() * minors.size()))) return false;
  for (CellCode a : majors) {
    for (CellCode b : minors) out.push_back(codec_.Combine(a, b));
  }
  SortUnique(out);
  return true;
}

// Level k holds the remainders r that terms k.. must still sum to; a choice s of term k leaves
// r - s * n_k for level k + 1. Only choices the later terms can still complete are followed
// (they reach at most `reach[k + 1]`), so each level is at most the range of its remainders.
bool Evaluator::EvalLinear(const std::vector<Mapping::LinearTerm>& terms, int64_t i,
                           std::vector<CellCode>& out) {
  const size_t d = terms.size();
  int64_t held_here = 0;  // released when this combination is done, however it ends
  absl::Cleanup release = [this, &held_here] { held_ -= held_here; };
  std::vector<int64_t> reach(d + 1, 0);
  for (size_t k = d; k-- > 0;) reach[k] = reach[k + 1] + (terms[k].mapping.size() - 1) * terms[k].coefficient;
  // The choices of term k for remainder r: [lo, hi].
  auto choices = [&](size_t k, int64_t r) {
    const int64_t n = terms[k].coefficient;
    const int64_t lo = r > reach[k + 1] ? (r - reach[k + 1] + n - 1) / n : 0;
    const int64_t hi = std::min(terms[k].mapping.size() - 1, r / n);
    return std::make_pair(lo, hi);
  };

  // Forward: the remainders each level can be asked for.
  std::vector<std::vector<int64_t>> levels(d + 1);
  levels[0] = {i};
  for (size_t k = 0; k < d; ++k) {
    std::vector<int64_t>& next = levels[k + 1];
    size_t unique_size = 0;
    // Many choices lead to the same remainder: drop duplicates whenever they pile up, and hold
    // only what stays.
    auto deduplicate = [&] {
      const size_t before = next.size();
      std::sort(next.begin(), next.end());
      next.erase(std::unique(next.begin(), next.end()), next.end());
      Release(static_cast<int64_t>(before - next.size()), held_here);
      unique_size = next.size();
    };
    for (int64_t r : levels[k]) {
      auto [lo, hi] = choices(k, r);
      if (hi < lo) continue;
      if (!budget_.Spend(hi - lo + 1) || !Hold(hi - lo + 1, held_here)) return false;
      for (int64_t s = lo; s <= hi; ++s) next.push_back(r - s * terms[k].coefficient);
      if (next.size() > 2 * unique_size + 4096) deduplicate();
    }
    deduplicate();
  }

  // Backward: the distinct codes terms k.. hold for each remainder of level k.
  absl::flat_hash_map<int64_t, std::vector<CellCode>> below;
  int64_t below_held = 0;
  if (std::binary_search(levels[d].begin(), levels[d].end(), 0)) below[0] = {CellCodec::kEmpty};
  for (size_t k = d; k-- > 0;) {
    const int64_t n = terms[k].coefficient;
    // The codes of every choice of term k that some remainder completes, evaluated first: a nested
    // combination uses the accumulator's bitmap too.
    absl::flat_hash_map<int64_t, std::vector<CellCode>> term_cells;
    int64_t term_cells_held = 0;
    for (int64_t r : levels[k]) {
      auto [lo, hi] = choices(k, r);
      for (int64_t s = lo; s <= hi; ++s) {
        if (!below.contains(r - s * n) || term_cells.contains(s)) continue;
        std::vector<CellCode> codes;
        if (!Eval(terms[k].mapping, s, codes)) return false;
        if (!Hold(static_cast<int64_t>(codes.size()), held_here)) return false;
        term_cells_held += static_cast<int64_t>(codes.size());
        term_cells.emplace(s, std::move(codes));
      }
    }
    absl::flat_hash_map<int64_t, std::vector<CellCode>> here;
    int64_t here_held = 0;
    for (int64_t r : levels[k]) {
      auto [lo, hi] = choices(k, r);
      CodeAccumulator acc(seen_, bitmap_size_);
      for (int64_t s = lo; s <= hi; ++s) {
        auto rest = below.find(r - s * n);
        if (rest == below.end()) continue;
        const std::vector<CellCode>& cells = term_cells.at(s);
        if (!budget_.Spend(static_cast<int64_t>(cells.size() * rest->second.size()))) {
          acc.Take();  // leaves the bitmap clear
          return false;
        }
        for (CellCode c : cells) {
          for (CellCode t : rest->second) acc.Add(codec_.Combine(c, t));
        }
      }
      std::vector<CellCode> codes = acc.Take();
      if (codes.empty()) continue;
      if (!Hold(static_cast<int64_t>(codes.size()), held_here)) return false;
      here_held += static_cast<int64_t>(codes.size());
      here.emplace(r, std::move(codes));
    }
    Release(below_held + term_cells_held, held_here);
    below = std::move(here);
    below_held = here_held;
  }
  auto it = below.find(i);
  out.clear();
  if (it != below.end()) out = std::move(it->second);
  return true;
}

}  // namespace

std::string MappingExcerpt(const Mapping& m) {
  constexpr size_t kMaxChars = 120;
  std::string text = m.ToString();
  if (text.size() > kMaxChars) text = absl::StrCat(text.substr(0, kMaxChars), "...");
  return text;
}

absl::StatusOr<std::vector<Cell>> PositionCells(const Mapping& m, int64_t i, WorkBudget& budget) {
  RETURN_IF_ERROR(m.status());
  Evaluator evaluator(m, budget);
  std::vector<CellCode> codes;
  if (!evaluator.Eval(m, i, codes)) {
    const std::string operation = absl::StrCat("evaluating position ", i, " of `", MappingExcerpt(m), "`");
    return evaluator.out_of_room() ? budget.OutOfRoom(operation) : budget.Exhausted(operation);
  }
  std::vector<Cell> cells;
  cells.reserve(codes.size());
  for (CellCode code : codes) cells.push_back(evaluator.Decode(code));
  std::sort(cells.begin(), cells.end());
  cells.erase(std::unique(cells.begin(), cells.end()), cells.end());
  return cells;
}

}  // namespace visa
