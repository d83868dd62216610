// DeadlineBackend: runs every op on another backend until a time budget is spent, then refuses the
// next op, so `visa bench --all` can abandon an interpreter run that would take too long
// (--max-interp-seconds) at an op boundary instead of waiting for it.
#pragma once

#include <chrono>
#include <cstdint>

#include "absl/status/status.h"
#include "absl/strings/str_format.h"
#include "runtime/backend.h"

namespace visa::cli {

class DeadlineBackend : public Backend {
 public:
  DeadlineBackend(Backend& inner, double budget_seconds) : inner_(inner), budget_seconds_(budget_seconds) {}

  const char* name() const override { return inner_.name(); }
  bool executes() const override { return inner_.executes(); }
  absl::Status Run(const PipelineOp& op, const PipelineTensors& tensors) override {
    if (absl::Status spent = CheckBudget(); !spent.ok()) return spent;
    ++ops_run_;
    return inner_.Run(op, tensors);
  }
  absl::Status Run(const DmaOp& op, const DmaTensors& tensors) override {
    if (absl::Status spent = CheckBudget(); !spent.ok()) return spent;
    ++ops_run_;
    return inner_.Run(op, tensors);
  }

 private:
  absl::Status CheckBudget() const {
    const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
    if (elapsed <= budget_seconds_) return absl::OkStatus();
    return absl::DeadlineExceededError(absl::StrFormat("ran past --max-interp-seconds %g (%.1f s after %d ops)",
                                                       budget_seconds_, elapsed, ops_run_));
  }

  Backend& inner_;
  double budget_seconds_;
  int64_t ops_run_ = 0;
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
};

}  // namespace visa::cli
