// The Mixture of Experts index generation on the device (moe_blocks.h).
#include "samples/models/moe_blocks.h"

#include <bit>
#include <chrono>
#include <memory>
#include <optional>

#include "absl/strings/str_cat.h"
#include "dsl/mapping_parser.h"
#include "dsl/status_macros.h"
#include "runtime/dma.h"
#include "runtime/host_tensor.h"
#include "runtime/tensor.h"
#include "runtime/tensor_unit.h"
#include "runtime/transfer.h"
#include "samples/models/llama_steps.h"
#include "samples/models/moe_layer.h"

namespace visa::models {
namespace {

constexpr int64_t kVrfA = 0, kVrfB = 2048;

// The one slice every index-generation tensor lives in.
Mapping OneSlice(const MappingScope& m) { return Slices(m, "1"); }

// Host i32 values over `axis` in the slice's DM (the page's constant inputs: Expert_Indices, Block_Range).
absl::StatusOr<DmTensor> ConstantToDm(Context& ctx, const MappingScope& m, const std::string& axis,
                                      const std::vector<double>& values, const std::string& step) {
  ASSIGN_OR_RETURN(HostTensor host, HostTensor::FromValues(DType::kI32, m.m(axis), values));
  ScopedDmaOperation named(ctx.tdma, step);
  ASSIGN_OR_RETURN(HbmTensor hbm, host.to_hbm(ctx.pdma, Address::Any(), m.m("1"), m.m(axis)));
  // The upload is an input of the program (set up outside it): kept for a relaunch.
  return hbm.to_dm(ctx.tdma, Address::Any(), Cluster(m), OneSlice(m), m.m(axis));
}

absl::StatusOr<DmTensor> IotaToDm(Context& ctx, const MappingScope& m, const std::string& axis, const std::string& step) {
  std::vector<double> ids;
  for (int64_t i = 0; i < m.m(axis).size(); ++i) ids.push_back(static_cast<double>(i));
  return ConstantToDm(ctx, m, axis, ids, step);
}

// An i32 tensor [axis] in the slice's DM as a VRF operand over `axis`.
absl::StatusOr<VrfTensor> ToVrf(Context& ctx, const MappingScope& m, const DmTensor& dm, const std::string& axis,
                                int64_t address, const std::string& step) {
  return ctx.sub.begin(dm.view())
      .named(step + " to VRF")
      .fetch(DType::kI32, m.m(axis + " / 8"), m.m(axis + " % 8"))
      .collect(m.m(axis + " / 8"), m.m(axis + " % 8"))
      .to_vrf(m.m(axis), address);
}

// A tensor over `from` (optionally padded, [from, 1 # 2]) as a contiguous one over `to` in the
// slice's DM, through HBM (the same values, the axis renamed when `to` differs).
absl::StatusOr<DmTensor> Relaid(Context& ctx, const MappingScope& m, const DmTensor& src, const std::string& from,
                                const std::string& to, const std::string& step) {
  Scratch scratch;
  ScopedDmaOperation named(ctx.tdma, step);
  ASSIGN_OR_RETURN(HbmTensor hbm, src.to_hbm(ctx.tdma, Address::Any(), m.m(from)));
  scratch(hbm);
  if (from == to) return hbm.to_dm(ctx.tdma, Address::Any(), Cluster(m), OneSlice(m), m.m(to));
  ASSIGN_OR_RETURN(DeviceTensor renamed, hbm.Relabel({m.m("1"), m.m(to)}, 0));
  return HbmTensor(renamed).to_dm(ctx.tdma, Address::Any(), Cluster(m), OneSlice(m), m.m(to));
}

// Difference[o, i] = src[i] - operand[o] for every pair (src [inner] fetched once per outer).
absl::StatusOr<DmTensor> PairDifference(Context& ctx, const MappingScope& m, const DmTensor& src,
                                        const std::string& outer, const std::string& inner, const VrfTensor& operand,
                                        const std::string& step) {
  return Enter(ctx.main.begin(src.view())
                   .named(step)
                   .fetch(DType::kI32, m.m(outer + ", " + inner + " / 8"), m.m(inner + " % 8"))
                   .collect(m.m(outer + ", " + inner + " / 8"), m.m(inner + " % 8")))
      .vector_fxp(FxpBinaryOp::kSubFxp, operand)
      .vector_final()
      .commit(m.m(outer + ", " + inner), Address::Any());
}

// What a masked sum adds where its mask holds: 1 (a count) or the VRF tensor's value over inner.
struct Addend {
  const VrfTensor* values = nullptr;  // null: 1
};

// Sum[o] = sum over i of (mask(diff[o, i]) ? addend[i] : 0), [outer, 1 # 2]: the mask is the
// Comparison branch on the difference (both of `first`, `second` holding), the zero the AND 0
// before the guarded add, the sum the intra-slice reduce over inner.
absl::StatusOr<DmTensor> MaskedSum(Context& ctx, const MappingScope& m, const DmTensor& diff, const std::string& outer,
                                   const std::string& inner, InputCmp first, InputCmp second, Addend addend,
                                   const std::string& step) {
  const TagGuard holds = TagGuard::Matches({BitReq::kOne, BitReq::kOne, BitReq::kIgnore, BitReq::kIgnore});
  VeBranchOperand operand;
  if (addend.values == nullptr) {
    operand.imm(holds, 1);
  } else {
    operand.rf(holds, VeRhs::vrf(*addend.values));
  }
  return ctx.main.begin(diff.view())
      .named(step)
      .fetch(DType::kI32, m.m(outer + ", " + inner + " / 8"), m.m(inner + " % 8"))
      .collect(m.m(outer + ", " + inner + " / 8"), m.m(inner + " % 8"))
      .vector_init()
      .vector_intra_slice_branch(BranchMode::Comparison({first, second, InputCmp::False(), InputCmp::False()}))
      .vector_logic(LogicBinaryOpI32::kBitAnd, 0)
      .vector_fxp(FxpBinaryOp::kAddFxp, operand)
      .vector_split(m.m(outer + ", " + inner + " / 4"), m.m(inner + " % 4"))
      .vector_intra_slice_reduce(inner, m.m(outer), m.m("1 # 4"), IntraSliceReduceOpI32::kAddSat)
      .vector_pad_way8(m.m("1 # 8"))
      .vector_final()
      .commit(m.m(outer + ", 1 # 2"), Address::Any());
}

// One elementwise Fxp pass with an immediate over a contiguous [axis] i32 tensor.
absl::StatusOr<DmTensor> Elementwise(Context& ctx, const MappingScope& m, const DmTensor& src, const std::string& axis,
                                     FxpBinaryOp op, int32_t value, const std::string& step) {
  return Enter(ctx.main.begin(src.view())
                   .named(step)
                   .fetch(DType::kI32, m.m(axis + " / 8"), m.m(axis + " % 8"))
                   .collect(m.m(axis + " / 8"), m.m(axis + " % 8")))
      .vector_fxp(op, value)
      .vector_final()
      .commit(m.m(axis), Address::Any());
}

int Log2(int64_t v) { return std::bit_width(static_cast<uint64_t>(v)) - 1; }

// The shift that puts an expert above twice any assignment index: keys of different experts differ
// by more than T*K, keys of one expert by less.
int KeyShift(const MoeShape& shape) { return Log2(shape.tokens * shape.top_k) + 2; }

std::vector<int32_t> ToInts(const HostTensor& host) {
  std::vector<int32_t> out;
  for (double v : host.ToValues()) out.push_back(static_cast<int32_t>(v));
  return out;
}

}  // namespace

absl::StatusOr<MoeDeviceBlocks> GenerateMoeIndices(Context& ctx, const MappingScope& m, const MoeShape& shape,
                                                   const DmTensor& topk_by_token, Scratch& scratch) {
  const int64_t A = shape.tokens * shape.top_k, B = shape.block;
  MoeDeviceBlocks out;
  // TopK_Indices [T, K] as one list over the assignments, a = t*K + k (the page's (T, K) order).
  ASSIGN_OR_RETURN(DmTensor topk, [&]() -> absl::StatusOr<DmTensor> {
    Scratch local;
    ScopedDmaOperation named(ctx.tdma, "moe index: TopK_Indices in one slice");
    ASSIGN_OR_RETURN(HbmTensor hbm, topk_by_token.to_hbm(ctx.tdma, Address::Any(), m.m("T, R")));
    local(hbm);
    ASSIGN_OR_RETURN(DeviceTensor flat, hbm.Relabel({m.m("1"), m.m("A")}, 0));
    return HbmTensor(flat).to_dm(ctx.tdma, Address::Any(), Cluster(m), OneSlice(m), m.m("A"));
  }());
  scratch(topk);
  ASSIGN_OR_RETURN(DmTensor expert_ids_e, IotaToDm(ctx, m, "E", "moe index: Expert_Indices"));
  scratch(expert_ids_e);
  ASSIGN_OR_RETURN(VrfTensor experts_vrf, ToVrf(ctx, m, expert_ids_e, "E", kVrfA, "moe index: Expert_Indices"));

  // Expert_Mask (one-hot, as the branch's Equal(0) on TopK_Indices[a] - e) and the histogram.
  ASSIGN_OR_RETURN(DmTensor mask_diff,
                   PairDifference(ctx, m, topk, "E", "A", experts_vrf, "moe index: one-hot (TopK_Indices - e)"));
  scratch(mask_diff);
  ASSIGN_OR_RETURN(out.count, MaskedSum(ctx, m, mask_diff, "E", "A", InputCmp::Equal(0), InputCmp::True(), {},
                                        "moe index: histogram (reduce_sum of Expert_Mask)"));
  scratch(*out.count);
  ASSIGN_OR_RETURN(DmTensor count, Relaid(ctx, m, *out.count, "E", "E", "moe index: Count contiguous"));
  scratch(count);

  // Num_Blocks = ceil(Count / B) = (Count + B - 1) >> log2 B, and Num_Blocks * B.
  ASSIGN_OR_RETURN(DmTensor rounded, Elementwise(ctx, m, count, "E", FxpBinaryOp::kAddFxp, static_cast<int32_t>(B - 1),
                                                 "moe index: Count + B - 1"));
  scratch(rounded);
  ASSIGN_OR_RETURN(out.num_blocks, Elementwise(ctx, m, rounded, "E", FxpBinaryOp::kArithRightShift, Log2(B),
                                               "moe index: Num_Blocks"));
  scratch(*out.num_blocks);
  ASSIGN_OR_RETURN(DmTensor blocks_times_b, Elementwise(ctx, m, *out.num_blocks, "E", FxpBinaryOp::kLeftShift, Log2(B),
                                                        "moe index: Num_Blocks * B"));
  scratch(blocks_times_b);

  // Global_Offset = cumsum(Num_Blocks) - Num_Blocks: the sum over x < e; its inclusive form x <= e.
  ASSIGN_OR_RETURN(DmTensor summed_ids, IotaToDm(ctx, m, "X", "moe index: summed expert ids"));
  scratch(summed_ids);
  ASSIGN_OR_RETURN(DmTensor order_diff,
                   PairDifference(ctx, m, summed_ids, "E", "X", experts_vrf, "moe index: cumsum order (x - e)"));
  scratch(order_diff);
  ASSIGN_OR_RETURN(DmTensor num_blocks_x, Relaid(ctx, m, *out.num_blocks, "E", "X", "moe index: Num_Blocks over x"));
  scratch(num_blocks_x);
  ASSIGN_OR_RETURN(VrfTensor num_blocks_vrf, ToVrf(ctx, m, num_blocks_x, "X", kVrfB, "moe index: Num_Blocks"));
  ASSIGN_OR_RETURN(out.global_offset,
                   MaskedSum(ctx, m, order_diff, "E", "X", InputCmp::Less(0), InputCmp::True(), {&num_blocks_vrf},
                             "moe index: Global_Offset (exclusive cumsum)"));
  scratch(*out.global_offset);
  ASSIGN_OR_RETURN(DmTensor block_end,
                   MaskedSum(ctx, m, order_diff, "E", "X", InputCmp::Less(1), InputCmp::True(), {&num_blocks_vrf},
                             "moe index: cumsum(Num_Blocks) (inclusive)"));
  scratch(block_end);
  ASSIGN_OR_RETURN(DmTensor times_b_x, Relaid(ctx, m, blocks_times_b, "E", "X", "moe index: Num_Blocks * B over x"));
  scratch(times_b_x);
  ASSIGN_OR_RETURN(VrfTensor times_b_vrf, ToVrf(ctx, m, times_b_x, "X", kVrfB, "moe index: Num_Blocks * B"));
  ASSIGN_OR_RETURN(DmTensor start_slot,
                   MaskedSum(ctx, m, order_diff, "E", "X", InputCmp::Less(0), InputCmp::True(), {&times_b_vrf},
                             "moe index: Global_Offset * B (exclusive cumsum)"));
  scratch(start_slot);

  // Local_Offset[a] = #{p < a : TopK_Indices[p] == TopK_Indices[a]} (the page's cumsum of the mask
  // over (T, K), gathered at the token's expert, minus 1): with key = expert << shift | a, the
  // pairs of one expert and p < a are exactly those with -A < key[p] - key[a] < 0.
  ASSIGN_OR_RETURN(DmTensor assignment_ids, IotaToDm(ctx, m, "A", "moe index: assignment ids"));
  scratch(assignment_ids);
  ASSIGN_OR_RETURN(VrfTensor assignment_vrf, ToVrf(ctx, m, assignment_ids, "A", kVrfA, "moe index: assignment ids"));
  ASSIGN_OR_RETURN(DmTensor keys, Enter(ctx.main.begin(topk.view())
                                            .named("moe index: keys (expert << shift | a)")
                                            .fetch(DType::kI32, m.m("A / 8"), m.m("A % 8"))
                                            .collect(m.m("A / 8"), m.m("A % 8")))
                                      .vector_fxp(FxpBinaryOp::kLeftShift, KeyShift(shape))
                                      .vector_fxp(FxpBinaryOp::kAddFxp, assignment_vrf)
                                      .vector_final()
                                      .commit(m.m("A"), Address::Any()));
  scratch(keys);
  ASSIGN_OR_RETURN(DmTensor keys_p, Relaid(ctx, m, keys, "A", "P", "moe index: keys over p"));
  scratch(keys_p);
  ASSIGN_OR_RETURN(VrfTensor keys_vrf, ToVrf(ctx, m, keys, "A", kVrfB, "moe index: keys"));
  ASSIGN_OR_RETURN(DmTensor key_diff, PairDifference(ctx, m, keys_p, "A", "P", keys_vrf, "moe index: key[p] - key[a]"));
  scratch(key_diff);
  ASSIGN_OR_RETURN(out.local_offset,
                   MaskedSum(ctx, m, key_diff, "A", "P", InputCmp::Less(0), InputCmp::Greater(static_cast<int32_t>(-A)),
                             {}, "moe index: Local_Offset"));
  scratch(*out.local_offset);

  // Scatter_Idx = Global_Offset[TopK_Indices] * B + Local_Offset: the gather as a one-hot sum over e.
  ASSIGN_OR_RETURN(VrfTensor topk_vrf, ToVrf(ctx, m, topk, "A", kVrfA, "moe index: TopK_Indices"));
  ASSIGN_OR_RETURN(DmTensor gather_diff,
                   PairDifference(ctx, m, expert_ids_e, "A", "E", topk_vrf, "moe index: gather (e - TopK_Indices)"));
  scratch(gather_diff);
  ASSIGN_OR_RETURN(DmTensor start_slot_e, Relaid(ctx, m, start_slot, "E", "E", "moe index: Global_Offset * B contiguous"));
  scratch(start_slot_e);
  ASSIGN_OR_RETURN(VrfTensor start_vrf, ToVrf(ctx, m, start_slot_e, "E", kVrfB, "moe index: Global_Offset * B"));
  ASSIGN_OR_RETURN(DmTensor gathered, MaskedSum(ctx, m, gather_diff, "A", "E", InputCmp::Equal(0), InputCmp::True(),
                                                {&start_vrf}, "moe index: Global_Offset * B at the token's expert"));
  scratch(gathered);
  ASSIGN_OR_RETURN(DmTensor gathered_a, Relaid(ctx, m, gathered, "A", "A", "moe index: gathered contiguous"));
  scratch(gathered_a);
  ASSIGN_OR_RETURN(DmTensor local_a, Relaid(ctx, m, *out.local_offset, "A", "A", "moe index: Local_Offset contiguous"));
  scratch(local_a);
  ASSIGN_OR_RETURN(VrfTensor local_vrf, ToVrf(ctx, m, local_a, "A", kVrfA, "moe index: Local_Offset"));
  ASSIGN_OR_RETURN(out.scatter_idx, Enter(ctx.main.begin(gathered_a.view())
                                              .named("moe index: Scatter_Idx")
                                              .fetch(DType::kI32, m.m("A / 8"), m.m("A % 8"))
                                              .collect(m.m("A / 8"), m.m("A % 8")))
                                        .vector_fxp(FxpBinaryOp::kAddFxp, local_vrf)
                                        .vector_final()
                                        .commit(m.m("A"), Address::Any()));
  scratch(*out.scatter_idx);

  // Expert_IDs[g] = #{e : cumsum(Num_Blocks)[e] <= g}: the page's Diff / Grid / filter compaction
  // as a count (E past the grid).
  ASSIGN_OR_RETURN(DmTensor block_end_e, Relaid(ctx, m, block_end, "E", "E", "moe index: block ends contiguous"));
  scratch(block_end_e);
  ASSIGN_OR_RETURN(DmTensor grid_ids, IotaToDm(ctx, m, "G", "moe index: Block_Range"));
  scratch(grid_ids);
  ASSIGN_OR_RETURN(VrfTensor grid_vrf, ToVrf(ctx, m, grid_ids, "G", kVrfA, "moe index: Block_Range"));
  ASSIGN_OR_RETURN(DmTensor end_diff,
                   PairDifference(ctx, m, block_end_e, "G", "E", grid_vrf, "moe index: Diff (block end - g)"));
  scratch(end_diff);
  ASSIGN_OR_RETURN(out.expert_ids, MaskedSum(ctx, m, end_diff, "G", "E", InputCmp::Less(1), InputCmp::True(), {},
                                             "moe index: Expert_IDs (experts ending at or before g)"));
  scratch(*out.expert_ids);
  return out;
}

absl::Status CheckMoeBlockShape(const MoeShape& shape) {
  const int64_t A = shape.tokens * shape.top_k;
  if (shape.block <= 0 || !std::has_single_bit(static_cast<uint64_t>(shape.block))) {
    return absl::InvalidArgumentError(absl::StrCat(
        "moe index generation: the block size B = ", shape.block,
        " must be a power of two (Num_Blocks = (Count + B - 1) >> log2 B, Scatter_Idx = Global_Offset << log2 B)"));
  }
  if (shape.experts % 8 != 0 || A % 8 != 0) {
    return absl::InvalidArgumentError(absl::StrCat("moe index generation: E = ", shape.experts, " and T*K = ", A,
                                                   " must be multiples of 8 (the Vector Engine's packets)"));
  }
  if (A >= (int64_t{1} << 12) || shape.experts > (int64_t{1} << 16)) {
    return absl::InvalidArgumentError(absl::StrCat("moe index generation: T*K = ", A,
                                                   " must be below 4096 (the local offsets' keys, expert << (log2(T*K) + 2) | a, in i32)"));
  }
  return absl::OkStatus();
}

int64_t MoeGridCapacity(const MoeShape& shape) { return (shape.WorstGrid() + 7) / 8 * 8; }

std::string MoeBlockAxes(const MoeShape& shape) {
  const int64_t A = shape.tokens * shape.top_k;
  return absl::StrCat(shape.Axes(), ", A = ", A, ", P = ", A, ", X = ", shape.experts, ", G = ",
                      MoeGridCapacity(shape), ", Z = ", shape.experts + 1, ", S = ", MoeGridCapacity(shape) * shape.block,
                      ", Q = ", shape.block);
}

absl::StatusOr<MoeDeviceRouting> RouteMoe(Context& ctx, const MappingScope& m, const MoeShape& shape,
                                          const std::vector<double>& x, const std::vector<double>& w_router,
                                          Scratch& scratch) {
  // W_router^T [E, D]: the GEMM tile's weights are laid out by columns.
  std::vector<double> w_t(w_router.size());
  for (int64_t d = 0; d < shape.hidden; ++d) {
    for (int64_t e = 0; e < shape.experts; ++e) {
      w_t[static_cast<size_t>(e * shape.hidden + d)] = w_router[static_cast<size_t>(d * shape.experts + e)];
    }
  }
  MoeDeviceRouting out;
  ASSIGN_OR_RETURN(HostTensor x_host, HostTensor::FromValues(DType::kBF16, m.m("T, D"), x));
  ASSIGN_OR_RETURN(HostTensor w_host, HostTensor::FromValues(DType::kBF16, m.m("E, D"), w_t));
  ASSIGN_OR_RETURN(out.x, x_host.to_hbm(ctx.pdma, Address::Any(), m.m("1"), m.m("T, D")));
  ASSIGN_OR_RETURN(HbmTensor w_hbm, w_host.to_hbm(ctx.pdma, Address::Any(), m.m("1"), m.m("E, D")));
  // w_hbm is kept: a relaunch reads the uploaded inputs again.
  ASSIGN_OR_RETURN(DmTensor scores, RouterScores(ctx, m, shape, *out.x, w_hbm));
  scratch(scores);
  ASSIGN_OR_RETURN(DmTensor packed_cmp, PackScores(ctx, m, shape, scores, /*comparable=*/true, "moe pack scores"));
  scratch(packed_cmp);
  ASSIGN_OR_RETURN(DmTensor rank, RankExperts(ctx, m, shape, packed_cmp));
  scratch(rank);
  ASSIGN_OR_RETURN(DmTensor packed, PackScores(ctx, m, shape, scores, /*comparable=*/false, "moe pack scores (values)"));
  scratch(packed);
  ASSIGN_OR_RETURN(DmTensor selected, SelectTopK(ctx, m, shape, rank, packed));
  scratch(selected);
  ASSIGN_OR_RETURN(out.topk, UnpackIndices(ctx, m, selected));
  scratch(*out.topk);
  ASSIGN_OR_RETURN(DmTensor topk_scores, UnpackScores(ctx, m, selected));
  scratch(topk_scores);
  ASSIGN_OR_RETURN(out.weights, RoutingWeights(ctx, m, topk_scores));
  scratch(*out.weights);
  return out;
}

absl::StatusOr<MoeBlocksRun> ReadMoeBlocks(const MoeShape& shape, const MappingScope& m, const DmTensor& topk,
                                           const MoeDeviceBlocks& blocks) {
  MoeBlocksRun run;
  ASSIGN_OR_RETURN(HostTensor topk_host, ReadAs(topk, m.m("T, R")));
  run.topk = ToInts(topk_host);
  MoeBlocks& b = run.blocks;
  ASSIGN_OR_RETURN(HostTensor count, ReadAs(*blocks.count, m.m("E")));
  b.count = ToInts(count);
  ASSIGN_OR_RETURN(HostTensor num_blocks, ReadAs(*blocks.num_blocks, m.m("E")));
  b.num_blocks = ToInts(num_blocks);
  ASSIGN_OR_RETURN(HostTensor global_offset, ReadAs(*blocks.global_offset, m.m("E")));
  b.global_offset = ToInts(global_offset);
  ASSIGN_OR_RETURN(HostTensor local_offset, ReadAs(*blocks.local_offset, m.m("A")));
  b.local_offset = ToInts(local_offset);
  ASSIGN_OR_RETURN(HostTensor scatter_idx, ReadAs(*blocks.scatter_idx, m.m("A")));
  b.scatter_idx = ToInts(scatter_idx);
  ASSIGN_OR_RETURN(HostTensor expert_ids, ReadAs(*blocks.expert_ids, m.m("G")));
  run.expert_ids_capacity = ToInts(expert_ids);
  // The grid: the used blocks, those whose expert is below E.
  for (int32_t e : run.expert_ids_capacity) {
    if (e < shape.experts) b.expert_ids.push_back(e);
  }
  b.grid = static_cast<int64_t>(b.expert_ids.size());
  return run;
}

absl::StatusOr<MoeBlocksRun> RunMoeBlocks(Backend& backend, const MoeShape& shape, const std::vector<double>& x,
                                          const std::vector<double>& w_router, const DeviceOptions& options) {
  RETURN_IF_ERROR(CheckMoeBlockShape(shape));
  ASSIGN_OR_RETURN(Axes axes, Axes::Parse(MoeBlockAxes(shape)));
  MappingScope m(axes);
  ASSIGN_OR_RETURN(std::unique_ptr<Device> device, Device::Create(1, options));
  Context ctx(*device, backend);
  const auto start = std::chrono::steady_clock::now();
  Scratch scratch;
  ASSIGN_OR_RETURN(MoeDeviceRouting routing, RouteMoe(ctx, m, shape, x, w_router, scratch));
  ASSIGN_OR_RETURN(MoeDeviceBlocks blocks, GenerateMoeIndices(ctx, m, shape, *routing.topk, scratch));
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  ASSIGN_OR_RETURN(MoeBlocksRun run, ReadMoeBlocks(shape, m, *routing.topk, blocks));
  run.kernel_seconds = seconds;
  run.device_resident_bytes = device->resident_bytes();
  run.program = ctx.program();
  return run;
}

}  // namespace visa::models
