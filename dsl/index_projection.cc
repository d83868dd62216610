// Digit projection of an index onto a source mapping's normal form.
#include "dsl/index_projection.h"

#include <algorithm>

namespace visa {

std::vector<SourceDigit> SourceDigitsOf(const NormalForm& src, const std::string& axis) {
  std::vector<const Factor*> factors;
  for (const Factor& f : src.factors()) {
    if (f.kind == Factor::Kind::kDigit && f.axis == axis && f.live > 1) factors.push_back(&f);
  }
  std::sort(factors.begin(), factors.end(), [](const Factor* a, const Factor* b) { return a->coef < b->coef; });
  std::vector<SourceDigit> digits;
  for (size_t i = 0; i < factors.size(); ++i) {
    const Factor& f = *factors[i];
    int64_t modulus = f.live;
    if (i + 1 < factors.size()) modulus = std::min(f.count, std::max<int64_t>(1, factors[i + 1]->coef / f.coef));
    digits.push_back({f.coef, f.live, modulus});
  }
  return digits;
}

std::optional<Index> ProjectOntoSource(const Index& index, const Mapping& src) {
  const NormalForm& form = src.normal_form();
  if (!form.is_canonical()) return index;
  Index out;
  for (const auto& [axis, value] : index.coords()) {
    int64_t projected = 0;
    for (const SourceDigit& d : SourceDigitsOf(form, axis)) {
      const int64_t x = value / d.coef % d.modulus;
      if (x >= d.live) return std::nullopt;
      projected += x * d.coef;
    }
    out.Set(axis, projected);
  }
  return out;
}

}  // namespace visa
