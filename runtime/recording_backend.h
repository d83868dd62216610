// RecordingBackend: runs another backend and keeps a copy of what every op wrote (the output
// tensor read back by its full mapping), so two runs of one program can be compared op by op
// (`visa check`, the differential tests).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "runtime/backend.h"
#include "runtime/host_tensor.h"

namespace visa {

class RecordingBackend : public Backend {
 public:
  struct Record {
    std::string op;                        // "commit", "to_trf", "tdma move", ...
    std::vector<std::string> level_names;  // how a position splits: chip, cluster, slice, element
    std::vector<int64_t> level_sizes;
    std::optional<HostTensor> image;       // what the op's output holds after it ran
  };

  explicit RecordingBackend(Backend& inner) : inner_(inner) {}
  const char* name() const override { return inner_.name(); }
  bool executes() const override { return inner_.executes(); }
  const std::vector<Record>& records() const { return records_; }
  std::vector<Record>& mutable_records() { return records_; }

  absl::Status Run(const PipelineOp& op, const PipelineTensors& tensors) override;
  absl::Status Run(const DmaOp& op, const DmaTensors& tensors) override;

 private:
  void Keep(std::string op, const DeviceTensor& written);

  Backend& inner_;
  std::vector<Record> records_;
};

// The first difference between two recordings of the same program ("op 2 (commit): position
// (chip 0, cluster 0, slice 3, element 5) index {A=1, B=3}: interp 0x3c (1.5), jit 0x3d (1.625)"),
// or nullopt when every op wrote the same bytes.
std::optional<std::string> FirstDifference(const Program& program, const std::vector<RecordingBackend::Record>& a,
                                           const char* a_name, const std::vector<RecordingBackend::Record>& b,
                                           const char* b_name);

}  // namespace visa
