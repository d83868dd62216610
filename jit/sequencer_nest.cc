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

std::optional<MoveNest> InterleavedReadNestOf(const SequencerConfig& config, int64_t inner_positions,
                                              int64_t tensor_positions, int64_t units, int64_t stream_unit,
                                              int64_t buffer_unit) {
  if (config.entries.empty() || 2 * config.stream_size() != stream_unit) return std::nullopt;
  MoveNest nest;
  int64_t dense = 1;  // stream positions per step of the current entry
  bool placed = false;
  for (auto it = config.entries.rbegin(); it != config.entries.rend(); ++it) {
    if (!placed && dense == inner_positions) {
      nest.levels.push_back({2, dense, tensor_positions});
      dense *= 2;
      placed = true;
    }
    nest.levels.push_back({it->size, dense, it->stride});
    dense *= it->size;
  }
  if (!placed && dense == inner_positions) {
    nest.levels.push_back({2, dense, tensor_positions});
    placed = true;
  }
  if (!placed) return std::nullopt;
  nest.levels.push_back({units, stream_unit, buffer_unit});
  return nest;
}

std::optional<MoveNest> WriteNestOf(const SequencerConfig& config, int64_t units, int64_t stream_unit,
                                    int64_t buffer_unit, int64_t element_size) {
  if (config.entries.empty() || units <= 0) return std::nullopt;
  const int64_t time = config.time_size();
  if (time <= 0 || stream_unit % time != 0) return std::nullopt;
  const int64_t stream_packet = stream_unit / time;
  int64_t packet = 1;
  for (size_t i = config.entries.size() - config.packet_entries; i < config.entries.size(); ++i) {
    packet *= config.entries[i].size;
  }
  if (packet != config.packet_size || packet > stream_packet) return std::nullopt;
  // Every offset inside the Element, each written once.
  std::vector<uint8_t> written(element_size, 0);
  for (int64_t offset : config.Offsets()) {
    if (offset < 0 || offset >= element_size || written[offset]) return std::nullopt;
    written[offset] = 1;
  }
  MoveNest nest;
  int64_t dense = 1;  // stream positions per step of the current entry
  int index = 0;
  for (auto it = config.entries.rbegin(); it != config.entries.rend(); ++it, ++index) {
    if (index == config.packet_entries) dense = stream_packet;  // the time entries: whole packets
    nest.levels.push_back({it->size, it->stride, dense});
    dense *= it->size;
  }
  nest.levels.push_back({units, buffer_unit, stream_unit});
  return nest;
}

}  // namespace visa::jit
