// Mapping facts: keys with sizes, padding from the normal form.
#include "jit/mapping_facts.h"

#include "absl/strings/str_cat.h"
#include "dsl/normal_form.h"

namespace visa::jit {

std::string MappingKey(const Mapping& m) {
  std::string key = m.ToString();
  for (const Axis& axis : m.symbols()) {
    absl::StrAppend(&key, " ", axis.name, "=", axis.size);
    if (axis.skew) absl::StrAppend(&key, "(", axis.skew->base, "-", axis.skew->offset, ")");
  }
  return key;
}

bool HasPadding(const Mapping& mapping) {
  const NormalForm& form = mapping.normal_form();
  if (!form.is_canonical()) return true;
  for (const Factor& f : form.factors()) {
    if (f.kind != Factor::Kind::kDigit || !f.fully_live()) return true;
  }
  return false;
}

}  // namespace visa::jit
