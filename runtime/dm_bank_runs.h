// DmBankRuns: how many consecutive accesses a Fetch or Commit sequencer makes to each DM bank, the
// quantity the manual's bank-starvation rule bounds ("Memory Performance" > Bank Starvation:
// "Fetch and Commit engines must not access the same DM bank for more than 64 consecutive
// operations while DMA is active"). A slice's 16 banks are 8 bytes wide and take address bits 3-6.
#pragma once

#include <array>
#include <cstdint>

#include "dsl/sequencer.h"
#include "runtime/program.h"

namespace visa {

inline constexpr int kDmBanks = 16;
inline constexpr int64_t kDmBankBytes = 8;
// "The total number of consecutive accesses from all commands (main-context fetch/commit +
// sub-context fetch/commit + DMA) to the same bank" must not exceed 64.
inline constexpr int64_t kBankStarvationLimit = 64;

// For each bank, the longest run of consecutive accesses that all touch it.
using BankRuns = std::array<int64_t, kDmBanks>;

// The accesses of `config` (access.access_bytes each, access.accesses_per_packet per time step)
// from slice byte `base`, walked in issue order; at most `max_accesses` of them (a run of 64 shows
// long before the end of any realistic stream).
BankRuns SameBankRuns(const SequencerConfig& config, const AccessPlan& access, int element_bits,
                      int64_t base, int64_t max_accesses = int64_t{1} << 20);

// A pipeline's fetch and commit runs, bank by bank the longer of the two (fetch and commit of
// one op hold each other back, so neither starves the other, but both hold the bank against DMA).
// Inputs and outputs outside DM and SPM (TRF, VRF) have no DM banks and count 0.
BankRuns PipelineBankRuns(const PipelineOp& op);

int64_t LongestRun(const BankRuns& runs);

}  // namespace visa
