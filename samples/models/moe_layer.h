// The manual's "Mixture of Experts" kernel on the device, stage by stage: the router's scores on
// the Contraction Engine, then the branchless TopK on the Vector Engine (bit packing of score and
// expert id, the comparison trick, the all-pairs ranking and its reduce-sum). One token per slice
// for the Vector Engine stages; the expert axis E is the stream's, and I names the same experts
// as the ranked one (the VRF operand) in the all-pairs comparison.
#pragma once

#include <vector>

#include "absl/status/statusor.h"
#include "runtime/backend.h"
#include "runtime/device.h"
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

// 2.3 Filtering: the K packed values of rank < K, best first ([R, 1 # 2] i32 per token): for each
// slot r the one-hot sum over i of (Rank[i] == r ? Packed[i] : 0). The page's filter compaction
// is not in the DSL (its Filter stage keeps the stream's shape), so the selection is this sum;
// it lists the K in rank order instead of expert order.
absl::StatusOr<DmTensor> SelectTopK(Context& ctx, const MappingScope& m, const MoeShape& shape, const DmTensor& rank,
                                    const DmTensor& packed);
// Unpacking: TopK_Indices = Selected & 0xffff (i32 [R, 1 # 2]); TopK_Scores = the upper 16 bits as a
// bf16 score, here as the f32 of the same value (f32 [R, 1 # 2]).
absl::StatusOr<DmTensor> UnpackIndices(Context& ctx, const MappingScope& m, const DmTensor& selected);
absl::StatusOr<DmTensor> UnpackScores(Context& ctx, const MappingScope& m, const DmTensor& selected);
// The softmax over the K scores: routing_weights [R, 1 # 2] f32 per token.
absl::StatusOr<DmTensor> RoutingWeights(Context& ctx, const MappingScope& m, const DmTensor& scores);

}  // namespace visa::models

namespace visa::models {

// The stages above on `backend` for `inputs`, on a device of their own; Rank read back [T, E].
struct MoeRoutingRun {
  std::vector<int32_t> rank;  // [T, E] (the device's I read back as E)
  std::vector<float> scores;  // [T, E] the router's bf16 scores
  std::vector<int32_t> topk;  // [T, K] best first
  std::vector<double> weights;  // [T, K]
  Program program;
  double kernel_seconds = 0;          // the stages on the backend, without set-up and read-back
  int64_t device_resident_bytes = 0;  // device memory touched after the kernel
};
absl::StatusOr<MoeRoutingRun> RunMoeRouting(Backend& backend, const MoeShape& shape, const std::vector<double>& x,
                                            const std::vector<double>& w_router,
                                            const DeviceOptions& device_options = {});

}  // namespace visa::models
