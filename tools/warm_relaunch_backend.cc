// WarmRelaunchBackend: record the run's ops, then replay them on the same device.
#include "tools/warm_relaunch_backend.h"

#include <chrono>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"

namespace visa::cli {
namespace {

using Clock = std::chrono::steady_clock;

double Since(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

// The tensors an op reads (a memset reads nothing) and the one it writes.
std::vector<DeviceTensor> Reads(const PipelineTensors& t) {
  std::vector<DeviceTensor> reads(t.inputs.begin(), t.inputs.end());
  if (t.weights) reads.push_back(*t.weights);
  reads.insert(reads.end(), t.vrf_operands.begin(), t.vrf_operands.end());
  if (t.fetch_index) reads.push_back(*t.fetch_index);
  return reads;
}

std::vector<DeviceTensor> Reads(const DmaOp& op, const DmaTensors& t) {
  std::vector<DeviceTensor> reads;
  if (!op.fill()) reads.push_back(t.src);
  if (t.index) reads.push_back(*t.index);
  if (t.base) reads.push_back(*t.base);
  return reads;
}

}  // namespace

absl::Status WarmRelaunchBackend::Run(const PipelineOp& op, const PipelineTensors& tensors) {
  return Recorded(PipelineCall{op, tensors}, inner_.Run(op, tensors));
}

absl::Status WarmRelaunchBackend::Run(const DmaOp& op, const DmaTensors& tensors) {
  return Recorded(DmaCall{op, tensors}, inner_.Run(op, tensors));
}

absl::Status WarmRelaunchBackend::Recorded(Call call, absl::Status status) {
  if (!status.ok()) return status;
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
  // The run's inputs (read before any op of it wrote them) hold their ranges again, as the
  // tensors a Launch binds do.
  absl::flat_hash_set<int64_t> seen;
  for (const Call& call : recorded_) {
    std::vector<DeviceTensor> reads;
    const DeviceTensor* output = nullptr;
    if (const auto* pipe = std::get_if<PipelineCall>(&call)) {
      reads = Reads(pipe->tensors);
      output = &pipe->tensors.output;
    } else {
      const DmaCall& dma = std::get<DmaCall>(call);
      reads = Reads(dma.op, dma.tensors);
      output = &dma.tensors.dst;
    }
    for (const DeviceTensor& read : reads) {
      if (seen.insert(read.id()).second) read.ClaimRanges();
    }
    seen.insert(output->id());
  }
  for (const Call& call : recorded_) {
    const auto op_start = Clock::now();
    absl::Status status;
    const DeviceTensor* output = nullptr;
    if (const auto* pipe = std::get_if<PipelineCall>(&call)) {
      status = inner_.Run(pipe->op, pipe->tensors);
      output = &pipe->tensors.output;
    } else {
      const DmaCall& dma = std::get<DmaCall>(call);
      status = inner_.Run(dma.op, dma.tensors);
      output = &dma.tensors.dst;
    }
    relaunch.op_seconds.push_back(Since(op_start));
    if (!status.ok()) return status;
    if (!output->is_view()) output->ClaimRanges();
  }
  relaunch.seconds = Since(start);
  return absl::OkStatus();
}

}  // namespace visa::cli
