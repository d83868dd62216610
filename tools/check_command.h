// `visa check SAMPLE`: runs a sample on the interpreter and on the JIT and reports the first
// element where any op's result differs (op, position, tensor index, both values).
#pragma once

#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "CLI/CLI.hpp"
#include "runtime/backend.h"

namespace visa::cli {

// A backend that runs another one and keeps a copy of what every call produced: stream images,
// and the device tensors that stores and DMA moves wrote (read back by their full mapping).
class RecordingBackend : public Backend {
 public:
  struct Record {
    std::string call;                     // "Fetch", "Rearrange", "Store", "Transfer", ...
    std::vector<std::string> level_names; // how a position splits: chip, cluster, slice, time, packet
    std::vector<int64_t> level_sizes;
    std::optional<HostTensor> image;
  };

  explicit RecordingBackend(Backend& inner) : inner_(inner) {}
  const char* name() const override { return inner_.name(); }
  const std::vector<Record>& records() const { return records_; }

  absl::StatusOr<HostTensor> Fetch(const std::vector<DmTensor>& inputs, const BeginStage& begin,
                                   const FetchStage& stage) override;
  absl::StatusOr<HostTensor> Rearrange(const HostTensor& stream, const StreamShape& out) override;
  absl::StatusOr<HostTensor> Cast(const HostTensor& stream, const CastStage& stage) override;
  absl::StatusOr<DeviceTensor> Store(const HostTensor& stream, Device& device, Placement placement) override;
  absl::Status StoreInto(const HostTensor& stream, const DmTensor& target, const SliceBitmap& slices) override;
  absl::StatusOr<HostTensor> Contract(const HostTensor& stream, const TrfTensor& weights, const AlignStage& align,
                                      const ContractStage& contract, const AccumulateStage& accumulate) override;
  absl::StatusOr<DeviceTensor> Transfer(const DeviceTensor& src, Device& device, Placement dst,
                                        TransferCheck check, TransferReport* report) override;

 private:
  absl::StatusOr<HostTensor> Keep(const char* call, const StreamShape& shape, absl::StatusOr<HostTensor> out);
  void KeepTensor(const char* call, const DeviceTensor& tensor);

  Backend& inner_;
  std::vector<Record> records_;
};

// The first difference between two recordings of the same program ("op 2 (collect): position
// (chip 0, ..., packet 5) index {A=1, B=3}: interp 0x3c (1.5), jit 0x3d (1.625)"), or nullopt.
std::optional<std::string> FirstDifference(const Program& program, const std::vector<RecordingBackend::Record>& a,
                                           const char* a_name, const std::vector<RecordingBackend::Record>& b,
                                           const char* b_name);

struct CheckOptions {
  std::string sample;
  bool all = false;  // every sample
};

// Exit codes: 0 identical, 1 a difference, 2 an error (unknown sample, a backend failed).
int CheckSampleCommand(const CheckOptions& options, std::ostream& out, std::ostream& err);

void AddCheckCommand(CLI::App& app, CheckOptions& options, int& exit_code);

}  // namespace visa::cli
