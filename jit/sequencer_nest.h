// The loop nest a recorded sequencer configuration walks, as the JIT executes it.
//
// The tracer derives, for every fetch, the Fetch Sequencer's configuration over the DM Element:
// entries `size : stride`, outermost first, whose odometer gives stream position after stream
// position the buffer offset it reads (manual, "Sequencer"). The JIT does not re-derive that move
// from the mappings: it turns the recorded entries into its loop nest (stream positions dense, in
// entry order; buffer offsets by the entries' strides) with one outer level per slice. Agreement
// with the interpreter, which moves data by tensor index, therefore checks the derivation that
// `visa explain` prints. Stream positions the mapping pads are read like the hardware reads them
// (over-reading the buffer) and then overwritten with the pad value, as the adapter masks them.
#pragma once

#include <cstdint>
#include <optional>

#include "dsl/sequencer.h"
#include "jit/move_nest.h"

namespace visa::jit {

// The read nest of `config` (destination: the stream; source: the buffer) repeated over `units`
// spatial positions of `stream_unit` stream and `buffer_unit` buffer positions each; nullopt when
// the entries do not enumerate exactly `stream_unit` positions.
std::optional<MoveNest> ReadNestOf(const SequencerConfig& config, int64_t units, int64_t stream_unit,
                                   int64_t buffer_unit);

// The read nest of an interleaved fetch (`begin_interleaved`): the recorded entries walk one
// tensor's Element and the interleave term of Time, `inner_positions` stream positions apart,
// selects the tensor, `tensor_positions` buffer positions apart (two tensors staged one after the
// other). nullopt when no boundary between entries falls at the interleave term (merged entries
// straddling it) or the entries do not enumerate `stream_unit / 2` positions.
std::optional<MoveNest> InterleavedReadNestOf(const SequencerConfig& config, int64_t inner_positions,
                                              int64_t tensor_positions, int64_t units, int64_t stream_unit,
                                              int64_t buffer_unit);

// The write nest of a Commit Sequencer `config` (destination: the buffer; source: the stream) over
// the first `units` spatial positions, each `stream_unit` stream and `buffer_unit` buffer
// positions apart. The entries enumerate the committed positions in stream order: the time entries
// step over whole stream packets, the packet entries over the first `config.packet_size`
// positions of each (the truncating adapter drops the rest). nullopt unless every write stays
// inside the unit's first `element_size` buffer positions (the tensor's own Element, padding
// included) and no two positions write the same offset, so that walking the entries writes what
// a move by index writes and no byte of a neighbour.
std::optional<MoveNest> WriteNestOf(const SequencerConfig& config, int64_t units, int64_t stream_unit,
                                    int64_t buffer_unit, int64_t element_size);

}  // namespace visa::jit
