// Samples of the manual's remaining primitives: fetch masking with left and right padding
// ("Masking Configuration"), an embedding lookup by an indirect gather and a KV-cache append by an
// indirect scatter ("Indirect Access"), each against an independent host reference; and a program of tiny ops whose
// relaunch measures the fixed cost every op pays.
#include "samples/sample.h"

#include <vector>

#include <algorithm>

#include <Eigen/Core>

#include "absl/strings/str_cat.h"
#include "dsl/status_macros.h"
#include "runtime/indirect_dma.h"

namespace visa::samples {
namespace {

// Padding case 1 on real data: rows of B = 90 i8 values read as `# 2 + B + # 4` (the base address
// moves back 2, the adapter masks 2 elements in front and 4 behind) and committed into rows
// left-padded the same way; read back, every element must be where it was.
Sample MaskedFetchLeftRightPad() {
  Sample s;
  s.name = "masked_fetch_left_right_pad";
  s.description = "Padding case 1: rows read as `# 2 + B + # 4` (base_addr -2, lpad 2), committed back";
  s.axes = "A = 8, B = 90";
  s.dtype = DType::kI8;
  s.element = "A, B # 96";
  s.kernel = [](Context& ctx, const DmTensor& input, const MappingScope& m) -> absl::StatusOr<DeviceTensor> {
    ASSIGN_OR_RETURN(DmTensor out, ctx.main.begin(input.view())
                                       .fetch_masked(DType::kI8, 0, m.m("A, [# 2 + B + # 4] / 32"),
                                                     m.m("[# 2 + B + # 4] % 32"))
                                       .collect(m.m("A, [# 2 + B + # 4] / 32"), m.m("[# 2 + B + # 4] % 32"))
                                       .commit(m.m("A, # 2 + B + # 4"), 1 << 16));
    return out;
  };
  s.readback = "A, B";
  return s;
}

// The token indices of the embedding lookup (repeats and the last row included).
const std::vector<double>& TokenIndices() {
  static const std::vector<double> tokens = {3, 0, 7, 7, 15, 1, 9, 2};
  return tokens;
}

// An embedding lookup: a table of W = 16 rows of V = 32 i8 in DM, eight token indices uploaded
// to HBM, and a DMA gather whose IndirectLoop reads the row offsets from them at run time.
Sample EmbeddingLookup() {
  Sample s;
  s.name = "embedding_lookup";
  s.description = "Indirect Access: rows of a W = 16 table gathered by 8 token indices (IndirectLoop, tdma)";
  s.axes = "W = 16, V = 32, K = 8";
  s.dtype = DType::kI8;
  s.element = "W, V";
  s.kernel = [](Context& ctx, const DmTensor& table, const MappingScope& m) -> absl::StatusOr<DeviceTensor> {
    ASSIGN_OR_RETURN(HostTensor tokens, HostTensor::FromValues(DType::kI32, m.m("K"), TokenIndices()));
    ASSIGN_OR_RETURN(HbmTensor index, tokens.to_hbm(ctx.pdma, 1 << 20, m.m("1"), m.m("K")));
    return Gather(ctx.tdma, table, index, "W",
                  Destination{Tier::kDm, Address(1 << 16), {m.m("1"), m.m("1 # 2"), m.m("1 # 256"), m.m("K, V")}});
  };
  s.readback = "K, V";
  s.reference = [](const Index& at, const HostTensor& table) {
    Index row;
    row.Add("W", static_cast<int64_t>(TokenIndices()[at["K"]]));
    row.Add("V", at["V"]);
    return *table.Get(row);
  };
  return s;
}

// The new keys of the KV-cache append: two rows of V = 32 i8, and the cache rows they go to.
double NewKey(int64_t k, int64_t v) { return static_cast<double>((k * 37 + v * 5) % 120 - 60); }
const std::vector<double>& AppendRows() {
  static const std::vector<double> rows = {5, 9};
  return rows;
}

// A KV-cache append: a cache of W = 16 rows in DM, two new rows (K = 2) and their row numbers
// uploaded, and a DMA scatter writing them into a copy of the cache (the other rows kept).
Sample KvCacheAppend() {
  Sample s;
  s.name = "kv_cache_append";
  s.description = "Indirect Access: two new rows scattered into rows 5 and 9 of a W = 16 cache (IndirectLoop, tdma)";
  s.axes = "W = 16, V = 32, K = 2";
  s.dtype = DType::kI8;
  s.element = "W, V";
  s.kernel = [](Context& ctx, const DmTensor& cache, const MappingScope& m) -> absl::StatusOr<DeviceTensor> {
    std::vector<double> values;
    for (int64_t k = 0; k < 2; ++k) {
      for (int64_t v = 0; v < 32; ++v) values.push_back(NewKey(k, v));
    }
    ASSIGN_OR_RETURN(HostTensor host_rows, HostTensor::FromValues(DType::kI8, m.m("K, V"), values));
    ASSIGN_OR_RETURN(HbmTensor rows_hbm, host_rows.to_hbm(ctx.pdma, 1 << 21, m.m("1"), m.m("K, V")));
    ASSIGN_OR_RETURN(DmTensor rows, rows_hbm.to_dm(ctx.tdma, 1 << 15, m.m("1 # 2"), m.m("1 # 256"), m.m("K, V")));
    ASSIGN_OR_RETURN(HostTensor positions, HostTensor::FromValues(DType::kI32, m.m("K"), AppendRows()));
    ASSIGN_OR_RETURN(HbmTensor index, positions.to_hbm(ctx.pdma, 1 << 20, m.m("1"), m.m("K")));
    return Scatter(ctx.tdma, rows, index, cache, "W",
                   Destination{Tier::kDm, Address(1 << 16), {m.m("1"), m.m("1 # 2"), m.m("1 # 256"), m.m("W, V")}});
  };
  s.readback = "W, V";
  s.reference = [](const Index& at, const HostTensor& cache) {
    for (int64_t k = 0; k < 2; ++k) {
      if (at["W"] == static_cast<int64_t>(AppendRows()[k])) return NewKey(k, at["V"]);
    }
    return *cache.Get(at);
  };
  return s;
}

// A Commit Adapter cast with ReLU: f32 rows fetched and collected, then committed as bf16 through
// commit_cast_relu. The host reference: max(x, 0) rounded to bf16 by Eigen (nearest even).
Sample CommitCastRelu() {
  Sample s;
  s.name = "commit_cast_relu";
  s.description = "Commit Adapter: f32 rows committed as bf16 through commit_cast_relu (ReLU, then nearest even)";
  s.axes = "A = 16, B = 64";
  s.dtype = DType::kF32;
  s.element = "A, B";
  s.kernel = [](Context& ctx, const DmTensor& input, const MappingScope& m) -> absl::StatusOr<DeviceTensor> {
    ASSIGN_OR_RETURN(DmTensor out, ctx.main.begin(input.view())
                                       .fetch(DType::kF32, m.m("A, B / 8"), m.m("B % 8"))
                                       .collect(m.m("A, B / 8"), m.m("B % 8"))
                                       .commit_cast_relu(DType::kBF16)
                                       .commit(m.m("A, B"), 1 << 16));
    return out;
  };
  s.readback = "A, B";
  s.reference = [](const Index& at, const HostTensor& input) {
    const float x = static_cast<float>(*input.Get(at));
    return static_cast<double>(static_cast<float>(Eigen::bfloat16(std::max(x, 0.0f))));
  };
  return s;
}

// Memset on the sub context: rows A = 2..5 of an i8 tensor filled with -7 through a tile view
// (Generate Mode); the other rows keep their values.
Sample MemsetRows() {
  Sample s;
  s.name = "memset_rows";
  s.description = "Generate Mode: rows 2..5 of an i8 tensor filled with -7 by ctx.sub.memset on a tile view";
  s.axes = "A = 8, B = 64";
  s.dtype = DType::kI8;
  s.element = "A, B";
  s.kernel = [](Context& ctx, const DmTensor& input, const MappingScope& m) -> absl::StatusOr<DeviceTensor> {
    ASSIGN_OR_RETURN(DmTensor rows, input.tile(m.m("A"), 4, 2));
    RETURN_IF_ERROR(ctx.sub.memset(rows, -7));
    return input;
  };
  s.readback = "A, B";
  s.reference = [](const Index& at, const HostTensor& input) {
    return at["A"] >= 2 && at["A"] < 6 ? -7.0 : *input.Get(at);
  };
  return s;
}

// The fixed cost every op of a run pays: a program of kTinyOps ops that move almost nothing, a
// one-packet Vector Engine add of 1 then a DMA of its 32 bytes into the next DM range, in turn.
// `visa bench` divides its warm relaunch by the op count (issue 27's "program of N tiny ops").
constexpr int kTinyOps = 64;

Sample TinyOps() {
  Sample s;
  s.name = "tiny_ops";
  s.description = absl::StrCat("fixed cost per op: ", kTinyOps,
                               " tiny ops, a one-packet vector_fxp add of 1 and a DMA of its 32 bytes, in turn");
  s.axes = "A = 8";
  s.dtype = DType::kI32;
  s.element = "A";
  s.kernel = [](Context& ctx, const DmTensor& input, const MappingScope& m) -> absl::StatusOr<DeviceTensor> {
    DmTensor x = input;
    for (int k = 0; k < kTinyOps / 2; ++k) {
      const int64_t base = (1 << 16) + k * 256;
      ASSIGN_OR_RETURN(DmTensor added, ctx.main.begin(x.view())
                                           .fetch(DType::kI32, m.m("1"), m.m("A"))
                                           .collect(m.m("1"), m.m("A"))
                                           .vector_init()
                                           .vector_intra_slice_branch(BranchMode::Unconditional())
                                           .vector_fxp(FxpBinaryOp::kAddFxp, 1)
                                           .vector_final()
                                           .commit(m.m("A"), base));
      ASSIGN_OR_RETURN(x, added.to_dm(ctx.tdma, base + 128, m.m("1 # 2"), m.m("1 # 256"), m.m("A")));
    }
    return x;
  };
  s.readback = "A";
  s.reference = [](const Index& at, const HostTensor& input) {
    const auto x = static_cast<uint32_t>(static_cast<int32_t>(*input.Get(at)));
    return static_cast<double>(static_cast<int32_t>(x + kTinyOps / 2));  // AddFxp wraps
  };
  return s;
}

}  // namespace

std::vector<Sample> PrimitiveSamples() {
  std::vector<Sample> samples;
  samples.push_back(MaskedFetchLeftRightPad());
  samples.push_back(EmbeddingLookup());
  samples.push_back(KvCacheAppend());
  samples.push_back(CommitCastRelu());
  samples.push_back(MemsetRows());
  samples.push_back(TinyOps());
  return samples;
}

}  // namespace visa::samples
