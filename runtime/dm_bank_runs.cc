// DmBankRuns: consecutive same-bank DM accesses of Fetch and Commit sequencers.
#include "runtime/dm_bank_runs.h"

#include <algorithm>
#include <type_traits>
#include <vector>

namespace visa {
namespace {

// The element offset of packet element `e` (mixed radix over the packet entries).
int64_t PacketOffset(const std::vector<SequencerEntry>& packet, int64_t e) {
  int64_t offset = 0;
  for (auto it = packet.rbegin(); it != packet.rend(); ++it) {
    offset += (e % it->size) * it->stride;
    e /= it->size;
  }
  return offset;
}

bool InDm(const TensorRef& ref) {
  return ref.handle && (ref.handle->tier() == Tier::kDm || ref.handle->tier() == Tier::kSpm);
}

void KeepLonger(BankRuns& into, const BankRuns& runs) {
  for (int b = 0; b < kDmBanks; ++b) into[b] = std::max(into[b], runs[b]);
}

}  // namespace

BankRuns SameBankRuns(const SequencerConfig& config, const AccessPlan& access, int element_bits,
                      int64_t base, int64_t max_accesses) {
  BankRuns longest{}, current{};
  if (access.access_bytes <= 0 || access.accesses_per_packet <= 0) return longest;
  const size_t time_entries = config.entries.size() - static_cast<size_t>(config.packet_entries);
  const std::vector<SequencerEntry> time(config.entries.begin(), config.entries.begin() + time_entries);
  const std::vector<SequencerEntry> packet(config.entries.begin() + time_entries, config.entries.end());
  const int64_t elements_per_access = std::max<int64_t>(1, access.access_bytes * 8 / element_bits);
  std::vector<int64_t> index(time.size(), 0);
  int64_t walked = 0;
  while (walked < max_accesses) {
    int64_t packet_base = 0;
    for (size_t i = 0; i < time.size(); ++i) packet_base += index[i] * time[i].stride;
    for (int64_t k = 0; k < access.accesses_per_packet && walked < max_accesses; ++k, ++walked) {
      const int64_t element = packet_base + PacketOffset(packet, k * elements_per_access);
      const int64_t first = base + element * element_bits / 8;
      const int64_t last = first + access.access_bytes - 1;
      std::array<bool, kDmBanks> touched{};
      for (int64_t unit = first / kDmBankBytes; unit <= last / kDmBankBytes && unit - first / kDmBankBytes < kDmBanks;
           ++unit) {
        touched[unit % kDmBanks] = true;
      }
      for (int b = 0; b < kDmBanks; ++b) {
        current[b] = touched[b] ? current[b] + 1 : 0;
        longest[b] = std::max(longest[b], current[b]);
      }
    }
    int i = static_cast<int>(time.size()) - 1;
    for (; i >= 0; --i) {
      if (++index[i] < time[i].size) break;
      index[i] = 0;
    }
    if (i < 0) break;
  }
  return longest;
}

BankRuns PipelineBankRuns(const PipelineOp& op) {
  BankRuns runs{};
  StreamShape shape;
  for (const Stage& stage : op.stages) {
    if (const auto* fetch = std::get_if<FetchStage>(&stage); fetch && !op.inputs.empty() && InDm(op.inputs[0])) {
      KeepLonger(runs, SameBankRuns(fetch->sequencer, fetch->access, Bits(fetch->in_dtype),
                                    op.inputs[0].handle->address()));
    }
    if (const auto* commit = std::get_if<CommitStage>(&stage); commit && InDm(op.output)) {
      KeepLonger(runs, SameBankRuns(commit->sequencer, commit->access, Bits(shape.dtype), op.output.handle->address()));
    }
    std::visit(
        [&shape](const auto& s) {
          using S = std::decay_t<decltype(s)>;
          if constexpr (std::is_same_v<S, BeginStage>) {
            shape = s.shape;
          } else if constexpr (requires { s.out; }) {
            if constexpr (std::is_same_v<std::decay_t<decltype(s.out)>, StreamShape>) shape = s.out;
          }
        },
        stage);
  }
  return runs;
}

int64_t LongestRun(const BankRuns& runs) { return *std::max_element(runs.begin(), runs.end()); }

}  // namespace visa
