// The Fetch Sequencer's IndirectLoop (dsl/indirect_fetch.h): embedding lookups fetched straight
// into the Tensor Unit, the rows named by a token-index tensor in DM, each against a host gather.
#include "dsl/status_macros.h"
#include "samples/sample.h"
#include "runtime/transfer.h"

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

}  // namespace

std::vector<Sample> IndirectFetchSamples() { return {EmbeddingFetch(), EmbeddingFetchStrided()}; }

}  // namespace visa::samples
