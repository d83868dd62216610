// DMA gathers and scatters: the calls' rules, the recorded op, and the data paths by tensor index.
#include "runtime/indirect_dma.h"

#include <algorithm>
#include <optional>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "dsl/status_macros.h"
#include "runtime/device.h"
#include "runtime/tensor_rules.h"
#include "runtime/tensor_unit.h"
#include "runtime/uninitialized_reads.h"
#include "runtime/transfer.h"

namespace visa {
namespace {

absl::Status IndirectError(absl::string_view message) {
  return absl::InvalidArgumentError(absl::StrCat("Indirect Access: ", message));
}

TensorRef RefOf(const DeviceTensor& t) { return TensorRef{t.ToString(), t.id(), t}; }

bool IsSram(Tier tier) { return tier == Tier::kDm || tier == Tier::kSpm; }

// The one axis an index tensor numbers its entries by.
absl::StatusOr<Axis> KeyAxis(const DeviceTensor& index) {
  std::vector<Axis> axes = index.full_mapping().symbols();
  if (axes.size() != 1 || axes[0].skew || axes[0].shift) {
    return IndirectError(absl::StrCat("the index tensor ", index.ToString(),
                                      " must hold i32 row numbers along exactly one axis"));
  }
  return axes[0];
}

// The device, context and index rules every indirect move shares; returns the index's axis.
absl::StatusOr<Axis> CheckCall(const Dma& dma, const std::vector<const DeviceTensor*>& tensors, Tier dst,
                               const DeviceTensor& index) {
  bool sram = IsSram(dst);
  for (const DeviceTensor* t : tensors) {
    if (&dma.device() != &t->device()) {
      return absl::InvalidArgumentError("DMA Context: the context is bound to another device");
    }
    RETURN_IF_ERROR(t->CheckReadable());
    sram = sram || IsSram(t->tier());
  }
  if (sram && dma.kind() == ContextKind::kPdma) {
    return absl::InvalidArgumentError("DMA Context: an indirect move reading or writing DM / SPM runs on the tdma");
  }
  if (index.dtype() != DType::kI32) {
    return IndirectError(absl::StrCat("the index tensor ", index.ToString(), " is ", Name(index.dtype()),
                                      "; IndirectLoop offsets are i32 row numbers"));
  }
  return KeyAxis(index);
}

// The loop over `table`'s rows along `table_axis`, numbered by `key`.
absl::StatusOr<IndirectLoop> LoopOver(const DeviceTensor& table, const std::string& table_axis, const Axis& key,
                                      bool scatter) {
  const Mapping layout = table.full_mapping();
  std::optional<Axis> row;
  for (const Axis& a : layout.symbols()) {
    if (a.name == table_axis && !a.skew && !a.shift) row = a;
  }
  if (!row) {
    return IndirectError(absl::StrCat("the table ", table.ToString(), " has no axis `", table_axis, "` to ",
                                      scatter ? "scatter rows into" : "gather rows of"));
  }
  const std::vector<std::string> names = layout.axis_names();
  if (std::find(names.begin(), names.end(), key.name) != names.end()) {
    return IndirectError(absl::StrCat("the index axis `", key.name, "` is also an axis of the table ",
                                      table.ToString(), "; the rows are named by `", key.name, "` in `",
                                      table_axis, "`'s place"));
  }
  Index one;
  one.Add(table_axis, 1);
  const std::optional<int64_t> first = layout.inverse(Index());
  const std::optional<int64_t> next = row->size > 1 ? layout.inverse(one) : first;
  if (!first || !next) return IndirectError(absl::StrCat("the table ", table.ToString(), " is not addressable by row"));
  IndirectLoop loop{table_axis, row->size, key.name, key.size, *next - *first, scatter, ""};
  RETURN_IF_ERROR(CheckRowsStartOnBytes(loop, Bits(table.dtype()), std::string(Name(table.dtype()))));
  absl::StatusOr<std::string> sequencer = DeriveIndirectSequencer(table.element(), loop);
  loop.sequencer = sequencer.ok() ? *sequencer : absl::StrCat("none: ", sequencer.status().message());
  return loop;
}

// `table`'s axis names with `key` in `table_axis`'s place, sorted (as Mapping::axis_names).
std::vector<std::string> RowAxes(const DeviceTensor& table, const std::string& table_axis, const std::string& key) {
  std::vector<std::string> names = table.full_mapping().axis_names();
  names.erase(std::remove(names.begin(), names.end(), table_axis), names.end());
  names.push_back(key);
  std::sort(names.begin(), names.end());
  return names;
}

// Records and runs the op into a fresh tensor at `dst`, whose axes must be `want`.
absl::StatusOr<DeviceTensor> Submit(Dma& dma, DType dtype, const Destination& dst, const std::vector<std::string>& want,
                                    DmaOp op, DmaTensors tensors) {
  ASSIGN_OR_RETURN(Placement placement, Place(dma.device(), dtype, dst.tier, dst.levels, dst.address));
  DeviceTensor out = DeviceTensor::Reserve(dma.device(), std::move(placement));
  if (out.full_mapping().axis_names() != want) {
    out.Release();
    return IndirectError(absl::StrCat("the destination ", out.ToString(), " must name the axes ",
                                      absl::StrJoin(want, ", ")));
  }
  op.dst = RefOf(out);
  op.operation = dma.operation();  // the ScopedDmaOperation around it (visa schedule / explain)
  tensors.dst = out;
  const IndirectLoop loop = *op.indirect();
  absl::Status done = dma.context() != nullptr ? dma.context()->Submit(Op{std::move(op)}, tensors)
                      : loop.scatter             ? ScatterInto(loop, tensors)
                                                 : GatherInto(loop, tensors);
  if (!done.ok()) {
    out.Release();
    return done;
  }
  out.ClaimRanges();
  return out;
}

// The index tensor's row numbers, each checked against the table's rows.
absl::StatusOr<std::vector<int64_t>> RowNumbers(const IndirectLoop& loop, const DeviceTensor& tensor) {
  ASSIGN_OR_RETURN(Axis key, KeyAxis(tensor));
  ASSIGN_OR_RETURN(Mapping by_key, Mapping::Symbol(key));
  ASSIGN_OR_RETURN(HostTensor index, ReadImage(tensor, by_key));
  std::vector<int64_t> rows(static_cast<size_t>(key.size));
  for (int64_t k = 0; k < key.size; ++k) {
    ASSIGN_OR_RETURN(double value, index.Get(k));
    if (value < 0 || value >= static_cast<double>(loop.table_size)) {
      return absl::OutOfRangeError(absl::StrCat(
          "Indirect Access: index[", key.name, " = ", k, "] = ", value, " is outside the rows 0..",
          loop.table_size - 1, " of ", loop.table_axis, "; the ", loop.scatter ? "scatter writes" : "gather reads",
          " no row for it"));
    }
    rows[k] = static_cast<int64_t>(value);
  }
  return rows;
}

}  // namespace

absl::StatusOr<DeviceTensor> Gather(Dma& dma, const DeviceTensor& table, const DeviceTensor& index,
                                    const std::string& table_axis, const Destination& dst) {
  ASSIGN_OR_RETURN(Axis key, CheckCall(dma, {&table, &index}, dst.tier, index));
  ASSIGN_OR_RETURN(IndirectLoop loop, LoopOver(table, table_axis, key, /*scatter=*/false));
  DmaOp op{dma.kind(), RefOf(table), RefOf(table), DmaGather{loop, RefOf(index)}};
  return Submit(dma, table.dtype(), dst, RowAxes(table, table_axis, key.name), std::move(op),
                DmaTensors{table, table, index, std::nullopt});
}

absl::StatusOr<DeviceTensor> Scatter(Dma& dma, const DeviceTensor& rows, const DeviceTensor& index,
                                     const DeviceTensor& into, const std::string& table_axis,
                                     const Destination& dst) {
  ASSIGN_OR_RETURN(Axis key, CheckCall(dma, {&rows, &index, &into}, dst.tier, index));
  ASSIGN_OR_RETURN(IndirectLoop loop, LoopOver(into, table_axis, key, /*scatter=*/true));
  if (rows.dtype() != into.dtype()) {
    return IndirectError(absl::StrCat("the rows ", rows.ToString(), " and the tensor scattered into ",
                                      into.ToString(), " differ in type"));
  }
  if (rows.full_mapping().axis_names() != RowAxes(into, table_axis, key.name)) {
    return IndirectError(absl::StrCat("the rows ", rows.ToString(), " must name the axes of ", into.ToString(),
                                      " with `", key.name, "` in `", table_axis, "`'s place"));
  }
  DmaOp op{dma.kind(), RefOf(rows), RefOf(rows), DmaScatter{loop, RefOf(index), RefOf(into)}};
  std::vector<std::string> want = into.full_mapping().axis_names();
  return Submit(dma, into.dtype(), dst, want, std::move(op), DmaTensors{rows, rows, index, into});
}

absl::Status GatherInto(const IndirectLoop& loop, const DmaTensors& tensors) {
  VISA_CHECK(tensors.index.has_value(), "a gather runs with its index tensor");
  ASSIGN_OR_RETURN(std::vector<int64_t> rows, IndirectRows(loop, *tensors.index));
  const DeviceTensor& table = tensors.src;
  const DeviceTensor& out = tensors.dst;
  ASSIGN_OR_RETURN(HostTensor source, ReadImage(table, table.full_mapping()));
  const Mapping layout = out.full_mapping();
  ASSIGN_OR_RETURN(HostTensor image, HostTensor::Zeros(out.dtype(), layout));
  for (int64_t p = 0; p < layout.size(); ++p) {
    const Cell cell = layout.map(p);
    if (!cell.live()) continue;
    Index from = cell.index;
    from.Set(loop.key_axis, 0);
    from.Set(loop.table_axis, rows[cell.index[loop.key_axis]]);
    ASSIGN_OR_RETURN(uint32_t bits, source.GetBits(from));
    RETURN_IF_ERROR(image.SetBits(p, bits));
  }
  return WriteInto(image, out);
}

absl::StatusOr<std::vector<int64_t>> IndirectRows(const IndirectLoop& loop, const DeviceTensor& index) {
  ASSIGN_OR_RETURN(std::vector<int64_t> rows, RowNumbers(loop, index));
  if (!loop.scatter) return rows;
  absl::flat_hash_map<int64_t, int64_t> writer;  // row W -> the k that writes it
  for (int64_t k = 0; k < static_cast<int64_t>(rows.size()); ++k) {
    auto [it, fresh] = writer.emplace(rows[k], k);
    if (!fresh) {
      return absl::InvalidArgumentError(absl::StrCat(
          "Indirect Access: index[", loop.key_axis, " = ", it->second, "] and index[", loop.key_axis, " = ", k,
          "] both name row ", rows[k], " of ", loop.table_axis,
          "; a scatter writes each row once (which write would win is not defined)"));
    }
  }
  return rows;
}

absl::StatusOr<std::vector<int64_t>> ReadIndirectRows(const IndirectLoop& loop, const DeviceTensor& index,
                                                      const DeviceTensor& table, absl::string_view op) {
  RETURN_IF_ERROR(CheckAllWritten(index, absl::StrCat("the IndirectLoop's index read by ", op)));
  ASSIGN_OR_RETURN(std::vector<int64_t> rows, IndirectRows(loop, index));
  const UnwrittenElements unwritten = FindUnwritten(table, /*with_mask=*/true);
  if (unwritten.count == 0) return rows;
  // The first unwritten live position of each row W (the mask: one byte per position).
  std::vector<int64_t> first_hole(static_cast<size_t>(loop.table_size), -1);
  const Mapping layout = table.full_mapping();
  for (int64_t p = 0; p < static_cast<int64_t>(unwritten.mask.size()); ++p) {
    if (unwritten.mask[p] == 0) continue;
    int64_t& hole = first_hole[static_cast<size_t>(layout.map(p).index[loop.table_axis])];
    if (hole < 0) hole = p;
  }
  for (int64_t k = 0; k < static_cast<int64_t>(rows.size()); ++k) {
    const int64_t hole = first_hole[static_cast<size_t>(rows[k])];
    if (hole < 0) continue;
    RETURN_IF_ERROR(ReportUnwrittenRead(table, absl::StrCat("the IndirectLoop's row ", loop.table_axis, " = ",
                                                            rows[k], " (index[", loop.key_axis, " = ", k,
                                                            "]) read by ", op),
                                        hole, unwritten.count));
    break;  // warning mode: one report per op, as the other engine reads
  }
  return rows;
}

absl::Status ScatterInto(const IndirectLoop& loop, const DmaTensors& tensors) {
  VISA_CHECK(tensors.index.has_value() && tensors.base.has_value(), "a scatter runs with its index and base");
  ASSIGN_OR_RETURN(std::vector<int64_t> rows, IndirectRows(loop, *tensors.index));
  absl::flat_hash_map<int64_t, int64_t> writer;  // row W -> the k that writes it (IndirectRows: once)
  for (int64_t k = 0; k < static_cast<int64_t>(rows.size()); ++k) writer.emplace(rows[k], k);
  const DeviceTensor& out = tensors.dst;
  const Mapping layout = out.full_mapping();
  ASSIGN_OR_RETURN(HostTensor image, ReadImage(*tensors.base, layout));
  ASSIGN_OR_RETURN(HostTensor source, ReadImage(tensors.src, tensors.src.full_mapping()));
  for (int64_t p = 0; p < layout.size(); ++p) {
    const Cell cell = layout.map(p);
    if (!cell.live()) continue;
    auto it = writer.find(cell.index[loop.table_axis]);
    if (it == writer.end()) continue;
    Index from = cell.index;
    from.Set(loop.table_axis, 0);
    from.Set(loop.key_axis, it->second);
    ASSIGN_OR_RETURN(uint32_t bits, source.GetBits(from));
    RETURN_IF_ERROR(image.SetBits(p, bits));
  }
  return WriteInto(image, out);
}

}  // namespace visa
