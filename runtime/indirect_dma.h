// DMA gathers: rows of a table selected at run time by an index tensor in device memory (the
// manual's IndirectLoop, dsl/indirect_access.h), e.g. an embedding lookup by token indices.
#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "runtime/backend.h"
#include "runtime/dma.h"
#include "runtime/tensor.h"

namespace visa {

// out[.., K = k, ..] = table[.., W = index[k], ..]: `index` is an i32 tensor over one axis K, the
// destination's mappings name K where the table's name W (`table_axis`) and the table's other
// axes as they are. Checked at the call (rule "Indirect Access"); an index value outside
// 0..|W| - 1 fails the op when it runs, naming k and the value.
absl::StatusOr<DeviceTensor> Gather(Dma& dma, const DeviceTensor& table, const DeviceTensor& index,
                                    const std::string& table_axis, const Destination& dst);

// A scatter: out = `into` with out[.., W = index[k], ..] = rows[.., K = k, ..] (e.g. new keys and
// values appended to a KV cache). `rows` names K where `into` names W (`table_axis`); the
// destination holds `into`'s axes. An index outside 0..|W| - 1, or two naming one row, fail the op
// when it runs (rule "Indirect Access").
absl::StatusOr<DeviceTensor> Scatter(Dma& dma, const DeviceTensor& rows, const DeviceTensor& index,
                                     const DeviceTensor& into, const std::string& table_axis,
                                     const Destination& dst);
absl::Status ScatterInto(const IndirectLoop& loop, const DmaTensors& tensors);

// The row numbers a recorded gather or scatter's index tensor holds, checked as the op runs: each
// inside 0..|W| - 1, and for a scatter no two the same (errors name rule "Indirect Access").
absl::StatusOr<std::vector<int64_t>> IndirectRows(const IndirectLoop& loop, const DeviceTensor& index);

// The rows an indirect fetch reads, checked as every engine read is on a device that tracks
// writes (runtime/uninitialized_reads.h), the same on both backends: the index tensor (all of it
// is read), then its row numbers (IndirectRows), then the live elements of the rows of `table`
// they name; the first unwritten one, in K order, is reported as `op`'s read ("Uninitialized
// Read: ...", naming the row and k). Only the named rows count: a partly written table whose
// gathered rows were all written is clean.
absl::StatusOr<std::vector<int64_t>> ReadIndirectRows(const IndirectLoop& loop, const DeviceTensor& index,
                                                      const DeviceTensor& table, absl::string_view op);

// The data path of a recorded gather (Backend::Run's default for a DmaOp with `indirect`): reads
// the index tensor, then moves every destination element from the table row it selects.
absl::Status GatherInto(const IndirectLoop& loop, const DmaTensors& tensors);

}  // namespace visa
