// The manual's "Mixture of Experts" kernel on the device, stage by stage: the router's scores on
// the Contraction Engine, then the branchless TopK on the Vector Engine (bit packing of score and
// expert id, the comparison trick, the all-pairs ranking and its reduce-sum). One token per slice
// for the Vector Engine stages; the expert axis E is the stream's, and I names the same experts
// as the ranked one (the VRF operand) in the all-pairs comparison.
#pragma once

#include <vector>

#include "absl/status/statusor.h"
#include "runtime/backend.h"
#include "runtime/program.h"
#include "dsl/mapping_parser.h"
#include "runtime/tensor.h"
#include "runtime/tensor_unit.h"
#include "samples/models/moe_reference.h"

namespace visa::models {

// The router: scores [T, E] = x [T, D] W_router [D, E], bf16 out, one token per slice in DM
// (element E). x is [T, D] bf16 in HBM, w_router_t is W_router^T [E, D] bf16 in HBM.
absl::StatusOr<DmTensor> RouterScores(Context& ctx, const MappingScope& m, const MoeShape& shape, const HbmTensor& x,
                                      const HbmTensor& w_router_t);

// 2.1 Bit packing: (score bits << 16) | expert id as i32, per token [E]; with `comparable` the
// comparison trick is applied (x >= 0 ? x : x ^ 0x7fff0000), so that the integer order is the
// score order (ties: the higher id) and the packed values are all distinct.
absl::StatusOr<DmTensor> PackScores(Context& ctx, const MappingScope& m, const MoeShape& shape, const DmTensor& scores,
                                    bool comparable, const std::string& step);

// 2.2 Parallel ranking: Rank[t, i] = sum over j of (P_cmp[t, j] > P_cmp[t, i]), i32 [I, 1 # 2]
// per token (one 8-byte row per ranked expert).
absl::StatusOr<DmTensor> RankExperts(Context& ctx, const MappingScope& m, const MoeShape& shape,
                                     const DmTensor& packed_cmp);

}  // namespace visa::models

namespace visa::models {

// The stages above on `backend` for `inputs`, on a device of their own; Rank read back [T, E].
struct MoeRoutingRun {
  std::vector<int32_t> rank;  // [T, E] (the device's I read back as E)
  std::vector<float> scores;  // [T, E] the router's bf16 scores
  Program program;
};
absl::StatusOr<MoeRoutingRun> RunMoeRouting(Backend& backend, const MoeShape& shape, const std::vector<double>& x,
                                            const std::vector<double>& w_router);

}  // namespace visa::models
