// TimingBackend: a backend that runs every op on another backend and records how long each took,
// so `visa bench` and the benchmarks can say which op a kernel's time goes to.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "runtime/backend.h"

namespace visa {

class TimingBackend : public Backend {
 public:
  struct OpTime {
    std::string kind;  // "pipeline main", "pipeline sub", "dma tdma", ...
    double seconds = 0;
    // Minor page faults the process took during the op (every thread's): on a fresh device, the
    // pages the op touched first.
    int64_t page_faults = 0;
  };

  explicit TimingBackend(Backend& inner) : inner_(inner) {}

  const char* name() const override { return inner_.name(); }
  bool executes() const override { return inner_.executes(); }
  absl::Status Run(const PipelineOp& op, const PipelineTensors& tensors) override;
  absl::Status Run(const DmaOp& op, const DmaTensors& tensors) override;

  // The kind an op's time is recorded under: "pipeline main", "dma tdma", ...
  static std::string KindOf(const Op& op);

  // Every op run so far, in order.
  const std::vector<OpTime>& times() const { return times_; }
  void Clear() { times_.clear(); }

 private:
  Backend& inner_;
  std::vector<OpTime> times_;
};

}  // namespace visa
