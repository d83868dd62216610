// Text flags that must say something (tools/text_flag.h).
#include "tools/text_flag.h"

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"

namespace visa::cli {

CLI::Validator NonEmptyText(const std::string& what) {
  return CLI::Validator(
      [what](std::string& text) -> std::string {
        if (!absl::StripAsciiWhitespace(text).empty()) return "";
        return absl::StrCat("the value is empty: name ", what);
      },
      "", "not empty");
}

void RefuseEmptyValues(CLI::App& app) {
  for (CLI::App* sub : app.get_subcommands([](CLI::App*) { return true; })) RefuseEmptyValues(*sub);
  for (CLI::Option* option : app.get_options()) {
    if (option->get_type_size() == 0) continue;  // a switch takes no value
    option->check(NonEmptyText("a value"));
  }
}

}  // namespace visa::cli
