// Interpreter stages: fetch (read, cast, adapter), rearrangements, casts and stores, and the walk
// of a pipeline through them.
#include "interp/interpreter.h"

#include "absl/strings/str_cat.h"
#include "dsl/commit_cast.h"
#include "dsl/status_macros.h"
#include "interp/index_move.h"
#include "interp/op_reads.h"
#include "interp/stages.h"
#include "interp/unwritten_reads.h"
#include "runtime/pipeline_walk.h"
#include "runtime/device.h"
#include "runtime/indirect_dma.h"
#include "runtime/scalar_convert.h"
#include "runtime/transfer.h"
#include "runtime/uninitialized_reads.h"

namespace visa::interp {
namespace {

// The source of a fetch as one host image: a tensor's own layout, or two stacked along the
// interleave axis (tensor 0 is I = 0).
absl::StatusOr<HostTensor> SourceImage(const std::vector<DmTensor>& inputs, const BeginStage& begin) {
  ASSIGN_OR_RETURN(HostTensor first, ReadImage(inputs[0], inputs[0].full_mapping()));
  if (!begin.interleave) return first;
  ASSIGN_OR_RETURN(HostTensor second, ReadImage(inputs[1], inputs[1].full_mapping()));
  Mapping stacked = Pair({*begin.interleave, first.mapping()});
  std::vector<uint32_t> bits = first.ToBits();
  std::vector<uint32_t> more = second.ToBits();
  bits.insert(bits.end(), more.begin(), more.end());
  return HostTensor::FromBits(first.dtype(), stacked, bits);
}

// The Fetch Adapter on one element: table lookup, zero-point subtraction or type cast.
absl::StatusOr<uint32_t> Adapt(const FetchStage& stage, uint32_t bits, int64_t tensor) {
  const FetchAdapter& adapter = stage.adapter;
  if (!adapter.table.empty()) return adapter.table[bits];
  if (!adapter.zero_points.empty()) {
    int32_t value = SignExtend(bits, Bits(stage.in_dtype));
    ASSIGN_OR_RETURN(int32_t out, ZeroPointSubtract(stage.in_dtype, value, adapter.zero_points[tensor]));
    return TruncateToBits(out, Bits(stage.out.dtype));
  }
  if (stage.in_dtype == stage.out.dtype) return bits;
  return Convert(ConversionStage::kFetchCast, stage.in_dtype, stage.out.dtype, bits);
}

// A Fetch Adapter that changes no bits: no table, no zero points, no cast.
bool IsIdentity(const FetchStage& stage) {
  return stage.adapter.table.empty() && stage.adapter.zero_points.empty() && stage.in_dtype == stage.out.dtype;
}

}  // namespace

absl::StatusOr<HostTensor> FetchStream(const std::vector<DmTensor>& inputs, const BeginStage& begin,
                                       const FetchStage& stage) {
  ASSIGN_OR_RETURN(HostTensor source, SourceImage(inputs, begin));
  return FetchFromImage(source, begin, stage, static_cast<int64_t>(inputs.size()));
}

absl::StatusOr<HostTensor> FetchFromImage(const HostTensor& source, const BeginStage& begin, const FetchStage& stage,
                                          int64_t tensors) {
  uint32_t pad_bits = 0;
  if (stage.adapter.pad_value) {
    ASSIGN_OR_RETURN(pad_bits, DoubleToBits(stage.out.dtype, *stage.adapter.pad_value));
  }
  const MovePolicy move{.allow_drop = true, .pad_bits = pad_bits};
  if (IsIdentity(stage)) return MoveByIndex(source, stage.out.Full(), move);
  // The adapter is element-wise, so it runs over the source image (tensor t of an interleave is
  // its t-th block) and the move then only rearranges; padded stream positions read the mask value.
  std::vector<uint32_t> bits = source.ToBits();
  const int64_t per_tensor = static_cast<int64_t>(bits.size()) / tensors;
  for (int64_t p = 0; p < static_cast<int64_t>(bits.size()); ++p) {
    ASSIGN_OR_RETURN(bits[p], Adapt(stage, bits[p], begin.interleave ? p / per_tensor : 0));
  }
  ASSIGN_OR_RETURN(HostTensor adapted, HostTensor::FromBits(stage.out.dtype, source.mapping(), bits));
  return MoveByIndex(adapted, stage.out.Full(), move);
}

absl::StatusOr<HostTensor> RearrangeStream(const HostTensor& stream, const StreamShape& out) {
  return MoveByIndex(stream, out.Full());
}

absl::StatusOr<HostTensor> CastStream(const HostTensor& stream, const CastStage& stage) {
  std::vector<uint32_t> bits = stream.ToBits();
  for (uint32_t& b : bits) {
    ASSIGN_OR_RETURN(b, ConvertByCastStage(stage, b));
  }
  ASSIGN_OR_RETURN(HostTensor converted, HostTensor::FromBits(stage.to, stream.mapping(), bits));
  return MoveByIndex(converted, stage.out.Full());
}

namespace {

// A commit_view or a commit with disabled slices: unit by unit, only the target's live positions
// on enabled slices change.
absl::Status StorePartial(const HostTensor& stream, const DeviceTensor& target, const SliceBitmap& slices) {
  RETURN_IF_ERROR(target.CheckReadable());
  const Mapping full = target.full_mapping();
  ASSIGN_OR_RETURN(HostTensor image, MoveByIndex(stream, full, {.allow_drop = true}));
  const Placement& placement = target.placement();
  const int64_t window = target.element().size();
  const int64_t base = target.base_element().size();
  const int64_t offset = target.window_offset();
  Device& device = target.device();
  // Unit by unit: read the tensor's Element bytes, overwrite the target's live positions, write back.
  for (size_t k = 0; k < placement.live_prefixes.size(); ++k) {
    const int64_t unit = placement.units[k];
    if (!slices.enabled(static_cast<int>(unit % kSlicesPerCluster))) continue;
    std::vector<uint8_t> bytes(placement.unit_bytes());
    RETURN_IF_ERROR(device.Read(placement.tier, unit, placement.address, absl::MakeSpan(bytes)));
    ASSIGN_OR_RETURN(HostTensor cells, HostTensor::FromBytes(placement.dtype, target.base_element(),
                                                             std::move(bytes)));
    const int64_t first = placement.live_prefixes[k] * window;
    for (int64_t e = 0; e < window; ++e) {
      if (offset + e >= base || !full.map(first + e).live()) continue;
      ASSIGN_OR_RETURN(uint32_t bits, image.GetBits(first + e));
      RETURN_IF_ERROR(cells.SetBits(offset + e, bits));
    }
    RETURN_IF_ERROR(device.Write(placement.tier, unit, placement.address, cells.bytes()));
  }
  return absl::OkStatus();
}

// The walk's visitor: streams are host images. Engine reads of device memory (the fetch, the
// contraction's TRF weights) are checked for unwritten elements first (unwritten_reads.h).
struct Evaluator {
  using Stream = HostTensor;
  const PipelineTensors& tensors;
  ContextKind context;

  absl::StatusOr<HostTensor> Fetch(const BeginStage& begin, const FetchStage& stage) {
    if (stage.indirect) {
      VISA_CHECK(tensors.fetch_index.has_value(), "an indirect fetch runs with its index tensor");
      RETURN_IF_ERROR(CheckAllWritten(*tensors.fetch_index, "the IndirectLoop's index read by an indirect fetch"));
      return IndirectFetchStream(tensors.inputs[0], *tensors.fetch_index, begin, stage);
    }
    const std::vector<DeviceTensor> sources(tensors.inputs.begin(), tensors.inputs.end());
    RETURN_IF_ERROR(CheckStreamReads(sources, begin.interleave, stage.out.Full(),
                                     absl::StrCat("the fetch of a ", ContextName(context), "-context pipeline")));
    return FetchStream(tensors.inputs, begin, stage);
  }
  absl::StatusOr<HostTensor> Rearrange(HostTensor stream, const StreamShape& out) {
    return RearrangeStream(stream, out);
  }
  absl::StatusOr<HostTensor> Cast(HostTensor stream, const CastStage& stage) { return CastStream(stream, stage); }
  absl::StatusOr<HostTensor> Contract(HostTensor stream, const AlignStage& align, const ContractStage& contract,
                                      const AccumulateStage& accumulate) {
    VISA_CHECK(tensors.weights.has_value(), "a contraction runs with its TRF weights");
    RETURN_IF_ERROR(CheckStreamReads({*tensors.weights}, std::nullopt, align.out.Full(),
                                     "the TRF Sequencer (align's weights)"));
    return ContractStream(stream, *tensors.weights, align, contract, accumulate);
  }
  absl::StatusOr<HostTensor> Vector(HostTensor stream, const VectorStage& stage) {
    return VectorStream(stream, stage, tensors.vrf_operands);
  }
  absl::Status Store(HostTensor stream, const Stage& last) {
    const auto* commit = std::get_if<CommitStage>(&last);
    return StoreStream(stream, tensors.output, commit != nullptr ? commit->slices : SliceBitmap::All());
  }
};

}  // namespace

absl::Status StoreStream(const HostTensor& stream, const DeviceTensor& output, const SliceBitmap& slices) {
  if (output.is_view() || !slices.all()) return StorePartial(stream, output, slices);
  ASSIGN_OR_RETURN(HostTensor image, MoveByIndex(stream, output.full_mapping(), {.allow_drop = true}));
  return WriteInto(image, output);
}

absl::Status Interpreter::Run(const PipelineOp& op, const PipelineTensors& tensors) {
  Evaluator evaluator{tensors, op.context};
  return WalkPipeline(op, evaluator);
}

absl::Status Interpreter::Run(const DmaOp& op, const DmaTensors& tensors) {
  RETURN_IF_ERROR(CheckOpReads(op, tensors));
  return Backend::Run(op, tensors);
}

}  // namespace visa::interp
