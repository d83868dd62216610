// AllReduce with Add over the chips of f32 GEMM tiles in DM (the tensor-parallel layer's sum of
// partial projections, llama_chip_split.h), built from the manual's chip shuffle
// (runtime/chip_shuffle.h) and the Vector Engine's add: a butterfly, log2(chips) rounds, round r
// adding to each chip the sums of chip c XOR 2^r. Each round pairs two chips that add the same two
// values (a + b on one, b + a on the other: the same bits), so every chip ends with the same sum,
// ((x0 + x1) + (x2 + x3)) on 4 chips, which the ring of all_reduce_4chip (each chip adding in its
// own order) does not give in floating point.
#pragma once

#include <string>

#include "absl/status/statusor.h"
#include "dsl/mapping_parser.h"
#include "runtime/program.h"
#include "runtime/tensor.h"
#include "samples/models/llama_steps.h"

namespace visa::models {

// `partial` is the f32 result of a GEMM tile laid out as `spec`'s (Matmul without bf16_out) on a
// tensor whose Chip level is one axis of `chips` chips (a power of two). Returns the sum over the
// chips in a new DM tensor of the same layout, on every chip.
absl::StatusOr<DmTensor> AllReduceTiles(Context& ctx, const MappingScope& m, const MatmulSpec& spec,
                                        const DmTensor& partial, int64_t chips, const std::string& step);

// A GEMM tile's f32 values plus `vrf` (a tile of the same layout in the VRF) into a new DM tensor
// (the Vector Engine's clip add: the projection epilogue's residual add, on a tile in DM).
absl::StatusOr<DmTensor> AddTileInVrf(Context& ctx, const MappingScope& m, const MatmulSpec& spec, const DmTensor& tile,
                                      const VrfTensor& vrf, const std::string& step);

}  // namespace visa::models
