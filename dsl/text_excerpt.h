// Text excerpts for error messages: a bounded window of user input around a column, cut only at
// UTF-8 character boundaries, so an error never echoes megabytes nor half a character.
#pragma once

#include <cstddef>
#include <string>

#include "absl/strings/string_view.h"

namespace visa {

// At most this many bytes of input on each side of the column an error points at.
inline constexpr size_t kExcerptContextBytes = 40;

// `text` itself when short; else the part within kExcerptContextBytes of byte `column`, with
// "..." where it was cut. Cuts move outward to whole UTF-8 characters.
std::string Excerpt(absl::string_view text, size_t column);

// The whole UTF-8 character starting at byte `pos` (one byte when it is ASCII or malformed).
std::string CharacterAt(absl::string_view text, size_t pos);

}  // namespace visa
