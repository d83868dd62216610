// WarmRelaunchBackend: runs a sample's ops on another backend and, once the sample's last op has
// run (its device and every tensor still alive), runs the whole op sequence again on that device,
// as a decode loop relaunches a prepared program: each relaunch is timed whole and op by op.
//
// A relaunch hands the backend the same ops with a fresh handle of each tensor on the same
// placement object, as Launch binds them (so a tensor the sample released while recording lives
// again), and, like the executor, lets each new output claim its ranges after its op ran;
// the tensors the run read before any op wrote them (its inputs) claim theirs first and get back
// the bytes the run read there when a later op of the run wrote over them (tools/relaunch_inputs.h;
// a host write between ops is not replayed otherwise). So every op finds its operands readable,
// and its inputs as in the first run. A relaunch of a program that accumulates into
// or reads what it overwrites computes other values than the first run: the sample's result check
// after a relaunch means nothing, and `visa bench` checks its fresh runs instead.
#pragma once

#include <cstdint>
#include <variant>
#include <vector>

#include "absl/status/status.h"
#include "runtime/backend.h"
#include "tools/relaunch_inputs.h"

namespace visa::cli {

class WarmRelaunchBackend : public Backend {
 public:
  struct Relaunch {
    double seconds = 0;               // the whole sequence, claims included, the inputs' restores not
    std::vector<double> op_seconds;   // each op on the backend, in order
  };

  // `ops_in_run`: the device ops the sample runs (the relaunches start after the last of them).
  WarmRelaunchBackend(Backend& inner, int64_t ops_in_run, int relaunches)
      : inner_(inner), ops_in_run_(ops_in_run), relaunches_wanted_(relaunches) {}

  const char* name() const override { return inner_.name(); }
  bool executes() const override { return inner_.executes(); }
  absl::Status Run(const PipelineOp& op, const PipelineTensors& tensors) override;
  absl::Status Run(const DmaOp& op, const DmaTensors& tensors) override;

  const std::vector<Relaunch>& relaunches() const { return relaunches_; }
  // Why the relaunches did not all run (OK when they did, or before the last op ran).
  const absl::Status& relaunch_status() const { return relaunch_status_; }
  int64_t ops_seen() const { return static_cast<int64_t>(recorded_.size()); }

 private:
  struct PipelineCall {
    PipelineOp op;
    PipelineTensors tensors;
  };
  struct DmaCall {
    DmaOp op;
    DmaTensors tensors;
  };
  using Call = std::variant<PipelineCall, DmaCall>;

  absl::Status Record(Call call);
  void RelaunchAll();
  absl::Status RelaunchOnce(Relaunch& relaunch);

  Backend& inner_;
  int64_t ops_in_run_;
  int relaunches_wanted_;
  std::vector<Call> recorded_;
  RelaunchInputs inputs_;
  std::vector<Relaunch> relaunches_;
  absl::Status relaunch_status_;
};

}  // namespace visa::cli
