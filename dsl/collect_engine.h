// The Collect Engine: normalizes every packet to exactly one 32-byte flit.
#pragma once

#include <string>

#include "absl/status/statusor.h"
#include "dsl/stream.h"

namespace visa {

struct CollectStage {
  StreamShape out;
  int64_t flits_per_packet = 1;  // flits the input packet became (moved into Time)
  std::string Describe() const;
};

// Pads the packet to a multiple of 32 bytes, keeps the inner flit as Packet2 and moves the outer
// flit count into Time2; `time2` and `packet2` must be equivalent to that.
absl::StatusOr<CollectStage> PlanCollect(const StreamShape& in, const Mapping& time2,
                                         const Mapping& packet2);

// Flit width in elements of a type (i5 / i9 count by their wire width).
int64_t FlitElements(DType dtype);

}  // namespace visa
