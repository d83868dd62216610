// Contraction planning: shape, retained-time and tree-group tables, TRF Sequencer addressing.
#include "jit/contraction_plan.h"

namespace visa::jit {

std::vector<uint8_t> LiveMask(const Mapping& mapping) {
  std::vector<uint8_t> live(static_cast<size_t>(mapping.size()));
  for (int64_t i = 0; i < mapping.size(); ++i) live[i] = mapping.map(i).live() ? 1 : 0;
  return live;
}

absl::StatusOr<ContractionSpec> PlanContraction(DType x_type, DType w_type, const AlignStage& align,
                                                const ContractStage& contract, const AccumulateStage& accumulate) {
  const StreamShape& comp = align.out;
  ContractionSpec spec;
  spec.x_type = x_type;
  spec.w_type = w_type;
  spec.acc_type = contract.out.dtype;
  spec.op = contract.op;
  const Mapping outer = Pair({comp.chip, comp.cluster, comp.slice});
  spec.outer = outer.size();
  spec.rows = comp.row->size();
  spec.times = comp.time.size();
  spec.packet = comp.packet.size();
  spec.group = int64_t{1} << contract.depth;
  spec.out_times = accumulate.retained_time.size();
  spec.out_packet = contract.out.packet.size();
  spec.live_outer = LiveMask(outer);
  spec.live_row = LiveMask(*comp.row);
  spec.live_packet = LiveMask(comp.packet);
  spec.retained = RetainedTimeTable(accumulate, comp.time);
  spec.target = TreeGroupTargets(comp.packet, contract);
  return spec;
}

bool AddressThroughTrfSequencer(const AlignStage& align, const TrfTensor& weights, ContractionSpec& spec) {
  const int bits = StorageBits(weights.dtype());
  const int64_t element = weights.element().size();
  int64_t covered = 1;
  for (const SequencerEntry& e : align.trf_entries) covered *= e.size;
  const int64_t read = align.reg_read_size * 8 / bits;
  if (covered != spec.times || read < 1 || element * spec.rows * spec.outer != Pair(weights.levels()).size()) {
    return false;
  }
  spec.w_time.assign(spec.times, 0);
  for (int64_t t = 0; t < spec.times; ++t) {
    int64_t rest = t, offset = 0;
    for (const SequencerEntry& e : align.trf_entries) {  // innermost first
      offset += (rest % e.size) * (e.stride * 8 / bits);
      rest /= e.size;
    }
    spec.w_time[t] = offset;
  }
  spec.w_packet.assign(spec.packet, 0);
  for (int64_t p = 0; p < spec.packet; ++p) spec.w_packet[p] = p % read;
  spec.w_outer = spec.rows * element;
  spec.w_row = element;
  return true;
}

void AddressComputationImage(ContractionSpec& spec) {
  spec.w_row = spec.times * spec.packet;
  spec.w_outer = spec.rows * spec.w_row;
  spec.w_time.assign(spec.times, 0);
  for (int64_t t = 0; t < spec.times; ++t) spec.w_time[t] = t * spec.packet;
  spec.w_packet.assign(spec.packet, 0);
  for (int64_t p = 0; p < spec.packet; ++p) spec.w_packet[p] = p;
}

}  // namespace visa::jit
