// PositionCells: evaluation of a position's cells on cell codes, level by level for linear
// combinations, charging every step to a work budget.
#include "dsl/position_cells.h"

#include <algorithm>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "dsl/cell_code.h"
#include "dsl/status_macros.h"

namespace visa {
namespace {

// Memory is charged too: a value kept for later (a remainder, a code) costs as much as this many
// combinations, so a budget bounds the bytes held as well as the time.
constexpr int64_t kStepsPerKeptValue = 8;

void SortUnique(std::vector<CellCode>& codes) {
  std::sort(codes.begin(), codes.end());
  codes.erase(std::unique(codes.begin(), codes.end()), codes.end());
}

// Collects distinct codes. A packed code of few bits is marked in a bitmap the evaluation shares
// (cleared again by Take), so a duplicate costs one load instead of a slot in a sort; other codes
// are kept and sorted, with duplicates dropped whenever they pile up.
class CodeAccumulator {
 public:
  explicit CodeAccumulator(std::vector<uint8_t>& seen) : seen_(seen) {}
  void Add(CellCode code) {
    if (code < seen_.size()) {
      if (seen_[code]) return;
      seen_[code] = 1;
    }
    codes_.push_back(code);
    if (codes_.size() > 2 * unique_size_ + 4096) {
      SortUnique(codes_);
      unique_size_ = codes_.size();
    }
  }
  std::vector<CellCode> Take() {
    for (CellCode code : codes_) {
      if (code < seen_.size()) seen_[code] = 0;
    }
    SortUnique(codes_);
    unique_size_ = 0;
    return std::move(codes_);
  }

 private:
  std::vector<uint8_t>& seen_;
  std::vector<CellCode> codes_;
  size_t unique_size_ = 0;
};

class Evaluator {
 public:
  Evaluator(const Mapping& root, WorkBudget& budget) : codec_(root.symbols()), budget_(budget) {
    constexpr int kMaxBitmapBits = 20;  // a 1 MB bitmap
    if (codec_.code_bits() <= kMaxBitmapBits && !root.is_one_to_one()) seen_.resize(size_t{1} << codec_.code_bits());
  }

  // The distinct codes position `i` of `m` holds; false when the budget ran out.
  bool Eval(const Mapping& m, int64_t i, std::vector<CellCode>& out);

  Cell Decode(CellCode code) const { return codec_.Decode(code); }

 private:
  bool EvalPair(const Mapping& m, int64_t i, std::vector<CellCode>& out);
  bool EvalLinear(const std::vector<Mapping::LinearTerm>& terms, int64_t i, std::vector<CellCode>& out);

  CellCodec codec_;
  WorkBudget& budget_;
  std::vector<uint8_t> seen_;  // CodeAccumulator's bitmap (empty: codes too wide for one)
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
    for (int64_t r : levels[k]) {
      auto [lo, hi] = choices(k, r);
      if (hi < lo) continue;
      if (!budget_.Spend((hi - lo + 1) * kStepsPerKeptValue)) return false;
      for (int64_t s = lo; s <= hi; ++s) next.push_back(r - s * terms[k].coefficient);
    }
    std::sort(next.begin(), next.end());
    next.erase(std::unique(next.begin(), next.end()), next.end());
  }

  // Backward: the distinct codes terms k.. hold for each remainder of level k.
  absl::flat_hash_map<int64_t, std::vector<CellCode>> below;
  if (std::binary_search(levels[d].begin(), levels[d].end(), 0)) below[0] = {CellCodec::kEmpty};
  for (size_t k = d; k-- > 0;) {
    const int64_t n = terms[k].coefficient;
    // The codes of every choice of term k that some remainder completes, evaluated first: a nested
    // combination uses the accumulator's bitmap too.
    absl::flat_hash_map<int64_t, std::vector<CellCode>> term_cells;
    for (int64_t r : levels[k]) {
      auto [lo, hi] = choices(k, r);
      for (int64_t s = lo; s <= hi; ++s) {
        if (!below.contains(r - s * n) || term_cells.contains(s)) continue;
        std::vector<CellCode> codes;
        if (!Eval(terms[k].mapping, s, codes)) return false;
        if (!budget_.Spend(static_cast<int64_t>(codes.size() + 1) * kStepsPerKeptValue)) return false;
        term_cells.emplace(s, std::move(codes));
      }
    }
    absl::flat_hash_map<int64_t, std::vector<CellCode>> here;
    for (int64_t r : levels[k]) {
      auto [lo, hi] = choices(k, r);
      CodeAccumulator acc(seen_);
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
      if (!budget_.Spend(static_cast<int64_t>(codes.size() + 1) * kStepsPerKeptValue)) return false;
      here.emplace(r, std::move(codes));
    }
    below = std::move(here);
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
  if (!evaluator.Eval(m, i, codes) || !budget.Spend(static_cast<int64_t>(codes.size()))) {
    return budget.Exhausted(absl::StrCat("evaluating position ", i, " of `", MappingExcerpt(m), "`"));
  }
  std::vector<Cell> cells;
  cells.reserve(codes.size());
  for (CellCode code : codes) cells.push_back(evaluator.Decode(code));
  std::sort(cells.begin(), cells.end());
  cells.erase(std::unique(cells.begin(), cells.end()), cells.end());
  return cells;
}

}  // namespace visa
