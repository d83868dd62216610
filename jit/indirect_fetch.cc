// Indirect fetches on the JIT: the table's rows image, the IndirectLoop's row copies, the stream move.
#include "jit/indirect_fetch.h"

#include <cstring>
#include <vector>

#include "absl/strings/str_cat.h"
#include "dsl/status_macros.h"
#include "jit/element_op.h"
#include "jit/indirect_kernel.h"
#include "runtime/indirect_dma.h"

namespace visa::jit {
namespace {

// The table's rows by W and the gathered rows by K, in the same inner order.
struct FetchRows {
  RowLayout by_w, by_k;
  int64_t row_bytes = 0;
};

absl::StatusOr<FetchRows> RowsFor(const Mapping& table, DType dtype, const IndirectLoop& loop) {
  FetchRows rows;
  ASSIGN_OR_RETURN(rows.by_w, RowsOf(table, loop.table_axis, Axis{loop.table_axis, loop.table_size}));
  ASSIGN_OR_RETURN(rows.by_k, RowsOf(table, loop.table_axis, Axis{loop.key_axis, loop.limit}));
  if (rows.by_w.row_elements * Bits(dtype) % 8 != 0) {
    return absl::UnimplementedError(absl::StrCat("JIT: an indirect fetch over rows of ", rows.by_w.row_elements, " ",
                                                 std::string(Name(dtype)), " elements (not whole bytes)"));
  }
  rows.row_bytes = rows.by_w.row_elements * Bits(dtype) / 8;
  return rows;
}

}  // namespace

absl::StatusOr<HostTensor> RunIndirectFetch(KernelCache& kernels, const DmTensor& table, const DeviceTensor& index,
                                            const FetchStage& stage) {
  VISA_CHECK(stage.indirect.has_value(), "an indirect fetch has its IndirectLoop");
  const IndirectLoop& loop = stage.indirect->loop;
  // The IndirectLoop's offsets: read from device memory now, each checked.
  ASSIGN_OR_RETURN(std::vector<int64_t> offsets, IndirectRows(loop, index));
  ASSIGN_OR_RETURN(FetchRows rows, RowsFor(table.full_mapping(), table.dtype(), loop));
  ASSIGN_OR_RETURN(std::vector<uint8_t> image, DenseRows(kernels, table, rows.by_w.layout));
  std::vector<uint8_t> gathered(static_cast<size_t>(rows.row_bytes * loop.limit));
  for (int64_t k = 0; k < loop.limit; ++k) {
    std::memcpy(gathered.data() + k * rows.row_bytes, image.data() + offsets[k] * rows.row_bytes, rows.row_bytes);
  }
  const Mapping out = stage.out.Full();
  const int64_t positions = rows.by_k.layout.size();
  // Stream padding holds zero (no pad value: fetch_indirect does not mask).
  std::vector<uint8_t> bytes(static_cast<size_t>(StorageBytes(stage.out.dtype, out.size())), 0);
  ASSIGN_OR_RETURN(ElementOp op, FetchAdapterOp(stage, /*interleaved=*/false, positions));
  RETURN_IF_ERROR(kernels.Move(out, rows.by_k.layout, op, bytes.data(), out.size(), gathered.data(), positions,
                               /*allow_drop=*/true).status());
  return HostTensor::FromBytes(stage.out.dtype, out, std::move(bytes));
}

absl::Status PrepareIndirectFetch(KernelCache& kernels, const DeviceTensor& table, const FetchStage& stage) {
  VISA_CHECK(stage.indirect.has_value(), "an indirect fetch has its IndirectLoop");
  ASSIGN_OR_RETURN(FetchRows rows, RowsFor(table.full_mapping(), table.dtype(), stage.indirect->loop));
  RETURN_IF_ERROR(kernels.Compile(rows.by_w.layout, SourceLayout(table), CopyOp(table.dtype()), false));
  ASSIGN_OR_RETURN(ElementOp op, FetchAdapterOp(stage, /*interleaved=*/false, rows.by_k.layout.size()));
  return kernels.Compile(stage.out.Full(), rows.by_k.layout, op, /*allow_drop=*/true);
}

}  // namespace visa::jit
