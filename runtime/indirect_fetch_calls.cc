// Stream::fetch_indirect: the index tensor's rules, then the Fetch Sequencer's IndirectLoop
// (dsl/indirect_fetch.h) recorded on the fetch stage with the index tensor on the op.
#include <vector>

#include "absl/strings/str_cat.h"
#include "dsl/fetch_engine.h"
#include "dsl/indirect_fetch.h"
#include "dsl/status_macros.h"
#include "dsl/stream_order.h"
#include "runtime/tensor_unit.h"

namespace visa {
namespace {

template <typename... Parts>
absl::Status IndirectError(const Parts&... parts) {
  return absl::InvalidArgumentError(absl::StrCat("Indirect Access: ", parts...));
}

// Each slice's Fetch Sequencer reads the offsets from its own DM: wherever the table has a slice
// (chip, cluster) the index must be there whole, so its levels hold no axis and are live there.
absl::Status CheckIndexPlacement(const DmTensor& table, const DmTensor& index, const std::string& key) {
  const std::vector<Mapping> want = table.levels();
  const std::vector<Mapping> have = index.levels();
  const char* names[] = {"Chip", "Cluster", "Slice"};
  for (size_t level = 0; level < 3; ++level) {
    if (!have[level].axis_names().empty()) {
      return IndirectError("the index tensor ", index.ToString(), " spreads `", key, "` over its ", names[level],
                           " `", have[level].ToString(), "`; every slice's Fetch Sequencer reads all of `", key,
                           "` from its own DM");
    }
    if (have[level].size() != want[level].size()) {
      return IndirectError("the index tensor's ", names[level], " `", have[level].ToString(), "` and the table's `",
                           want[level].ToString(), "` differ in size");
    }
    for (int64_t p = 0; p < want[level].size(); ++p) {
      if (want[level].map(p).live() && !have[level].map(p).live()) {
        return IndirectError(names[level], " ", p, " holds rows of the table ", table.ToString(),
                             " but no copy of the index tensor ", index.ToString(),
                             "; each slice's Fetch Sequencer reads the offsets from its own DM (broadcast the "
                             "index, e.g. ", names[level], " `", want[level].size(), "`)");
      }
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<Axis> CheckIndex(const Context& ctx, const DmTensor& table, const DmTensor& index) {
  if (&index.device() != &ctx.device()) {
    return IndirectError("the index tensor ", index.ToString(), " is on another device");
  }
  RETURN_IF_ERROR(index.CheckReadable());
  if (index.dtype() != DType::kI32) {
    return IndirectError("the index tensor ", index.ToString(), " is ", Name(index.dtype()),
                         "; IndirectLoop offsets are i32 row numbers");
  }
  if (index.tier() != Tier::kDm) {
    return IndirectError("the index tensor ", index.ToString(), " is in ", TierName(index.tier()),
                         "; the Fetch Sequencer reads its offsets from DM");
  }
  const std::vector<Axis> axes = index.full_mapping().symbols();
  if (axes.size() != 1 || axes[0].skew || axes[0].shift) {
    return IndirectError("the index tensor ", index.ToString(), " must hold i32 row numbers along exactly one axis");
  }
  const std::vector<std::string> table_axes = table.full_mapping().axis_names();
  for (const std::string& name : table_axes) {
    if (name == axes[0].name) {
      return IndirectError("the index axis `", name, "` is also an axis of the table ", table.ToString(),
                           "; the stream names the rows by `", name, "` in their axis's place");
    }
  }
  RETURN_IF_ERROR(CheckIndexPlacement(table, index, axes[0].name));
  return axes[0];
}

}  // namespace

Stream Stream::fetch_indirect(DType out, const DmTensor& index, const std::string& table_axis, const Mapping& time,
                              const Mapping& packet) && {
  return std::move(*this).FetchIndirect(StreamCall::kFetch, out, std::nullopt, index, table_axis, time, packet);
}

Stream Stream::fetch_indirect_masked(DType out, double pad_value, const DmTensor& index, const std::string& table_axis,
                                     const Mapping& time, const Mapping& packet) && {
  return std::move(*this).FetchIndirect(StreamCall::kFetchMasked, out, pad_value, index, table_axis, time, packet);
}

Stream Stream::FetchIndirect(StreamCall call, DType out, std::optional<double> pad_value, const DmTensor& index,
                             const std::string& table_axis, const Mapping& time, const Mapping& packet) && {
  if (!Allow(call)) return std::move(*this);
  if (std::get<BeginStage>(op_.stages.front()).interleave) {
    return std::move(*this).Fail(IndirectError(
        "fetch_indirect reads one table; begin_interleaved alternates two tensors (begin with the table alone)"));
  }
  absl::StatusOr<Axis> key = CheckIndex(*ctx_, inputs_.front(), index);
  if (!key.ok()) return std::move(*this).Fail(key.status());
  absl::StatusOr<FetchStage> stage =
      PlanIndirectFetchStage(shape_, kind_, out, table_axis, *key, time, packet, pad_value);
  if (!stage.ok()) return std::move(*this).Fail(stage.status());
  stage->indirect->index = index.ToString();
  op_.fetch_index = TensorRef{index.ToString(), index.id(), index};
  shape_ = stage->out;
  position_ = *PositionAfter(StreamCall::kFetch);
  op_.stages.push_back(*std::move(stage));
  return std::move(*this);
}

}  // namespace visa
