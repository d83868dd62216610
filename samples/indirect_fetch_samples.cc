// The Fetch Sequencer's IndirectLoop (dsl/indirect_fetch.h): embedding lookups fetched straight
// into the Tensor Unit, the rows named by a token-index tensor in DM, each against a host gather.
#include "absl/strings/str_cat.h"
#include "dsl/status_macros.h"
#include "runtime/transfer.h"
#include "samples/contraction_sample.h"
#include "samples/sample.h"

namespace visa::samples {
namespace {

// Token indices: repeats, the first and the last row included.
const std::vector<double>& Tokens16() {
  static const std::vector<double> tokens = {15, 2, 2, 0, 11, 7, 15, 4};
  return tokens;
}
const std::vector<double>& Tokens6() {
  static const std::vector<double> tokens = {5, 0, 3, 3, 1, 5, 2, 4, 0, 5};
  return tokens;
}

// The i32 index tensor in DM, on the table's one slice (each slice reads its offsets from its DM).
absl::StatusOr<DmTensor> IndexInDm(Context& ctx, const MappingScope& m, const std::vector<double>& tokens) {
  ASSIGN_OR_RETURN(HostTensor host, HostTensor::FromValues(DType::kI32, m.m("K"), tokens));
  ASSIGN_OR_RETURN(HbmTensor hbm, host.to_hbm(ctx.pdma, 1 << 20, m.m("1"), m.m("K")));
  return hbm.to_dm(ctx.tdma, 1 << 15, m.m("1 # 2"), m.m("1 # 256"), m.m("K"));
}

// The host gather: out[K = k, V = v] = table[W = tokens[k], V = v].
std::function<double(const Index&, const HostTensor&)> Gathered(const std::vector<double>& (*tokens)()) {
  return [tokens](const Index& at, const HostTensor& table) {
    Index row;
    row.Add("W", static_cast<int64_t>(tokens()[at["K"]]));
    row.Add("V", at["V"]);
    return *table.Get(row);
  };
}

// Rows of 32 i8, contiguous: the IndirectLoop `(8, [index[K] x 32])` above one 32-byte packet.
Sample EmbeddingFetch() {
  Sample s;
  s.name = "embedding_fetch";
  s.description =
      "Indirect Access: 8 token rows of a W = 16 table fetched by the Fetch Sequencer's IndirectLoop, "
      "then collect and commit";
  s.axes = "W = 16, V = 32, K = 8";
  s.dtype = DType::kI8;
  s.element = "W, V";
  s.kernel = [](Context& ctx, const DmTensor& table, const MappingScope& m) -> absl::StatusOr<DeviceTensor> {
    ASSIGN_OR_RETURN(DmTensor index, IndexInDm(ctx, m, Tokens16()));
    ASSIGN_OR_RETURN(DmTensor out, ctx.main.begin(table.view())
                                       .fetch_indirect(DType::kI8, index, "W", m.m("K"), m.m("V"))
                                       .collect(m.m("K"), m.m("V"))
                                       .commit(m.m("K, V"), 1 << 16));
    return out;
  };
  s.readback = "K, V";
  s.reference = Gathered(&Tokens16);
  return s;
}

// Rows of 16 bf16 stored in four 8-byte pieces 48 bytes apart (`V / 4, W, V % 4`), 10 tokens from
// 6 rows: the IndirectLoop `(10, [index[K] x 4])` above the pieces' entry.
Sample EmbeddingFetchStrided() {
  Sample s;
  s.name = "embedding_fetch_strided";
  s.description =
      "Indirect Access: 10 tokens from a W = 6 bf16 table whose rows are strided in DM, fetched by the "
      "IndirectLoop";
  s.axes = "W = 6, V = 16, K = 10";
  s.dtype = DType::kBF16;
  s.element = "V / 4, W, V % 4";
  s.kernel = [](Context& ctx, const DmTensor& table, const MappingScope& m) -> absl::StatusOr<DeviceTensor> {
    ASSIGN_OR_RETURN(DmTensor index, IndexInDm(ctx, m, Tokens6()));
    ASSIGN_OR_RETURN(DmTensor out, ctx.main.begin(table.view())
                                       .fetch_indirect(DType::kBF16, index, "W", m.m("K, V / 4"), m.m("V % 4"))
                                       .collect(m.m("K, V / 4"), m.m("V % 4 # 16"))
                                       .commit(m.m("K, V / 4, V % 4"), 1 << 16));
    return out;
  };
  s.readback = "K, V";
  s.reference = Gathered(&Tokens6);
  return s;
}

// 32 token rows of a W = 64 table (repeats included).
int64_t Token64(int64_t k) { return (k * 37 + 5) % 64; }

// Gathered rows times a matrix: the rows W = index[k] of A [W = 64, D = 64] fetched by the
// IndirectLoop straight into the Contraction Engine against B [D, J = 8] in the TRF (the GEMM's
// tile, its rows chosen at run time): out[K, J] = sum_D A[index[K], D] B[D, J].
Sample GatheredMatmul() {
  ContractionSpec spec;
  spec.name = "gathered_matmul";
  spec.description =
      "Indirect Access: 32 token rows of A [W = 64, D = 64] fetched by the IndirectLoop into a contraction with "
      "B [D, J = 8] (bf16)";
  spec.axes = "W = 64, D = 64, J = 8, K = 32";
  spec.operands = {{DType::kBF16, "W, D", 42, 0}, {DType::kBF16, "D, J", 43, 1 << 28, "J, D"}};
  spec.kernel = [](Context& ctx, const std::vector<HbmTensor>& in, const MappingScope& s) -> absl::StatusOr<DeviceTensor> {
    const Mapping cluster = s.m("1 # 2"), slice = s.m("1 # 256");
    ASSIGN_OR_RETURN(DmTensor a, in[0].to_dm(ctx.tdma, 0, cluster, slice, s.m("W, D")));
    ASSIGN_OR_RETURN(DmTensor b, in[1].to_dm(ctx.tdma, 1 << 13, cluster, slice, s.m("J, D")));
    std::vector<double> tokens;
    for (int64_t k = 0; k < 32; ++k) tokens.push_back(static_cast<double>(Token64(k)));
    ASSIGN_OR_RETURN(HostTensor host_index, HostTensor::FromValues(DType::kI32, s.m("K"), tokens));
    ASSIGN_OR_RETURN(HbmTensor hbm_index, host_index.to_hbm(ctx.pdma, 1 << 20, s.m("1"), s.m("K")));
    ASSIGN_OR_RETURN(DmTensor index, hbm_index.to_dm(ctx.tdma, 1 << 14, cluster, slice, s.m("K")));
    ASSIGN_OR_RETURN(TrfTensor b_trf, ctx.sub.begin(b.view())
                                          .fetch(DType::kBF16, s.m("J"), s.m("D"))
                                          .collect(s.m("J, D / 16"), s.m("D % 16"))
                                          .to_trf(s.m("J"), s.m("D"), TrfAddress::kFull));
    ASSIGN_OR_RETURN(DmTensor result, ctx.main.begin(a.view())
                                          .fetch_indirect(DType::kBF16, index, "W", s.m("K"), s.m("D"))
                                          .collect(s.m("K, D / 16"), s.m("D % 16"))
                                          .align(s.m("K, D / 32"), s.m("D % 32"), b_trf)
                                          .contract(s.m("1"))
                                          .accumulate(s.m("K"), s.m("J"), AccumulationKind::kInterleaved)
                                          .cast(DType::kBF16, s.m("J # 16"))
                                          .commit(s.m("K, J"), 1 << 15));
    ASSIGN_OR_RETURN(HbmTensor out, result.to_hbm(ctx.tdma, 2 << 28, s.m("K, J")));
    return out;
  };
  spec.readback = "K, J";
  spec.expected = [](const std::vector<HostTensor>& in, const MappingScope&) -> absl::StatusOr<Expected> {
    // The host's gather and product in double: A's rows by index (laid out [W, D]), B [D, J].
    const std::vector<double> a = in[0].ToValues();
    const std::vector<double> b = in[1].ToValues();
    auto sum = std::make_shared<std::vector<double>>(32 * 8, 0.0);
    auto magnitude = std::make_shared<std::vector<double>>(32 * 8, 0.0);
    for (int64_t k = 0; k < 32; ++k) {
      for (int64_t j = 0; j < 8; ++j) {
        for (int64_t d = 0; d < 64; ++d) {
          const double product = a[Token64(k) * 64 + d] * b[d * 8 + j];
          (*sum)[k * 8 + j] += product;
          (*magnitude)[k * 8 + j] += std::abs(product);
        }
      }
    }
    Expected expected;
    expected.value = [sum](const Index& at) { return (*sum)[at["K"] * 8 + at["J"]]; };
    // Tree depth 5 over D % 32, then D / 32 = 2 time steps; bf16 output.
    expected.bound = [sum, magnitude](const Index& at) {
      const int64_t p = at["K"] * 8 + at["J"];
      return SumBound(5 + 2, (*magnitude)[p], (*sum)[p], true);
    };
    expected.note = "bound: 7 f32 roundings (tree depth + time steps) x sum|a*b| + bf16 half-ulp, host gather and product";
    return expected;
  };
  return MakeContractionSample(std::move(spec));
}

}  // namespace

std::vector<Sample> IndirectFetchSamples() { return {EmbeddingFetch(), EmbeddingFetchStrided(), GatheredMatmul()}; }

}  // namespace visa::samples
