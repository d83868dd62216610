// The interpreter's indirect fetch: the IndirectLoop's rows read from the index tensor and
// checked (ReadIndirectRows: the DMA gather's IndirectRows, and unwritten elements of the index
// and of the rows it names), then gathered element by element by tensor index.
#include <vector>

#include "dsl/status_macros.h"
#include "interp/stages.h"
#include "runtime/indirect_dma.h"
#include "runtime/transfer.h"

namespace visa::interp {
namespace {

// The table's axes with K in W's place, K outermost: the stream's source image.
absl::StatusOr<Mapping> GatheredLayout(const Mapping& table, const IndirectLoop& loop) {
  ASSIGN_OR_RETURN(Mapping key, Mapping::Symbol(Axis{loop.key_axis, loop.limit}));
  std::vector<Mapping> parts = {key};
  for (const Axis& a : table.symbols()) {
    if (a.name == loop.table_axis) continue;
    ASSIGN_OR_RETURN(Mapping symbol, Mapping::Symbol(a));
    parts.push_back(symbol);
  }
  return Pair(parts);
}

}  // namespace

absl::StatusOr<HostTensor> IndirectFetchStream(const DmTensor& table, const DeviceTensor& index,
                                               const BeginStage& begin, const FetchStage& stage) {
  const IndirectLoop& loop = stage.indirect->loop;
  ASSIGN_OR_RETURN(std::vector<int64_t> rows, ReadIndirectRows(loop, index, table, "an indirect fetch"));
  ASSIGN_OR_RETURN(HostTensor source, ReadImage(table, table.full_mapping()));
  ASSIGN_OR_RETURN(Mapping layout, GatheredLayout(table.full_mapping(), loop));
  ASSIGN_OR_RETURN(HostTensor gathered, HostTensor::Zeros(table.dtype(), layout));
  for (int64_t p = 0; p < layout.size(); ++p) {
    const Cell cell = layout.map(p);
    Index from = cell.index;
    from.Set(loop.key_axis, 0);
    from.Set(loop.table_axis, rows[cell.index[loop.key_axis]]);
    ASSIGN_OR_RETURN(uint32_t bits, source.GetBits(from));
    RETURN_IF_ERROR(gathered.SetBits(p, bits));
  }
  return FetchFromImage(gathered, begin, stage, 1);
}

}  // namespace visa::interp
