// Digit projection of an index onto a source mapping's normal form.
#include "dsl/index_projection.h"

#include <map>
#include <string>
#include <vector>

#include "dsl/normal_form.h"

namespace visa {

Index ProjectOntoSource(const Index& index, const Mapping& src) {
  const NormalForm& form = src.normal_form();
  if (!form.is_canonical()) return index;
  std::map<std::string, std::vector<const Factor*>> digits;
  for (const Factor& f : form.factors()) {
    if (f.kind == Factor::Kind::kDigit && !f.axis.empty()) digits[f.axis].push_back(&f);
  }
  Index out;
  for (const auto& [axis, value] : index.coords()) {
    auto it = digits.find(axis);
    if (it == digits.end()) {
      out.Set(axis, 0);  // named with no digit (`B = 1`): the one coordinate it holds
      continue;
    }
    int64_t projected = 0;
    for (const Factor* f : it->second) projected += (value / f->coef) % f->live * f->coef;
    out.Set(axis, projected);
  }
  return out;
}

}  // namespace visa
