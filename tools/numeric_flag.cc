// Range checks of whole-number flags, decided on the text so that no value can overflow first.
#include "tools/numeric_flag.h"

#include <string>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "dsl/text_excerpt.h"

namespace visa::cli {

CLI::Validator WholeNumberIn(int64_t min, int64_t max) {
  const std::string range = absl::StrCat("a whole number from ", min, " to ", max);
  return CLI::Validator(
      [min, max, range](std::string& value) -> std::string {
        int64_t n = 0;
        // SimpleAtoi refuses what does not fit in int64, so a huge value cannot wrap into range.
        if (absl::SimpleAtoi(value, &n) && n >= min && n <= max) return "";
        return absl::StrCat("value `", Excerpt(value, 0), "` is out of range: ", range);
      },
      range);
}

}  // namespace visa::cli
