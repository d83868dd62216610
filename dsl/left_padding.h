// Left padding in sequenced streams (manual, "Masking Configuration": `# n + A + # m`).
//
// A stream that left-pads axis A by n reads A shifted: its value a' stands for a = a' - n. The
// sequencer realizes the shift without a new kind of entry: it walks a stand-in axis A' of n + |A|
// values over the buffer as if A' were A, and moves its base address back n steps of A's digit
// (the manual's `@ base_addr = -2`). The n leading positions then read before A's first element
// and the fetch adapter masks them (`lpad`), as it masks the right padding.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "dsl/mapping.h"

namespace visa {

// One left-padded axis of a stream.
struct ShiftedAxis {
  std::string axis;      // A
  std::string stand_in;  // A' (the name the sequencer's entries carry)
  int64_t left = 0;      // n
};

// The sequencer's view of a left-padded stream: the buffer and the stream over stand-in axes.
struct ShiftedStream {
  Mapping buffer, time, packet;
  std::vector<ShiftedAxis> axes;
  int64_t base_offset = 0;  // buffer positions the base address moves (-n * A's digit weight)
};

// True when `m` contains a left padding anywhere.
bool HasLeftPadding(const Mapping& m);

// Rewrites a left-padded stream for the sequencer. Errors name the rule "Left padding": a left
// pad of something other than an axis, one axis left-padded by two amounts, or a buffer that
// holds the axis in more than one digit (the shift would carry between them).
absl::StatusOr<ShiftedStream> ShiftLeftPadding(const Mapping& buffer, const Mapping& time,
                                               const Mapping& packet);

}  // namespace visa
