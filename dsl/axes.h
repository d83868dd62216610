// Axes: the named, sized dimensions of tensors, declared at runtime (the manual's `axes![...]`).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include "absl/strings/string_view.h"
#include <vector>

#include "absl/status/statusor.h"
#include "dsl/index.h"

namespace visa {

class Mapping;

// A skewed axis `B' = B - A` ("Advanced Constructors"): its coordinate b' stands for the base
// coordinate b = (b' + a) mod |B|, so consecutive values of A shift the row by one.
struct Skew {
  std::string base;    // B
  std::string offset;  // A
  bool operator==(const Skew&) const = default;
};

// The hidden axis of a left padding `# n + B` (dsl/mapping.h): its coordinate b' stands for
// b = b' - n, and a b' outside [n, n + |B|) is padding of `pad`. Digits of a left-padded mapping
// (`[# 2 + B + # 4] / 32` and `% 32`) add their b' coordinates before the shift applies, as the
// manual's `let B' = # 2 + B + # 4 in ...` reads.
struct Shift {
  std::string base;  // B
  int64_t left = 0;  // n
  int64_t base_size = 0;
  PadKind pad = PadKind::kTop;
  bool operator==(const Shift&) const = default;
};

struct Axis {
  std::string name;
  int64_t size = 0;
  std::optional<Skew> skew = std::nullopt;
  std::optional<Shift> shift = std::nullopt;
  bool operator==(const Axis&) const = default;
};

// Sizes beyond this are rejected so that products of sizes never overflow int64.
inline constexpr int64_t kMaxMappingSize = int64_t{1} << 52;

// An ordered set of axis declarations. Names follow the manual: an uppercase letter, then letters,
// digits or '_' (a derived skew axis ends in a prime, `B'`).
class Axes {
 public:
  Axes() = default;

  // Parses "A = 8, B = 512" (also "A=8,B=512"), and skew axes "B' = B - A".
  static absl::StatusOr<Axes> Parse(absl::string_view text);

  absl::Status Declare(std::string name, int64_t size);
  absl::Status DeclareSkew(std::string name, std::string base, std::string offset);

  const Axis* Find(absl::string_view name) const;
  const std::vector<Axis>& all() const { return axes_; }

  // The symbol mapping of a declared axis; an unknown name gives an invalid mapping.
  Mapping operator[](absl::string_view name) const;

 private:
  std::vector<Axis> axes_;
};

// True for the manual's axis identifiers: [A-Z][A-Za-z0-9_]*, optionally followed by one '\''.
bool IsAxisName(absl::string_view name);

}  // namespace visa
