// The Vector Engine's reduction steps on the JIT: the stream's blocks (a slice for the intra-slice
// reduce, a cluster for the inter-slice reduce) reduced in parallel through the shared semantic
// functions of interp/vector_reduce_stage.h, so both backends agree bit for bit. No code is
// generated for them yet: the element ops before and after are compiled loops, the reduction
// between them is this runtime call (`visa explain` and the README say so).
#pragma once

#include <cstdint>
#include <vector>

#include "dsl/vector_engine.h"

namespace visa::jit {

// `data` is the stream laid out by the step's input Full(); returns its output's bytes.
std::vector<uint8_t> RunReduceStep(const VeStep& step, const std::vector<uint8_t>& data, int threads);

}  // namespace visa::jit
