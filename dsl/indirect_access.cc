// IndirectLoop's text for `visa explain`.
#include "dsl/indirect_access.h"

#include "absl/strings/str_cat.h"

namespace visa {

std::string IndirectLoop::Describe() const {
  if (scatter) {
    return absl::StrCat("IndirectLoop (limit ", limit, ", [offset0, offset1, ...] = index[", key_axis, "] x ",
                        row_stride, " elements) scatters rows of ", key_axis, " into ", table_axis, " = ",
                        table_size);
  }
  return absl::StrCat("IndirectLoop (limit ", limit, ", [offset0, offset1, ...] = index[", key_axis, "] x ",
                      row_stride, " elements) gathers rows of ", table_axis, " = ", table_size, " into ",
                      key_axis);
}

}  // namespace visa
