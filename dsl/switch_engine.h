// Switch Engine: checks a `switch::<OutSlice, OutTime>(config)` call and derives its ring size and cycles.
//
// The Switch Engine redistributes a FetchTensor across the 256 slices of a cluster through a ring
// network (manual, "Switch Engine"). Chip, Cluster and Packet pass through unchanged; only Slice and
// Time are rearranged, as the topology in the config dictates. This module only validates and
// derives: the interpreter moves the data between the two stream shapes by tensor index, because a
// switch never changes which element a (slice, time, packet) position of the tensor holds, only
// where it sits.
//
// Topologies (the manual's names and parameters; the input Slice is read as
// [slice2, slice1, slice0] with slice0 innermost, X / Y are fresh broadcast tiles):
//   Forwarding                       no call in the manual (collect() directly); ring 1
//   Broadcast01{slice1, slice0, time0}  [slice2, X, Y] / [time1, slice1, time0, slice0]
//   Broadcast1{slice1, slice0}          [slice2, X, slice0] / [InTime, slice1]
//   Transpose{slice1, slice0}           [slice2, slice0, slice1] / InTime
//   InterTranspose{slice1, slice0, time0}  [slice2, time1, slice0] / [time2, time0, slice1]
//   TransposedBroadcast1{slice1, slice0}   [slice2, Y, slice1] / [InTime, slice0]  (notes only)
//   CustomBroadcast{ring_size}       any slice permutation and broadcast, moved axes innermost in Time
// Cycles = ring_size x InTime::SIZE x flits per packet (flits = ceil(packet bytes / 32)).
#pragma once

#include <cstdint>
#include <string>
#include <utility>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "dsl/mapping.h"
#include "dsl/stream.h"

namespace visa {

struct SwitchConfig {
  enum class Kind {
    kForward,               // no switching (the manual skips the call and collects directly)
    kBroadcast01,           // slice1, slice0, time0
    kBroadcast1,            // slice1, slice0
    kTranspose,             // slice1, slice0
    kInterTranspose,        // slice1, slice0, time0
    kTransposedBroadcast1,  // slice1, slice0 (in the reference notes, not in the manual)
    kCustomBroadcast,       // ring_size
  };

  Kind kind = Kind::kForward;
  int64_t slice1 = 0;
  int64_t slice0 = 0;
  int64_t time0 = 0;
  int64_t ring_size = 0;  // kCustomBroadcast only

  static SwitchConfig Forward();
  static SwitchConfig Broadcast01(int64_t slice1, int64_t slice0, int64_t time0);
  static SwitchConfig Broadcast1(int64_t slice1, int64_t slice0);
  static SwitchConfig Transpose(int64_t slice1, int64_t slice0);
  static SwitchConfig InterTranspose(int64_t slice1, int64_t slice0, int64_t time0);
  static SwitchConfig TransposedBroadcast1(int64_t slice1, int64_t slice0);
  static SwitchConfig CustomBroadcast(int64_t ring_size);

  // "Forwarding", "Broadcast01{slice1=2, slice0=2, time0=4}", "CustomBroadcast{ring_size=32}".
  std::string ToString() const;
  bool operator==(const SwitchConfig&) const = default;
};

// "Forwarding", "Broadcast01", ..., "CustomBroadcast".
const char* SwitchKindName(SwitchConfig::Kind kind);

struct SwitchStage {
  SwitchConfig config;
  StreamShape out;
  int64_t ring_size = 1;
  int64_t cycles = 0;
  // "Broadcast01{slice1=2, slice0=2, time0=4} ring 4"
  std::string Describe() const;
};

// Checks every rule of the manual's Switch Engine page for `in` switched to (out_slice, out_time)
// under `config`, and returns the output shape (dtype, chip, cluster and packet of `in`; the given
// slice and time) with its ring size and cycle estimate. Mappings are compared by meaning, never by
// text. Each error names the topology, the rule, the offending mapping and, where there is one, the
// expected mapping.
absl::StatusOr<SwitchStage> PlanSwitch(const StreamShape& in, const SwitchConfig& config,
                                       const Mapping& out_slice, const Mapping& out_time);

// The (OutSlice, OutTime) a regular topology produces from `in`, each broadcast tile written as a
// bare broadcast `n` (any fresh tile of that size is accepted in its place). CustomBroadcast has no
// single answer and is an error, as is an input the topology cannot take.
absl::StatusOr<std::pair<Mapping, Mapping>> RegularSwitchOutput(const StreamShape& in,
                                                                const SwitchConfig& config);

// Parses "Broadcast01{2,2,4}", "Broadcast01{slice1=2, slice0=2, time0=4}", the manual's
// "SwitchConfig::Broadcast01 { slice1: 2, slice0: 2, time0: 4 }", "CustomBroadcast{256}" and
// "Forwarding" (also "Forward"). Parameter values are checked by PlanSwitch, not here.
absl::StatusOr<SwitchConfig> ParseSwitchConfig(absl::string_view text);

}  // namespace visa
