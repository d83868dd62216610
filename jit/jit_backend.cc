// JitBackend: a pipeline walked stage by stage, each stage a compiled move between host buffers
// (streams, staged device units); DMA moves likewise.
#include "jit/jit_backend.h"

#include <chrono>
#include <cstring>
#include <algorithm>
#include <thread>

#include "absl/strings/str_cat.h"
#include "dsl/status_macros.h"
#include "jit/parallel.h"
#include "jit/sequencer_nest.h"
#include "jit/staging.h"
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

// Whether some position of `mapping` is padding (canonical forms say so exactly; anything else is
// assumed to be).
bool HasPadding(const Mapping& mapping) {
  const NormalForm& form = mapping.normal_form();
  if (!form.is_canonical()) return true;
  for (const Factor& f : form.factors()) {
    if (f.kind != Factor::Kind::kDigit || !f.fully_live()) return true;
  }
  return false;
}

// The walk's visitor that runs: streams are host images moved by compiled kernels.
struct KernelRunner {
  using Stream = HostTensor;
  KernelCache& kernels;
  const PipelineTensors& tensors;
  PaddingCache& padded;

  absl::StatusOr<HostTensor> Fetch(const BeginStage& begin, const FetchStage& stage) {
    ASSIGN_OR_RETURN(std::optional<HostTensor> walked, FetchBySequencer(begin, stage));
    if (walked) return *std::move(walked);
    ++kernels.stats().derived_fetches;
    const std::vector<DmTensor>& inputs = tensors.inputs;
    ASSIGN_OR_RETURN(Staged source, begin.interleave ? Staged::ReadPair(inputs[0], inputs[1])
                                                     : Staged::Read(inputs[0]));
    ASSIGN_OR_RETURN(ElementOp op, FetchOp(stage, begin.interleave.has_value(), source.positions_per_tensor()));
    uint32_t pad_bits = 0;
    if (stage.adapter.pad_value) {
      ASSIGN_OR_RETURN(pad_bits, DoubleToBits(stage.out.dtype, *stage.adapter.pad_value));
    }
    const Mapping out = stage.out.Full();
    ASSIGN_OR_RETURN(std::vector<uint8_t> bytes, StreamBuffer(stage.out.dtype, out.size(), pad_bits));
    RETURN_IF_ERROR(kernels.Move(out, FetchSource(inputs, begin), op, bytes.data(), out.size(), source.data(),
                                 source.positions(), /*allow_drop=*/true).status());
    return Image(stage.out.dtype, out, std::move(bytes));
  }

  // The fetch as the recorded Fetch Sequencer walks it (sequencer_nest.h); nullopt for what that
  // walk does not cover: an interleaved pair (its `I` entry selects a tensor, not an address).
  absl::StatusOr<std::optional<HostTensor>> FetchBySequencer(const BeginStage& begin, const FetchStage& stage) {
    if (begin.interleave) return std::nullopt;
    const DmTensor& input = tensors.inputs[0];
    const Mapping out = stage.out.Full();
    const int64_t units = input.placement().prefix_size;
    const int64_t stream_unit = stage.out.time.size() * stage.out.packet.size();
    const int64_t buffer_unit = input.element().size();
    std::optional<MoveNest> nest = ReadNestOf(stage.sequencer, units, stream_unit, buffer_unit);
    if (!nest || units * stream_unit != out.size()) return std::nullopt;
    // Padded stream positions may read past the last Element: stage that much more.
    const int64_t tail = std::max<int64_t>(0, nest->max_src() + 1 - units * buffer_unit);
    ASSIGN_OR_RETURN(Staged source, Staged::Read(input, tail));
    ASSIGN_OR_RETURN(ElementOp op, FetchOp(stage, false, source.positions_per_tensor()));
    uint32_t pad_bits = 0;
    if (stage.adapter.pad_value) {
      ASSIGN_OR_RETURN(pad_bits, DoubleToBits(stage.out.dtype, *stage.adapter.pad_value));
    }
    ASSIGN_OR_RETURN(std::vector<uint8_t> bytes, StreamBuffer(stage.out.dtype, out.size(), pad_bits));
    RETURN_IF_ERROR(kernels.RunNest(*nest, op, bytes.data(), out.size(), source.data(), source.positions() + tail)
                        .status());
    ASSIGN_OR_RETURN(HostTensor image, HostTensor::FromBytes(stage.out.dtype, out, std::move(bytes)));
    RETURN_IF_ERROR(Repad(image, pad_bits));
    ++kernels.stats().sequencer_moves;
    return image;
  }

  // Stream padding holds the pad value: the positions the sequencer over-read are masked.
  absl::Status Repad(HostTensor& image, uint32_t pad_bits) {
    ASSIGN_OR_RETURN(const std::vector<int64_t>* padded, PaddedPositions(image.mapping()));
    for (int64_t p : *padded) RETURN_IF_ERROR(image.SetBits(p, pad_bits));
    return absl::OkStatus();
  }

  absl::StatusOr<const std::vector<int64_t>*> PaddedPositions(const Mapping& mapping) {
    std::string key = mapping.ToString();
    for (const Axis& axis : mapping.symbols()) absl::StrAppend(&key, " ", axis.name, "=", axis.size);
    auto it = padded.find(key);
    if (it != padded.end()) return &it->second;
    std::vector<int64_t> positions;
    if (HasPadding(mapping)) {
      ASSIGN_OR_RETURN(std::vector<int64_t> live, LivePositions(mapping));
      size_t k = 0;
      for (int64_t p = 0; p < mapping.size(); ++p) {
        if (k < live.size() && live[k] == p) {
          ++k;
        } else {
          positions.push_back(p);
        }
      }
    }
    return &padded.emplace(key, std::move(positions)).first->second;
  }

  absl::StatusOr<HostTensor> Rearrange(HostTensor stream, const StreamShape& out) {
    const Mapping full = out.Full();
    std::vector<uint8_t> bytes(static_cast<size_t>(StorageBytes(stream.dtype(), full.size())), 0);
    RETURN_IF_ERROR(kernels.Move(full, stream.mapping(), CopyOp(stream.dtype()), bytes.data(), full.size(),
                                 stream.bytes().data(), stream.size(), /*allow_drop=*/false).status());
    return Image(stream.dtype(), full, std::move(bytes));
  }

  absl::StatusOr<HostTensor> Cast(HostTensor stream, const CastStage& stage) {
    ASSIGN_OR_RETURN(ElementOp op, ConversionOp(ConversionStage::kCastEngine, stage.from, stage.to));
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
    if (!AddressThroughTrfSequencer(align, weights, spec)) {
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
    Parallel(spec.outer, ThreadsFor(spec.outer * spec.rows * spec.times * spec.packet, kernels.threads()),
             [&](int64_t begin, int64_t end) { fn(acc.data(), written.data(), x.data(), w_data, begin, end); });
    // The accumulator image laid out by the Reducer's output stream.
    const Mapping acc_layout = Pair({outer, *comp.row, accumulate.retained_time, contract.out.packet});
    const Mapping out = accumulate.out.Full();
    std::vector<uint8_t> bytes(static_cast<size_t>(StorageBytes(contract.out.dtype, out.size())), 0);
    RETURN_IF_ERROR(kernels.Move(out, acc_layout, CopyOp(contract.out.dtype), bytes.data(), out.size(),
                                 reinterpret_cast<const uint8_t*>(acc.data()), acc_layout.size(),
                                 /*allow_drop=*/false).status());
    return Image(contract.out.dtype, out, std::move(bytes));
  }

  absl::Status Store(HostTensor stream, const Stage& last) {
    const DeviceTensor& output = tensors.output;
    RETURN_IF_ERROR(CheckSameType(stream.dtype(), output.dtype()));
    const auto* commit = std::get_if<CommitStage>(&last);
    const SliceBitmap slices = commit != nullptr ? commit->slices : SliceBitmap::All();
    const Mapping full = output.full_mapping();
    if (output.is_view() || !slices.all()) {
      // commit_view, or a commit that leaves disabled slices as they were.
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

  absl::StatusOr<Stream> Fetch(const BeginStage& begin, const FetchStage& stage) {
    const DeviceTensor& input = *op.inputs[0].handle;
    const Mapping full = input.full_mapping();
    const Mapping source = begin.interleave ? Pair({*begin.interleave, full}) : full;
    ASSIGN_OR_RETURN(ElementOp element_op, FetchOp(stage, begin.interleave.has_value(), full.size()));
    Stream out{stage.out.Full(), stage.out.dtype};
    std::optional<MoveNest> nest =
        begin.interleave ? std::nullopt
                         : ReadNestOf(stage.sequencer, input.placement().prefix_size,
                                      stage.out.time.size() * stage.out.packet.size(), input.element().size());
    if (nest) {
      RETURN_IF_ERROR(kernels.CompileNest(*nest, element_op));
      return out;
    }
    RETURN_IF_ERROR(kernels.Compile(out.layout, source, element_op, /*allow_drop=*/true));
    return out;
  }
  absl::StatusOr<Stream> Rearrange(Stream stream, const StreamShape& out) {
    RETURN_IF_ERROR(kernels.Compile(out.Full(), stream.layout, CopyOp(stream.dtype), /*allow_drop=*/false));
    return Stream{out.Full(), stream.dtype};
  }
  absl::StatusOr<Stream> Cast(Stream stream, const CastStage& stage) {
    ASSIGN_OR_RETURN(ElementOp element_op, ConversionOp(ConversionStage::kCastEngine, stage.from, stage.to));
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
    if (!AddressThroughTrfSequencer(align, TrfTensor(weights), spec)) {
      RETURN_IF_ERROR(kernels.Compile(align.out.Full(), weights.full_mapping(), CopyOp(weights.dtype()), true));
      AddressComputationImage(spec);
    }
    RETURN_IF_ERROR(kernels.Contraction(spec).status());
    const Mapping acc_layout = Pair({outer, *align.out.row, accumulate.retained_time, contract.out.packet});
    RETURN_IF_ERROR(kernels.Compile(out.layout, acc_layout, CopyOp(contract.out.dtype), false));
    return out;
  }
  absl::Status Store(Stream stream, const Stage&) {
    if (!op.output.handle) return absl::OkStatus();
    return kernels.Compile(op.output.handle->full_mapping(), stream.layout, CopyOp(stream.dtype), /*allow_drop=*/true);
  }
};

}  // namespace

absl::StatusOr<std::unique_ptr<JitBackend>> JitBackend::Create(JitOptions options) {
  int threads = options.threads > 0 ? options.threads : static_cast<int>(std::thread::hardware_concurrency());
  ASSIGN_OR_RETURN(std::unique_ptr<KernelCache> kernels,
                   KernelCache::Create(std::max(threads, 1), {options.disk_cache, options.cache_dir}));
  return std::unique_ptr<JitBackend>(new JitBackend(std::move(kernels)));
}

absl::Status JitBackend::Run(const PipelineOp& op, const PipelineTensors& tensors) {
  KernelRunner runner{*kernels_, tensors, padded_};
  return WalkPipeline(op, runner);
}

absl::Status JitBackend::Run(const DmaOp&, const DmaTensors& tensors) {
  const DeviceTensor& src = tensors.src;
  const DeviceTensor& dst = tensors.dst;
  RETURN_IF_ERROR(CheckSameType(src.dtype(), dst.dtype()));
  ASSIGN_OR_RETURN(Staged from, Staged::Read(src));
  const Placement& placement = dst.placement();
  ASSIGN_OR_RETURN(bool covered, Covers(*kernels_, dst.full_mapping(), src.full_mapping(), placement, false));
  ASSIGN_OR_RETURN(Staged to, Staged::Read(dst.device(), placement, !covered));
  RETURN_IF_ERROR(kernels_->Move(dst.full_mapping(), src.full_mapping(), CopyOp(src.dtype()), to.data(),
                                 to.positions(), from.data(), from.positions(), /*allow_drop=*/false).status());
  return to.Write();
}

absl::Status JitBackend::PrepareOp(const Op& op) {
  if (const auto* dma = std::get_if<DmaOp>(&op.body)) {
    if (!dma->src.handle || !dma->dst.handle) return absl::OkStatus();  // host moves are not compiled
    return kernels_->Compile(dma->dst.handle->full_mapping(), dma->src.handle->full_mapping(),
                             CopyOp(dma->src.handle->dtype()), /*allow_drop=*/false);
  }
  const auto& pipe = std::get<PipelineOp>(op.body);
  if (pipe.inputs.empty() || !pipe.inputs[0].handle) return absl::OkStatus();
  KernelCompiler compiler{*kernels_, pipe};
  return WalkPipeline(pipe, compiler);
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
