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

}  // namespace visa::jit
