// Sequencer entries to loop-nest levels.
#include "jit/sequencer_nest.h"

namespace visa::jit {

std::optional<MoveNest> ReadNestOf(const SequencerConfig& config, int64_t units, int64_t stream_unit,
                                   int64_t buffer_unit) {
  if (config.entries.empty() || config.stream_size() != stream_unit) return std::nullopt;
  MoveNest nest;
  int64_t dense = 1;  // stream positions per step of the current entry
  for (auto it = config.entries.rbegin(); it != config.entries.rend(); ++it) {
    nest.levels.push_back({it->size, dense, it->stride});
    dense *= it->size;
  }
  nest.levels.push_back({units, stream_unit, buffer_unit});
  return nest;
}

}  // namespace visa::jit
