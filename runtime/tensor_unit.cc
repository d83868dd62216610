// The Tensor Unit pipeline builder: position rules, engine planning, recording and execution.
#include "runtime/tensor_unit.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "dsl/status_macros.h"

namespace visa {
namespace {

// Which calls may follow each position (manual, "Tensor Unit Stream" and each engine's page).
std::vector<std::string> AllowedAfter(StreamPosition position) {
  switch (position) {
    case StreamPosition::kBegin:
      return {"fetch", "fetch_with_zero_point", "fetch_with_zero_points", "fetch_with_table", "fetch_masked"};
    case StreamPosition::kFetch:
      return {"switch", "collect"};
    case StreamPosition::kSwitch:
      return {"collect"};
    case StreamPosition::kCollect:
      return {"align", "cast", "transpose", "commit", "to_trf", "to_vrf"};
    case StreamPosition::kAligned:
      return {"contract"};
    case StreamPosition::kContracted:
      return {"accumulate"};
    case StreamPosition::kContraction:
      return {"cast", "transpose", "commit"};
    case StreamPosition::kCast:
      return {"transpose", "commit"};
    case StreamPosition::kTranspose:
      return {"commit"};
    default:
      return {"commit"};
  }
}

TensorRef RefOf(const DeviceTensor& tensor) { return TensorRef{tensor.ToString(), tensor.id(), tensor}; }

}  // namespace

Context::Context(Device& device, Backend& backend)
    : main(this, TuContextKind::kMain),
      sub(this, TuContextKind::kSub),
      tdma(Dma::Tensor(device)),
      pdma(Dma::Pcie(device)),
      device_(&device),
      backend_(&backend) {
  tdma.set_recorder([this](const DmaOp& op) { Record(Op{op}); });
  pdma.set_recorder([this](const DmaOp& op) { Record(Op{op}); });
  tdma.set_backend(&backend);
  pdma.set_backend(&backend);
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

bool Stream::Allow(absl::string_view call) {
  if (!status_.ok()) return false;
  std::vector<std::string> allowed = AllowedAfter(position_);
  if (std::find(allowed.begin(), allowed.end(), call) != allowed.end()) return true;
  status_ = absl::FailedPreconditionError(absl::StrCat(
      "`", call, "` is not allowed after ", StreamPositionName(position_), " (", TuContextName(kind_),
      " context); allowed here: ", absl::StrJoin(allowed, ", ")));
  return false;
}

Stream Stream::Fail(absl::Status status) && {
  status_ = std::move(status);
  return std::move(*this);
}

Stream Stream::FetchWith(DType out, const Mapping& time, const Mapping& packet, FetchAdapter adapter) && {
  const BeginStage& begin = std::get<BeginStage>(op_.stages.front());
  const Mapping* interleave = begin.interleave ? &*begin.interleave : nullptr;
  absl::StatusOr<FetchStage> stage =
      PlanFetchStage(shape_, interleave, kind_, out, time, packet, std::move(adapter));
  if (!stage.ok()) return std::move(*this).Fail(stage.status());
  absl::StatusOr<HostTensor> data = ctx_->backend().Fetch(inputs_, begin, *stage);
  if (!data.ok()) return std::move(*this).Fail(data.status());
  data_ = *std::move(data);
  shape_ = stage->out;
  position_ = StreamPosition::kFetch;
  op_.stages.push_back(*std::move(stage));
  return std::move(*this);
}

Stream Stream::fetch(DType out, const Mapping& time, const Mapping& packet) && {
  if (!Allow("fetch")) return std::move(*this);
  return std::move(*this).FetchWith(out, time, packet, {});
}

Stream Stream::fetch_with_zero_point(DType out, int32_t zero_point, const Mapping& time,
                                     const Mapping& packet) && {
  if (!Allow("fetch_with_zero_point")) return std::move(*this);
  return std::move(*this).FetchWith(out, time, packet, FetchAdapter{{zero_point}, {}, std::nullopt});
}

Stream Stream::fetch_with_zero_points(DType out, int32_t lhs, int32_t rhs, const Mapping& time,
                                      const Mapping& packet) && {
  if (!Allow("fetch_with_zero_points")) return std::move(*this);
  return std::move(*this).FetchWith(out, time, packet, FetchAdapter{{lhs, rhs}, {}, std::nullopt});
}

Stream Stream::fetch_with_table(DType out, std::vector<uint32_t> table, const Mapping& time,
                                const Mapping& packet) && {
  if (!Allow("fetch_with_table")) return std::move(*this);
  return std::move(*this).FetchWith(out, time, packet, FetchAdapter{{}, std::move(table), std::nullopt});
}

Stream Stream::fetch_masked(DType out, double pad_value, const Mapping& time, const Mapping& packet) && {
  if (!Allow("fetch_masked")) return std::move(*this);
  return std::move(*this).FetchWith(out, time, packet, FetchAdapter{{}, {}, pad_value});
}

template <typename S>
Stream Stream::Rearranged(absl::StatusOr<S> stage, StreamPosition position) && {
  if (!stage.ok()) return std::move(*this).Fail(stage.status());
  absl::StatusOr<HostTensor> data = ctx_->backend().Rearrange(*data_, stage->out);
  if (!data.ok()) return std::move(*this).Fail(data.status());
  data_ = *std::move(data);
  shape_ = stage->out;
  position_ = position;
  op_.stages.push_back(*std::move(stage));
  return std::move(*this);
}

Stream Stream::switch_engine(const SwitchConfig& config, const Mapping& slice, const Mapping& time) && {
  if (!Allow("switch")) return std::move(*this);
  return std::move(*this).Rearranged(PlanSwitch(shape_, config, slice, time), StreamPosition::kSwitch);
}

Stream Stream::collect(const Mapping& time, const Mapping& packet) && {
  if (!Allow("collect")) return std::move(*this);
  return std::move(*this).Rearranged(PlanCollect(shape_, time, packet), StreamPosition::kCollect);
}

Stream Stream::transpose(const Mapping& time, const Mapping& packet) && {
  if (!Allow("transpose")) return std::move(*this);
  return std::move(*this).Rearranged(PlanTranspose(shape_, time, packet), StreamPosition::kTranspose);
}

Stream Stream::align(const Mapping& time, const Mapping& packet, const TrfTensor& weights) && {
  if (!Allow("align")) return std::move(*this);
  absl::Status readable = weights.CheckReadable();
  if (!readable.ok()) return std::move(*this).Fail(readable);
  TrfOperand trf{weights.dtype(),     weights.chip(), weights.cluster(), weights.slice(), weights.row(),
                 weights.element(),   TrfAddressName(weights.trf_address()),
                 TrfAddressBase(weights.trf_address()), weights.ToString()};
  absl::StatusOr<AlignStage> stage = PlanAlign(shape_, position_, trf, time, packet);
  if (!stage.ok()) return std::move(*this).Fail(stage.status());
  weights_ = weights;
  op_.weights = RefOf(weights);
  shape_ = stage->out;
  position_ = StreamPosition::kAligned;
  op_.stages.push_back(*std::move(stage));
  return std::move(*this);
}

Stream Stream::contract(const Mapping& packet, ReduceOp op) && {
  if (!Allow("contract")) return std::move(*this);
  absl::StatusOr<ContractStage> stage = PlanContract(std::get<AlignStage>(op_.stages.back()), packet, op);
  if (!stage.ok()) return std::move(*this).Fail(stage.status());
  shape_ = stage->out;
  position_ = StreamPosition::kContracted;
  op_.stages.push_back(*std::move(stage));
  return std::move(*this);
}

Stream Stream::accumulate(const Mapping& time, const Mapping& packet, AccumulationKind kind) && {
  if (!Allow("accumulate")) return std::move(*this);
  const auto& contracted = std::get<ContractStage>(op_.stages.back());
  const auto& aligned = std::get<AlignStage>(op_.stages[op_.stages.size() - 2]);
  absl::StatusOr<AccumulateStage> stage = PlanAccumulate(contracted, time, packet, kind);
  if (!stage.ok()) return std::move(*this).Fail(stage.status());
  absl::StatusOr<HostTensor> data = ctx_->backend().Contract(*data_, *weights_, aligned, contracted, *stage);
  if (!data.ok()) return std::move(*this).Fail(data.status());
  data_ = *std::move(data);
  shape_ = stage->out;
  position_ = StreamPosition::kContraction;
  op_.stages.push_back(*std::move(stage));
  return std::move(*this);
}

Stream Stream::cast(DType out, const Mapping& packet) && {
  if (!Allow("cast")) return std::move(*this);
  absl::StatusOr<CastStage> stage = PlanCast(shape_, out, packet);
  if (!stage.ok()) return std::move(*this).Fail(stage.status());
  absl::StatusOr<HostTensor> data = ctx_->backend().Cast(*data_, *stage);
  if (!data.ok()) return std::move(*this).Fail(data.status());
  data_ = *std::move(data);
  shape_ = stage->out;
  position_ = StreamPosition::kCast;
  op_.stages.push_back(*std::move(stage));
  return std::move(*this);
}

absl::StatusOr<DeviceTensor> Stream::Finish(Stage stage, Placement placement) {
  ASSIGN_OR_RETURN(DeviceTensor out, ctx_->backend().Store(*data_, ctx_->device(), std::move(placement)));
  RecordWith(std::move(stage), out);
  return out;
}

void Stream::RecordWith(Stage stage, const DeviceTensor& output) {
  op_.stages.push_back(std::move(stage));
  op_.output = RefOf(output);
  ctx_->Record(Op{std::move(op_)});
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
  if (!Allow("commit")) return status_;
  RETURN_IF_ERROR(slices.status());
  ASSIGN_OR_RETURN(CommitStage stage, PlanCommitStage(shape_, position_, kind_, element));
  stage.slices = slices;
  ASSIGN_OR_RETURN(Placement placement,
                   Place(ctx_->device(), shape_.dtype, Tier::kDm,
                         {shape_.chip, shape_.cluster, shape_.slice, element}, address));
  // The new tensor owns its ranges without writing them; disabled slices keep their bytes.
  DmTensor out(DeviceTensor::Claim(ctx_->device(), std::move(placement)));
  absl::Status stored = ctx_->backend().StoreInto(*data_, out.view(), slices);
  if (!stored.ok()) {
    out.Release();
    return stored;
  }
  RecordWith(std::move(stage), out);
  return out;
}

absl::Status Stream::commit_view(const DmTensor& view) && {
  if (!Allow("commit")) return status_;
  RETURN_IF_ERROR(CheckCommitTarget(view));
  ASSIGN_OR_RETURN(CommitStage stage, PlanCommitStage(shape_, position_, kind_, view.element()));
  RETURN_IF_ERROR(ctx_->backend().StoreInto(*data_, view, SliceBitmap::All()));
  RecordWith(std::move(stage), view);
  return absl::OkStatus();
}

absl::StatusOr<DmTensor> Stream::commit(const Mapping& element, Address address) && {
  if (!Allow("commit")) return status_;
  ASSIGN_OR_RETURN(CommitStage stage, PlanCommitStage(shape_, position_, kind_, element));
  ASSIGN_OR_RETURN(Placement placement,
                   Place(ctx_->device(), shape_.dtype, Tier::kDm,
                         {shape_.chip, shape_.cluster, shape_.slice, element}, address));
  ASSIGN_OR_RETURN(DeviceTensor out, Finish(std::move(stage), std::move(placement)));
  return DmTensor(std::move(out));
}

absl::StatusOr<TrfTensor> Stream::to_trf(const Mapping& row, const Mapping& element, TrfAddress address) && {
  if (!Allow("to_trf")) return status_;
  ASSIGN_OR_RETURN(RegisterLoadStage stage,
                   PlanToTrf(shape_, position_, kind_, row, element, TrfAddressName(address),
                             TrfAddressCapacity(address)));
  ASSIGN_OR_RETURN(Placement placement,
                   Place(ctx_->device(), shape_.dtype, Tier::kTrf,
                         {shape_.chip, shape_.cluster, shape_.slice, row, element},
                         Address::At(TrfAddressBase(address)), address));
  ASSIGN_OR_RETURN(DeviceTensor out, Finish(std::move(stage), std::move(placement)));
  return TrfTensor(std::move(out));
}

absl::StatusOr<VrfTensor> Stream::to_vrf(const Mapping& element, int64_t address) && {
  if (!Allow("to_vrf")) return status_;
  ASSIGN_OR_RETURN(RegisterLoadStage stage, PlanToVrf(shape_, position_, kind_, element, address));
  ASSIGN_OR_RETURN(Placement placement,
                   Place(ctx_->device(), shape_.dtype, Tier::kVrf,
                         {shape_.chip, shape_.cluster, shape_.slice, element}, Address::At(address)));
  ASSIGN_OR_RETURN(DeviceTensor out, Finish(std::move(stage), std::move(placement)));
  return VrfTensor(std::move(out));
}

}  // namespace visa
