// RelaunchInputs: keeping and putting back a recorded run's inputs.
#include "tools/relaunch_inputs.h"

#include "absl/strings/str_cat.h"
#include "dsl/status_macros.h"
#include "runtime/transfer.h"
#include "runtime/window_write.h"

namespace visa::cli {

std::string RelaunchInputs::KeyOf(const DeviceTensor& tensor) { return absl::StrCat(tensor.id(), " ", tensor.ToString()); }

absl::Status RelaunchInputs::BeforeOp(const std::vector<DeviceTensor>& reads) {
  for (const DeviceTensor& read : reads) {
    std::string key = KeyOf(read);
    if (written_.contains(read.id()) || inputs_.contains(key)) continue;
    ASSIGN_OR_RETURN(HostTensor bytes, ReadImage(read, read.full_mapping()));
    inputs_.emplace(std::move(key), std::move(bytes));
  }
  return absl::OkStatus();
}

absl::Status RelaunchInputs::Restore(const DeviceTensor& recorded, const DeviceTensor& into) const {
  auto it = inputs_.find(KeyOf(recorded));
  return it == inputs_.end() ? absl::OkStatus() : WriteIntoWindow(it->second, into);
}

}  // namespace visa::cli
