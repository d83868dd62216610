// A shared helper for engine rule errors: "<Engine>: <rule>: <why>", with the offending mappings.
#pragma once

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace visa {

template <typename... Parts>
absl::Status EngineError(absl::string_view engine, const Parts&... parts) {
  return absl::InvalidArgumentError(absl::StrCat(engine, ": ", parts...));
}

}  // namespace visa
