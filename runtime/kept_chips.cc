// KeptChips: the process's rank among the ranks, and a count of open KeepEveryChip scopes.
#include "runtime/kept_chips.h"

#include <atomic>
#include <cstdint>

namespace visa {
namespace {

std::atomic<int> kept_rank{0};
std::atomic<int> kept_ranks{1};
std::atomic<int> keep_every_chip{0};

}  // namespace

void KeepOwnChipsOf(int rank, int ranks) {
  kept_rank.store(rank, std::memory_order_relaxed);
  kept_ranks.store(ranks, std::memory_order_relaxed);
}

bool KeepsHbmOf(int chip, int chips) {
  const int64_t ranks = kept_ranks.load(std::memory_order_relaxed);
  if (ranks == 1 || keep_every_chip.load(std::memory_order_relaxed) > 0) return true;
  const int64_t rank = kept_rank.load(std::memory_order_relaxed);
  return chip >= rank * chips / ranks && chip < (rank + 1) * chips / ranks;
}

bool KeepsHbmOfEveryChip() { return kept_ranks.load(std::memory_order_relaxed) == 1; }

KeepEveryChip::KeepEveryChip() { keep_every_chip.fetch_add(1, std::memory_order_relaxed); }
KeepEveryChip::~KeepEveryChip() { keep_every_chip.fetch_sub(1, std::memory_order_relaxed); }

}  // namespace visa
