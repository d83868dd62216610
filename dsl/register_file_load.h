// Loading the register files from a stream: `to_trf` (TRF rows) and `to_vrf` (the VRF).
#pragma once

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "dsl/stream.h"

namespace visa {

inline constexpr int64_t kVrfBytes = 8 * 1024;

struct RegisterLoadStage {
  bool to_trf = true;
  Mapping row;      // TRF rows (the outer part of Time); the identity for the VRF
  Mapping element;  // per row (TRF) or per slice (VRF)
  std::string trf_mode;         // "Full", "FirstHalf" or "SecondHalf" (runtime/address.h)
  int64_t vrf_address = 0;
  std::string Describe() const;
};

// `to_trf`: Time splits as [Row (outer), time_inner] and Element must be [time_inner, Packet];
// `row_capacity` is the bytes per row the TRF address mode `trf_mode` leaves.
absl::StatusOr<RegisterLoadStage> PlanToTrf(const StreamShape& in, StreamPosition position,
                                            ContextKind context, const Mapping& row,
                                            const Mapping& element, absl::string_view trf_mode,
                                            int64_t row_capacity);

// `to_vrf`: Element must hold [Time, Packet] and fit the 8 KB VRF.
absl::StatusOr<RegisterLoadStage> PlanToVrf(const StreamShape& in, StreamPosition position,
                                            ContextKind context, const Mapping& element,
                                            int64_t address);

}  // namespace visa
