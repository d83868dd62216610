// Memset's call (TensorUnit::memset), placement rules and data path by tensor index.
#include "runtime/memset.h"

#include <vector>

#include "absl/strings/str_cat.h"
#include "dsl/engine_errors.h"
#include "dsl/status_macros.h"
#include "runtime/device.h"
#include "runtime/host_tensor.h"
#include "runtime/tensor_unit.h"

namespace visa {
namespace {

constexpr char kRule[] = " (manual, Commit Engine > Sub-Context Operations, \"Generate Mode\": ITOS writes 32-bit values)";

TensorRef RefOf(const DeviceTensor& t) { return TensorRef{t.ToString(), t.id(), t}; }

}  // namespace

absl::Status CheckMemsetTarget(const DeviceTensor& view, MemsetFill& fill) {
  if (view.tier() != Tier::kDm) {
    return EngineError("memset", "Generate Mode writes DM, but ", view.ToString(), " is in ", TierName(view.tier()),
                       kRule);
  }
  if (view.dtype() != fill.dtype) {
    return EngineError("memset", "the value is ", Name(fill.dtype), " but ", view.ToString(), " holds ",
                       Name(view.dtype()), kRule);
  }
  RETURN_IF_ERROR(view.CheckReadable());
  // The ITOS words covering the view's live cells, from its first to its last: each word must hold
  // nothing but the view's cells and the tensor's own padding.
  const Mapping& window = view.element();
  const Mapping& base_map = view.base_element();
  const int64_t base = base_map.size();
  const int64_t offset = view.window_offset();
  auto in_view = [&](int64_t q) {
    const int64_t e = q - offset;
    return e >= 0 && e < window.size() && window.map(e).live();
  };
  int64_t first = -1, last = -1;
  for (int64_t q = offset; q < base && q - offset < window.size(); ++q) {
    if (!in_view(q)) continue;
    if (first < 0) first = q;
    last = q;
  }
  if (first < 0) return EngineError("memset", "the view ", view.ToString(), " has no live cell to fill", kRule);
  const int64_t bits = StorageBits(view.dtype());
  const int64_t word_bits = kItosWordBytes * 8;
  const int64_t origin = view.address() * 8;  // the tensor's first bit in the slice
  const int64_t word_lo = (origin + first * bits) / word_bits * word_bits;
  const int64_t word_hi = (origin + (last + 1) * bits + word_bits - 1) / word_bits * word_bits;
  for (int64_t bit = word_lo; bit < word_hi; bit += bits) {
    const int64_t q = (bit - origin) / bits;
    const bool own_padding = q >= 0 && q < base && !base_map.map(q).live();
    if (in_view(q) || own_padding) continue;
    return EngineError("memset", "ITOS commands write whole aligned 32-bit words, and the word at DM byte ",
                       bit / word_bits * kItosWordBytes, " of each slice also holds ",
                       q >= 0 && q < base ? "a live cell of the tensor outside the view" : "bytes outside the tensor",
                       " (the view ", view.ToString(), "); align the view to 4-byte words", kRule);
  }
  fill.words_per_slice = (word_hi - word_lo) / word_bits;
  fill.slices = static_cast<int64_t>(view.placement().live_prefixes.size());
  return absl::OkStatus();
}

absl::Status FillView(const MemsetFill& fill, const DeviceTensor& view) {
  const Placement& placement = view.placement();
  const Mapping full = view.full_mapping();
  const int64_t window = view.element().size();
  const int64_t base = view.base_element().size();
  const int64_t offset = view.window_offset();
  Device& device = view.device();
  for (size_t k = 0; k < placement.live_prefixes.size(); ++k) {
    const int64_t unit = placement.units[k];
    std::vector<uint8_t> bytes(placement.unit_bytes());
    RETURN_IF_ERROR(device.Read(placement.tier, unit, placement.address, absl::MakeSpan(bytes)));
    ASSIGN_OR_RETURN(HostTensor cells, HostTensor::FromBytes(placement.dtype, view.base_element(), std::move(bytes)));
    const int64_t first = placement.live_prefixes[k] * window;
    for (int64_t e = 0; e < window; ++e) {
      if (offset + e >= base || !full.map(first + e).live()) continue;
      RETURN_IF_ERROR(cells.SetBits(offset + e, fill.bits));
    }
    RETURN_IF_ERROR(device.Write(placement.tier, unit, placement.address, cells.bytes()));
  }
  return absl::OkStatus();
}

absl::Status TensorUnit::memset(const DmTensor& view, double value) {
  ASSIGN_OR_RETURN(MemsetFill fill, PlanMemsetFill(kind_, view.dtype(), value));
  if (&view.device() != &ctx_->device()) {
    return EngineError("memset", "the view ", view.ToString(), " is on another device than the context", kRule);
  }
  RETURN_IF_ERROR(CheckMemsetTarget(view, fill));
  DmaOp op{kind_, RefOf(view), RefOf(view), DmaMemset{fill}};
  return ctx_->Submit(Op{std::move(op)}, DmaTensors{view, view});
}

}  // namespace visa
