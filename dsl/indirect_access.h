// Indirect access (manual, "Sequencer" > "Indirect Access"; "Mapping Expressions" > "Indirect
// Sequencing"): the IndirectLoop entry `(limit, [offset0, offset1, ...])`, whose offsets are not a
// stride but come from an index tensor in device memory, read when the op runs.
//
// visa records it on a DMA gather: for each value k of the index tensor's axis K (the loop's
// `limit` iterations), the source row `table_axis = index[k]` (offset index[k] x `row_stride`
// source elements) is moved to the destination's row K = k; and on a DMA scatter, the other way:
// source row K = k is written to the destination's row W = index[k] (the rows no index names come
// from the tensor scattered into). What the manual leaves open is decided here, and the bad cases
// are errors, never a silent wrong read or write: an index outside 0..|W| - 1 fails the op
// (Indirect Access: ...) naming k and the value; two indices naming one row fail a scatter (which
// write would win is not the manual's to say); an index tensor must be i32 row numbers.
#pragma once

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "dsl/mapping.h"

namespace visa {

struct IndirectLoop {
  std::string table_axis;  // W: the source axis the rows are numbered along
  int64_t table_size = 0;  // |W|
  std::string key_axis;    // K: the index tensor's axis, the destination's in W's place
  int64_t limit = 0;       // |K|: the loop's iterations
  int64_t row_stride = 0;  // table elements between consecutive W (an offset's unit)
  bool scatter = false;    // rows K of the source go to rows W = index[K] of the destination
  // The table side's sequencer configuration with the IndirectLoop entry in place of W's
  // (DeriveIndirectSequencer), e.g. "[K -> (8, [index[K] x 32]), V -> 32 : 1] : 32"; or why the
  // table's Element has none.
  std::string sequencer;
  // "IndirectLoop (limit 8, [offset0, ...] = index[K] x 32 elements) gathers W = 16 rows into K"
  std::string Describe() const;
  bool operator==(const IndirectLoop&) const = default;
};

// The sequencer over the table's Element (a DM tensor's per-slice Element, or an HBM tensor's)
// streaming one row per step, Time `W`, Packet the Element's other axes, as DeriveSequencer derives
// it; then W's (|W|, row stride) entry becomes the IndirectLoop entry (|K|, [index[k] x row
// stride]) (manual, Sequencer > Indirect Access). Fails when W is not one entry of that
// configuration (e.g. W split across digits, or not in the Element).
// The IndirectLoop's offsets are index[k] x `row_stride` elements: each is where a read starts, so
// it must be a whole number of bytes for every k, which for 4-bit elements means an even row
// stride (manual, "Fetch Sequencer" > Constraints: "Fetch addresses must be 1-byte aligned
// (minimal constraint), but 8-byte alignment is required for certain DMA operations"). Fails
// with "Indirect Access: ..." naming the stride otherwise (a table of rows of 13 i4 elements laid
// out one after the other; pad the row, e.g. `V # 14`, to gather it).
absl::Status CheckRowsStartOnBytes(const IndirectLoop& loop, int element_bits, const std::string& element_type);

absl::StatusOr<std::string> DeriveIndirectSequencer(const Mapping& table_element, const IndirectLoop& loop);

}  // namespace visa
