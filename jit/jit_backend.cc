// JitBackend: each stage as a compiled move between host buffers (streams, staged device units).
#include "jit/jit_backend.h"

#include <chrono>
#include <cstring>
#include <algorithm>
#include <thread>

#include "absl/strings/str_cat.h"
#include "dsl/status_macros.h"
#include "jit/parallel.h"
#include "jit/staging.h"
#include "runtime/relayout.h"
#include "runtime/scalar_convert.h"

namespace visa::jit {
namespace {

// The source of a fetch: one tensor's layout, or two stacked along the interleave axis.
Mapping FetchSource(const std::vector<DmTensor>& inputs, const BeginStage& begin) {
  const Mapping full = inputs[0].full_mapping();
  return begin.interleave ? Pair({*begin.interleave, full}) : full;
}

// The Fetch Adapter as an element op: a table, zero points (per interleaved tensor) or a cast.
absl::StatusOr<ElementOp> FetchOp(const FetchStage& stage, bool interleaved, int64_t per_tensor) {
  const FetchAdapter& adapter = stage.adapter;
  if (!adapter.table.empty()) return TableOp(stage.in_dtype, stage.out.dtype, adapter.table);
  if (!adapter.zero_points.empty()) {
    const int32_t first = adapter.zero_points[0];
    const int32_t second = adapter.zero_points.size() > 1 ? adapter.zero_points[1] : first;
    return ZeroPointOp(stage.in_dtype, stage.out.dtype, first, second, interleaved ? per_tensor : -1);
  }
  return ConversionOp(ConversionStage::kFetchCast, stage.in_dtype, stage.out.dtype);
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

absl::Status CheckSameType(DType src, DType dst) {
  if (src == dst) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat(
      "Tensor Function: a move keeps the element type; the source is ", std::string(Name(src)),
      " and the destination ", std::string(Name(dst))));
}

// Whether some element of the move changes chip (the SPM same-chip rule); one chip never does.
absl::StatusOr<bool> CrossesChips(const DeviceTensor& src, const Placement& dst, int chips) {
  if (chips == 1) return false;
  const Mapping dst_full = Pair(dst.levels);
  ASSIGN_OR_RETURN(RelayoutPlan plan, RelayoutPlan::Make(dst_full, src.full_mapping()));
  const int64_t src_chip = src.element().size() * (src.placement().prefix_size / chips);
  const int64_t dst_chip = dst.levels.back().size() * (dst.prefix_size / chips);
  bool crosses = false;
  RETURN_IF_ERROR(plan.Run([&](absl::Span<const RelayoutRun> runs) {
    for (const RelayoutRun& r : runs) {
      for (int64_t i = 0; i < r.length && !crosses; ++i) {
        crosses = (r.src + i * r.src_stride) / src_chip != (r.dst + i) / dst_chip;
      }
    }
  }));
  return crosses;
}

std::vector<uint8_t> LiveMask(const Mapping& mapping) {
  std::vector<uint8_t> live(static_cast<size_t>(mapping.size()));
  for (int64_t i = 0; i < mapping.size(); ++i) live[i] = mapping.map(i).live() ? 1 : 0;
  return live;
}

// The contraction's shape and tables: which retained time step each step feeds, which contracted
// packet position each tree group lands in (as the interpreter derives them).
absl::StatusOr<ContractionSpec> PlanContraction(DType x_type, DType w_type, const AlignStage& align,
                                                const ContractStage& contract, const AccumulateStage& accumulate) {
  const StreamShape& comp = align.out;
  ContractionSpec spec;
  spec.x_type = x_type;
  spec.w_type = w_type;
  spec.acc_type = contract.out.dtype;
  spec.op = contract.op;
  const Mapping outer = Pair({comp.chip, comp.cluster, comp.slice});
  spec.outer = outer.size();
  spec.rows = comp.row->size();
  spec.times = comp.time.size();
  spec.packet = comp.packet.size();
  spec.group = int64_t{1} << contract.depth;
  spec.out_times = accumulate.retained_time.size();
  spec.out_packet = contract.out.packet.size();
  spec.live_outer = LiveMask(outer);
  spec.live_row = LiveMask(*comp.row);
  spec.live_packet = LiveMask(comp.packet);
  spec.retained = RetainedTimeTable(accumulate, comp.time);
  spec.target = TreeGroupTargets(comp.packet, contract);
  return spec;
}

// Weights read from the TRF image the way the TRF Sequencer reads them: the time entries (sizes
// and strides, innermost first) walk the element, the packet repeats a contiguous reg_read_size
// read. False when the entries do not cover Time exactly (then the weights are placed by a move).
bool AddressThroughTrfSequencer(const AlignStage& align, const TrfTensor& weights, ContractionSpec& spec) {
  const int bits = StorageBits(weights.dtype());
  const int64_t element = weights.element().size();
  int64_t covered = 1;
  for (const SequencerEntry& e : align.trf_entries) covered *= e.size;
  const int64_t read = align.reg_read_size * 8 / bits;
  if (covered != spec.times || read < 1 || element * spec.rows * spec.outer != Pair(weights.levels()).size()) {
    return false;
  }
  spec.w_time.assign(spec.times, 0);
  for (int64_t t = 0; t < spec.times; ++t) {
    int64_t rest = t, offset = 0;
    for (const SequencerEntry& e : align.trf_entries) {  // innermost first
      offset += (rest % e.size) * (e.stride * 8 / bits);
      rest /= e.size;
    }
    spec.w_time[t] = offset;
  }
  spec.w_packet.assign(spec.packet, 0);
  for (int64_t p = 0; p < spec.packet; ++p) spec.w_packet[p] = p % read;
  spec.w_outer = spec.rows * element;
  spec.w_row = element;
  return true;
}

// Weights already placed in the computation mapping [outer, row, time, packet].
void AddressComputationImage(ContractionSpec& spec) {
  spec.w_row = spec.times * spec.packet;
  spec.w_outer = spec.rows * spec.w_row;
  spec.w_time.assign(spec.times, 0);
  for (int64_t t = 0; t < spec.times; ++t) spec.w_time[t] = t * spec.packet;
  spec.w_packet.assign(spec.packet, 0);
  for (int64_t p = 0; p < spec.packet; ++p) spec.w_packet[p] = p;
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

}  // namespace

absl::StatusOr<std::unique_ptr<JitBackend>> JitBackend::Create(JitOptions options) {
  int threads = options.threads > 0 ? options.threads : static_cast<int>(std::thread::hardware_concurrency());
  ASSIGN_OR_RETURN(std::unique_ptr<KernelCache> kernels, KernelCache::Create(std::max(threads, 1)));
  return std::unique_ptr<JitBackend>(new JitBackend(std::move(kernels)));
}

absl::StatusOr<HostTensor> JitBackend::Fetch(const std::vector<DmTensor>& inputs, const BeginStage& begin,
                                             const FetchStage& stage) {
  ASSIGN_OR_RETURN(Staged source, begin.interleave ? Staged::ReadPair(inputs[0], inputs[1])
                                                   : Staged::Read(inputs[0]));
  ASSIGN_OR_RETURN(ElementOp op, FetchOp(stage, begin.interleave.has_value(), source.positions_per_tensor()));
  uint32_t pad_bits = 0;
  if (stage.adapter.pad_value) {
    ASSIGN_OR_RETURN(pad_bits, DoubleToBits(stage.out.dtype, *stage.adapter.pad_value));
  }
  const Mapping out = stage.out.Full();
  ASSIGN_OR_RETURN(std::vector<uint8_t> bytes, StreamBuffer(stage.out.dtype, out.size(), pad_bits));
  RETURN_IF_ERROR(kernels_->Move(out, FetchSource(inputs, begin), op, bytes.data(), out.size(), source.data(),
                                 source.positions(), /*allow_drop=*/true).status());
  return Image(stage.out.dtype, out, std::move(bytes));
}

absl::StatusOr<HostTensor> JitBackend::Rearrange(const HostTensor& stream, const StreamShape& out) {
  const Mapping full = out.Full();
  std::vector<uint8_t> bytes(static_cast<size_t>(StorageBytes(stream.dtype(), full.size())), 0);
  RETURN_IF_ERROR(kernels_->Move(full, stream.mapping(), CopyOp(stream.dtype()), bytes.data(), full.size(),
                                 stream.bytes().data(), stream.size(), /*allow_drop=*/false).status());
  return Image(stream.dtype(), full, std::move(bytes));
}

absl::StatusOr<HostTensor> JitBackend::Cast(const HostTensor& stream, const CastStage& stage) {
  ASSIGN_OR_RETURN(ElementOp op, ConversionOp(ConversionStage::kCastEngine, stage.from, stage.to));
  const Mapping full = stage.out.Full();
  std::vector<uint8_t> bytes(static_cast<size_t>(StorageBytes(stage.to, full.size())), 0);
  RETURN_IF_ERROR(kernels_->Move(full, stream.mapping(), op, bytes.data(), full.size(), stream.bytes().data(),
                                 stream.size(), /*allow_drop=*/false).status());
  return Image(stage.to, full, std::move(bytes));
}

absl::StatusOr<DeviceTensor> JitBackend::Store(const HostTensor& stream, Device& device, Placement placement) {
  RETURN_IF_ERROR(CheckSameType(stream.dtype(), placement.dtype));
  ASSIGN_OR_RETURN(bool covered, Covers(*kernels_, Pair(placement.levels), stream.mapping(), placement, true));
  ASSIGN_OR_RETURN(Staged target, Staged::Read(device, placement, !covered));
  RETURN_IF_ERROR(kernels_->Move(Pair(placement.levels), stream.mapping(), CopyOp(stream.dtype()), target.data(),
                                 target.positions(), stream.bytes().data(), stream.size(), /*allow_drop=*/true)
                      .status());
  RETURN_IF_ERROR(target.Write());
  return DeviceTensor::Claim(device, std::move(placement));
}

absl::Status JitBackend::StoreInto(const HostTensor& stream, const DmTensor& target, const SliceBitmap& slices) {
  RETURN_IF_ERROR(CheckSameType(stream.dtype(), target.dtype()));
  ASSIGN_OR_RETURN(Staged staged, Staged::Read(target));
  RETURN_IF_ERROR(kernels_->Move(target.full_mapping(), stream.mapping(), CopyOp(stream.dtype()), staged.data(),
                                 staged.positions(), stream.bytes().data(), stream.size(), /*allow_drop=*/true)
                      .status());
  return staged.Write(&slices);
}

absl::StatusOr<HostTensor> JitBackend::Contract(const HostTensor& stream, const TrfTensor& weights,
                                                const AlignStage& align, const ContractStage& contract,
                                                const AccumulateStage& accumulate) {
  const StreamShape& comp = align.out;
  if (!comp.row) return absl::InvalidArgumentError("JIT: the computation mapping of align has no Row");
  // Both operands placed in the computation mapping by compiled moves (x has no Row: it is broadcast).
  const Mapping outer = Pair({comp.chip, comp.cluster, comp.slice});
  const Mapping x_layout = Pair({outer, comp.time, comp.packet});
  std::vector<uint8_t> x(static_cast<size_t>(StorageBytes(stream.dtype(), x_layout.size())), 0);
  RETURN_IF_ERROR(kernels_->Move(x_layout, stream.mapping(), CopyOp(stream.dtype()), x.data(), x_layout.size(),
                                 stream.bytes().data(), stream.size(), /*allow_drop=*/true)
                      .status());
  ASSIGN_OR_RETURN(Staged trf, Staged::Read(weights));
  ASSIGN_OR_RETURN(ContractionSpec spec, PlanContraction(stream.dtype(), weights.dtype(), align, contract, accumulate));
  const uint8_t* w_data = trf.data();
  std::vector<uint8_t> w;
  if (!AddressThroughTrfSequencer(align, weights, spec)) {
    // The weights placed in the computation mapping by a compiled move instead.
    const Mapping w_layout = comp.Full();
    w.assign(static_cast<size_t>(StorageBytes(weights.dtype(), w_layout.size())), 0);
    RETURN_IF_ERROR(kernels_->Move(w_layout, weights.full_mapping(), CopyOp(weights.dtype()), w.data(),
                                   w_layout.size(), trf.data(), trf.positions(), /*allow_drop=*/true)
                        .status());
    AddressComputationImage(spec);
    w_data = w.data();
  }
  ASSIGN_OR_RETURN(ContractFn fn, kernels_->Contraction(spec));
  const int64_t slots = spec.outer * spec.rows * spec.out_times * spec.out_packet;
  std::vector<uint32_t> acc(static_cast<size_t>(slots), 0);
  std::vector<uint8_t> written(static_cast<size_t>(slots), 0);
  Parallel(spec.outer, ThreadsFor(spec.outer * spec.rows * spec.times * spec.packet, kernels_->threads()),
           [&](int64_t begin, int64_t end) {
    fn(acc.data(), written.data(), x.data(), w_data, begin, end);
  });
  // The accumulator image laid out by the Reducer's output stream.
  const Mapping acc_layout = Pair({outer, *comp.row, accumulate.retained_time, contract.out.packet});
  const Mapping out = accumulate.out.Full();
  std::vector<uint8_t> bytes(static_cast<size_t>(StorageBytes(contract.out.dtype, out.size())), 0);
  RETURN_IF_ERROR(kernels_->Move(out, acc_layout, CopyOp(contract.out.dtype), bytes.data(), out.size(),
                                 reinterpret_cast<const uint8_t*>(acc.data()), acc_layout.size(),
                                 /*allow_drop=*/false)
                      .status());
  return Image(contract.out.dtype, out, std::move(bytes));
}

absl::StatusOr<DeviceTensor> JitBackend::Transfer(const DeviceTensor& src, Device& device, Placement dst,
                                                  TransferCheck check, TransferReport* report) {
  if (&src.device() != &device) {
    return absl::InvalidArgumentError("Transfer: source and destination are on different devices");
  }
  RETURN_IF_ERROR(CheckSameType(src.dtype(), dst.dtype));
  ASSIGN_OR_RETURN(Staged from, Staged::Read(src));
  ASSIGN_OR_RETURN(bool covered, Covers(*kernels_, Pair(dst.levels), src.full_mapping(), dst, false));
  ASSIGN_OR_RETURN(Staged to, Staged::Read(device, dst, !covered));
  TransferReport local;
  ASSIGN_OR_RETURN(local.elements, kernels_->Move(Pair(dst.levels), src.full_mapping(), CopyOp(src.dtype()),
                                                  to.data(), to.positions(), from.data(), from.positions(),
                                                  /*allow_drop=*/false));
  ASSIGN_OR_RETURN(local.crosses_chips, CrossesChips(src, dst, device.chips()));
  local.bytes_read = from.live_bytes();
  local.bytes_written = to.live_bytes();
  RETURN_IF_ERROR(check(local));
  RETURN_IF_ERROR(to.Write());
  if (report != nullptr) *report = local;
  return DeviceTensor::Claim(device, std::move(dst));
}

absl::Status JitBackend::PrepareOp(const Op& op) {
  if (const auto* dma = std::get_if<DmaOp>(&op.body)) {
    if (!dma->src.handle || !dma->dst.handle) return absl::OkStatus();  // host moves are not compiled
    return kernels_->Compile(dma->dst.handle->full_mapping(), dma->src.handle->full_mapping(),
                             CopyOp(dma->src.handle->dtype()), /*allow_drop=*/false);
  }
  const auto& pipe = std::get<PipelineOp>(op.body);
  const BeginStage& begin = std::get<BeginStage>(pipe.stages.front());
  if (pipe.inputs.empty() || !pipe.inputs[0].handle) return absl::OkStatus();
  const DeviceTensor& input = *pipe.inputs[0].handle;
  Mapping stream;
  DType dtype = input.dtype();
  for (size_t i = 1; i < pipe.stages.size(); ++i) {
    const Stage& stage = pipe.stages[i];
    if (const auto* fetch = std::get_if<FetchStage>(&stage)) {
      const Mapping full = input.full_mapping();
      const Mapping source = begin.interleave ? Pair({*begin.interleave, full}) : full;
      ASSIGN_OR_RETURN(ElementOp op, FetchOp(*fetch, begin.interleave.has_value(), full.size()));
      stream = fetch->out.Full();
      dtype = fetch->out.dtype;
      RETURN_IF_ERROR(kernels_->Compile(stream, source, op, /*allow_drop=*/true));
    } else if (const auto* cast = std::get_if<CastStage>(&stage)) {
      ASSIGN_OR_RETURN(ElementOp op, ConversionOp(ConversionStage::kCastEngine, cast->from, cast->to));
      Mapping out = cast->out.Full();
      RETURN_IF_ERROR(kernels_->Compile(out, stream, op, /*allow_drop=*/false));
      stream = out;
      dtype = cast->to;
    } else if (const auto* sw = std::get_if<SwitchStage>(&stage)) {
      RETURN_IF_ERROR(kernels_->Compile(sw->out.Full(), stream, CopyOp(dtype), false));
      stream = sw->out.Full();
    } else if (const auto* collect = std::get_if<CollectStage>(&stage)) {
      RETURN_IF_ERROR(kernels_->Compile(collect->out.Full(), stream, CopyOp(dtype), false));
      stream = collect->out.Full();
    } else if (const auto* transpose = std::get_if<TransposeStage>(&stage)) {
      RETURN_IF_ERROR(kernels_->Compile(transpose->out.Full(), stream, CopyOp(dtype), false));
      stream = transpose->out.Full();
    } else if (std::holds_alternative<AlignStage>(stage) || std::holds_alternative<ContractStage>(stage)) {
      continue;  // compiled with the accumulate stage that completes the contraction
    } else if (const auto* accumulate = std::get_if<AccumulateStage>(&stage)) {
      const auto& align = std::get<AlignStage>(pipe.stages[i - 2]);
      const auto& contract = std::get<ContractStage>(pipe.stages[i - 1]);
      if (!pipe.weights || !pipe.weights->handle || !align.out.row) return absl::OkStatus();
      const DeviceTensor& weights = *pipe.weights->handle;
      const Mapping outer = Pair({align.out.chip, align.out.cluster, align.out.slice});
      RETURN_IF_ERROR(kernels_->Compile(Pair({outer, align.out.time, align.out.packet}), stream, CopyOp(dtype), true));
      ASSIGN_OR_RETURN(ContractionSpec spec, PlanContraction(dtype, weights.dtype(), align, contract, *accumulate));
      if (!AddressThroughTrfSequencer(align, TrfTensor(weights), spec)) {
        RETURN_IF_ERROR(kernels_->Compile(align.out.Full(), weights.full_mapping(), CopyOp(weights.dtype()), true));
        AddressComputationImage(spec);
      }
      RETURN_IF_ERROR(kernels_->Contraction(spec).status());
      const Mapping acc_layout = Pair({outer, *align.out.row, accumulate->retained_time, contract.out.packet});
      RETURN_IF_ERROR(kernels_->Compile(accumulate->out.Full(), acc_layout, CopyOp(contract.out.dtype), false));
      stream = accumulate->out.Full();
      dtype = contract.out.dtype;
    } else if (pipe.output.handle) {
      return kernels_->Compile(pipe.output.handle->full_mapping(), stream, CopyOp(dtype), /*allow_drop=*/true);
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<double> JitBackend::Prepare(const Program& program) {
  const uint64_t hash = program.Hash();
  if (prepared_.contains(hash)) return 0.0;
  const auto start = std::chrono::steady_clock::now();
  for (const Op& op : program.ops) RETURN_IF_ERROR(PrepareOp(op));
  prepared_.insert(hash);
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace visa::jit
