// Indirect fetches on the JIT: the IndirectLoop's steps, each a compiled nest of the inner entries.
#include "jit/indirect_fetch.h"

#include <algorithm>
#include <cstring>
#include <optional>
#include <vector>

#include "absl/strings/str_cat.h"
#include "dsl/status_macros.h"
#include "jit/element_op.h"
#include "jit/in_place.h"
#include "jit/indirect_positions.h"
#include "jit/mapping_facts.h"
#include "jit/staging.h"
#include "runtime/device.h"
#include "runtime/indirect_dma.h"
#include "runtime/relayout.h"
#include "dsl/scalar_convert.h"

namespace visa::jit {
namespace {

// The entries inside the IndirectLoop (the recorded configuration's first entry), innermost
// first, then the slices: stream positions dense in entry order, buffer offsets by the strides.
MoveNest InnerNest(const SequencerConfig& config, int64_t units, int64_t stream_unit, int64_t buffer_unit) {
  MoveNest nest;
  int64_t dense = 1;
  for (size_t i = config.entries.size(); i-- > 1;) {
    nest.levels.push_back({config.entries[i].size, dense, config.entries[i].stride});
    dense *= config.entries[i].size;
  }
  nest.levels.push_back({units, stream_unit, buffer_unit});
  return nest;
}

// The units the walk fills: its stream's (chip x cluster x slice). A pipeline trimmed to its live
// units (live_units.h) walks those alone, the first units of the table; untrimmed, every unit of
// the table's prefix.
int64_t WalkedUnits(const FetchStage& stage) {
  return stage.out.chip.size() * stage.out.cluster.size() * stage.out.slice.size();
}

// Elements from one slice's data to the next in the table's memory (the in-place unit).
int64_t MemoryUnit(const DeviceTensor& tensor) {
  return Device::UnitStride(tensor.placement().tier) * 8 / StorageBits(tensor.dtype());
}

// What one walk reads: the table's bytes (in place, staged, or staged behind a zeroed head) and
// the nest inside the loop over that buffer.
struct Source {
  MoveNest nest;
  const uint8_t* data = nullptr;
  int64_t positions = 0;
  std::optional<Staged> staged;
  std::vector<uint8_t> shifted;  // a left-padded stream's head, then the staged table
};

absl::StatusOr<Source> SourceOf(const DmTensor& table, const FetchStage& stage, int64_t max_offset) {
  const int64_t units = WalkedUnits(stage);
  const int64_t stream_unit = stage.out.time.size() * stage.out.packet.size();
  const int64_t head = -stage.sequencer.base_offset;
  Source source;
  if (head == 0) {
    if (std::optional<InPlace> in_place = InPlaceOf(table)) {
      source.nest = InnerNest(stage.sequencer, units, stream_unit, MemoryUnit(table));
      if (max_offset + source.nest.max_src() < in_place->positions) {
        source.data = in_place->data;
        source.positions = in_place->positions;
        return source;
      }
    }
  }
  source.nest = InnerNest(stage.sequencer, units, stream_unit, table.element().size());
  // Padded stream positions may read past the last row: stage that much more.
  const int64_t table_positions = table.placement().prefix_size * table.element().size();
  const int64_t tail = std::max<int64_t>(0, max_offset + source.nest.max_src() + 1 - head - table_positions);
  ASSIGN_OR_RETURN(source.staged, Staged::Read(table, tail));
  source.positions = source.staged->positions() + tail;
  source.data = source.staged->data();
  if (head > 0) {
    // The base address moved back `head` positions: the walk reads a zeroed head first.
    const int bits = StorageBits(table.dtype());
    source.shifted.assign(static_cast<size_t>(StorageBytes(table.dtype(), head + source.positions) + 1), 0);
    CopyPositions(bits, source.shifted.data(), head, source.staged->data(), 0, source.positions);
    source.positions += head;
    source.data = source.shifted.data();
  }
  return source;
}

// Every padding position (the runs of `padding`) holds `pad_bits`: the adapter masks what the
// sequencer over-read.
void MaskPadding(const std::vector<int64_t>& padding, int bits, uint32_t pad_bits, std::vector<uint8_t>& bytes) {
  for (size_t r = 0; r + 1 < padding.size(); r += 2) {
    const int64_t start = padding[r], length = padding[r + 1];
    if (bits == 8) {
      std::memset(bytes.data() + start, static_cast<int>(pad_bits & 0xff), static_cast<size_t>(length));
    } else if (bits >= 8 && pad_bits == 0) {
      std::memset(bytes.data() + start * bits / 8, 0, static_cast<size_t>(length * bits / 8));
    } else {
      for (int64_t p = start; p < start + length; ++p) SetPosition(bits, bytes.data(), p, pad_bits);
    }
  }
}

}  // namespace

absl::StatusOr<HostTensor> RunIndirectFetch(KernelCache& kernels, const DmTensor& table, const DeviceTensor& index,
                                            const FetchStage& stage, const std::vector<int64_t>& padding) {
  VISA_CHECK(stage.indirect.has_value(), "an indirect fetch has its IndirectLoop");
  const IndirectLoop& loop = stage.indirect->loop;
  // The IndirectLoop's offsets: read from device memory now, each checked.
  ASSIGN_OR_RETURN(std::vector<int64_t> rows, ReadIndirectRows(loop, index, table, "an indirect fetch"));
  
  const SequencerEntry& entry = stage.sequencer.entries.front();
  VISA_CHECK(entry.size == loop.limit && entry.stride == loop.row_stride, "the IndirectLoop is the first entry");
  const Mapping out = stage.out.Full();
  const int64_t units = WalkedUnits(stage);
  const int64_t stream_unit = stage.out.time.size() * stage.out.packet.size();
  VISA_CHECK(units * stream_unit == out.size() && stage.sequencer.stream_size() == stream_unit &&
                 units <= table.placement().prefix_size,
             "an indirect fetch's entries enumerate its stream on every slice it walks");
  const int64_t per_step = stream_unit / loop.limit;  // stream positions one step fills on a slice
  int64_t max_offset = 0;
  for (int64_t row : rows) max_offset = std::max(max_offset, row * loop.row_stride);
  ASSIGN_OR_RETURN(Source source, SourceOf(table, stage, max_offset));
  ASSIGN_OR_RETURN(ElementOp op, FetchAdapterOp(stage, /*interleaved=*/false, source.positions));
  const int in_bits = StorageBits(table.dtype());
  const int out_bits = StorageBits(stage.out.dtype);
  std::vector<uint8_t> bytes(static_cast<size_t>(StorageBytes(stage.out.dtype, out.size()) + 1), 0);
  // A step whose stream positions start inside a byte (4-bit, an odd count per step) is walked
  // into a copy one position behind, then moved into place nibble by nibble.
  std::vector<uint8_t> behind;
  std::vector<int64_t> steps_behind;
  for (int64_t k = 0; k < loop.limit; ++k) {
    const int64_t from = rows[k] * loop.row_stride;  // offset_k: whole bytes (the call's rule)
    VISA_CHECK((from * in_bits) % 8 == 0, "an IndirectLoop offset starts on a byte");
    const uint8_t* src = source.data + from * in_bits / 8;
    int64_t to = k * per_step;
    uint8_t* dst = nullptr;
    if ((to * out_bits) % 8 == 0) {
      dst = bytes.data() + to * out_bits / 8;
    } else {
      if (behind.empty()) behind.assign(bytes.size(), 0);
      steps_behind.push_back(k);
      to -= 1;
      dst = behind.data() + to * out_bits / 8;
    }
    RETURN_IF_ERROR(
        kernels.RunNest(source.nest, op, dst, out.size() - to, src, source.positions - from).status());
  }
  for (int64_t k : steps_behind) {
    for (int64_t u = 0; u < units; ++u) {
      const int64_t at = u * stream_unit + k * per_step;
      CopyPositions(out_bits, bytes.data(), at, behind.data(), at - 1, per_step);
    }
  }
  uint32_t pad_bits = 0;
  if (stage.adapter.pad_value) {
    ASSIGN_OR_RETURN(pad_bits, DoubleToBits(stage.out.dtype, *stage.adapter.pad_value));
  }
  MaskPadding(padding, out_bits, pad_bits, bytes);
  bytes.resize(static_cast<size_t>(StorageBytes(stage.out.dtype, out.size())));
  ++kernels.stats().sequencer_moves;
  return HostTensor::FromBytes(stage.out.dtype, out, std::move(bytes));
}

absl::Status PrepareIndirectFetch(KernelCache& kernels, const DeviceTensor& table, const FetchStage& stage) {
  VISA_CHECK(stage.indirect.has_value(), "an indirect fetch has its IndirectLoop");
  const int64_t units = WalkedUnits(stage);
  const int64_t stream_unit = stage.out.time.size() * stage.out.packet.size();
  const std::optional<Mapping> in_place = stage.sequencer.base_offset != 0 ? std::nullopt : InPlaceLayout(table);
  ASSIGN_OR_RETURN(ElementOp op, FetchAdapterOp(stage, /*interleaved=*/false, InPlacePositions(table)));
  return kernels.CompileNest(
      InnerNest(stage.sequencer, units, stream_unit, in_place ? MemoryUnit(table) : table.element().size()), op);
}

}  // namespace visa::jit
