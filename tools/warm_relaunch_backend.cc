// WarmRelaunchBackend: record the run's ops, then replay them on the same device.
#include "tools/warm_relaunch_backend.h"

#include <chrono>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "dsl/status_macros.h"

namespace visa::cli {
namespace {

using Clock = std::chrono::steady_clock;

double Since(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

// The tensors an op reads (a memset reads nothing), and a view it writes into before anything
// wrote its tensor (a commit_view's target), which holds bytes the op keeps.
std::vector<DeviceTensor> Reads(const PipelineTensors& t) {
  std::vector<DeviceTensor> reads(t.inputs.begin(), t.inputs.end());
  if (t.weights) reads.push_back(*t.weights);
  reads.insert(reads.end(), t.vrf_operands.begin(), t.vrf_operands.end());
  if (t.fetch_index) reads.push_back(*t.fetch_index);
  if (t.output.is_view()) reads.push_back(t.output);
  return reads;
}

std::vector<DeviceTensor> Reads(const DmaOp& op, const DmaTensors& t) {
  std::vector<DeviceTensor> reads;
  if (!op.fill()) reads.push_back(t.src);
  if (t.index) reads.push_back(*t.index);
  if (t.base) reads.push_back(*t.base);
  if (t.dst.is_view()) reads.push_back(t.dst);
  return reads;
}

// Each tensor of the recorded run as a fresh handle on the same placement object, as a Launch
// binds its tensors: a tensor the sample released while recording (its ranges given to others)
// lives again for the relaunch, and whatever a backend derived from the placement still applies.
class Rebinder {
 public:
  DeviceTensor operator()(const DeviceTensor& recorded) {
    auto it = fresh_.find(recorded.id());
    if (it == fresh_.end()) {
      it = fresh_.emplace(recorded.id(), DeviceTensor::ReserveLike(recorded.device(), recorded)).first;
    }
    return it->second.WindowLike(recorded);
  }
  PipelineTensors operator()(const PipelineTensors& t) {
    PipelineTensors out{{}, std::nullopt, (*this)(t.output), {}, std::nullopt};
    for (const DmTensor& input : t.inputs) out.inputs.push_back(DmTensor((*this)(input)));
    if (t.weights) out.weights = TrfTensor((*this)(*t.weights));
    for (const DeviceTensor& vrf : t.vrf_operands) out.vrf_operands.push_back((*this)(vrf));
    if (t.fetch_index) out.fetch_index = (*this)(*t.fetch_index);
    return out;
  }
  DmaTensors operator()(const DmaTensors& t) {
    DmaTensors out{(*this)(t.src), (*this)(t.dst), std::nullopt, std::nullopt};
    if (t.index) out.index = (*this)(*t.index);
    if (t.base) out.base = (*this)(*t.base);
    return out;
  }

 private:
  absl::flat_hash_map<int64_t, DeviceTensor> fresh_;
};

// One recorded op, whatever its kind: what it reads, what it writes, and running it.
struct CallParts {
  std::vector<DeviceTensor> reads;
  const DeviceTensor* output;
};

template <typename Call>
CallParts PartsOf(const Call& call) {
  if (const auto* pipe = std::get_if<0>(&call)) return {Reads(pipe->tensors), &pipe->tensors.output};
  const auto& dma = std::get<1>(call);
  return {Reads(dma.op, dma.tensors), &dma.tensors.dst};
}

template <typename Call>
absl::Status RunOn(Backend& backend, const Call& call) {
  if (const auto* pipe = std::get_if<0>(&call)) return backend.Run(pipe->op, pipe->tensors);
  const auto& dma = std::get<1>(call);
  return backend.Run(dma.op, dma.tensors);
}

}  // namespace

absl::Status WarmRelaunchBackend::Run(const PipelineOp& op, const PipelineTensors& tensors) {
  return Record(PipelineCall{op, tensors});
}

absl::Status WarmRelaunchBackend::Run(const DmaOp& op, const DmaTensors& tensors) {
  return Record(DmaCall{op, tensors});
}

absl::Status WarmRelaunchBackend::Record(Call call) {
  const CallParts parts = PartsOf(call);
  RETURN_IF_ERROR(inputs_.BeforeOp(parts.reads));
  RETURN_IF_ERROR(RunOn(inner_, call));
  inputs_.AfterOp(*parts.output);
  recorded_.push_back(std::move(call));
  if (static_cast<int64_t>(recorded_.size()) == ops_in_run_) RelaunchAll();
  return absl::OkStatus();
}

void WarmRelaunchBackend::RelaunchAll() {
  for (int r = 0; r < relaunches_wanted_; ++r) {
    Relaunch relaunch;
    relaunch_status_ = RelaunchOnce(relaunch);
    if (!relaunch_status_.ok()) {
      relaunch_status_ = absl::Status(relaunch_status_.code(),
                                      absl::StrCat("relaunch ", r + 1, ": ", relaunch_status_.message()));
      return;
    }
    relaunches_.push_back(std::move(relaunch));
  }
}

absl::Status WarmRelaunchBackend::RelaunchOnce(Relaunch& relaunch) {
  const auto start = Clock::now();
  double restoring = 0;  // the inputs' restores stand for the host's writes: not the relaunch's time
  Rebinder rebind;
  std::vector<Call> calls;
  calls.reserve(recorded_.size());
  for (const Call& call : recorded_) {
    if (const auto* pipe = std::get_if<PipelineCall>(&call)) {
      calls.push_back(PipelineCall{pipe->op, rebind(pipe->tensors)});
    } else {
      const DmaCall& dma = std::get<DmaCall>(call);
      calls.push_back(DmaCall{dma.op, rebind(dma.tensors)});
    }
  }
  // The run's inputs (read before any op of it wrote them, host writes among them) claim their
  // ranges again right before the first op that reads them, in op order, as the recording did:
  // an input placed where an earlier, released one was takes those bytes only then.
  absl::flat_hash_set<int64_t> seen;
  for (size_t i = 0; i < calls.size(); ++i) {
    const CallParts parts = PartsOf(calls[i]);
    const CallParts recorded = PartsOf(recorded_[i]);
    for (size_t r = 0; r < parts.reads.size(); ++r) {
      const DeviceTensor& read = parts.reads[r];
      if (!seen.insert(read.id()).second) continue;
      read.ClaimRanges();
      const auto restore_start = Clock::now();
      RETURN_IF_ERROR(inputs_.Restore(recorded.reads[r], read));
      restoring += Since(restore_start);
    }
    seen.insert(parts.output->id());
    const auto op_start = Clock::now();
    const absl::Status status = RunOn(inner_, calls[i]);
    relaunch.op_seconds.push_back(Since(op_start));
    if (!status.ok()) return status;
    if (!parts.output->is_view()) parts.output->ClaimRanges();
  }
  relaunch.seconds = Since(start) - restoring;
  return absl::OkStatus();
}

}  // namespace visa::cli
