// The executor: bindings, output reservation, and the op loop behind Launch.
#include "runtime/executor.h"

#include "absl/strings/str_cat.h"
#include "dsl/status_macros.h"
#include "runtime/launch.h"
#include "runtime/launch_collisions.h"
#include "runtime/uninitialized_reads.h"

namespace visa {

absl::Status Executor::Bind(const TensorRef& traced, const DeviceTensor& actual) {
  if (!traced.handle) return absl::InvalidArgumentError("Launch: a program input has no tensor");
  const Placement& want = traced.handle->placement();
  const Placement& got = actual.placement();
  if (&want != &got && (want.dtype != got.dtype || want.tier != got.tier || want.address != got.address || want.trf != got.trf ||
                        !(Pair(want.levels) == Pair(got.levels)))) {
    return absl::InvalidArgumentError(absl::StrCat("Launch: input ", actual.ToString(),
                                                   " does not match the traced ", traced.text));
  }
  RETURN_IF_ERROR(actual.CheckDeviceAlive());
  if (&actual.device() != &device_) {
    return absl::InvalidArgumentError(absl::StrCat("Launch: input ", actual.ToString(), " is on another device"));
  }
  // Equal in value, so the traced placement object stands for it: what the backend derived from
  // that object on an earlier run (jit/ready_moves.h) holds for this input too.
  bound_.insert_or_assign(traced.id, actual.SharingPlacementOf(*traced.handle));
  return absl::OkStatus();
}

absl::StatusOr<DeviceTensor> Executor::Resolve(const TensorRef& traced) const {
  auto it = bound_.find(traced.id);
  if (!traced.handle || it == bound_.end()) {
    return absl::FailedPreconditionError(absl::StrCat(
        "Launch: ", traced.text, " is neither a program input nor produced by an earlier op"));
  }
  return it->second.WindowLike(*traced.handle);
}

absl::StatusOr<DeviceTensor> Executor::Output(const TensorRef& traced) {
  if (!traced.handle) return absl::FailedPreconditionError("Launch: a host move cannot be replayed");
  if (traced.handle->is_view()) {
    if (!bound_.contains(traced.id)) {
      // Its first writer in this run is this op; like the kernel's Create, the tensor keeps what
      // memory holds where the view does not write.
      DeviceTensor owner = DeviceTensor::Reserve(device_, traced.handle->owner_placement());
      owner.ClaimRanges();
      bound_.insert_or_assign(traced.id, owner);
    }
    return Resolve(traced);
  }
  return DeviceTensor::ReserveLike(device_, *traced.handle);
}

void Executor::Produced(const TensorRef& traced, const DeviceTensor& output) {
  if (output.is_view()) return;
  output.ClaimRanges();
  bound_.insert_or_assign(traced.id, output);
}

absl::Status Executor::Run(const Op& op) {
  return std::visit([&](const auto& body) { return Run(body); }, op.body);
}

absl::Status Executor::Run(const PipelineOp& op) {
  std::vector<DmTensor> inputs;
  for (const TensorRef& ref : op.inputs) {
    ASSIGN_OR_RETURN(DeviceTensor input, Resolve(ref));
    inputs.emplace_back(input);
  }
  std::optional<TrfTensor> weights;
  if (op.weights) {
    ASSIGN_OR_RETURN(DeviceTensor trf, Resolve(*op.weights));
    weights.emplace(trf);
  }
  std::vector<DeviceTensor> vrf_operands;
  for (const TensorRef& ref : op.vrf_operands) {
    ASSIGN_OR_RETURN(DeviceTensor vrf, Resolve(ref));
    vrf_operands.push_back(vrf);
  }
  std::optional<DeviceTensor> fetch_index;
  if (op.fetch_index) {
    ASSIGN_OR_RETURN(DeviceTensor index, Resolve(*op.fetch_index));
    fetch_index.emplace(index);
  }
  ASSIGN_OR_RETURN(DeviceTensor output, Output(op.output));
  absl::Status done = backend_.Run(
      op, PipelineTensors{std::move(inputs), std::move(weights), output, std::move(vrf_operands), std::move(fetch_index)});
  if (!done.ok()) {
    if (!output.is_view()) output.Release();
    return done;
  }
  MarkPipelineWritten(op, output);  // whatever the backend
  Produced(op.output, output);
  return absl::OkStatus();
}

absl::Status Executor::Run(const DmaOp& op) {
  ASSIGN_OR_RETURN(DeviceTensor dst, Output(op.dst));
  // A memset reads nothing: its source is its destination, which it may be the first to write.
  ASSIGN_OR_RETURN(DeviceTensor src, op.fill() ? absl::StatusOr<DeviceTensor>(dst) : Resolve(op.src));
  std::optional<DeviceTensor> index;
  if (op.index()) {
    ASSIGN_OR_RETURN(DeviceTensor resolved, Resolve(*op.index()));
    index.emplace(resolved);
  }
  std::optional<DeviceTensor> base;
  if (op.base()) {
    ASSIGN_OR_RETURN(DeviceTensor resolved, Resolve(*op.base()));
    base.emplace(resolved);
  }
  absl::Status done = backend_.Run(op, DmaTensors{src, dst, index, base});
  if (!done.ok()) {
    if (!dst.is_view()) dst.Release();  // a view's tensor was there before the move
    return done;
  }
  MarkWritten(dst);
  Produced(op.dst, dst);
  return absl::OkStatus();
}

absl::StatusOr<std::vector<DeviceTensor>> Launch(const Program& program, Device& device, Backend& backend,
                                                 const std::vector<DeviceTensor>& inputs) {
  if (inputs.size() != program.inputs.size()) {
    return absl::InvalidArgumentError(absl::StrCat("Launch: the program takes ", program.inputs.size(),
                                                   " inputs, got ", inputs.size()));
  }
  Executor executor(device, backend);
  for (size_t i = 0; i < inputs.size(); ++i) RETURN_IF_ERROR(executor.Bind(program.inputs[i], inputs[i]));
  // Refused before anything is written: the outputs sit at their traced addresses.
  RETURN_IF_ERROR(CheckLaunchWritesNoLiveTensor(program, device, inputs));
  for (const Op& op : program.ops) RETURN_IF_ERROR(executor.Run(op));
  std::vector<DeviceTensor> outputs;
  for (const TensorRef& ref : program.outputs) {
    ASSIGN_OR_RETURN(DeviceTensor out, executor.Resolve(ref));
    outputs.push_back(out);
  }
  return outputs;
}

}  // namespace visa
