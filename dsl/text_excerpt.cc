// Excerpts of user input cut at UTF-8 character boundaries.
#include "dsl/text_excerpt.h"

#include <algorithm>

#include "absl/strings/str_cat.h"

namespace visa {
namespace {

bool IsContinuation(unsigned char c) { return (c & 0xC0) == 0x80; }

// Bytes of the UTF-8 sequence a lead byte starts (1 for ASCII and for bytes that lead nothing).
size_t SequenceLength(unsigned char lead) {
  if (lead >= 0xF0 && lead <= 0xF4) return 4;
  if (lead >= 0xE0) return lead <= 0xEF ? 3 : 1;
  if (lead >= 0xC2) return 2;
  return 1;
}

}  // namespace

std::string CharacterAt(absl::string_view text, size_t pos) {
  if (pos >= text.size()) return "";
  size_t n = std::min(SequenceLength(static_cast<unsigned char>(text[pos])), text.size() - pos);
  for (size_t k = 1; k < n; ++k) {
    if (!IsContinuation(static_cast<unsigned char>(text[pos + k]))) n = 1;  // malformed: the byte alone
  }
  return std::string(text.substr(pos, n));
}

std::string Excerpt(absl::string_view text, size_t column) {
  if (text.size() <= 2 * kExcerptContextBytes) return std::string(text);
  column = std::min(column, text.size());
  size_t begin = column > kExcerptContextBytes ? column - kExcerptContextBytes : 0;
  size_t end = std::min(text.size(), column + kExcerptContextBytes);
  // Widen to whole characters: never start or stop inside a sequence.
  while (begin > 0 && IsContinuation(static_cast<unsigned char>(text[begin]))) --begin;
  while (end < text.size() && IsContinuation(static_cast<unsigned char>(text[end]))) ++end;
  return absl::StrCat(begin > 0 ? "..." : "", text.substr(begin, end - begin), end < text.size() ? "..." : "");
}

}  // namespace visa
