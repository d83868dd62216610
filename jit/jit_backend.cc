// JitBackend: a pipeline walked stage by stage, each stage a compiled move between host buffers
// (streams, staged device units); DMA moves likewise.
#include "jit/jit_backend.h"

#include <atomic>
#include <chrono>
#include <cstring>
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <thread>

#include "absl/strings/str_cat.h"
#include "dsl/status_macros.h"
#include "jit/contraction_plan.h"
#include "jit/direct_pipeline.h"
#include "jit/dma_nest.h"
#include "jit/fill_kernel.h"
#include "jit/indirect_fetch.h"
#include "jit/indirect_kernel.h"
#include "jit/in_place.h"
#include "jit/in_place_reduce.h"
#include "jit/in_place_vector.h"
#include "jit/live_units.h"
#include "jit/mapping_facts.h"
#include "jit/parallel.h"
#include "jit/ready_moves.h"
#include "jit/sequencer_nest.h"
#include "jit/staging.h"
#include "jit/vector_stage.h"
#include "interp/op_reads.h"
#include "runtime/pipeline_walk.h"
#include "runtime/relayout.h"
#include "runtime/scalar_convert.h"

namespace visa::jit {
namespace {

// The source of a fetch: one tensor's layout, or two stacked along the interleave axis.
Mapping FetchSource(const std::vector<DmTensor>& inputs, const BeginStage& begin) {
  const Mapping full = inputs[0].full_mapping();
  return begin.interleave ? Pair({*begin.interleave, full}) : full;
}


// A zeroed stream image, or one whose every position holds `pad_bits` (fetch masking).
absl::StatusOr<std::vector<uint8_t>> StreamBuffer(DType dtype, int64_t positions, uint32_t pad_bits) {
  std::vector<uint8_t> bytes(static_cast<size_t>(StorageBytes(dtype, positions)), 0);
  if (pad_bits == 0) return bytes;
  switch (StorageBits(dtype)) {
    case 4: std::memset(bytes.data(), static_cast<int>((pad_bits & 0xf) * 0x11), bytes.size()); break;
    case 8: std::memset(bytes.data(), static_cast<int>(pad_bits & 0xff), bytes.size()); break;
    case 16:
      for (size_t i = 0; i < bytes.size(); i += 2) {
        const uint16_t v = static_cast<uint16_t>(pad_bits);
        std::memcpy(&bytes[i], &v, 2);
      }
      break;
    default:
      for (size_t i = 0; i < bytes.size(); i += 4) std::memcpy(&bytes[i], &pad_bits, 4);
      break;
  }
  return bytes;
}

// Sets every position of the runs (start, length pairs) of a packed image to `bits`.
void FillRuns(std::vector<uint8_t>& bytes, DType dtype, const std::vector<int64_t>& runs, uint32_t bits) {
  const int storage = StorageBits(dtype);
  for (size_t r = 0; r + 1 < runs.size(); r += 2) {
    const int64_t start = runs[r], length = runs[r + 1];
    switch (storage) {
      case 8: std::memset(&bytes[start], static_cast<int>(bits & 0xff), static_cast<size_t>(length)); break;
      // Runs are long where a padded level lies outside the stream's packet (half of a `1 # 2`
      // cluster): a position-by-position store was most of a 256-slice vector op's fetch.
      case 16:
        if (bits == 0) {
          std::memset(&bytes[2 * start], 0, static_cast<size_t>(2 * length));
        } else {
          std::fill_n(reinterpret_cast<uint16_t*>(&bytes[2 * start]), length, static_cast<uint16_t>(bits));
        }
        break;
      case 32:
        if (bits == 0) {
          std::memset(&bytes[4 * start], 0, static_cast<size_t>(4 * length));
        } else {
          std::fill_n(reinterpret_cast<uint32_t*>(&bytes[4 * start]), length, bits);
        }
        break;
      default:  // 4-bit, two to a byte, the low nibble first
        for (int64_t p = start; p < start + length; ++p) {
          const int shift = (p & 1) * 4;
          bytes[p >> 1] = static_cast<uint8_t>((bytes[p >> 1] & ~(0xf << shift)) | ((bits & 0xf) << shift));
        }
    }
  }
}

absl::Status CheckSameType(DType src, DType dst) {
  if (src == dst) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat(
      "Tensor Function: a move keeps the element type; the source is ", std::string(Name(src)),
      " and the destination ", std::string(Name(dst))));
}

// Whether the move into a new tensor at `placement` writes every position of every live unit, so
// that the units' current bytes need not be read first.
absl::StatusOr<bool> Covers(KernelCache& kernels, const Mapping& dst, const Mapping& src, const Placement& placement,
                            bool allow_drop) {
  // An odd count of 4-bit elements leaves half a byte no position covers.
  if (StorageBits(placement.dtype) == 4 && placement.levels.back().size() % 2 != 0) return false;
  ASSIGN_OR_RETURN(int64_t written, kernels.Coverage(dst, src, allow_drop));
  return written == static_cast<int64_t>(placement.live_prefixes.size()) * placement.levels.back().size();
}

HostTensor Image(DType dtype, const Mapping& mapping, std::vector<uint8_t> bytes) {
  absl::StatusOr<HostTensor> image = HostTensor::FromBytes(dtype, mapping, std::move(bytes));
  VISA_CHECK(image.ok(), "a stream image has the size of its mapping");
  return *std::move(image);
}


// Elements from one unit's data to the next in a tensor's memory (the in-place sequencer unit).
int64_t SequencerUnit(const DeviceTensor& tensor) {
  return Device::UnitStride(tensor.placement().tier) * 8 / StorageBits(tensor.dtype());
}

// A commit's write nest (sequencer_nest.h: the recorded Commit Sequencer entries) into the
// output's memory in place, over its live units when they are its first ones; nullopt where that
// walk does not apply: a commit_view or disabled slices (they keep bytes a whole-unit walk would
// not), live units with gaps, or entries that would write outside the Element or twice.
// `stream_units` is the units the stream spans: the output's when 0, its live ones when the
// pipeline was trimmed to them (live_units.h).
std::optional<MoveNest> CommitNest(const CommitStage& commit, const DeviceTensor& output, int64_t stream_size,
                                   int64_t stream_units = 0) {
  if (!commit.slices.all() || output.is_view()) return std::nullopt;
  const Placement& placement = output.placement();
  const int64_t live = static_cast<int64_t>(placement.live_prefixes.size());
  const int64_t units = stream_units > 0 ? stream_units : placement.prefix_size;
  if (units <= 0 || stream_size % units != 0) return std::nullopt;
  if (live == 0 || live > units || placement.live_prefixes.back() != live - 1) return std::nullopt;
  return WriteNestOf(commit.sequencer, live, stream_size / units, SequencerUnit(output), output.element().size());
}

// A nest over the units a trimmed walk spans (live_units.h), starting `first` positions into the
// buffer it reads or writes by unit: 0 over a prefix of the units, the box's first unit otherwise.
struct UnitNest {
  MoveNest nest;
  int64_t first = 0;
};

// CommitNest over a walk's units (`box` null: every unit). Off a prefix, the nest walks the box,
// and the output's live units must be the box's.
std::optional<UnitNest> LiveCommitNest(const CommitStage& commit, const DeviceTensor& output, int64_t stream_size,
                                       const LiveBox* box) {
  if (box == nullptr || box->IsPrefix()) {
    std::optional<MoveNest> nest = CommitNest(commit, output, stream_size, box != nullptr ? box->units() : 0);
    if (!nest) return std::nullopt;
    return UnitNest{*std::move(nest), 0};
  }
  if (!commit.slices.all() || output.is_view() || stream_size % box->units() != 0) return std::nullopt;
  if (!LiveUnitsAreTheBox(output.placement(), *box)) return std::nullopt;
  const int64_t stream_unit = stream_size / box->units();
  std::optional<MoveNest> nest =
      WriteNestOf(commit.sequencer, 1, stream_unit, SequencerUnit(output), output.element().size());
  if (!nest) return std::nullopt;
  return UnitNest{OverBox(*std::move(nest), *box, stream_unit, SequencerUnit(output), /*stream_is_dst=*/false),
                  box->first_unit() * SequencerUnit(output)};
}

// The read nest of a fetch's recorded sequencer over the walk's units: the first `units`, or off a
// prefix the box's (live_units.h), whose first unit is `first` buffer positions in.
std::optional<UnitNest> ReadNest(const SequencerConfig& config, const LiveBox* box, int64_t units,
                                 int64_t stream_unit, int64_t buffer_unit) {
  if (box == nullptr || box->IsPrefix()) {
    std::optional<MoveNest> nest = ReadNestOf(config, units, stream_unit, buffer_unit);
    if (!nest) return std::nullopt;
    return UnitNest{*std::move(nest), 0};
  }
  std::optional<MoveNest> nest = ReadNestOf(config, 1, stream_unit, buffer_unit);
  if (!nest) return std::nullopt;
  return UnitNest{OverBox(*std::move(nest), *box, stream_unit, buffer_unit, /*stream_is_dst=*/true),
                  box->first_unit() * buffer_unit};
}

// Whether a walk of the in-place memory over the stream's units reads only chips the tensor lives
// on: the first `units`, or the box's chips.
bool InPlaceWalkStays(const DeviceTensor& tensor, const LiveBox* box, int64_t units) {
  if (box == nullptr || box->IsPrefix()) return InPlaceWalkStaysOnItsChips(tensor, units);
  return BoxStaysOnLiveChips(tensor.placement(), *box);
}

// The nest of a DMA's recorded descriptors over its ends as the JIT addresses them (in place or
// staged), or why the move does not walk them.
struct DescriptorWalk {
  std::optional<MoveNest> nest;
  std::string why_not;
};
DescriptorWalk DescriptorNest(const DmaOp& op, const DeviceTensor& src, const DeviceTensor& dst, bool src_in_place,
                              bool dst_in_place) {
  if (op.descriptors() == nullptr) return {std::nullopt, "no descriptor"};
  // A staged end is its placement's bytes: a view is one only when it covers its placement's whole
  // Element from its start (a chip view: its relabeled placement).
  const bool whole_placement = dst.window_offset() == 0 && dst.element() == dst.placement().levels.back();
  if (dst.is_view() && !dst_in_place && !whole_placement) {
    return {std::nullopt, "a staged view destination (the shared transfer path)"};
  }
  std::optional<MoveNest> nest = DmaNestOf(*op.descriptors(), DmaEndOf(src, src_in_place), DmaEndOf(dst, dst_in_place));
  if (!nest) return {std::nullopt, "a staged end whose entries cross its Element"};
  return {std::move(nest), ""};
}

// A nest move run between two ends in place: what JitBackend::Keep needs for the op's next run.
struct InPlaceMove {
  ReadyNest kernel;
  const uint8_t* src = nullptr;
  const uint8_t* dst = nullptr;
};

// Runs a DMA from its recorded descriptors (dma_nest.h); the reason when it cannot. A move between
// two ends in place is also given as `in_place`.
absl::StatusOr<std::string> RunDescriptors(KernelCache& kernels, const DmaOp& op, const DeviceTensor& src,
                                           const DeviceTensor& dst, std::optional<InPlaceMove>& in_place) {
  // A source that may share bytes with the destination is read completely first (staged).
  std::optional<InPlace> from = MayOverlap(src, dst) ? std::nullopt : InPlaceOf(src);
  std::optional<InPlace> to = InPlaceOf(dst);
  DescriptorWalk walk = DescriptorNest(op, src, dst, from.has_value(), to.has_value());
  if (!walk.nest) return walk.why_not;
  const MoveNest& nest = *walk.nest;
  // The descriptors start at each end's first position (a chip view's chip), in place or staged.
  const int bits = StorageBits(src.dtype());
  const int64_t src_first = FirstPositionOf(op.descriptors()->src_first_position, DmaEndOf(src, from.has_value()));
  const int64_t dst_first = FirstPositionOf(op.descriptors()->dst_first_position, DmaEndOf(dst, to.has_value()));
  if (to) to = FromFirstPosition(*to, dst_first, bits);
  std::optional<Staged> staged_from;
  if (!from) {
    ASSIGN_OR_RETURN(staged_from, Staged::Read(src));
    from = InPlace{src.full_mapping(), staged_from->data(), staged_from->positions()};
  }
  from = FromFirstPosition(*from, src_first, bits);
  if (nest.max_src() >= from->positions) return std::string("entries that read past the source");
  const ElementOp copy = CopyOp(src.dtype());
  if (to) {
    if (nest.max_dst() >= to->positions) return std::string("entries that write past the destination's memory");
    ReadyNest kernel;
    RETURN_IF_ERROR(kernels.RunNest(nest, copy, to->data, to->positions, from->data, from->positions, &kernel).status());
    if (!staged_from) in_place = InPlaceMove{kernel, from->data, to->data};
    return std::string();
  }
  // A staged destination is read first unless the descriptors write every position of its units.
  const Placement& placement = dst.placement();
  const int64_t positions = static_cast<int64_t>(placement.live_prefixes.size()) * placement.levels.back().size();
  const bool odd_nibbles = StorageBits(placement.dtype) == 4 && placement.levels.back().size() % 2 != 0;
  const bool covered = !odd_nibbles && nest.elements() == positions;
  ASSIGN_OR_RETURN(Staged staged_to, Staged::Read(dst.device(), placement, !covered));
  const InPlace into = FromFirstPosition(InPlace{Mapping(), staged_to.data(), staged_to.positions()}, dst_first, bits);
  if (nest.max_dst() >= into.positions) return std::string("entries that write past the staged destination");
  RETURN_IF_ERROR(kernels.RunNest(nest, copy, into.data, into.positions, from->data, from->positions).status());
  RETURN_IF_ERROR(staged_to.Write());
  return std::string();
}

// Stream positions of Time's terms inside (after) the interleave term: its step in the time order.
int64_t InnerPositions(const Mapping& time, const Mapping& interleave) {
  int64_t inner = 1;
  bool found = false;
  Mapping rest = time;
  auto visit = [&](const Mapping& term) {
    if (found) inner *= term.size();
    if (term == interleave) found = true;
  };
  while (rest.kind() == Mapping::Kind::kPair) {
    visit(rest.major());
    rest = rest.minor();
  }
  visit(rest);
  return found ? inner : -1;
}

// Whether the op contracts (only then may its front run fused), and whether every stage between
// fetch and store only relabels positions (only then may it run as one move): checked before
// either plan's key, which names the whole op, is built on every run.
bool Contracts(const PipelineOp& op) {
  return std::any_of(op.stages.begin(), op.stages.end(),
                     [](const Stage& stage) { return std::holds_alternative<AlignStage>(stage); });
}
bool HasVectorStage(const PipelineOp& op) {
  return std::any_of(op.stages.begin(), op.stages.end(),
                     [](const Stage& stage) { return std::holds_alternative<VectorStage>(stage); });
}
bool OnlyRelabels(const PipelineOp& op) {
  for (size_t i = 2; i + 1 < op.stages.size(); ++i) {
    const Stage& stage = op.stages[i];
    if (!std::holds_alternative<SwitchStage>(stage) && !std::holds_alternative<CollectStage>(stage) &&
        !std::holds_alternative<TransposeStage>(stage)) {
      return false;
    }
  }
  return true;
}

// The layout a DMA end is addressed by: in place, or (nullopt) staged in its full mapping.
Mapping EndLayout(const std::optional<Mapping>& in_place, const DeviceTensor& t) {
  return in_place ? *in_place : t.full_mapping();
}
Mapping EndLayout(const std::optional<InPlace>& in_place, const DeviceTensor& t) {
  return in_place ? in_place->layout : t.full_mapping();
}

// Keeps a DMA's in-place ends only while the move between them has a loop nest (one decision for
// running and for compiling ahead): first drops the source's, then the destination's.
template <typename End>
void DirectEnds(KernelCache& kernels, const DeviceTensor& src, const DeviceTensor& dst, std::optional<End>& from,
                std::optional<End>& to) {
  if (!from && !to) return;
  if (kernels.HasNest(EndLayout(to, dst), EndLayout(from, src))) return;
  from.reset();
  if (kernels.HasNest(EndLayout(to, dst), src.full_mapping())) return;
  to.reset();
}

// Whether a staged contraction reads the TRF image through the TRF Sequencer's addressing
// (contraction_plan.h) rather than a copy in the computation mapping. A trimmed walk's TRF keeps
// every unit, so over a box the check counts the padded units and the weights of unit o are found
// at its device unit (KernelRunner::Contract); a unit of weights must then be whole bytes.
bool TrfAddressed(const AlignStage& align, const TrfTensor& weights, ContractionSpec& spec, const LiveBox* box) {
  if (box == nullptr) return AddressThroughTrfSequencer(align, weights, spec);
  const int64_t outer = spec.outer;
  spec.outer = box->size[0] * box->size[1] * box->size[2];
  const bool through = AddressThroughTrfSequencer(align, weights, spec);
  spec.outer = outer;
  return through && (spec.w_outer * StorageBits(weights.dtype())) % 8 == 0;
}

// The walk's visitor that runs: streams are host images moved by compiled kernels.
struct KernelRunner {
  using Stream = HostTensor;
  KernelCache& kernels;
  const PipelineTensors& tensors;
  PaddingCache& padded;
  const PipelineOp& op;
  // The live units a trimmed pipeline spans (live_units.h); null: not trimmed, the streams span
  // every unit.
  const LiveBox* box = nullptr;

  absl::StatusOr<HostTensor> Fetch(const BeginStage& begin, const FetchStage& stage) {
    if (stage.indirect) {
      VISA_CHECK(tensors.fetch_index.has_value(), "an indirect fetch runs with its index tensor");
      ASSIGN_OR_RETURN(const std::vector<int64_t>* padding, PaddedRuns(stage.out.Full()));
      return RunIndirectFetch(kernels, tensors.inputs[0], *tensors.fetch_index, stage, *padding);
    }
    // Not ASSIGN_OR_RETURN: GCC 12 then warns that the moved-out optional may be uninitialized.
    absl::StatusOr<std::optional<HostTensor>> walked = FetchBySequencer(begin, stage);
    if (!walked.ok()) return walked.status();
    if (walked->has_value()) return **std::move(walked);
    ++kernels.stats().derived_fetches;
    const std::vector<DmTensor>& inputs = tensors.inputs;
    uint32_t pad_bits = 0;
    if (stage.adapter.pad_value) {
      ASSIGN_OR_RETURN(pad_bits, DoubleToBits(stage.out.dtype, *stage.adapter.pad_value));
    }
    const Mapping out = stage.out.Full();
    ASSIGN_OR_RETURN(std::vector<uint8_t> bytes, StreamBuffer(stage.out.dtype, out.size(), pad_bits));
    std::optional<InPlace> direct = begin.interleave ? std::nullopt : InPlaceOf(inputs[0]);
    if (direct && kernels.HasNest(out, direct->layout)) {
      const InPlace* source = &*direct;
      ASSIGN_OR_RETURN(ElementOp op, FetchAdapterOp(stage, false, source->positions));
      RETURN_IF_ERROR(kernels.Move(out, source->layout, op, bytes.data(), out.size(), source->data,
                                   source->positions, /*allow_drop=*/true).status());
      return Image(stage.out.dtype, out, std::move(bytes));
    }
    ASSIGN_OR_RETURN(Staged source, begin.interleave ? Staged::ReadPair(inputs[0], inputs[1])
                                                     : Staged::Read(inputs[0]));
    ASSIGN_OR_RETURN(ElementOp op, FetchAdapterOp(stage, begin.interleave.has_value(), source.positions_per_tensor()));
    RETURN_IF_ERROR(kernels.Move(out, FetchSource(inputs, begin), op, bytes.data(), out.size(), source.data(),
                                 source.positions(), /*allow_drop=*/true).status());
    return Image(stage.out.dtype, out, std::move(bytes));
  }

  // The fetch as the recorded Fetch Sequencer walks it (sequencer_nest.h); nullopt for what that
  // walk does not cover.
  absl::StatusOr<std::optional<HostTensor>> FetchBySequencer(const BeginStage& begin, const FetchStage& stage) {
    if (begin.interleave) return FetchInterleavedBySequencer(*begin.interleave, stage);
    const DmTensor& input = tensors.inputs[0];
    const Mapping out = stage.out.Full();
    const int64_t units = box != nullptr ? box->units() : input.placement().prefix_size;
    const int64_t stream_unit = stage.out.time.size() * stage.out.packet.size();
    const std::optional<InPlace> in_place = stage.sequencer.base_offset != 0 || !InPlaceWalkStays(input, box, units)
                                                ? std::nullopt
                                                : InPlaceOf(input);
    // In place, a unit's Element starts a memory stride after the previous one's.
    const int64_t buffer_unit = in_place ? SequencerUnit(input) : input.element().size();
    std::optional<UnitNest> walk = ReadNest(stage.sequencer, box, units, stream_unit, buffer_unit);
    if (!walk || units * stream_unit != out.size()) return std::nullopt;
    // Off a prefix the walk starts at the box's first unit: no head, and a whole byte in.
    const int bits = StorageBits(input.dtype());
    if (walk->first != 0 && (stage.sequencer.base_offset != 0 || (walk->first * bits) % 8 != 0)) return std::nullopt;
    std::optional<MoveNest> nest = walk->nest;
    uint32_t pad_bits = 0;
    if (stage.adapter.pad_value) {
      ASSIGN_OR_RETURN(pad_bits, DoubleToBits(stage.out.dtype, *stage.adapter.pad_value));
    }
    ASSIGN_OR_RETURN(std::vector<uint8_t> bytes, StreamBuffer(stage.out.dtype, out.size(), pad_bits));
    // A left-padded stream starts before the buffer (the base address moved back): its walk reads
    // a zeroed head staged in front of the data, and the adapter's mask overwrites those reads.
    const int64_t head = -stage.sequencer.base_offset;
    if (head > 0 && (head * bits) % 8 != 0) return std::nullopt;  // a half-byte head: the derived move
    if (head > 0) {
      const int64_t tail = std::max<int64_t>(0, nest->max_src() + 1 - head - units * input.element().size());
      ASSIGN_OR_RETURN(Staged source, Staged::Read(input, tail));
      const int64_t positions = head + source.positions() + tail;
      std::vector<uint8_t> shifted(static_cast<size_t>((positions * bits + 7) / 8), 0);
      std::copy_n(source.data(), (source.positions() + tail) * bits / 8, shifted.data() + head * bits / 8);
      ASSIGN_OR_RETURN(ElementOp op, FetchAdapterOp(stage, false, source.positions_per_tensor()));
      RETURN_IF_ERROR(kernels.RunNest(*nest, op, bytes.data(), out.size(), shifted.data(), positions).status());
    } else if (in_place && walk->first + nest->max_src() < in_place->positions) {
      ASSIGN_OR_RETURN(ElementOp op, FetchAdapterOp(stage, false, in_place->positions));
      RETURN_IF_ERROR(kernels.RunNest(*nest, op, bytes.data(), out.size(), in_place->data + walk->first * bits / 8,
                                      in_place->positions - walk->first).status());
    } else {
      if (in_place) {
        walk = ReadNest(stage.sequencer, box, units, stream_unit, input.element().size());
        if (!walk || (walk->first * bits) % 8 != 0) return std::nullopt;
        nest = walk->nest;
      }
      // Padded stream positions may read past the last Element: stage that much more. Off a
      // prefix, the box's units end before the placement's last one.
      const int64_t staged_units = box != nullptr && !box->IsPrefix() ? input.placement().prefix_size : units;
      const int64_t tail = std::max<int64_t>(0, walk->first + nest->max_src() + 1 - staged_units * input.element().size());
      ASSIGN_OR_RETURN(Staged source, Staged::Read(input, tail));
      if (walk->first + nest->max_src() >= source.positions() + tail) return std::nullopt;
      ASSIGN_OR_RETURN(ElementOp op, FetchAdapterOp(stage, false, source.positions_per_tensor()));
      RETURN_IF_ERROR(kernels.RunNest(*nest, op, bytes.data(), out.size(), source.data() + walk->first * bits / 8,
                                      source.positions() + tail - walk->first).status());
    }
    ASSIGN_OR_RETURN(const std::vector<int64_t>* padded, PaddedRuns(out));
    FillRuns(bytes, stage.out.dtype, *padded, pad_bits);
    ASSIGN_OR_RETURN(HostTensor image, HostTensor::FromBytes(stage.out.dtype, out, std::move(bytes)));
    ++kernels.stats().sequencer_moves;
    return image;
  }

  // An interleaved pair: the recorded entries walk one tensor, the interleave term selects it
  // (InterleavedReadNestOf over the two tensors staged one after the other).
  absl::StatusOr<std::optional<HostTensor>> FetchInterleavedBySequencer(const Mapping& interleave,
                                                                        const FetchStage& stage) {
    if (stage.sequencer.base_offset != 0 || tensors.inputs.size() != 2) return std::nullopt;
    const DmTensor& input = tensors.inputs[0];
    const Mapping out = stage.out.Full();
    const int64_t units = input.placement().prefix_size;
    const int64_t stream_unit = stage.out.time.size() * stage.out.packet.size();
    const int64_t tensor_positions = units * input.element().size();
    std::optional<MoveNest> nest =
        InterleavedReadNestOf(stage.sequencer, InnerPositions(stage.out.time, interleave) * stage.out.packet.size(),
                              tensor_positions, units, stream_unit, input.element().size());
    if (!nest || units * stream_unit != out.size() || nest->max_src() >= 2 * tensor_positions) return std::nullopt;
    uint32_t pad_bits = 0;
    if (stage.adapter.pad_value) {
      ASSIGN_OR_RETURN(pad_bits, DoubleToBits(stage.out.dtype, *stage.adapter.pad_value));
    }
    ASSIGN_OR_RETURN(std::vector<uint8_t> bytes, StreamBuffer(stage.out.dtype, out.size(), pad_bits));
    ASSIGN_OR_RETURN(Staged source, Staged::ReadPair(tensors.inputs[0], tensors.inputs[1]));
    ASSIGN_OR_RETURN(ElementOp op, FetchAdapterOp(stage, true, source.positions_per_tensor()));
    RETURN_IF_ERROR(kernels.RunNest(*nest, op, bytes.data(), out.size(), source.data(), source.positions()).status());
    ASSIGN_OR_RETURN(const std::vector<int64_t>* padded, PaddedRuns(out));
    FillRuns(bytes, stage.out.dtype, *padded, pad_bits);
    ASSIGN_OR_RETURN(HostTensor image, HostTensor::FromBytes(stage.out.dtype, out, std::move(bytes)));
    ++kernels.stats().sequencer_moves;
    return image;
  }

  // The padding positions of `mapping` as runs (start, length), cached by the layout: stream
  // padding holds the pad value, so the positions the sequencer over-read are masked again.
  absl::StatusOr<const std::vector<int64_t>*> PaddedRuns(const Mapping& mapping) {
    std::string key = MappingKey(mapping);
    auto it = padded.find(key);
    if (it != padded.end()) return &it->second;
    std::vector<int64_t> runs;
    if (HasPadding(mapping)) {
      ASSIGN_OR_RETURN(std::vector<int64_t> live, LivePositions(mapping));
      int64_t next = 0;  // the first position after the previous live one
      for (size_t k = 0; k <= live.size(); ++k) {
        const int64_t end = k < live.size() ? live[k] : mapping.size();
        if (end > next) runs.insert(runs.end(), {next, end - next});
        next = end + 1;
      }
    }
    return &padded.emplace(key, std::move(runs)).first->second;
  }

  absl::StatusOr<HostTensor> Rearrange(HostTensor stream, const StreamShape& out) {
    const Mapping full = out.Full();
    // A collect that only repacketizes: the same image under the new layout.
    ASSIGN_OR_RETURN(bool same, kernels.SameUnpaddedLayout(full, stream.mapping()));
    if (same) return Image(stream.dtype(), full, std::move(stream).TakeBytes());
    std::vector<uint8_t> bytes(static_cast<size_t>(StorageBytes(stream.dtype(), full.size())), 0);
    RETURN_IF_ERROR(kernels.Move(full, stream.mapping(), CopyOp(stream.dtype()), bytes.data(), full.size(),
                                 stream.bytes().data(), stream.size(), /*allow_drop=*/false).status());
    return Image(stream.dtype(), full, std::move(bytes));
  }

  absl::StatusOr<HostTensor> Cast(HostTensor stream, const CastStage& stage) {
    ASSIGN_OR_RETURN(ElementOp op, CastOp(stage));
    const Mapping full = stage.out.Full();
    std::vector<uint8_t> bytes(static_cast<size_t>(StorageBytes(stage.to, full.size())), 0);
    RETURN_IF_ERROR(kernels.Move(full, stream.mapping(), op, bytes.data(), full.size(), stream.bytes().data(),
                                 stream.size(), /*allow_drop=*/false).status());
    return Image(stage.to, full, std::move(bytes));
  }

  absl::StatusOr<HostTensor> Contract(HostTensor stream, const AlignStage& align, const ContractStage& contract,
                                      const AccumulateStage& accumulate) {
    const StreamShape& comp = align.out;
    if (!comp.row || !tensors.weights) {
      return absl::InvalidArgumentError("JIT: the computation mapping of align has no Row");
    }
    const TrfTensor& weights = *tensors.weights;
    // x placed in the computation mapping by a compiled move (it has no Row: it is broadcast).
    const Mapping outer = Pair({comp.chip, comp.cluster, comp.slice});
    const Mapping x_layout = Pair({outer, comp.time, comp.packet});
    std::vector<uint8_t> x(static_cast<size_t>(StorageBytes(stream.dtype(), x_layout.size())), 0);
    RETURN_IF_ERROR(kernels.Move(x_layout, stream.mapping(), CopyOp(stream.dtype()), x.data(), x_layout.size(),
                                 stream.bytes().data(), stream.size(), /*allow_drop=*/true).status());
    ASSIGN_OR_RETURN(Staged trf, Staged::Read(weights));
    ASSIGN_OR_RETURN(ContractionSpec spec, PlanContraction(stream.dtype(), weights.dtype(), align, contract, accumulate));
    const uint8_t* w_data = trf.data();
    std::vector<uint8_t> w;
    const bool through_trf = TrfAddressed(align, weights, spec, box);
    if (!through_trf) {
      // The weights placed in the computation mapping by a compiled move instead.
      const Mapping w_layout = comp.Full();
      w.assign(static_cast<size_t>(StorageBytes(weights.dtype(), w_layout.size())), 0);
      RETURN_IF_ERROR(kernels.Move(w_layout, weights.full_mapping(), CopyOp(weights.dtype()), w.data(),
                                   w_layout.size(), trf.data(), trf.positions(), /*allow_drop=*/true).status());
      AddressComputationImage(spec);
      w_data = w.data();
    }
    ASSIGN_OR_RETURN(ContractFn fn, kernels.Contraction(spec));
    const int64_t slots = spec.outer * spec.rows * spec.out_times * spec.out_packet;
    std::vector<uint32_t> acc(static_cast<size_t>(slots), 0);
    std::vector<uint8_t> written(static_cast<size_t>(slots), 0);
    // Over a box, outer unit o of the walk is a device unit further on: the TRF image is addressed
    // by device unit, so each row of the box's units (consecutive slices) reads its weights there.
    const int64_t w_unit_bytes = through_trf && box != nullptr ? spec.w_outer * StorageBits(weights.dtype()) / 8 : 0;
    const auto run = [&](int64_t begin, int64_t end) {
      if (w_unit_bytes == 0) {
        fn(acc.data(), written.data(), x.data(), w_data, begin, end);
        return;
      }
      const int64_t slices = box->count[2];
      while (begin < end) {
        const int64_t row = begin / slices, row_end = std::min(end, (row + 1) * slices);
        const int64_t chip = box->lo[0] + row / box->count[1], cluster = box->lo[1] + row % box->count[1];
        const int64_t device = (chip * box->size[1] + cluster) * box->size[2] + box->lo[2];
        fn(acc.data(), written.data(), x.data(), w_data + (device - row * slices) * w_unit_bytes, begin, row_end);
        begin = row_end;
      }
    };
    Parallel(spec.outer, ThreadsFor(spec.outer * spec.rows * spec.times * spec.packet, kernels.threads()), run);
    // The accumulator image laid out by the Reducer's output stream.
    const Mapping acc_layout = Pair({outer, *comp.row, accumulate.retained_time, contract.out.packet});
    const Mapping out = accumulate.out.Full();
    std::vector<uint8_t> bytes(static_cast<size_t>(StorageBytes(contract.out.dtype, out.size())), 0);
    RETURN_IF_ERROR(kernels.Move(out, acc_layout, CopyOp(contract.out.dtype), bytes.data(), out.size(),
                                 reinterpret_cast<const uint8_t*>(acc.data()), acc_layout.size(),
                                 /*allow_drop=*/false).status());
    return Image(contract.out.dtype, out, std::move(bytes));
  }

  absl::StatusOr<HostTensor> Vector(HostTensor stream, const VectorStage& stage) {
    size_t index = 0;  // the stage's place in the op: what its kept plan is known by (op_memo.h)
    while (index < op.stages.size() && std::get_if<VectorStage>(&op.stages[index]) != &stage) ++index;
    return RunVectorStage(kernels, std::move(stream), stage, tensors.vrf_operands, op.serial, index);
  }

  absl::Status Store(HostTensor stream, const Stage& last) {
    const DeviceTensor& output = tensors.output;
    RETURN_IF_ERROR(CheckSameType(stream.dtype(), output.dtype()));
    const auto* commit = std::get_if<CommitStage>(&last);
    const SliceBitmap slices = commit != nullptr ? commit->slices : SliceBitmap::All();
    const Mapping full = output.full_mapping();
    // A padded stream into a padded Element: the sequencer's whole commit_size units would carry
    // stream lanes into the Element's pad bytes, and a covering staged write would zero them; the
    // interpreter leaves them as they were, and so does a move by index (in place, or over the
    // bytes read back), which never visits destination padding.
    const bool writes_pads = commit != nullptr && HasPadding(commit->element) && HasPadding(stream.mapping());
    if (commit != nullptr && !writes_pads) {
      std::optional<InPlace> target = InPlaceOf(output);
      std::optional<UnitNest> walk = target ? LiveCommitNest(*commit, output, stream.size(), box) : std::nullopt;
      const int bits = StorageBits(output.dtype());
      if (walk && (walk->first * bits) % 8 == 0 && walk->first + walk->nest.max_dst() < target->positions) {
        ++kernels.stats().sequencer_commits;
        return kernels.RunNest(walk->nest, CopyOp(stream.dtype()), target->data + walk->first * bits / 8,
                               target->positions - walk->first, stream.bytes().data(), stream.size()).status();
      }
    }
    if (commit != nullptr) ++kernels.stats().derived_commits;
    if (slices.all()) {
      std::optional<InPlace> target = InPlaceOf(output);
      if (target && kernels.HasNest(target->layout, stream.mapping())) {
        return kernels.Move(target->layout, stream.mapping(), CopyOp(stream.dtype()), target->data,
                            target->positions, stream.bytes().data(), stream.size(), /*allow_drop=*/true).status();
      }
    }
    if (output.is_view() || !slices.all() || writes_pads) {
      // commit_view, or a commit that leaves disabled slices (or pad bytes) as they were.
      ASSIGN_OR_RETURN(Staged staged, Staged::Read(output));
      RETURN_IF_ERROR(kernels.Move(full, stream.mapping(), CopyOp(stream.dtype()), staged.data(), staged.positions(),
                                   stream.bytes().data(), stream.size(), /*allow_drop=*/true).status());
      return staged.Write(&slices);
    }
    const Placement& placement = output.placement();
    ASSIGN_OR_RETURN(bool covered, Covers(kernels, full, stream.mapping(), placement, true));
    ASSIGN_OR_RETURN(Staged target, Staged::Read(output.device(), placement, !covered));
    RETURN_IF_ERROR(kernels.Move(full, stream.mapping(), CopyOp(stream.dtype()), target.data(), target.positions(),
                                 stream.bytes().data(), stream.size(), /*allow_drop=*/true).status());
    return target.Write();
  }
};

// The walk's visitor that only compiles: a stream is its layout and type.
struct KernelCompiler {
  struct Stream {
    Mapping layout;
    DType dtype;
  };
  KernelCache& kernels;
  const PipelineOp& op;
  const LiveBox* box = nullptr;  // as KernelRunner's

  absl::StatusOr<Stream> Fetch(const BeginStage& begin, const FetchStage& stage) {
    const DeviceTensor& input = *op.inputs[0].handle;
    if (stage.indirect) {
      RETURN_IF_ERROR(PrepareIndirectFetch(kernels, input, stage));
      return Stream{stage.out.Full(), stage.out.dtype};
    }
    const Mapping full = input.full_mapping();
    const Mapping source = begin.interleave ? Pair({*begin.interleave, full}) : full;
    ASSIGN_OR_RETURN(ElementOp element_op, FetchAdapterOp(stage, begin.interleave.has_value(), full.size()));
    Stream out{stage.out.Full(), stage.out.dtype};
    const int64_t units = box != nullptr ? box->units() : input.placement().prefix_size;
    const std::optional<Mapping> in_place =
        begin.interleave || stage.sequencer.base_offset != 0 || !InPlaceWalkStays(input, box, units)
            ? std::nullopt
            : InPlaceLayout(input);
    const int64_t stream_unit = stage.out.time.size() * stage.out.packet.size();
    // As the runner's FetchBySequencer (which declines what it cannot walk, and then moves by index).
    std::optional<UnitNest> walk =
        begin.interleave ? std::nullopt
                         : ReadNest(stage.sequencer, box, units, stream_unit,
                                    in_place ? SequencerUnit(input) : input.element().size());
    if (walk && in_place && walk->first + walk->nest.max_src() >= InPlacePositions(input)) {
      walk = ReadNest(stage.sequencer, box, units, stream_unit, input.element().size());
    }
    std::optional<MoveNest> nest;
    if (walk) nest = walk->nest;
    if (begin.interleave) {
      nest = InterleavedReadNestOf(stage.sequencer, InnerPositions(stage.out.time, *begin.interleave) *
                                                        stage.out.packet.size(),
                                   units * input.element().size(), units, stream_unit, input.element().size());
    }
    if (nest && units * stream_unit == out.layout.size()) {
      RETURN_IF_ERROR(kernels.CompileNest(*nest, element_op));
      return out;
    }
    const bool direct = in_place && kernels.HasNest(out.layout, *in_place);
    RETURN_IF_ERROR(kernels.Compile(out.layout, direct ? *in_place : source, element_op, /*allow_drop=*/true));
    return out;
  }
  absl::StatusOr<Stream> Rearrange(Stream stream, const StreamShape& out) {
    ASSIGN_OR_RETURN(bool same, kernels.SameUnpaddedLayout(out.Full(), stream.layout));
    if (same) return Stream{out.Full(), stream.dtype};
    RETURN_IF_ERROR(kernels.Compile(out.Full(), stream.layout, CopyOp(stream.dtype), /*allow_drop=*/false));
    return Stream{out.Full(), stream.dtype};
  }
  absl::StatusOr<Stream> Cast(Stream stream, const CastStage& stage) {
    ASSIGN_OR_RETURN(ElementOp element_op, CastOp(stage));
    RETURN_IF_ERROR(kernels.Compile(stage.out.Full(), stream.layout, element_op, /*allow_drop=*/false));
    return Stream{stage.out.Full(), stage.to};
  }
  absl::StatusOr<Stream> Contract(Stream stream, const AlignStage& align, const ContractStage& contract,
                                  const AccumulateStage& accumulate) {
    Stream out{accumulate.out.Full(), contract.out.dtype};
    if (!op.weights || !op.weights->handle || !align.out.row) return out;
    const DeviceTensor& weights = *op.weights->handle;
    const Mapping outer = Pair({align.out.chip, align.out.cluster, align.out.slice});
    RETURN_IF_ERROR(kernels.Compile(Pair({outer, align.out.time, align.out.packet}), stream.layout,
                                    CopyOp(stream.dtype), true));
    ASSIGN_OR_RETURN(ContractionSpec spec, PlanContraction(stream.dtype, weights.dtype(), align, contract, accumulate));
    if (!TrfAddressed(align, TrfTensor(weights), spec, box)) {
      RETURN_IF_ERROR(kernels.Compile(align.out.Full(), weights.full_mapping(), CopyOp(weights.dtype()), true));
      AddressComputationImage(spec);
    }
    RETURN_IF_ERROR(kernels.Contraction(spec).status());
    const Mapping acc_layout = Pair({outer, *align.out.row, accumulate.retained_time, contract.out.packet});
    RETURN_IF_ERROR(kernels.Compile(out.layout, acc_layout, CopyOp(contract.out.dtype), false));
    return out;
  }
  absl::StatusOr<Stream> Vector(Stream, const VectorStage& stage) {
    RETURN_IF_ERROR(CompileVectorStage(kernels, stage, op.vrf_operands));
    return Stream{stage.out.Full(), stage.out.dtype};
  }
  absl::Status Store(Stream stream, const Stage& last) {
    if (!op.output.handle) return absl::OkStatus();
    const auto* commit = std::get_if<CommitStage>(&last);
    // As the runner's Store: a padded stream into a padded Element moves by index, not by units.
    const bool writes_pads = commit != nullptr && HasPadding(commit->element) && HasPadding(stream.layout);
    if (commit != nullptr && !writes_pads && InPlaceLayout(*op.output.handle)) {
      std::optional<UnitNest> walk = LiveCommitNest(*commit, *op.output.handle, stream.layout.size(), box);
      if (walk && walk->first + walk->nest.max_dst() < InPlacePositions(*op.output.handle)) {
        return kernels.CompileNest(walk->nest, CopyOp(stream.dtype));
      }
    }
    if (commit == nullptr || commit->slices.all()) {
      std::optional<Mapping> target = InPlaceLayout(*op.output.handle);
      if (target && kernels.HasNest(*target, stream.layout)) {
        return kernels.Compile(*target, stream.layout, CopyOp(stream.dtype), /*allow_drop=*/true);
      }
    }
    return kernels.Compile(op.output.handle->full_mapping(), stream.layout, CopyOp(stream.dtype), /*allow_drop=*/true);
  }
};

}  // namespace

absl::Status JitBackend::set_threads(int threads) {
  ASSIGN_OR_RETURN(int resolved, ResolveThreads(threads));
  kernels_->set_threads(resolved);
  return absl::OkStatus();
}

absl::StatusOr<std::unique_ptr<JitBackend>> JitBackend::Create(JitOptions options) {
  ASSIGN_OR_RETURN(int threads, ResolveThreads(options.threads));
  ASSIGN_OR_RETURN(std::unique_ptr<KernelCache> kernels,
                   KernelCache::Create(threads, {options.disk_cache, options.cache_dir}));
  return std::unique_ptr<JitBackend>(new JitBackend(std::move(kernels), options.direct_pipelines, options.fma_first_level));
}

absl::StatusOr<const FusedContraction*> JitBackend::FusedPlanFor(const PipelineOp& op) {
  std::string key = PipelineKey(op);
  auto it = fused_plans_.find(key);
  if (it == fused_plans_.end()) {
    ASSIGN_OR_RETURN(auto plan, PlanFusedContraction(op));
    if (std::getenv("VISA_JIT_DEBUG") != nullptr) {
      const auto* reason = std::get_if<std::string>(&plan);
      std::fprintf(stderr, "pipeline: %s\n",
                   reason ? absl::StrCat("stage by stage: ", *reason).c_str()
                          : absl::StrCat("fused, lanes along the ", std::get<FusedContraction>(plan).lanes).c_str());
    }
    it = fused_plans_.emplace(std::move(key), std::make_unique<std::variant<FusedContraction, std::string>>(
                                                  std::move(plan))).first;
  }
  return std::get_if<FusedContraction>(it->second.get());
}

const ContractionEpilogue* JitBackend::EpilogueFor(const PipelineOp& op, const FusedContraction& plan,
                                                   const DeviceTensor& output) {
  const auto* commit = std::get_if<CommitStage>(&op.stages.back());
  const std::optional<Mapping> in_place = commit != nullptr ? InPlaceLayout(output) : std::nullopt;
  std::string key = PipelineKey(op);
  if (in_place) {
    const Placement& placement = output.placement();
    absl::StrAppend(&key, "\nto ", MappingKey(*in_place), " ", Name(output.dtype()), " ", InPlacePositions(output), " ",
                    output.is_view(), " ", placement.prefix_size, " ", placement.live_prefixes.size(), " ",
                    placement.live_prefixes.empty() ? -1 : placement.live_prefixes.back());
  }
  auto it = epilogues_.find(key);
  if (it == epilogues_.end()) {
    std::variant<ContractionEpilogue, std::string> epilogue = std::string("the pipeline does not commit in place");
    if (in_place) {
      const int64_t stream = op.stages.size() >= 2 && std::holds_alternative<CastStage>(op.stages[op.stages.size() - 2])
                                 ? std::get<CastStage>(op.stages[op.stages.size() - 2]).out.Full().size()
                                 : plan.out_layout.size();
      std::optional<MoveNest> nest = CommitNest(*commit, output, stream);
      if (nest && nest->max_dst() >= InPlacePositions(output)) nest.reset();
      epilogue = PlanContractionEpilogue(plan, op, nest, SequencerUnit(output), output.dtype());
    }
    if (std::getenv("VISA_JIT_DEBUG") != nullptr) {
      const auto* reason = std::get_if<std::string>(&epilogue);
      std::fprintf(stderr, "contraction epilogue: %s\n",
                   reason ? absl::StrCat("on the accumulator image: ", *reason).c_str()
                          : absl::StrCat("fused, ", std::get<ContractionEpilogue>(epilogue).nest.ToString(),
                                         " per slice").c_str());
    }
    it = epilogues_.emplace(std::move(key), std::make_unique<std::variant<ContractionEpilogue, std::string>>(
                                                std::move(epilogue))).first;
  }
  return std::get_if<ContractionEpilogue>(it->second.get());
}

absl::StatusOr<std::optional<HostTensor>> JitBackend::RunFused(const FusedContraction& plan,
                                                               const ContractionEpilogue* epilogue,
                                                               const PipelineTensors& tensors) {
  std::vector<const uint8_t*> x_base, w_base;
  RETURN_IF_ERROR(PointersOf(plan, tensors.inputs[0], *tensors.weights, x_base, w_base));
  const bool fma = fma_first_level_ && plan.fma_spec && !plan.packet_spec && ProductsAreExact(plan, x_base, w_base);
  kernels_->stats().fma_pipelines += fma;
  // With a pair kernel, the exact tree's kernel compiles only once a slice's operands need it
  // (after the other slices ran), so ordinary data compiles one kernel, as Prepare does.
  LaneContractionFn fn = nullptr, pairs_fn = nullptr;
  if (plan.packet_spec) {
    ASSIGN_OR_RETURN(fn, kernels_->PacketContraction(*plan.packet_spec));
  } else if (plan.pairs_spec) {
    ASSIGN_OR_RETURN(pairs_fn, kernels_->LaneContraction(*plan.pairs_spec));
  } else {
    ASSIGN_OR_RETURN(fn, kernels_->LaneContraction(fma ? *plan.fma_spec : plan.spec));
  }
  std::atomic<int64_t> pair_slices{0};
  const int64_t slice_slots = plan.spec.rows * plan.spec.out_times * plan.spec.out_packet;
  std::optional<InPlace> output;
  if (epilogue != nullptr) {
    output = InPlaceOf(tensors.output);
    if (!output || epilogue->max_dst >= output->positions) epilogue = nullptr;
  }
  EpilogueFn write = nullptr;
  if (epilogue != nullptr) {
    ASSIGN_OR_RETURN(write, kernels_->Epilogue(*epilogue));
  }
  const int64_t scratch_bytes = plan.packet_spec ? 0 : plan.spec.ScratchBytes();
  const int64_t slice_bytes = (5 * slice_slots + 63) / 64 * 64;  // one slice's accumulators and flags
  const int64_t out_bits = StorageBits(tensors.output.dtype());
  // The work is split over live slices only: half the positions of a `1 # 2` cluster are dead,
  // and a split by position would hand one thread all the work.
  std::vector<int64_t> live;
  for (int64_t o = 0; o < plan.outer; ++o) {
    if (plan.spec.live_outer[o]) live.push_back(o);
  }
  // Without the epilogue, the accumulators the stages after accumulate start from: the live
  // slices' only where they move into the stream image slice by slice (a tensor on a few slices
  // of a padded chip x cluster x slice left 2048 slices' accumulators to zero and move per op),
  // else the whole accumulator image.
  const bool by_slice = epilogue == nullptr && plan.slice_layouts && plan.slice_layouts->second.size() == slice_slots;
  std::vector<int64_t> acc_at(static_cast<size_t>(plan.outer), 0);
  for (size_t i = 0; i < live.size(); ++i) acc_at[live[i]] = (by_slice ? static_cast<int64_t>(i) : live[i]) * slice_slots;
  std::vector<uint32_t> acc;
  std::vector<uint8_t> written;
  if (epilogue == nullptr) {
    const size_t slots = static_cast<size_t>(by_slice ? static_cast<int64_t>(live.size()) * slice_slots : plan.acc_layout.size());
    acc.assign(slots, 0);
    written.assign(slots, 0);
  }
  // Slices whose operands refuse the pair kernel while the exact one is not compiled yet.
  std::vector<uint8_t> deferred(live.size(), 0);
  auto run_slices = [&](int64_t begin, int64_t end, const std::vector<int64_t>& slices) {
    // Packed operands and one slice's accumulators stay in this thread's cache from one slice to
    // the next.
    thread_local std::vector<uint8_t> scratch;
    const int64_t needed = scratch_bytes + slice_bytes + 64;
    if (static_cast<int64_t>(scratch.size()) < needed) scratch.resize(needed);
    uint8_t* aligned = scratch.data() + (64 - reinterpret_cast<uintptr_t>(scratch.data()) % 64) % 64;
    auto* slice_acc = reinterpret_cast<uint32_t*>(aligned + scratch_bytes);
    uint8_t* slice_written = aligned + scratch_bytes + 4 * slice_slots;
    int64_t pairs = 0;
    for (int64_t i = begin; i < end; ++i) {
      const int64_t o = slices[i];
      LaneContractionFn slice_fn = fn;
      if (pairs_fn != nullptr && fn == nullptr) {
        if (!SliceAllowsBf16Pairs(plan, x_base, w_base, o)) {
          deferred[i] = 1;
          continue;
        }
        slice_fn = pairs_fn;
        ++pairs;
      }
      if (epilogue == nullptr) {
        slice_fn(x_base.data(), w_base.data(), acc.data() + acc_at[o], written.data() + acc_at[o], aligned, o, o + 1);
        continue;
      }
      slice_fn(x_base.data(), w_base.data(), slice_acc, slice_written, aligned, o, o + 1);
      const int64_t start = epilogue->unit_start[o];
      if (start < 0) continue;  // nothing of this slice is committed
      write(output->data + start * out_bits / 8, reinterpret_cast<const uint8_t*>(slice_acc + epilogue->first_slot));
    }
    pair_slices += pairs;
  };
  Parallel(static_cast<int64_t>(live.size()), kernels_->threads(),
           [&](int64_t begin, int64_t end) { run_slices(begin, end, live); });
  kernels_->stats().bf16_pair_slices += pair_slices.load();
  std::vector<int64_t> rest;
  for (size_t i = 0; i < live.size(); ++i) {
    if (deferred[i]) rest.push_back(live[i]);
  }
  if (!rest.empty()) {
    ASSIGN_OR_RETURN(fn, kernels_->LaneContraction(fma ? *plan.fma_spec : plan.spec));
    Parallel(static_cast<int64_t>(rest.size()), kernels_->threads(),
             [&](int64_t begin, int64_t end) { run_slices(begin, end, rest); });
  }
  if (epilogue != nullptr) return std::nullopt;
  std::vector<uint8_t> bytes(static_cast<size_t>(StorageBytes(plan.acc_type, plan.out_layout.size())), 0);
  if (by_slice) {
    const auto& [out_slice, acc_slice] = *plan.slice_layouts;
    const int64_t slice_out_bytes = StorageBytes(plan.acc_type, out_slice.size());
    ReadyNest kernel;
    for (size_t i = 0; i < live.size(); ++i) {
      uint8_t* dst = bytes.data() + live[i] * slice_out_bytes;
      const auto* src = reinterpret_cast<const uint8_t*>(acc.data() + static_cast<int64_t>(i) * slice_slots);
      if (kernel.fn != nullptr && kernel.copies.empty()) {
        kernel.Run(dst, src);  // the same move for every slice, planned once
        continue;
      }
      RETURN_IF_ERROR(kernels_->Move(out_slice, acc_slice, CopyOp(plan.acc_type), dst, out_slice.size(), src,
                                     acc_slice.size(), /*allow_drop=*/false, &kernel).status());
    }
    return Image(plan.acc_type, plan.out_layout, std::move(bytes));
  }
  RETURN_IF_ERROR(kernels_->Move(plan.out_layout, plan.acc_layout, CopyOp(plan.acc_type), bytes.data(),
                                 plan.out_layout.size(), reinterpret_cast<const uint8_t*>(acc.data()),
                                 plan.acc_layout.size(), /*allow_drop=*/false).status());
  return Image(plan.acc_type, plan.out_layout, std::move(bytes));
}

namespace {

// The units a pipeline's streams span (chip x cluster x slice of its begin stage).
int64_t UnitsOf(const PipelineOp& op) {
  const auto* begin = op.stages.empty() ? nullptr : std::get_if<BeginStage>(&op.stages.front());
  return begin == nullptr ? 0 : begin->shape.chip.size() * begin->shape.cluster.size() * begin->shape.slice.size();
}

// `op` without its tensors' handles.
void DropHandles(PipelineOp& op) {
  for (TensorRef& input : op.inputs) input.handle.reset();
  if (op.weights) op.weights->handle.reset();
  op.output.handle.reset();
  for (TensorRef& vrf : op.vrf_operands) vrf.handle.reset();
  if (op.fetch_index) op.fetch_index->handle.reset();
}

// The pipeline trimmed to its live units (live_units.h), made on the op's first walk and kept by
// its serial without its tensors' handles: trimming copies every stage, which a small warm
// pipeline would pay on every run.
absl::StatusOr<std::shared_ptr<const std::optional<LivePipeline>>> KeptTrim(KernelCache& kernels, const PipelineOp& op) {
  return kernels.memo().Get<std::optional<LivePipeline>>(
      op.serial, MemoPart(0xffff, 0, 0xa3), [&]() -> absl::StatusOr<std::optional<LivePipeline>> {
        std::optional<LivePipeline> trimmed = TrimToLiveUnits(op);
        // The runner takes its tensors from the launch: a kept handle would hold its tensor's
        // lease, and a later launch refuses to write over a live tensor.
        if (trimmed) DropHandles(trimmed->op);
        if (std::getenv("VISA_JIT_DEBUG") != nullptr) {
          const int64_t units = UnitsOf(op);
          std::fprintf(stderr, "staged walk: %s\n",
                       trimmed ? absl::StrCat(trimmed->box.units(), " live units of ", units,
                                              trimmed->box.IsPrefix() ? " (a prefix)" : " (a box)").c_str()
                               : absl::StrCat("every unit (", units, ")").c_str());
        }
        return trimmed;
      });
}

// The staged walk, over the pipeline's live units when its padded ones can be left out
// (live_units.h), else over every unit.
absl::Status WalkLiveUnits(KernelCache& kernels, PaddingCache& padded, const PipelineOp& op,
                           const PipelineTensors& tensors) {
  ASSIGN_OR_RETURN(std::shared_ptr<const std::optional<LivePipeline>> trimmed, KeptTrim(kernels, op));
  if (trimmed->has_value()) {
    const LivePipeline& live = **trimmed;
    ++kernels.stats().live_unit_walks;
    kernels.stats().units_walked += live.box.units();
    KernelRunner live_runner{kernels, tensors, padded, live.op, &live.box};
    return WalkPipeline(live.op, live_runner);
  }
  kernels.stats().units_walked += UnitsOf(op);
  KernelRunner runner{kernels, tensors, padded, op, /*box=*/nullptr};
  return WalkPipeline(op, runner);
}

}  // namespace

absl::Status JitBackend::Run(const PipelineOp& op, const PipelineTensors& tensors) {
  // Compiled kernels read memory as it is: the interpreter's uninitialized-read check comes first.
  RETURN_IF_ERROR(interp::CheckOpReads(op, tensors));
  if (op.fetch_index) {  // an IndirectLoop: offsets known only now, so never one fused or direct kernel
    ++kernels_->stats().staged_pipelines;
    return WalkLiveUnits(*kernels_, padded_, op, tensors);
  }
  const ReadyMove* kept = nullptr;
  if (!tensors.inputs.empty()) {
    ASSIGN_OR_RETURN(kept, RunKept(op.serial, tensors.inputs[0], tensors.output));
  }
  if (kept != nullptr) {
    ++kernels_->stats().direct_pipelines;
    return absl::OkStatus();
  }
  const FusedContraction* fused = nullptr;
  if (Contracts(op)) {
    ASSIGN_OR_RETURN(fused, FusedPlanFor(op));
  }
  if (fused != nullptr && tensors.weights) {
    const ContractionEpilogue* epilogue = EpilogueFor(op, *fused, tensors.output);
    absl::StatusOr<std::optional<HostTensor>> stream = RunFused(*fused, epilogue, tensors);
    if (stream.ok()) {
      ++kernels_->stats().fused_pipelines;
      kernels_->stats().packet_pipelines += fused->packet_spec.has_value();
      if (!stream->has_value()) {
        ++kernels_->stats().fused_epilogues;
        return absl::OkStatus();
      }
      KernelRunner runner{*kernels_, tensors, padded_, op, /*box=*/nullptr};
      return WalkPipelineFrom(op, fused->accumulate_stage + 1, **std::move(stream), runner);
    }
    if (!absl::IsFailedPrecondition(stream.status())) return stream.status();
  }
  const DirectPipeline* direct = nullptr;
  if (OnlyRelabels(op)) {
    ASSIGN_OR_RETURN(direct, DirectPlanFor(op, tensors.inputs[0], tensors.output));
  }
  if (direct != nullptr) {
    std::optional<InPlace> from = InPlaceOf(tensors.inputs[0]);
    std::optional<InPlace> to = InPlaceOf(tensors.output);
    if (from && to) {
      // A chip view's ends are planned from their chip's first position (direct_pipeline.h).
      from = FromFirstPosition(*from, direct->src_offset, StorageBits(tensors.inputs[0].dtype()));
      to = FromFirstPosition(*to, direct->dst_offset, StorageBits(tensors.output.dtype()));
      ++kernels_->stats().direct_pipelines;
      ReadyNest kernel;
      RETURN_IF_ERROR(kernels_->Move(direct->dst, direct->src, direct->op, to->data, to->positions, from->data,
                                     from->positions, /*allow_drop=*/true, &kernel).status());
      Keep(op.serial, tensors.inputs[0], from->data, tensors.output, to->data, kernel);
      return absl::OkStatus();
    }
  }
  if (direct_pipelines_ && HasVectorStage(op)) {
    ASSIGN_OR_RETURN(bool in_place, RunVectorInPlace(*kernels_, op, tensors));
    if (in_place) return absl::OkStatus();
    // Over the live units alone (live_units.h): the plan computes its units' first ones only, and
    // a box (chips before padded slices, a chip part) is no prefix of them.
    ASSIGN_OR_RETURN(std::shared_ptr<const std::optional<LivePipeline>> live, KeptTrim(*kernels_, op));
    ASSIGN_OR_RETURN(bool reduced, RunReduceInPlace(*kernels_, live->has_value() ? (*live)->op : op, tensors));
    if (reduced) return absl::OkStatus();
  }
  ++kernels_->stats().staged_pipelines;
  return WalkLiveUnits(*kernels_, padded_, op, tensors);
}


absl::StatusOr<const DirectPipeline*> JitBackend::DirectPlanFor(const PipelineOp& op, const DeviceTensor& input,
                                                                const DeviceTensor& output) {
  if (!direct_pipelines_) return nullptr;
  std::string key = DirectPipelineKey(op, input, output);
  auto it = direct_plans_.find(key);
  if (it == direct_plans_.end()) {
    ASSIGN_OR_RETURN(auto plan, PlanDirectPipeline(*kernels_, op, input, output));
    ++kernels_->stats().direct_plans;
    if (std::getenv("VISA_JIT_DEBUG") != nullptr) {
      const auto* reason = std::get_if<std::string>(&plan);
      std::fprintf(stderr, "pipeline: %s\n", reason ? absl::StrCat("not one move: ", *reason).c_str() : "one move between memories");
    }
    it = direct_plans_.emplace(std::move(key), std::make_unique<std::variant<DirectPipeline, std::string>>(
                                                   std::move(plan))).first;
  }
  return std::get_if<DirectPipeline>(it->second.get());
}

absl::StatusOr<const ReadyMove*> JitBackend::RunKept(uint64_t serial, const DeviceTensor& src,
                                                     const DeviceTensor& dst) {
  ReadyMove* ready = ready_.Find(serial, src, dst, threads());
  if (ready == nullptr) return nullptr;
  NoteInPlaceWrites(dst);  // the device may be another than the first run's
  const Device& device = dst.device();
  // Run again on the device it last wrote, the move's destination pages are committed: from the
  // relaunch threshold on it streams (streaming_move.h: RelaunchStreamingMinBytes). Not into a
  // register file: what a load writes there the next contraction reads at once, and from DRAM
  // after streaming stores (llama70b_reduced_layer_decode: each contraction after a 4-6 MiB TRF
  // load 0.2-0.95 ms slower, more than the load gained).
  const bool register_file = dst.tier() == Tier::kTrf || dst.tier() == Tier::kVrf;
  const bool relaunch = ready->last_device == device.serial() && !register_file;
  if (relaunch && !ready->relaunch_planned) {
    if (const uint8_t* dst_data = ready->DstOn(device); dst_data != nullptr) {
      ASSIGN_OR_RETURN(ready->relaunch, kernels_->RelaunchVariant(ready->nest, dst_data));
      ready->relaunch_planned = true;
    }
  }
  const ReadyNest& kernel = relaunch && ready->relaunch ? *ready->relaunch : ready->nest;
  if (!ready->Run(device, kernel)) return nullptr;
  ready->last_device = device.serial();
  kernels_->Count(kernel);
  if (&kernel != &ready->nest) ++kernels_->stats().relaunch_streaming_moves;
  ++kernels_->stats().ready_moves;
  return ready;
}

void JitBackend::Keep(uint64_t serial, const DeviceTensor& src, const uint8_t* src_base, const DeviceTensor& dst,
                      const uint8_t* dst_base, const ReadyNest& kernel, std::string derived_reason) {
  if (kernel.fn == nullptr) return;  // a run list: its moves are not kept
  std::optional<ReadyMove> ready = ReadyMove::Of(dst.device(), kernel, dst.tier(), dst_base, src.tier(), src_base);
  if (!ready) return;
  ready->derived_reason = std::move(derived_reason);
  ready_.Insert(serial, src, dst, threads(), *std::move(ready));
}

void JitBackend::CountDma(const std::string& why_not) {
  if (why_not.empty()) {
    ++kernels_->stats().descriptor_dmas;
    return;
  }
  ++kernels_->stats().derived_dmas;
  ++kernels_->stats().derived_dma_reasons[why_not];
}

absl::Status JitBackend::Run(const DmaOp& op, const DmaTensors& tensors) {
  RETURN_IF_ERROR(interp::CheckOpReads(op, tensors));
  if (const MemsetFill* fill = op.fill()) return RunFill(*kernels_, *fill, tensors.dst);
  // A gather's or scatter's offsets come from device memory at run time (IndirectLoop).
  if (op.indirect()) return RunIndirect(*kernels_, op, tensors);
  const DeviceTensor& src = tensors.src;
  const DeviceTensor& dst = tensors.dst;
  ASSIGN_OR_RETURN(const ReadyMove* ready, RunKept(op.serial, src, dst));
  if (ready != nullptr) {
    CountDma(ready->derived_reason);
    return absl::OkStatus();
  }
  RETURN_IF_ERROR(CheckSameType(src.dtype(), dst.dtype()));
  std::optional<InPlaceMove> in_place;
  ASSIGN_OR_RETURN(std::string why_not, RunDescriptors(*kernels_, op, src, dst, in_place));
  CountDma(why_not);
  if (why_not.empty()) {
    if (in_place) Keep(op.serial, src, in_place->src, dst, in_place->dst, in_place->kernel);
    return absl::OkStatus();
  }
  // A move into a view of a staged tensor (HBM in a rank of several) writes only the window's
  // bytes: the shared transfer path stages exactly those; other views are written in place below.
  if (dst.is_view() && !InPlaceLayout(dst)) return Backend::Run(op, tensors);
  // A source that may share bytes with the destination is read completely first (staged).
  std::optional<InPlace> from = MayOverlap(src, dst) ? std::nullopt : InPlaceOf(src);
  std::optional<InPlace> to = InPlaceOf(dst);
  DirectEnds(*kernels_, src, dst, from, to);
  std::optional<Staged> staged_from;
  if (!from) {
    ASSIGN_OR_RETURN(staged_from, Staged::Read(src));
    from = InPlace{src.full_mapping(), staged_from->data(), staged_from->positions()};
  }
  if (to) {
    ReadyNest kernel;
    RETURN_IF_ERROR(kernels_->Move(to->layout, from->layout, CopyOp(src.dtype()), to->data, to->positions, from->data,
                                   from->positions, /*allow_drop=*/false, &kernel).status());
    if (!staged_from) Keep(op.serial, src, from->data, dst, to->data, kernel, why_not);
    return absl::OkStatus();
  }
  const Placement& placement = dst.placement();
  ASSIGN_OR_RETURN(bool covered, Covers(*kernels_, dst.full_mapping(), from->layout, placement, false));
  ASSIGN_OR_RETURN(Staged staged_to, Staged::Read(dst.device(), placement, !covered));
  RETURN_IF_ERROR(kernels_->Move(dst.full_mapping(), from->layout, CopyOp(src.dtype()), staged_to.data(),
                                 staged_to.positions(), from->data, from->positions, /*allow_drop=*/false).status());
  return staged_to.Write();
}

absl::Status JitBackend::PrepareOp(const Op& op) {
  if (const auto* dma = std::get_if<DmaOp>(&op.body)) {
    if (!dma->src.handle || !dma->dst.handle) return absl::OkStatus();  // host moves are not compiled
    if (dma->fill()) return PrepareFill(*kernels_, *dma->fill(), *dma->dst.handle);
    if (dma->indirect()) return PrepareIndirect(*kernels_, *dma);
    const DeviceTensor& src = *dma->src.handle;
    const DeviceTensor& dst = *dma->dst.handle;
    const bool src_in_place = !MayOverlap(src, dst) && InPlaceLayout(src).has_value();
    DescriptorWalk walk = DescriptorNest(*dma, src, dst, src_in_place, InPlaceLayout(dst).has_value());
    if (walk.nest) return kernels_->CompileNest(*walk.nest, CopyOp(src.dtype()));
    std::optional<Mapping> from = MayOverlap(src, dst) ? std::nullopt : InPlaceLayout(src);
    std::optional<Mapping> to = InPlaceLayout(dst);
    if (!to && dst.is_view()) return absl::OkStatus();  // runs on the shared transfer path (Run)
    DirectEnds(*kernels_, src, dst, from, to);
    return kernels_->Compile(to ? *to : dst.full_mapping(), from ? *from : src.full_mapping(),
                             CopyOp(src.dtype()), /*allow_drop=*/false);
  }
  const auto& pipe = std::get<PipelineOp>(op.body);
  if (pipe.inputs.empty() || !pipe.inputs[0].handle) return absl::OkStatus();
  KernelCompiler compiler{*kernels_, pipe, /*box=*/nullptr};
  if (pipe.fetch_index) return WalkPipeline(pipe, compiler);  // as Run: stage by stage
  if (pipe.output.handle) {
    ASSIGN_OR_RETURN(const DirectPipeline* direct, DirectPlanFor(pipe, *pipe.inputs[0].handle, *pipe.output.handle));
    if (direct != nullptr) return kernels_->Compile(direct->dst, direct->src, direct->op, /*allow_drop=*/true);
  }
  if (direct_pipelines_ && HasVectorStage(pipe)) {
    ASSIGN_OR_RETURN(bool in_place, PrepareVectorInPlace(*kernels_, pipe));
    if (in_place) return absl::OkStatus();
    // As Run: the plan over the live units (its own trim: compiling reads the op's handles).
    const std::optional<LivePipeline> live = TrimToLiveUnits(pipe);
    ASSIGN_OR_RETURN(bool reduced, PrepareReduceInPlace(*kernels_, live ? live->op : pipe));
    if (reduced) return absl::OkStatus();
  }
  ASSIGN_OR_RETURN(const FusedContraction* fused, FusedPlanFor(pipe));
  if (fused != nullptr) {
    // The pair kernel, else the fused first level, is what runs on ordinary data; the other
    // compiles if ever needed.
    const bool fma = fma_first_level_ && fused->fma_spec;
    if (fused->packet_spec) {
      RETURN_IF_ERROR(kernels_->PacketContraction(*fused->packet_spec).status());
    } else {
      RETURN_IF_ERROR(kernels_->LaneContraction(fused->pairs_spec ? *fused->pairs_spec
                                                : fma             ? *fused->fma_spec
                                                                  : fused->spec).status());
    }
    if (const ContractionEpilogue* epilogue = pipe.output.handle ? EpilogueFor(pipe, *fused, *pipe.output.handle) : nullptr) {
      return kernels_->Epilogue(*epilogue).status();
    }
    return WalkPipelineFrom(pipe, fused->accumulate_stage + 1, KernelCompiler::Stream{fused->out_layout, fused->acc_type},
                            compiler);
  }
  // Compiling reads the op's handles: its own trim, not the kept one.
  if (std::optional<LivePipeline> trimmed = TrimToLiveUnits(pipe)) {
    KernelCompiler live_compiler{*kernels_, trimmed->op, &trimmed->box};
    return WalkPipeline(trimmed->op, live_compiler);
  }
  return WalkPipeline(pipe, compiler);
}

absl::StatusOr<Program> JitBackend::Prepare(const KernelOf& kernel, const std::vector<DeviceTensor>& inputs) {
  ASSIGN_OR_RETURN(Program program, Trace(kernel, inputs));
  RETURN_IF_ERROR(Prepare(program).status());
  return program;
}

absl::StatusOr<double> JitBackend::Prepare(const Program& program) {
  const uint64_t hash = program.Hash();
  if (prepared_.contains(hash)) return 0.0;
  const auto start = std::chrono::steady_clock::now();
  // Every kernel the ops need is known here: they compile as one program (KernelCache::
  // CollectKernels), paying a module's fixed cost once instead of per kernel.
  kernels_->CollectKernels();
  for (const Op& op : program.ops) {
    if (absl::Status prepared = PrepareOp(op); !prepared.ok()) {
      kernels_->DiscardCollected();
      return prepared;
    }
  }
  RETURN_IF_ERROR(kernels_->CompileCollected());
  prepared_.insert(hash);
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace visa::jit
