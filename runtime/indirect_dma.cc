// DMA gathers: the call's rules, the recorded op, and the data path by tensor index.
#include "runtime/indirect_dma.h"

#include <algorithm>
#include <optional>
#include <vector>

#include "absl/strings/str_cat.h"
#include "dsl/status_macros.h"
#include "runtime/device.h"
#include "runtime/tensor_rules.h"
#include "runtime/tensor_unit.h"
#include "runtime/transfer.h"

namespace visa {
namespace {

absl::Status IndirectError(absl::string_view message) {
  return absl::InvalidArgumentError(absl::StrCat("Indirect Access: ", message));
}

TensorRef RefOf(const DeviceTensor& t) { return TensorRef{t.ToString(), t.id(), t}; }

// The one axis an index tensor numbers its entries by.
absl::StatusOr<Axis> KeyAxis(const DeviceTensor& index) {
  std::vector<Axis> axes = index.full_mapping().symbols();
  if (axes.size() != 1 || axes[0].skew || axes[0].shift) {
    return IndirectError(absl::StrCat("the index tensor ", index.ToString(),
                                      " must hold i32 row numbers along exactly one axis"));
  }
  return axes[0];
}

std::vector<std::string> Without(std::vector<std::string> names, const std::string& gone) {
  names.erase(std::remove(names.begin(), names.end(), gone), names.end());
  return names;
}

}  // namespace

absl::StatusOr<DeviceTensor> Gather(Dma& dma, const DeviceTensor& table, const DeviceTensor& index,
                                    const std::string& table_axis, const Destination& dst) {
  if (&dma.device() != &table.device() || &dma.device() != &index.device()) {
    return absl::InvalidArgumentError("DMA Context: the context is bound to another device");
  }
  RETURN_IF_ERROR(table.CheckReadable());
  RETURN_IF_ERROR(index.CheckReadable());
  const bool sram = table.tier() == Tier::kDm || table.tier() == Tier::kSpm || index.tier() == Tier::kDm ||
                    index.tier() == Tier::kSpm || dst.tier == Tier::kDm || dst.tier == Tier::kSpm;
  if (sram && dma.kind() == Dma::Kind::kPcie) {
    return absl::InvalidArgumentError("DMA Context: a gather reading or writing DM / SPM runs on the tdma");
  }
  if (index.dtype() != DType::kI32) {
    return IndirectError(absl::StrCat("the index tensor ", index.ToString(), " is ", Name(index.dtype()),
                                      "; IndirectLoop offsets are i32 row numbers"));
  }
  ASSIGN_OR_RETURN(Axis key, KeyAxis(index));
  const Mapping source = table.full_mapping();
  const std::vector<std::string> table_axes = source.axis_names();
  std::optional<Axis> row;
  for (const Axis& a : source.symbols()) {
    if (a.name == table_axis && !a.skew && !a.shift) row = a;
  }
  if (!row) {
    return IndirectError(absl::StrCat("the table ", table.ToString(), " has no axis `", table_axis,
                                      "` to gather rows of"));
  }
  if (std::find(table_axes.begin(), table_axes.end(), key.name) != table_axes.end()) {
    return IndirectError(absl::StrCat("the index axis `", key.name, "` is also an axis of the table ",
                                      table.ToString(), "; the destination names it in `", table_axis, "`'s place"));
  }
  Index one;
  one.Add(table_axis, 1);
  const std::optional<int64_t> first = source.inverse(Index());
  const std::optional<int64_t> next = row->size > 1 ? source.inverse(one) : first;
  if (!first || !next) return IndirectError(absl::StrCat("the table ", table.ToString(), " is not readable by row"));
  IndirectLoop loop{table_axis, row->size, key.name, key.size, *next - *first};
  ASSIGN_OR_RETURN(Placement placement, Place(dma.device(), table.dtype(), dst.tier, dst.levels, dst.address));
  DeviceTensor out = DeviceTensor::Reserve(dma.device(), std::move(placement));
  std::vector<std::string> want = Without(table_axes, table_axis);
  want.push_back(key.name);
  std::sort(want.begin(), want.end());
  if (out.full_mapping().axis_names() != want) {
    out.Release();
    return IndirectError(absl::StrCat("the destination ", out.ToString(), " must name the table's axes with `",
                                      key.name, "` in `", table_axis, "`'s place"));
  }
  DmaOp op{dma.name(), RefOf(table), RefOf(out), loop, RefOf(index)};
  DmaTensors tensors{table, out, index};
  absl::Status done = dma.context() != nullptr ? dma.context()->Submit(Op{std::move(op)}, tensors)
                                               : GatherInto(loop, tensors);
  if (!done.ok()) {
    out.Release();
    return done;
  }
  out.ClaimRanges();
  return out;
}

absl::Status GatherInto(const IndirectLoop& loop, const DmaTensors& tensors) {
  VISA_CHECK(tensors.index.has_value(), "a gather runs with its index tensor");
  ASSIGN_OR_RETURN(Axis key, KeyAxis(*tensors.index));
  ASSIGN_OR_RETURN(Mapping by_key, Mapping::Symbol(key));
  ASSIGN_OR_RETURN(HostTensor index, ReadAs(*tensors.index, by_key));
  std::vector<int64_t> rows(static_cast<size_t>(key.size));
  for (int64_t k = 0; k < key.size; ++k) {
    ASSIGN_OR_RETURN(double value, index.Get(k));
    if (value < 0 || value >= static_cast<double>(loop.table_size)) {
      return absl::OutOfRangeError(absl::StrCat(
          "Indirect Access: index[", key.name, " = ", k, "] = ", value, " is outside the rows 0..",
          loop.table_size - 1, " of ", loop.table_axis, "; the gather reads no row for it"));
    }
    rows[k] = static_cast<int64_t>(value);
  }
  const DeviceTensor& table = tensors.src;
  const DeviceTensor& out = tensors.dst;
  ASSIGN_OR_RETURN(HostTensor source, ReadAs(table, table.full_mapping()));
  const Mapping layout = out.full_mapping();
  ASSIGN_OR_RETURN(HostTensor image, HostTensor::Zeros(out.dtype(), layout));
  for (int64_t p = 0; p < layout.size(); ++p) {
    const Cell cell = layout.map(p);
    if (!cell.live()) continue;
    Index from = cell.index;
    from.Set(key.name, 0);
    from.Set(loop.table_axis, rows[cell.index[key.name]]);
    ASSIGN_OR_RETURN(uint32_t bits, source.GetBits(from));
    RETURN_IF_ERROR(image.SetBits(p, bits));
  }
  return WriteInto(image, out);
}

}  // namespace visa
