// Contraction planning shared by the JIT's paths: the Contraction Engine's shape and tables (which
// retained time step each step feeds, which contracted packet position each tree group lands in),
// and where each weight sits in the TRF image as the TRF Sequencer reads it.
#pragma once

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "dsl/contraction_engine.h"
#include "jit/contraction_kernel.h"
#include "runtime/tensor.h"

namespace visa::jit {

// 1 for every live position of `mapping`, 0 for padding.
std::vector<uint8_t> LiveMask(const Mapping& mapping);

absl::StatusOr<ContractionSpec> PlanContraction(DType x_type, DType w_type, const AlignStage& align,
                                                const ContractStage& contract, const AccumulateStage& accumulate);

// Weights read from the TRF image the way the TRF Sequencer reads them: the time entries (sizes
// and strides, innermost first) walk the element, the packet repeats a contiguous reg_read_size
// read. False when the entries do not cover Time exactly (then the weights are placed by a move).
bool AddressThroughTrfSequencer(const AlignStage& align, const TrfTensor& weights, ContractionSpec& spec);

// Weights already placed in the computation mapping [outer, row, time, packet].
void AddressComputationImage(ContractionSpec& spec);

}  // namespace visa::jit
