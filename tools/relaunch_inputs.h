// RelaunchInputs: the bytes a recorded run's inputs held when an op first read them, for a warm
// relaunch (tools/warm_relaunch_backend.h) to put back. A run's inputs are what the host wrote
// before the op that reads them (an upload, an index computed on the host between ops). Later in
// the run their ranges may hold other bytes: a tensor placed where a released input was, or
// another input put back over a range it shared with one (the MoE layer's index uploads all sit
// at one HBM address in turn), so a relaunch that only replays the device ops would read those
// instead (the MoE layer's scatter index then named a row twice). Every input is put back right
// before the relaunch's first read of it, as the host wrote it before the run's.
#pragma once

#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "runtime/host_tensor.h"
#include "runtime/tensor.h"

namespace visa::cli {

class RelaunchInputs {
 public:
  // During the recorded run, before each op: `reads` are the tensors the op reads (and a view it
  // writes into). A read no earlier op wrote is an input: its bytes are kept.
  absl::Status BeforeOp(const std::vector<DeviceTensor>& reads);
  // ... and after it: `output` is the tensor it wrote.
  void AfterOp(const DeviceTensor& output) { written_.insert(output.id()); }

  // During a relaunch, right after `into` (the relaunch's handle of the recorded tensor `recorded`)
  // claimed its ranges: writes back the bytes the recorded run read there when it is an input.
  absl::Status Restore(const DeviceTensor& recorded, const DeviceTensor& into) const;
  int64_t inputs() const { return static_cast<int64_t>(inputs_.size()); }

 private:
  // The tensor's id and window: two views of one input are two inputs.
  static std::string KeyOf(const DeviceTensor& tensor);

  absl::flat_hash_set<int64_t> written_;
  absl::flat_hash_map<std::string, HostTensor> inputs_;
};

}  // namespace visa::cli
