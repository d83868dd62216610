// ProgramEntry: a header line, one line per kernel (key, symbol), then each object preceded by its
// size in bytes.
#include "jit/program_entry.h"

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "jit/object_cache.h"

namespace visa::jit {
namespace {

constexpr absl::string_view kHeader = "visa program entry 1";

// A content name: "visa_" and 64 hex digits (the form of an ObjectKey).
bool IsContentName(absl::string_view name) {
  return absl::ConsumePrefix(&name, "visa_") && IsObjectKey(name);
}

// The next line of `rest` (without its newline), consumed; nullopt when there is no newline.
std::optional<absl::string_view> NextLine(absl::string_view& rest) {
  const size_t newline = rest.find('\n');
  if (newline == absl::string_view::npos) return std::nullopt;
  absl::string_view line = rest.substr(0, newline);
  rest.remove_prefix(newline + 1);
  return line;
}

std::optional<size_t> Count(std::optional<absl::string_view> line) {
  size_t value = 0;
  if (!line || !absl::SimpleAtoi(*line, &value)) return std::nullopt;
  return value;
}

}  // namespace

std::string PackProgramEntry(const ProgramEntry& entry) {
  std::string out = absl::StrCat(kHeader, "\n", entry.kernels.size(), "\n");
  for (const ProgramEntry::Kernel& k : entry.kernels) absl::StrAppend(&out, k.key, " ", k.symbol, "\n");
  absl::StrAppend(&out, entry.objects.size(), "\n");
  for (const std::string& object : entry.objects) absl::StrAppend(&out, object.size(), "\n", object);
  return out;
}

std::optional<ProgramEntry> UnpackProgramEntry(absl::string_view payload) {
  absl::string_view rest = payload;
  if (NextLine(rest) != kHeader) return std::nullopt;
  const std::optional<size_t> kernels = Count(NextLine(rest));
  // Every kernel line takes more than 64 bytes: a count the payload cannot hold is rot.
  if (!kernels || *kernels == 0 || *kernels > rest.size() / 64) return std::nullopt;
  ProgramEntry entry;
  for (size_t k = 0; k < *kernels; ++k) {
    std::optional<absl::string_view> line = NextLine(rest);
    if (!line) return std::nullopt;
    std::vector<absl::string_view> parts = absl::StrSplit(*line, ' ');
    if (parts.size() != 2 || !IsObjectKey(parts[0]) || !IsContentName(parts[1])) return std::nullopt;
    entry.kernels.push_back({std::string(parts[0]), std::string(parts[1])});
  }
  const std::optional<size_t> objects = Count(NextLine(rest));
  if (!objects || *objects == 0 || *objects > *kernels) return std::nullopt;
  for (size_t o = 0; o < *objects; ++o) {
    const std::optional<size_t> size = Count(NextLine(rest));
    if (!size || *size == 0 || *size > rest.size()) return std::nullopt;
    entry.objects.emplace_back(rest.substr(0, *size));
    rest.remove_prefix(*size);
  }
  if (!rest.empty()) return std::nullopt;
  return entry;
}

}  // namespace visa::jit
