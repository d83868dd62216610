// Launching a traced Program: every recorded op runs again from its configuration on a device.
#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "dsl/status_macros.h"
#include "runtime/dma.h"
#include "runtime/launch.h"

namespace visa {
namespace {

class Replayer {
 public:
  Replayer(Device& device, Backend& backend) : device_(device), backend_(backend) {}

  absl::Status Bind(const TensorRef& traced, const DeviceTensor& actual) {
    if (!traced.handle) return absl::InvalidArgumentError("Launch: a program input has no tensor");
    const Placement& want = traced.handle->placement();
    const Placement& got = actual.placement();
    if (want.dtype != got.dtype || want.tier != got.tier || want.address != got.address ||
        !(Pair(want.levels) == Pair(got.levels))) {
      return absl::InvalidArgumentError(absl::StrCat("Launch: input ", actual.ToString(),
                                                     " does not match the traced ", traced.text));
    }
    bound_.insert_or_assign(traced.id, actual);
    return absl::OkStatus();
  }

  // The launch-time handle of a traced one (a view of a bound tensor keeps its window).
  absl::StatusOr<DeviceTensor> Resolve(const TensorRef& traced) const {
    auto it = bound_.find(traced.id);
    if (!traced.handle || it == bound_.end()) {
      return absl::FailedPreconditionError(absl::StrCat(
          "Launch: ", traced.text, " is neither a program input nor produced by an earlier op"));
    }
    return it->second.WindowLike(*traced.handle);
  }

  absl::Status Run(const DmaOp& op) {
    ASSIGN_OR_RETURN(DeviceTensor src, Resolve(op.src));
    if (!op.dst.handle) return absl::FailedPreconditionError("Launch: a host move cannot be replayed");
    const Placement& dst = op.dst.handle->placement();
    Dma dma(device_, op.context == "pdma" ? Dma::Kind::kPcie : Dma::Kind::kTensor);
    dma.set_backend(&backend_);
    ASSIGN_OR_RETURN(DeviceTensor out, Move(dma, src, Destination{dst.tier, Address::At(dst.address), dst.levels}));
    bound_.insert_or_assign(op.dst.id, out);
    return absl::OkStatus();
  }

  absl::Status Run(const PipelineOp& op) {
    std::vector<DmTensor> inputs;
    for (const TensorRef& ref : op.inputs) {
      ASSIGN_OR_RETURN(DeviceTensor input, Resolve(ref));
      inputs.emplace_back(input);
    }
    const BeginStage& begin = std::get<BeginStage>(op.stages.front());
    std::optional<HostTensor> data;
    for (size_t i = 1; i < op.stages.size(); ++i) {
      const Stage& stage = op.stages[i];
      if (const auto* fetch = std::get_if<FetchStage>(&stage)) {
        ASSIGN_OR_RETURN(data, backend_.Fetch(inputs, begin, *fetch));
      } else if (const auto* cast = std::get_if<CastStage>(&stage)) {
        ASSIGN_OR_RETURN(data, backend_.Cast(*data, *cast));
      } else if (const auto* sw = std::get_if<SwitchStage>(&stage)) {
        ASSIGN_OR_RETURN(data, backend_.Rearrange(*data, sw->out));
      } else if (const auto* collect = std::get_if<CollectStage>(&stage)) {
        ASSIGN_OR_RETURN(data, backend_.Rearrange(*data, collect->out));
      } else if (const auto* transpose = std::get_if<TransposeStage>(&stage)) {
        ASSIGN_OR_RETURN(data, backend_.Rearrange(*data, transpose->out));
      } else if (std::holds_alternative<AlignStage>(stage) || std::holds_alternative<ContractStage>(stage)) {
        continue;  // configuration only; the Contraction Engine runs at accumulate
      } else if (const auto* accumulate = std::get_if<AccumulateStage>(&stage)) {
        ASSIGN_OR_RETURN(data, RunContraction(op, i, *data, *accumulate));
      } else {
        return Store(op, stage, *data);
      }
    }
    return absl::InternalError("Launch: a pipeline without a final store");
  }

 private:
  absl::StatusOr<HostTensor> RunContraction(const PipelineOp& op, size_t accumulate_index,
                                            const HostTensor& data, const AccumulateStage& accumulate) {
    if (!op.weights || accumulate_index < 2) {
      return absl::InternalError("Launch: an accumulate stage without its align and TRF weights");
    }
    ASSIGN_OR_RETURN(DeviceTensor weights, Resolve(*op.weights));
    return backend_.Contract(data, TrfTensor(weights), std::get<AlignStage>(op.stages[accumulate_index - 2]),
                             std::get<ContractStage>(op.stages[accumulate_index - 1]), accumulate);
  }

  absl::Status Store(const PipelineOp& op, const Stage& stage, const HostTensor& data) {
    const DeviceTensor& traced = *op.output.handle;
    const auto* commit = std::get_if<CommitStage>(&stage);
    if (traced.is_view() || (commit != nullptr && !commit->slices.all())) {
      // commit_view, or a commit that leaves disabled slices as they were.
      DeviceTensor target = traced.is_view() ? *Resolve(op.output)
                                             : DeviceTensor::Claim(device_, traced.placement());
      RETURN_IF_ERROR(backend_.StoreInto(data, DmTensor(target),
                                         commit != nullptr ? commit->slices : SliceBitmap::All()));
      if (!traced.is_view()) bound_.insert_or_assign(op.output.id, target);
      return absl::OkStatus();
    }
    ASSIGN_OR_RETURN(DeviceTensor out, backend_.Store(data, device_, traced.placement()));
    bound_.insert_or_assign(op.output.id, out);
    return absl::OkStatus();
  }

  Device& device_;
  Backend& backend_;
  absl::flat_hash_map<int64_t, DeviceTensor> bound_;
};

}  // namespace

absl::StatusOr<std::vector<DeviceTensor>> Launch(const Program& program, Device& device, Backend& backend,
                                                 const std::vector<DeviceTensor>& inputs) {
  if (inputs.size() != program.inputs.size()) {
    return absl::InvalidArgumentError(absl::StrCat("Launch: the program takes ", program.inputs.size(),
                                                   " inputs, got ", inputs.size()));
  }
  Replayer replayer(device, backend);
  for (size_t i = 0; i < inputs.size(); ++i) RETURN_IF_ERROR(replayer.Bind(program.inputs[i], inputs[i]));
  for (const Op& op : program.ops) {
    RETURN_IF_ERROR(std::visit([&](const auto& body) { return replayer.Run(body); }, op.body));
  }
  std::vector<DeviceTensor> outputs;
  for (const TensorRef& ref : program.outputs) {
    ASSIGN_OR_RETURN(DeviceTensor out, replayer.Resolve(ref));
    outputs.push_back(out);
  }
  return outputs;
}

}  // namespace visa
