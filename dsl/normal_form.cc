// NormalForm: normalization of mapping trees into canonical factor lists, and their evaluation.
#include "dsl/normal_form.h"

#include <algorithm>
#include <limits>
#include <numeric>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "dsl/status_macros.h"

namespace visa {

bool Factor::operator==(const Factor& other) const {
  if (kind != other.kind) return false;
  switch (kind) {
    case Kind::kDigit:
      return axis == other.axis && axis_size == other.axis_size && coef == other.coef &&
             count == other.count && live == other.live && pad == other.pad;
    case Kind::kBlockPad:
      return block == other.block && pad == other.pad;
    case Kind::kComposite:
      return *composite == *other.composite;
  }
  return false;
}

namespace {

using Factors = std::vector<Factor>;

Factor Digit(std::string axis, int64_t axis_size, int64_t coef, int64_t count, int64_t live,
             PadKind pad = PadKind::kTop) {
  Factor f;
  f.kind = Factor::Kind::kDigit;
  f.axis = std::move(axis);
  f.axis_size = axis_size;
  f.coef = coef;
  f.count = count;
  f.live = live;
  f.pad = pad;
  return f;
}

Factor BlockPad(int64_t block, PadKind pad) {
  Factor f;
  f.kind = Factor::Kind::kBlockPad;
  f.block = block;
  f.pad = pad;
  return f;
}

Factor Composite(const Mapping& m) {
  Factor f;
  f.kind = Factor::Kind::kComposite;
  f.count = m.size();
  f.composite = m;
  return f;
}

// Positions covered by the factor and everything inner to it, given the inner size.
int64_t OuterSize(const Factor& f, int64_t inner) {
  return f.kind == Factor::Kind::kBlockPad ? f.block : inner * f.count;
}

int64_t SizeOf(const Factors& factors) {
  int64_t size = 1;
  for (const Factor& f : factors) size = OuterSize(f, size);
  return size;
}

// Canonical content of a single digit: values past the axis's end are padding (coordinates
// only grow), and a digit with one live value names no axis.
void CanonicalizeDigit(Factor& f) {
  if (!f.axis.empty()) f.live = std::min(f.live, (f.axis_size + f.coef - 1) / f.coef);
  if (f.live == 1 || f.axis.empty()) {
    f.axis.clear();
    f.axis_size = 0;
    f.coef = 0;
  }
  if (f.live == f.count) f.pad = PadKind::kTop;  // no padding: the kind means nothing
}

// Merges `outer` into `inner` when the two digits read as one; returns false otherwise.
bool MergeDigits(Factor& inner, const Factor& outer) {
  if (outer.live == 1) {  // a pure padding digit
    if (inner.live != inner.count && inner.pad != outer.pad) return false;
    if (inner.live == inner.count) inner.pad = outer.pad;
    inner.count *= outer.count;
    return true;
  }
  if (inner.live != inner.count) return false;
  bool same_content = inner.axis == outer.axis &&
                      (inner.axis.empty() || outer.coef == inner.coef * inner.count);
  if (!same_content) return false;
  inner.live = inner.count * outer.live;
  inner.count *= outer.count;
  inner.pad = outer.pad;
  return true;
}

// Applies the canonical rules until none applies.
Factors Canonicalize(Factors in) {
  Factors out;
  int64_t inner_size = 1;  // size of `out`
  for (Factor f : in) {
    if (f.kind == Factor::Kind::kDigit) {
      if (f.count == 1) continue;
      CanonicalizeDigit(f);
      if (!out.empty() && out.back().kind == Factor::Kind::kDigit && MergeDigits(out.back(), f)) {
        CanonicalizeDigit(out.back());
        inner_size = SizeOf(out);
        continue;
      }
      out.push_back(f);
      inner_size = SizeOf(out);
      continue;
    }
    if (f.kind == Factor::Kind::kBlockPad) {
      if (f.block == inner_size) continue;
      // Directly nested pads of one kind are one pad.
      if (!out.empty() && out.back().kind == Factor::Kind::kBlockPad && out.back().pad == f.pad) {
        out.pop_back();
        inner_size = SizeOf(out);
      }
      if (f.block % inner_size == 0) {
        Factor digit = Digit("", 0, 0, f.block / inner_size, 1, f.pad);
        if (!out.empty() && out.back().kind == Factor::Kind::kDigit && MergeDigits(out.back(), digit)) {
          CanonicalizeDigit(out.back());
        } else {
          out.push_back(digit);
        }
        inner_size = SizeOf(out);
        continue;
      }
      if (!out.empty() && out.back().kind == Factor::Kind::kDigit) {
        Factor& last = out.back();
        int64_t below = inner_size / last.count;  // positions inside `last`
        if (f.block % below == 0 && (last.live == last.count || last.pad == f.pad)) {
          last.count = f.block / below;
          last.pad = f.pad;
          CanonicalizeDigit(last);
          inner_size = SizeOf(out);
          continue;
        }
      }
      out.push_back(f);
      inner_size = f.block;
      continue;
    }
    out.push_back(f);
    inner_size = SizeOf(out);
  }
  return out;
}

// Multiplies the cumulative extents of block pads when a minor operand of `scale` positions is
// paired inside.
void ScaleBlocks(Factors& factors, int64_t scale) {
  for (Factor& f : factors) {
    if (f.kind == Factor::Kind::kBlockPad) f.block *= scale;
  }
}

// Positions [0, r) of the factor list; nullopt when the cut does not fall on a digit boundary.
std::optional<Factors> TakePrefix(const Factors& factors, int64_t r) {
  int64_t inner = 1;
  for (size_t i = 0; i < factors.size(); ++i) {
    if (r == inner) return Factors(factors.begin(), factors.begin() + i);
    const Factor& f = factors[i];
    int64_t outer = OuterSize(f, inner);
    if (r < outer) {
      Factors out(factors.begin(), factors.begin() + i);
      if (f.kind == Factor::Kind::kBlockPad) {
        out.push_back(BlockPad(r, f.pad));
      } else if (f.kind == Factor::Kind::kDigit && r % inner == 0) {
        Factor cut = f;
        cut.count = r / inner;
        cut.live = std::min(f.live, cut.count);
        out.push_back(cut);
      } else {
        return std::nullopt;
      }
      return Canonicalize(std::move(out));
    }
    inner = outer;
  }
  return factors;
}

// Positions 0, s, 2s, ... of the factor list; nullopt when the stride cuts across padding or a
// composite in a way no digit can express.
std::optional<Factors> StrideBy(Factors factors, int64_t s) {
  const int64_t total_stride = s;
  Factors out;
  size_t i = 0;
  while (s > 1) {
    if (i == factors.size()) return std::nullopt;
    Factor f = factors[i];
    if (f.kind != Factor::Kind::kDigit) return std::nullopt;
    if (s % f.count == 0) {  // every chosen position has this digit at 0, which is live
      s /= f.count;
      ++i;
      continue;
    }
    if (f.count % s == 0) {
      f.coef *= s;
      f.count /= s;
      f.live = (f.live + s - 1) / s;
      CanonicalizeDigit(f);
      out.push_back(f);
      s = 1;
      ++i;
      break;
    }
    int64_t g = std::gcd(f.count, s);
    if (g == 1 || f.live != f.count) return std::nullopt;
    // Split the digit: the inner part of g values is skipped entirely by the stride.
    Factor outer = f;
    outer.coef = f.coef * g;
    outer.count = f.count / g;
    outer.live = outer.count;
    factors[i] = outer;
    s /= g;
  }
  for (; i < factors.size(); ++i) {
    Factor f = factors[i];
    if (f.kind == Factor::Kind::kBlockPad) {
      if (f.block % total_stride != 0) return std::nullopt;
      f.block /= total_stride;
    }
    out.push_back(f);
  }
  return Canonicalize(std::move(out));
}

bool HasSkew(const Mapping& m) {
  for (const Axis& axis : m.symbols()) {
    if (axis.skew || axis.shift) return true;  // a left padding's shift couples its digits too
  }
  return false;
}

// The factors of a sub-expression, from its cached normal form: a definition used many times
// (`L1 = {L0}, {L0}`) is normalized once, not once per use. Normalize only runs on mappings
// without skews or one-to-many parts, and so are all their sub-expressions, whose own forms are
// therefore plain normalizations too.
Factors Sub(const Mapping& part) { return part.normal_form().factors(); }

Factors Normalize(const Mapping& m) {
  switch (m.kind()) {
    case Mapping::Kind::kSymbol:
      return Canonicalize({Digit(m.axis().name, m.axis().size, 1, m.size(), m.size())});
    case Mapping::Kind::kBroadcast:
      return Canonicalize({Digit("", 0, 0, m.size(), m.size())});
    case Mapping::Kind::kPair: {
      Factors out = Sub(m.minor());
      Factors major = Sub(m.major());
      ScaleBlocks(major, m.minor().size());
      out.insert(out.end(), major.begin(), major.end());
      return Canonicalize(std::move(out));
    }
    case Mapping::Kind::kPadding: {
      Factors out = Sub(m.inner());
      out.push_back(BlockPad(m.size(), m.pad_kind()));
      return Canonicalize(std::move(out));
    }
    case Mapping::Kind::kResize:
    case Mapping::Kind::kModulo: {
      std::optional<Factors> out = TakePrefix(Sub(m.inner()), m.size());
      return out ? *std::move(out) : Factors{Composite(m)};
    }
    case Mapping::Kind::kStride: {
      std::optional<Factors> out = StrideBy(Sub(m.inner()), m.argument());
      return out ? *std::move(out) : Factors{Composite(m)};
    }
    case Mapping::Kind::kLinear:
    case Mapping::Kind::kLeftPad:  // a shift: no digit's values start past zero
      return {Composite(m)};
  }
  return {Composite(m)};
}

}  // namespace

NormalForm::NormalForm(std::vector<Factor> innermost_first) : factors_(std::move(innermost_first)) {
  auto note = [this](const std::string& name, int64_t size) {
    for (const auto& [known, unused] : axis_sizes_) {
      if (known == name) return;
    }
    axis_sizes_.emplace_back(name, size);
  };
  for (const Factor& f : factors_) {
    if (f.kind == Factor::Kind::kDigit && !f.axis.empty()) note(f.axis, f.axis_size);
    if (f.kind != Factor::Kind::kComposite) continue;
    for (const Axis& axis : f.composite->symbols()) {
      note(axis.skew ? axis.skew->base : axis.name, axis.size);
    }
  }
}

namespace {

bool InRange(const Index& index, const std::vector<std::pair<std::string, int64_t>>& sizes) {
  for (const auto& [name, size] : sizes) {
    if (index[name] >= size) return false;
  }
  return true;
}

}  // namespace

NormalForm NormalForm::Of(const Mapping& m) {
  VISA_CHECK(m.ok(), "NormalForm::Of needs a valid mapping");
  // A skew (or a left padding's shift) couples axes across the whole expression, so such a mapping
// stays one composite.
  if (HasSkew(m) || !m.is_one_to_one()) return NormalForm({Composite(m)});
  NormalForm form(Normalize(m));
  VISA_CHECK(form.size() == m.size(), "normalization changed the size of a mapping");
  return form;
}

int64_t NormalForm::size() const { return SizeOf(factors_); }

bool NormalForm::is_canonical() const {
  return std::none_of(factors_.begin(), factors_.end(),
                      [](const Factor& f) { return f.kind == Factor::Kind::kComposite; });
}

Cell NormalForm::map(int64_t i) const {
  if (i < 0 || i >= size()) return Cell::OutOfBounds();
  // Inner sizes of every factor, then decide from the outermost factor in, so major padding wins.
  std::vector<int64_t> inner(factors_.size());
  int64_t running = 1;
  for (size_t k = 0; k < factors_.size(); ++k) {
    inner[k] = running;
    running = OuterSize(factors_[k], running);
  }
  Index index;
  int64_t rest = i;  // position inside the current factor's extent
  for (size_t k = factors_.size(); k-- > 0;) {
    const Factor& f = factors_[k];
    switch (f.kind) {
      case Factor::Kind::kBlockPad:
        if (rest >= inner[k]) return Cell::Pad(f.pad);
        break;
      case Factor::Kind::kDigit: {
        int64_t d = rest / inner[k];
        if (d >= f.live) return Cell::Pad(f.pad);
        if (!f.axis.empty()) index.Add(f.axis, d * f.coef);
        rest %= inner[k];
        break;
      }
      case Factor::Kind::kComposite: {
        Cell cell = f.composite->map_raw(rest / inner[k]);
        if (!cell.live()) return cell;
        index.AddAll(cell.index);
        rest %= inner[k];
        break;
      }
    }
  }
  // Digits of one axis can sum past its end: no tensor element is there (see Mapping::map).
  if (!InRange(index, axis_sizes_)) return Cell::Pad(PadKind::kTop);
  return Cell::Live(std::move(index));
}

absl::StatusOr<std::optional<int64_t>> NormalForm::inverse(const Index& index) const {
  if (!is_canonical()) return absl::UnimplementedError("inverse of a composite factor");
  if (!InRange(index, axis_sizes_)) return std::nullopt;
  std::vector<int64_t> inner(factors_.size());
  int64_t running = 1;
  for (size_t k = 0; k < factors_.size(); ++k) {
    inner[k] = running;
    running = OuterSize(factors_[k], running);
  }
  int64_t position = 0;
  for (const auto& [axis, value] : index.coords()) {
    std::vector<size_t> digits;  // this axis's digits, by ascending coefficient
    for (size_t k = 0; k < factors_.size(); ++k) {
      if (factors_[k].kind == Factor::Kind::kDigit && factors_[k].axis == axis) digits.push_back(k);
    }
    if (digits.empty()) return std::nullopt;
    std::sort(digits.begin(), digits.end(),
              [&](size_t a, size_t b) { return factors_[a].coef < factors_[b].coef; });
    for (size_t j = 1; j < digits.size(); ++j) {
      const Factor& lower = factors_[digits[j - 1]];
      if (factors_[digits[j]].coef < lower.coef * lower.live) {
        return absl::UnimplementedError("overlapping digits of one axis");
      }
    }
    int64_t remaining = value;
    for (size_t j = digits.size(); j-- > 0;) {
      const Factor& f = factors_[digits[j]];
      int64_t d = std::min(remaining / f.coef, f.live - 1);
      remaining -= d * f.coef;
      position += d * inner[digits[j]];
    }
    if (remaining != 0) return std::nullopt;
  }
  return position;
}

namespace {

// A digit's reach coef * live, saturated: forms built by hand (a tile view) may hold any live count.
int64_t Reach(const Factor& f) {
  int64_t reach = 0;
  return __builtin_mul_overflow(f.coef, f.live, &reach) ? std::numeric_limits<int64_t>::max() : reach;
}

// The live part of an axis digit: `X / c % l`, `X = (c*l) / c` or `X # (c*l) / c`.
std::string PrintLiveAxis(const Factor& f) {
  int64_t reach = Reach(f);
  std::string text = f.axis;
  if (f.axis_size % reach == 0) {
    if (f.coef != 1) absl::StrAppend(&text, " / ", f.coef);
    if (f.axis_size / f.coef != f.live) absl::StrAppend(&text, " % ", f.live);
    return text;
  }
  if (reach < f.axis_size) {
    absl::StrAppend(&text, " = ", reach);
  } else {
    absl::StrAppend(&text, " # ", reach);
  }
  if (f.coef != 1) absl::StrAppend(&text, " / ", f.coef);
  return text;
}

std::string PrintFactor(const Factor& f) {
  if (f.kind == Factor::Kind::kComposite) {
    return f.composite->kind() == Mapping::Kind::kPair ? absl::StrCat("[", f.composite->ToString(), "]")
                                                       : f.composite->ToString();
  }
  std::string text = f.axis.empty() ? absl::StrCat(f.live) : PrintLiveAxis(f);
  if (f.count != f.live) absl::StrAppend(&text, " ", PadKindOperator(f.pad), " ", f.count);
  return text;
}

// Terms of factors [0, end), outermost first; a block pad wraps everything inner to it.
std::vector<std::string> PrintTerms(const Factors& factors, size_t end) {
  std::vector<std::string> terms;
  for (size_t k = end; k-- > 0;) {
    const Factor& f = factors[k];
    if (f.kind == Factor::Kind::kBlockPad) {
      std::vector<std::string> inner = PrintTerms(factors, k);
      std::string body = inner.size() == 1 && inner[0].find(',') == std::string::npos
                             ? inner[0]
                             : absl::StrCat("[", absl::StrJoin(inner, ", "), "]");
      terms.push_back(absl::StrCat(body, " ", PadKindOperator(f.pad), " ", f.block));
      return terms;
    }
    terms.push_back(PrintFactor(f));
  }
  return terms;
}

absl::StatusOr<Mapping> FactorMapping(const Factor& f) {
  if (f.kind == Factor::Kind::kComposite) return *f.composite;
  Mapping live;
  if (f.axis.empty()) {
    ASSIGN_OR_RETURN(live, Mapping::Broadcast(f.live));
  } else {
    ASSIGN_OR_RETURN(live, Mapping::Symbol(Axis{f.axis, f.axis_size, std::nullopt}));
    const int64_t reach = Reach(f);
    if (f.axis_size % reach == 0) {
      ASSIGN_OR_RETURN(live, Mapping::MakeStride(live, f.coef));
      ASSIGN_OR_RETURN(live, Mapping::MakeModulo(live, f.live));
    } else {
      ASSIGN_OR_RETURN(live, reach < f.axis_size ? Mapping::MakeResize(live, reach)
                                                 : Mapping::MakePadding(live, reach, PadKind::kTop));
      ASSIGN_OR_RETURN(live, Mapping::MakeStride(live, f.coef));
    }
  }
  return Mapping::MakePadding(live, f.count, f.pad);
}

absl::StatusOr<Mapping> BuildMapping(const Factors& factors, size_t end) {
  Mapping result;  // identity
  bool first = true;
  for (size_t k = 0; k < end; ++k) {
    const Factor& f = factors[k];
    if (f.kind == Factor::Kind::kBlockPad) {
      ASSIGN_OR_RETURN(result, Mapping::MakePadding(result, f.block, f.pad));
    } else {
      ASSIGN_OR_RETURN(Mapping term, FactorMapping(f));
      if (first) {
        result = term;
      } else {
        ASSIGN_OR_RETURN(result, Mapping::MakePair(term, result));
      }
    }
    first = false;
  }
  return result;
}

}  // namespace

std::string NormalForm::ToString() const {
  if (factors_.empty()) return "1";
  return absl::StrJoin(PrintTerms(factors_, factors_.size()), ", ");
}

Mapping NormalForm::ToMapping() const {
  absl::StatusOr<Mapping> built = BuildMapping(factors_, factors_.size());
  if (built.ok()) return *std::move(built);
  // Forms derived from user input (a tile view of more values than its dimension holds) can name
  // digits no mapping has: that is the user's error, carried by an invalid mapping.
  return Mapping::Invalid(absl::InvalidArgumentError(absl::StrCat(
      "normal form: `", ToString(), "` is not a mapping: ", built.status().message())));
}

}  // namespace visa
