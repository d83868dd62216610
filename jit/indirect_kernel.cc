// Gathers and scatters on the JIT: dense row images, the IndirectLoop's row copies, compiled moves.
#include "jit/indirect_kernel.h"

#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "dsl/status_macros.h"
#include "jit/element_op.h"
#include "jit/in_place.h"
#include "jit/indirect_positions.h"
#include "jit/staging.h"
#include "runtime/indirect_dma.h"

namespace visa::jit {

absl::StatusOr<RowLayout> RowsOf(const Mapping& tensor, const std::string& row_axis, const Axis& row) {
  std::vector<Mapping> parts;
  ASSIGN_OR_RETURN(Mapping outer, Mapping::Symbol(row));
  parts.push_back(outer);
  RowLayout out;
  for (const Axis& a : tensor.symbols()) {
    if (a.name == row_axis) continue;
    ASSIGN_OR_RETURN(Mapping inner, Mapping::Symbol(a));
    parts.push_back(inner);
    out.row_elements *= a.size;
  }
  out.layout = Pair(parts);
  return out;
}

namespace {

absl::StatusOr<Axis> AxisOf(const Mapping& tensor, const std::string& name) {
  for (const Axis& a : tensor.symbols()) {
    if (a.name == name) return a;
  }
  return absl::InternalError(absl::StrCat("a recorded indirect move's tensor has no axis ", name));
}

// The layouts of one op: the rows of the W-side tensor (table, or the tensor scattered into), the
// rows of the K-side one (the gathered result, or the scattered rows), and a row's elements.
struct Plan {
  RowLayout by_w, by_k;
  int64_t row = 0;  // elements per row
  int bits = 8;     // storage bits per element
};

absl::StatusOr<Plan> PlanOf(const IndirectLoop& loop, DType dtype, const Mapping& w_side, const Mapping& k_side) {
  Plan plan;
  ASSIGN_OR_RETURN(Axis w, AxisOf(w_side, loop.table_axis));
  ASSIGN_OR_RETURN(Axis k, AxisOf(k_side, loop.key_axis));
  ASSIGN_OR_RETURN(plan.by_w, RowsOf(w_side, loop.table_axis, w));
  ASSIGN_OR_RETURN(plan.by_k, RowsOf(k_side, loop.key_axis, k));
  VISA_CHECK(plan.by_w.row_elements == plan.by_k.row_elements, "both sides of an indirect move hold the same rows");
  plan.row = plan.by_w.row_elements;
  plan.bits = StorageBits(dtype);
  return plan;
}

// Where a tensor's elements are read from: in place, or staged when it is not addressable so.
struct Source {
  std::optional<Staged> staged;
  InPlace view;
};

absl::StatusOr<Source> SourceOf(const DeviceTensor& tensor) {
  Source source;
  if (std::optional<InPlace> in_place = InPlaceOf(tensor)) {
    source.view = *in_place;
    return source;
  }
  ASSIGN_OR_RETURN(source.staged, Staged::Read(tensor));
  source.view = InPlace{tensor.full_mapping(), source.staged->data(), source.staged->positions()};
  return source;
}

}  // namespace

Mapping SourceLayout(const DeviceTensor& tensor) {
  std::optional<Mapping> in_place = InPlaceLayout(tensor);
  return in_place ? *in_place : tensor.full_mapping();
}

absl::StatusOr<std::vector<uint8_t>> DenseRows(KernelCache& kernels, const DeviceTensor& tensor, const Mapping& rows) {
  ASSIGN_OR_RETURN(Source source, SourceOf(tensor));
  std::vector<uint8_t> image(static_cast<size_t>(StorageBytes(tensor.dtype(), rows.size())), 0);
  RETURN_IF_ERROR(kernels.Move(rows, source.view.layout, CopyOp(tensor.dtype()), image.data(), rows.size(),
                               source.view.data, source.view.positions, /*allow_drop=*/false).status());
  return image;
}

namespace {

// The image laid out by `rows` into the destination's live positions (a compiled move).
absl::Status WriteRows(KernelCache& kernels, const std::vector<uint8_t>& image, const Mapping& rows,
                       const DeviceTensor& dst) {
  if (std::optional<InPlace> to = InPlaceOf(dst)) {
    return kernels.Move(to->layout, rows, CopyOp(dst.dtype()), to->data, to->positions, image.data(), rows.size(),
                        /*allow_drop=*/false).status();
  }
  ASSIGN_OR_RETURN(Staged staged, Staged::Read(dst.device(), dst.placement()));
  RETURN_IF_ERROR(kernels.Move(dst.full_mapping(), rows, CopyOp(dst.dtype()), staged.data(), staged.positions(),
                               image.data(), rows.size(), /*allow_drop=*/false).status());
  return staged.Write();
}

}  // namespace

absl::Status RunIndirect(KernelCache& kernels, const DmaOp& op, const DmaTensors& tensors) {
  VISA_CHECK(op.indirect() != nullptr && tensors.index.has_value(), "an indirect move runs with its index tensor");
  const IndirectLoop& loop = *op.indirect();
  // The IndirectLoop's offsets: read from device memory now, each checked.
  ASSIGN_OR_RETURN(std::vector<int64_t> rows, IndirectRows(loop, *tensors.index));
  const DType dtype = tensors.dst.dtype();
  if (!loop.scatter) {
    ASSIGN_OR_RETURN(Plan plan, PlanOf(loop, dtype, tensors.src.full_mapping(), tensors.dst.full_mapping()));
    ASSIGN_OR_RETURN(std::vector<uint8_t> table, DenseRows(kernels, tensors.src, plan.by_w.layout));
    std::vector<uint8_t> gathered(static_cast<size_t>(StorageBytes(dtype, plan.row * loop.limit)), 0);
    for (int64_t k = 0; k < loop.limit; ++k) {
      CopyPositions(plan.bits, gathered.data(), k * plan.row, table.data(), rows[k] * plan.row, plan.row);
    }
    return WriteRows(kernels, gathered, plan.by_k.layout, tensors.dst);
  }
  VISA_CHECK(tensors.base.has_value(), "a scatter runs with the tensor it scatters into");
  ASSIGN_OR_RETURN(Plan plan, PlanOf(loop, dtype, tensors.base->full_mapping(), tensors.src.full_mapping()));
  ASSIGN_OR_RETURN(std::vector<uint8_t> out, DenseRows(kernels, *tensors.base, plan.by_w.layout));
  ASSIGN_OR_RETURN(std::vector<uint8_t> source, DenseRows(kernels, tensors.src, plan.by_k.layout));
  for (int64_t k = 0; k < loop.limit; ++k) {
    CopyPositions(plan.bits, out.data(), rows[k] * plan.row, source.data(), k * plan.row, plan.row);
  }
  return WriteRows(kernels, out, plan.by_w.layout, tensors.dst);
}

absl::Status PrepareIndirect(KernelCache& kernels, const DmaOp& op) {
  if (!op.src.handle || !op.dst.handle || !op.indirect()) return absl::OkStatus();
  const IndirectLoop& loop = *op.indirect();
  const DeviceTensor& src = *op.src.handle;
  const DeviceTensor& dst = *op.dst.handle;
  auto compile_out = [&](const Mapping& rows) {
    std::optional<Mapping> to = InPlaceLayout(dst);
    return kernels.Compile(to ? *to : dst.full_mapping(), rows, CopyOp(dst.dtype()), /*allow_drop=*/false);
  };
  if (!loop.scatter) {
    ASSIGN_OR_RETURN(Plan plan, PlanOf(loop, dst.dtype(), src.full_mapping(), dst.full_mapping()));
    RETURN_IF_ERROR(kernels.Compile(plan.by_w.layout, SourceLayout(src), CopyOp(src.dtype()), false));
    return compile_out(plan.by_k.layout);
  }
  if (op.base() == nullptr || !op.base()->handle) return absl::OkStatus();
  const DeviceTensor& base = *op.base()->handle;
  ASSIGN_OR_RETURN(Plan plan, PlanOf(loop, dst.dtype(), base.full_mapping(), src.full_mapping()));
  RETURN_IF_ERROR(kernels.Compile(plan.by_w.layout, SourceLayout(base), CopyOp(base.dtype()), false));
  RETURN_IF_ERROR(kernels.Compile(plan.by_k.layout, SourceLayout(src), CopyOp(src.dtype()), false));
  return compile_out(plan.by_w.layout);
}

}  // namespace visa::jit
