// The Tensor Unit pipeline builder: order rules, engine planning, recording; the Context submits ops.
#include "runtime/tensor_unit.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "dsl/commit_cast.h"
#include "dsl/status_macros.h"
#include "runtime/uninitialized_reads.h"

namespace visa {
namespace {

TensorRef RefOf(const DeviceTensor& tensor) { return TensorRef{tensor.ToString(), tensor.id(), tensor}; }

}  // namespace

Context::Context(Device& device, Backend& backend)
    : main(this, ContextKind::kMain),
      sub(this, ContextKind::kSub),
      tdma(Dma::Tensor(device)),
      pdma(Dma::Pcie(device)),
      device_(&device),
      backend_(&backend) {
  tdma.set_context(this);
  pdma.set_context(this);
}

// An op has its serial before it runs, so a backend keeps what it derives from the op (the JIT's
// op memo, ready moves, in-place plans) for the op's later runs: a relaunch of the recorded
// program, or a replay of the same op objects. A failed op's serial is simply never used again.
absl::Status Context::Submit(Op op, const PipelineTensors& tensors) {
  AssignSerial(op);
  if (executes()) {
    RETURN_IF_ERROR(backend_->Run(std::get<PipelineOp>(op.body), tensors));
    MarkPipelineWritten(std::get<PipelineOp>(op.body), tensors.output);  // whatever the backend
  }
  program_.ops.push_back(std::move(op));
  return absl::OkStatus();
}

absl::Status Context::Submit(Op op, const DmaTensors& tensors) {
  AssignSerial(op);
  if (executes()) {
    RETURN_IF_ERROR(backend_->Run(std::get<DmaOp>(op.body), tensors));
    MarkWritten(tensors.dst);
  }
  program_.ops.push_back(std::move(op));
  return absl::OkStatus();
}

Stream TensorUnit::begin(const DmTensor& input) {
  Stream stream(ctx_, kind_);
  stream.op_.context = kind_;
  absl::Status readable = input.CheckReadable();
  if (!readable.ok()) return std::move(stream).Fail(readable);
  std::vector<Mapping> levels = input.levels();
  stream.shape_ = StreamShape{input.dtype(), levels[0], levels[1], levels[2], Mapping(), input.element(), std::nullopt};
  stream.inputs_ = {input};
  stream.op_.inputs = {RefOf(input)};
  stream.op_.stages.push_back(BeginStage{stream.shape_, std::nullopt});
  return stream;
}

Stream TensorUnit::begin_interleaved(const Mapping& axis, const DmTensor& lhs, const DmTensor& rhs) {
  Stream stream = begin(lhs);
  if (!stream.status_.ok()) return stream;
  if (!axis.ok() || axis.size() != 2 || axis.kind() != Mapping::Kind::kSymbol) {
    return std::move(stream).Fail(absl::InvalidArgumentError(absl::StrCat(
        "begin_interleaved: the interleave axis must be one axis of size 2 (`I = 2`), got `",
        axis.ToString(), "`")));
  }
  if (!(lhs.full_mapping() == rhs.full_mapping()) || lhs.dtype() != rhs.dtype()) {
    return std::move(stream).Fail(absl::InvalidArgumentError(absl::StrCat(
        "begin_interleaved: both tensors need identical mappings and dtype: ", lhs.ToString(), " vs ",
        rhs.ToString())));
  }
  absl::Status readable = rhs.CheckReadable();
  if (!readable.ok()) return std::move(stream).Fail(readable);
  stream.shape_.time = axis;
  stream.inputs_.push_back(rhs);
  stream.op_.inputs.push_back(RefOf(rhs));
  stream.op_.stages[0] = BeginStage{stream.shape_, axis};
  return stream;
}

bool Stream::Allow(StreamCall call) {
  if (!status_.ok()) return false;
  if (vector_) {
    status_ = absl::FailedPreconditionError(absl::StrCat(
        "Vector Engine stage order: `", StreamCallName(call), "` cannot run inside the Vector Engine: close the chain "
        "with vector_final() first"));
    return false;
  }
  status_ = CheckStreamOrder(position_, call, kind_);
  return status_.ok();
}

Stream Stream::Fail(absl::Status status) && {
  status_ = std::move(status);
  return std::move(*this);
}

template <typename S>
Stream Stream::Then(StreamCall call, absl::StatusOr<S> stage, const StreamShape& (*out)(const S&)) && {
  if (!stage.ok()) return std::move(*this).Fail(stage.status());
  shape_ = out(*stage);
  position_ = *PositionAfter(call);
  op_.stages.push_back(*std::move(stage));
  return std::move(*this);
}

namespace {
template <typename S>
const StreamShape& OutOf(const S& stage) {
  return stage.out;
}
}  // namespace

Stream Stream::FetchWith(StreamCall call, DType out, const Mapping& time, const Mapping& packet,
                         FetchAdapter adapter) && {
  if (!Allow(call)) return std::move(*this);
  const BeginStage& begin = std::get<BeginStage>(op_.stages.front());
  const Mapping* interleave = begin.interleave ? &*begin.interleave : nullptr;
  return std::move(*this).Then(call, PlanFetchStage(shape_, interleave, kind_, out, time, packet, std::move(adapter)),
                               &OutOf<FetchStage>);
}

Stream Stream::fetch(DType out, const Mapping& time, const Mapping& packet) && {
  return std::move(*this).FetchWith(StreamCall::kFetch, out, time, packet, {});
}

Stream Stream::fetch_with_zero_point(DType out, int32_t zero_point, const Mapping& time,
                                     const Mapping& packet) && {
  return std::move(*this).FetchWith(StreamCall::kFetchWithZeroPoint, out, time, packet,
                                    FetchAdapter{{zero_point}, {}, std::nullopt});
}

Stream Stream::fetch_with_zero_points(DType out, int32_t lhs, int32_t rhs, const Mapping& time,
                                      const Mapping& packet) && {
  return std::move(*this).FetchWith(StreamCall::kFetchWithZeroPoints, out, time, packet,
                                    FetchAdapter{{lhs, rhs}, {}, std::nullopt});
}

Stream Stream::fetch_with_table(DType out, std::vector<uint32_t> table, const Mapping& time,
                                const Mapping& packet) && {
  return std::move(*this).FetchWith(StreamCall::kFetchWithTable, out, time, packet,
                                    FetchAdapter{{}, std::move(table), std::nullopt});
}

Stream Stream::fetch_masked(DType out, double pad_value, const Mapping& time, const Mapping& packet) && {
  return std::move(*this).FetchWith(StreamCall::kFetchMasked, out, time, packet, FetchAdapter{{}, {}, pad_value});
}

Stream Stream::switch_engine(const SwitchConfig& config, const Mapping& slice, const Mapping& time) && {
  if (!Allow(StreamCall::kSwitch)) return std::move(*this);
  return std::move(*this).Then(StreamCall::kSwitch, PlanSwitch(shape_, config, slice, time), &OutOf<SwitchStage>);
}

Stream Stream::collect(const Mapping& time, const Mapping& packet) && {
  if (!Allow(StreamCall::kCollect)) return std::move(*this);
  return std::move(*this).Then(StreamCall::kCollect, PlanCollect(shape_, time, packet), &OutOf<CollectStage>);
}

Stream Stream::named(std::string operation) && {
  op_.operation = std::move(operation);
  return std::move(*this);
}

Stream Stream::transpose(const Mapping& time, const Mapping& packet) && {
  if (!Allow(StreamCall::kTranspose)) return std::move(*this);
  return std::move(*this).Then(StreamCall::kTranspose, PlanTranspose(shape_, time, packet),
                               &OutOf<TransposeStage>);
}

Stream Stream::align(const Mapping& time, const Mapping& packet, const TrfTensor& weights) && {
  if (!Allow(StreamCall::kAlign)) return std::move(*this);
  absl::Status readable = weights.CheckReadable();
  if (!readable.ok()) return std::move(*this).Fail(readable);
  TrfOperand trf{weights.dtype(),     weights.chip(), weights.cluster(), weights.slice(), weights.row(),
                 weights.element(),   TrfAddressName(weights.trf_address()),
                 TrfAddressBase(weights.trf_address()), weights.ToString()};
  weights_ = weights;
  op_.weights = RefOf(weights);
  return std::move(*this).Then(StreamCall::kAlign, PlanAlign(shape_, position_, trf, time, packet),
                               &OutOf<AlignStage>);
}

Stream Stream::contract(const Mapping& packet, ReduceOp op) && {
  if (!Allow(StreamCall::kContract)) return std::move(*this);
  return std::move(*this).Then(StreamCall::kContract,
                               PlanContract(std::get<AlignStage>(op_.stages.back()), packet, op),
                               &OutOf<ContractStage>);
}

Stream Stream::accumulate(const Mapping& time, const Mapping& packet, AccumulationKind kind) && {
  if (!Allow(StreamCall::kAccumulate)) return std::move(*this);
  return std::move(*this).Then(StreamCall::kAccumulate,
                               PlanAccumulate(std::get<ContractStage>(op_.stages.back()), time, packet, kind),
                               &OutOf<AccumulateStage>);
}

Stream Stream::cast(DType out, const Mapping& packet) && {
  if (!Allow(StreamCall::kCast)) return std::move(*this);
  return std::move(*this).Then(StreamCall::kCast, PlanCast(shape_, out, packet), &OutOf<CastStage>);
}

Stream Stream::commit_cast(DType to) && {
  if (!Allow(StreamCall::kCommitCast)) return std::move(*this);
  return std::move(*this).Then(StreamCall::kCommitCast, PlanCommitCast(shape_, kind_, to, /*relu=*/false),
                               &OutOf<CastStage>);
}

Stream Stream::commit_cast_relu(DType to) && {
  if (!Allow(StreamCall::kCommitCastRelu)) return std::move(*this);
  return std::move(*this).Then(StreamCall::kCommitCastRelu, PlanCommitCast(shape_, kind_, to, /*relu=*/true),
                               &OutOf<CastStage>);
}

absl::Status Stream::Finish(Stage stage, const DeviceTensor& output, bool reserved) {
  op_.stages.push_back(std::move(stage));
  op_.output = RefOf(output);
  PipelineTensors tensors{inputs_, weights_, output, vrf_operands_};
  if (op_.fetch_index) tensors.fetch_index = op_.fetch_index->handle;
  absl::Status done = ctx_->Submit(Op{std::move(op_)}, tensors);
  if (!reserved) return done;
  // The inputs are read; now the new tensor owns its ranges (clobbering what was there).
  if (done.ok()) output.ClaimRanges();
  else output.Release();
  return done;
}

absl::Status Stream::CheckCommitTarget(const DmTensor& view) const {
  if (view.tier() != Tier::kDm) {
    return absl::InvalidArgumentError(absl::StrCat(
        "Commit Engine: commit_view writes DM, but ", view.ToString(), " is in ", TierName(view.tier())));
  }
  if (&view.device() != &ctx_->device()) {
    return absl::InvalidArgumentError("Commit Engine: commit_view target is on another device");
  }
  if (view.dtype() != shape_.dtype) {
    return absl::InvalidArgumentError(absl::StrCat(
        "Commit Engine: the stream's dtype ", std::string(Name(shape_.dtype)),
        " must equal the commit_view target's dtype ", std::string(Name(view.dtype())),
        " (commit does not convert; use cast)"));
  }
  struct Level {
    const char* name;
    const Mapping& stream;
    const Mapping& target;
  };
  for (const Level& level : {Level{"Chip", shape_.chip, view.chip()},
                             Level{"Cluster", shape_.cluster, view.cluster()},
                             Level{"Slice", shape_.slice, view.slice()}}) {
    if (!(level.stream == level.target)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "Commit Engine: commit writes each slice's data into that slice's DM, so the target's ",
          level.name, " must equal the stream's: stream [", level.stream.ToString(), "], target [",
          level.target.ToString(), "] (", view.ToString(), ")"));
    }
  }
  const int64_t bits = StorageBits(view.dtype()) * view.window_offset();
  if (bits % 8 != 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "Commit Engine: the commit_view target must start on a byte, ", view.ToString(),
        " starts inside one"));
  }
  return view.CheckReadable();
}

absl::StatusOr<DmTensor> Stream::commit(const Mapping& element, Address address,
                                        const SliceBitmap& slices) && {
  if (!Allow(StreamCall::kCommit)) return status_;
  RETURN_IF_ERROR(slices.status());
  ASSIGN_OR_RETURN(CommitStage stage, PlanCommitStage(shape_, position_, kind_, element));
  stage.slices = slices;
  ASSIGN_OR_RETURN(Placement placement,
                   Place(ctx_->device(), shape_.dtype, Tier::kDm,
                         {shape_.chip, shape_.cluster, shape_.slice, element}, address));
  // The new tensor owns its ranges without writing them all; disabled slices keep their bytes.
  DmTensor out(DeviceTensor::Reserve(ctx_->device(), std::move(placement)));
  RETURN_IF_ERROR(Finish(std::move(stage), out, /*reserved=*/true));
  return out;
}

absl::Status Stream::commit_view(const DmTensor& view) && {
  if (!Allow(StreamCall::kCommit)) return status_;
  RETURN_IF_ERROR(CheckCommitTarget(view));
  ASSIGN_OR_RETURN(CommitStage stage, PlanCommitStage(shape_, position_, kind_, view.element()));
  return Finish(std::move(stage), view, /*reserved=*/false);
}

absl::StatusOr<DmTensor> Stream::commit(const Mapping& element, Address address) && {
  return std::move(*this).commit(element, address, SliceBitmap::All());
}

absl::StatusOr<TrfTensor> Stream::to_trf(const Mapping& row, const Mapping& element, TrfAddress address) && {
  if (!Allow(StreamCall::kToTrf)) return status_;
  ASSIGN_OR_RETURN(RegisterLoadStage stage,
                   PlanToTrf(shape_, position_, kind_, row, element, TrfAddressName(address),
                             TrfAddressCapacity(address)));
  ASSIGN_OR_RETURN(Placement placement,
                   Place(ctx_->device(), shape_.dtype, Tier::kTrf,
                         {shape_.chip, shape_.cluster, shape_.slice, row, element},
                         Address::At(TrfAddressBase(address)), address));
  TrfTensor out(DeviceTensor::Reserve(ctx_->device(), std::move(placement)));
  RETURN_IF_ERROR(Finish(std::move(stage), out, /*reserved=*/true));
  return out;
}

absl::StatusOr<VrfTensor> Stream::to_vrf(const Mapping& element, int64_t address) && {
  if (!Allow(StreamCall::kToVrf)) return status_;
  ASSIGN_OR_RETURN(RegisterLoadStage stage, PlanToVrf(shape_, position_, kind_, element, address));
  ASSIGN_OR_RETURN(Placement placement,
                   Place(ctx_->device(), shape_.dtype, Tier::kVrf,
                         {shape_.chip, shape_.cluster, shape_.slice, element}, Address::At(address)));
  VrfTensor out(DeviceTensor::Reserve(ctx_->device(), std::move(placement)));
  RETURN_IF_ERROR(Finish(std::move(stage), out, /*reserved=*/true));
  return out;
}

}  // namespace visa
