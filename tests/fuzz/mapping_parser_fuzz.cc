// libFuzzer target: arbitrary bytes through ParseMapping; every mapping that parses must print, re-parse, normalize and be equivalent to itself.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "dsl/axes.h"
#include "dsl/equivalence.h"
#include "dsl/index.h"
#include "dsl/mapping.h"
#include "dsl/mapping_parser.h"
#include "dsl/normal_form.h"
#include "dsl/work_budget.h"

namespace visa {
namespace {

[[noreturn]] void Fail(const char* what, absl::string_view input, const std::string& detail) {
  std::fprintf(stderr, "mapping_parser_fuzz: %s\n  input: \"%.*s\"\n  %s\n", what, static_cast<int>(input.size()),
               input.data(), detail.c_str());
  std::abort();
}

struct Fixture {
  Axes axes;
  MappingDefs defs;
  Fixture() {
    absl::StatusOr<Axes> parsed = Axes::Parse("A = 8, B = 512, C = 3, B' = B - A");
    if (!parsed.ok()) Fail("fixture axes do not parse", "", parsed.status().ToString());
    axes = *parsed;
    absl::StatusOr<Mapping> l = ParseMapping("A % 4, C", axes);
    if (!l.ok()) Fail("fixture def does not parse", "", l.status().ToString());
    defs.emplace("L", *l);
  }
};

// A linear combination may leave positions inside its size holding nothing (`$(A: 2)` at odd positions).
bool HasLinear(const Mapping& m) {
  switch (m.kind()) {
    case Mapping::Kind::kLinear:
      return true;
    case Mapping::Kind::kPair:
      return HasLinear(m.major()) || HasLinear(m.minor());
    case Mapping::Kind::kPadding:
    case Mapping::Kind::kResize:
    case Mapping::Kind::kStride:
    case Mapping::Kind::kModulo:
      return HasLinear(m.inner());
    default:
      return false;
  }
}

void Exercise(absl::string_view text) {
  static const Fixture* const fixture = new Fixture();
  absl::StatusOr<Mapping> parsed = ParseMapping(text, fixture->axes, fixture->defs);
  if (!parsed.ok()) {
    if (parsed.status().message().empty()) Fail("parse error without a message", text, "");
    return;
  }
  const Mapping& m = *parsed;
  if (!m.ok()) Fail("ParseMapping returned OK with an invalid mapping", text, m.status().ToString());
  const int64_t size = m.size();
  if (size < 0 || size > kMaxMappingSize) Fail("size out of range", text, std::to_string(size));

  // A few positions, including the first out-of-bounds one, under a work budget: a position of a
  // huge combination may need more than any budget allows, which is a clean error.
  WorkBudget budget;
  for (int64_t p : {int64_t{0}, int64_t{1}, size / 2, size - 1, size}) {
    if (p < 0 || (p == size / 2 && p == size - 1)) continue;
    absl::StatusOr<Cell> tried = m.TryMap(p, budget);
    if (!tried.ok()) {
      if (tried.status().code() != absl::StatusCode::kResourceExhausted) Fail("TryMap failed", text, tried.status().ToString());
      return;
    }
    const Cell cell = *tried;
    if (p >= size && cell.kind != Cell::Kind::kOutOfBounds) Fail("map(size) is not out of bounds", text, cell.ToString());
    if (p < size && cell.kind == Cell::Kind::kOutOfBounds && !HasLinear(m)) {
      Fail("map inside the size is out of bounds", text, std::to_string(p));
    }
    (void)cell.ToString();
  }

  // The printer round-trips.
  const std::string printed = m.ToString();
  absl::StatusOr<Mapping> again = ParseMapping(printed, fixture->axes);
  if (!again.ok()) Fail("ToString does not parse back", text, printed + ": " + again.status().ToString());
  if (!(*again == m)) Fail("ToString parses back to a different value", text, printed + " -> " + again->ToString());

  const std::string normal = m.normal_form().ToString();
  if (normal.empty()) Fail("empty normal form text", text, printed);

  // One-to-many mappings compare every cell of every position: keep those small.
  if (size <= (m.is_one_to_one() ? 4096 : 256)) {
    absl::StatusOr<bool> self = Equivalent(m, m);
    if (self.status().code() == absl::StatusCode::kResourceExhausted) return;
    if (!self.ok()) Fail("Equivalent(m, m) failed", text, self.status().ToString());
    if (!*self) Fail("a mapping is not equivalent to itself", text, printed);
    absl::StatusOr<bool> reparsed = Equivalent(m, *again);
    if (!reparsed.ok() || !*reparsed) Fail("a mapping is not equivalent to its re-parsed text", text, printed);
  }
}

}  // namespace
}  // namespace visa

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  visa::Exercise(absl::string_view(reinterpret_cast<const char*>(data), size));
  return 0;
}
