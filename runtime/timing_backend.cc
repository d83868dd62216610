// TimingBackend: wall time around the inner backend's Run.
#include "runtime/timing_backend.h"

#include <sys/resource.h>

#include <chrono>

#include "absl/strings/str_cat.h"

namespace visa {
namespace {

int64_t MinorFaults() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return usage.ru_minflt;
}

std::string Kind(const PipelineOp& op) { return absl::StrCat("pipeline ", ContextName(op.context)); }
std::string Kind(const DmaOp& op) { return absl::StrCat("dma ", ContextName(op.context)); }

template <typename Fn>
absl::Status Timed(std::vector<TimingBackend::OpTime>& times, std::string kind, Fn run) {
  const int64_t faults = MinorFaults();
  const auto start = std::chrono::steady_clock::now();
  absl::Status status = run();
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  times.push_back({std::move(kind), seconds, MinorFaults() - faults});
  return status;
}

}  // namespace

std::string TimingBackend::KindOf(const Op& op) {
  return std::visit([](const auto& body) { return Kind(body); }, op.body);
}

absl::Status TimingBackend::Run(const PipelineOp& op, const PipelineTensors& tensors) {
  return Timed(times_, Kind(op), [&] { return inner_.Run(op, tensors); });
}

absl::Status TimingBackend::Run(const DmaOp& op, const DmaTensors& tensors) {
  return Timed(times_, Kind(op), [&] { return inner_.Run(op, tensors); });
}

}  // namespace visa
