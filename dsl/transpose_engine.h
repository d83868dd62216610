// The Transpose Engine: the rules of `transpose::<OutTime, OutPacket>()` and the configuration
// (in_rows, in_cols, out_rows, buffering, cycles) it derives.
//
// The engine reads `in_rows x packets_per_col` packets of a slice's stream as an
// [in_rows x in_cols] matrix (each packet contributing its first elements_per_packet elements),
// transposes it, trims trailing padded rows down to out_rows and pads each output row to one flit
// (manual, "Transpose Engine"). Chip, Cluster and Slice pass through. This module validates a
// transpose and derives its configuration; the interpreter moves the data by tensor index.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "dsl/dtype.h"
#include "dsl/mapping.h"
#include "dsl/stream.h"

namespace visa {

// Columns of each of the engine's two internal buffers (manual, "Internal Buffer Architecture").
inline constexpr int64_t kTransposeBufferCols = 16;

// The manual's per-type table ("Constraints").
struct TransposeLimits {
  int64_t elements_per_packet = 0;  // live elements the Unpack stage keeps from each input packet
  int64_t output_alignment = 0;     // elements in one output flit
  int64_t max_in_rows = 0;
  std::vector<int64_t> valid_in_cols;
};

// The table row for `type`; InvalidArgument for the staging types i5 / i9, which the engine does
// not take.
absl::StatusOr<TransposeLimits> TransposeLimitsFor(DType type);

// The manual's "Cycle Calculation": double buffering when in_cols <= 16 (input and output of
// successive iterations overlap), single buffering otherwise (they alternate). `iterations` is
// n = OutTime::SIZE / out_rows.
int64_t TransposeCycles(int64_t in_rows, int64_t packets_per_col, int64_t out_rows,
                        int64_t iterations, bool double_buffered);

struct TransposeStage {
  StreamShape out;
  int64_t in_rows = 0, in_cols = 0, out_rows = 0;
  int64_t cycles = 0;
  // The rest of the manual's model, derived alongside.
  int64_t packets_per_col = 0;      // time steps that form one input row
  int64_t elements_per_packet = 0;  // in_cols = packets_per_col * elements_per_packet
  int64_t output_alignment = 0;
  int64_t iterations = 0;        // n = OutTime::SIZE / out_rows
  bool double_buffered = false;  // in_cols <= kTransposeBufferCols
  // "Transpose i8: in_rows 8, in_cols 8 (1 packet x 8), out_rows 8, n 8, double buffering, 72
  // cycles"
  std::string Describe() const;
};

// Checks `transpose::<out_time, out_packet>()` on the stream `in` and derives the configuration.
// Input Time must read as [outer, in_rows, packets_per_col] and the output must be
// OutTime = [outer, the first out_rows columns] and OutPacket = [rows # output_alignment], all
// compared by meaning. When several configurations produce the same output (only possible with
// padded or broadcast Time digits), the one with the fewest cycles is chosen. Errors
// (InvalidArgument) name the broken rule.
absl::StatusOr<TransposeStage> PlanTranspose(const StreamShape& in, const Mapping& out_time,
                                             const Mapping& out_packet);

}  // namespace visa
